// SPDX-License-Identifier: GPL-3.0-or-later
// The item models behind the panels' tables, each under QAbstractItemModelTester while it is filled from a generated
// Score-P archive, refilled and reset: exact row counts and cell texts from the archive's known copies, gaps and
// collectives; sorting by value; the row → interval / gap mapping through a sort.
#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "analysis/transfers.h"
#include "common/labels.h"
#include "common/tablemodel.h"
#include "panels/collectivespanel.h"
#include "panels/exposedpanel.h"
#include "panels/idlepanel.h"
#include "panels/kernelspanel.h"
#include "panels/rulespanel.h"
#include "panels/transferspanel.h"
#include "run/openrun.h"
#include "synth/archivewriter.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QFile>
#include <QFont>
#include <QHeaderView>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>

using namespace exposure;

namespace {

using Tester = QAbstractItemModelTester;
constexpr auto kMode = QAbstractItemModelTester::FailureReportingMode::QtTest;
const std::string kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";

// Two ranks, one step [0, 100 us) each. GPU work (ns):
//   rank 0: gemm [10k, 30k), all-reduce [20k, 30k), HtoD 4096 B [40k, 42k), DtoH 1 MB [50k, 58k), gemm [60k, 90k)
//   rank 1: gemm [10k, 30k), all-reduce [25k, 30k), DtoD 2 MB [35k, 36k), gemm [60k, 90k)
// Idle gaps: rank 0 [30k, 40k) [42k, 50k) [58k, 60k); rank 1 [30k, 35k) [36k, 60k).
synth::ArchiveSpec spec()
{
    synth::ArchiveSpec s;
    s.timerResolution = 1'000'000'000;
    s.globalOffsetTicks = 0;
    for (int r = 0; r < 2; ++r) {
        synth::RankSpec& rank = s.addRank(r);
        rank.threads[0].regions.push_back({ "ProfilerStep#1", 0, 100'000 });
        synth::StreamSpec& compute = rank.addStream(0, 7);
        compute.kernels.push_back({ "gemm", 10'000, 30'000 });
        if (r == 0) {
            compute.copies.push_back({ synth::CopyKind::HtoD, 40'000, 42'000, 4096 });
            compute.copies.push_back({ synth::CopyKind::DtoH, 50'000, 58'000, 1'000'000 });
        } else {
            compute.copies.push_back({ synth::CopyKind::DtoD, 35'000, 36'000, 2'000'000 });
        }
        compute.kernels.push_back({ "gemm", 60'000, 90'000 });
        synth::StreamSpec& nccl = rank.addStream(0, 13);
        nccl.kernels.push_back({ kAllReduce, r == 0 ? 20'000 : 25'000, 30'000 });
    }
    return s;
}

// A torch.profiler kernel on `stream` over [ts, ts + dur) us, of process group `pg` ("1 (mesh_dp)") of ranks [0, 1]
// where given.
QByteArray kinetoKernel(const char* name, int stream, int ts, int dur, const char* pg = nullptr)
{
    QByteArray args = "\"device\": 0, \"stream\": " + QByteArray::number(stream);
    if (pg) {
        const QByteArray text(pg);
        const qsizetype space = text.indexOf(' ');
        args += ", \"Collective name\": \"allreduce\", \"In msg nelems\": 1024, \"Out msg nelems\": 1024, "
                "\"dtype\": \"Float\", \"Group size\": 2, \"Process Group Name\": \""
            + text.left(space) + "\", \"Process Group Description\": \"" + text.mid(space + 2).chopped(1)
            + "\", \"Process Group Ranks\": \"[0, 1]\"";
    }
    return ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + QByteArray(name)
        + "\", \"pid\": 0, \"tid\": " + QByteArray::number(stream) + ", \"ts\": " + QByteArray::number(ts)
        + ", \"dur\": " + QByteArray::number(dur) + ", \"args\": {" + args + "}}";
}

template <typename Done> bool waitFor(Done done)
{
    return QTest::qWaitFor(done, 10000);
}

} // namespace

class TestTableModels : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void tableModelSortsByValue();
    void transfersModel();
    void transfersPanelRefills();
    void memsetsApartFromCopies();
    void idlePanel();
    void exposedPanel();
    void exposedPanelByRole();
    void rulesPanel();
    void collectivesPanel();
    void collectivesByOperation();
    void kernelsPanel();

private:
    QTemporaryDir m_dir;
    std::shared_ptr<const Trace> m_trace;
    std::shared_ptr<const Analysis> m_analysis;
    TimeNs m_origin = 0; // the loaded trace's time of the spec's 0
};

void TestTableModels::initTestCase()
{
    QVERIFY(m_dir.isValid());
    synth::writeArchive(m_dir.path().toStdString(), spec());
    auto trace = loadTrace(m_dir.path().toStdString());
    QVERIFY(trace);
    QCOMPARE(trace->ranks.size(), std::size_t(2));
    m_analysis = analyze(*trace, Rules::defaults());
    m_trace = std::move(trace);
    m_origin = m_trace->extent.start;
}

// The generic model: numbers sort by their key, keyed cells before unkeyed ones, absent cells last in either order;
// tags and persistent indexes follow their rows; refilling keeps the sort.
void TestTableModels::tableModelSortsByValue()
{
    TableModel m({ QStringLiteral("Name"), QStringLiteral("Time") });
    Tester tester(&m, kMode);
    auto row = [](const char* name, const char* time, std::optional<double> key) {
        TableModel::Row r(2);
        r[0].text = QString::fromLatin1(name);
        r[1].text = QString::fromUtf8(time);
        if (key)
            r[1].sortKey = *key;
        return r;
    };
    m.setRows({ row("a", "1.2 ms", 1.2e6), row("b", "", std::nullopt), row("c", "812 µs", 812e3),
                  row("d", "-", std::nullopt), row("e", "90 ns", 90) },
        { 10, 11, 12, 13, 14 });
    QCOMPARE(m.rowCount(), 5);
    QCOMPARE(m.columnCount(), 2);
    QCOMPARE(m.headerData(1, Qt::Horizontal).toString(), QStringLiteral("Time"));
    const QPersistentModelIndex c(m.index(2, 0));
    m.sort(1, Qt::AscendingOrder);
    auto names = [&] {
        QString s;
        for (int r = 0; r < m.rowCount(); ++r)
            s += m.text(r, 0);
        return s;
    };
    QCOMPARE(names(), QStringLiteral("ecadb")); // 90 ns < 812 µs < 1.2 ms, then "-" (no key), then the empty cell
    QCOMPARE(c.row(), 1);
    QCOMPARE(m.tag(1), qint64(12));
    QCOMPARE(m.index(1, 0).data(TableModel::TagRole).toLongLong(), qint64(12));
    m.sort(1, Qt::DescendingOrder);
    // Descending: the reverse, except that the empty (absent) cell stays last.
    QCOMPARE(names(), QStringLiteral("daceb"));
    QCOMPARE(c.row(), 2);
    m.sort(-1);
    QCOMPARE(names(), QStringLiteral("abcde"));
    m.sort(1, Qt::AscendingOrder);
    m.setRows({ row("x", "3 s", 3e9), row("y", "2 s", 2e9) });
    QCOMPARE(names(), QStringLiteral("yx")); // refilled rows keep the sort
    QCOMPARE(m.tag(0), qint64(1)); // default tags: the given index
    m.clear();
    QCOMPARE(m.rowCount(), 0);
}

void TestTableModels::transfersModel()
{
    TransfersModel m;
    Tester tester(&m, kMode);
    const auto rows = transfers(*m_trace, *m_analysis, m_trace->extent);
    QCOMPARE(rows.size(), std::size_t(3));
    m.setTransfers(*m_trace, *m_analysis, rows, TransfersPanel::kMaxRows);
    QCOMPARE(m.rowCount(), 3);
    QCOMPARE(m.columnCount(), int(TransfersModel::ColumnCount));
    QCOMPARE(m.headerData(TransfersModel::Bandwidth, Qt::Horizontal).toString(), QStringLiteral("Bandwidth"));
    // In rank, lane and time order.
    QCOMPARE(m.text(0, TransfersModel::Direction), QStringLiteral("HtoD"));
    QCOMPARE(m.text(0, TransfersModel::Bytes), QStringLiteral("4.10 kB"));
    QCOMPARE(m.text(0, TransfersModel::Duration), QStringLiteral("2 µs"));
    QCOMPARE(m.text(0, TransfersModel::Bandwidth), QStringLiteral("2.05 GB/s"));
    QCOMPARE(m.text(0, TransfersModel::Start), durationText(m_origin + 40'000));
    QCOMPARE(m.text(0, TransfersModel::Stream), QStringLiteral("CUDA[0:7]"));
    QCOMPARE(m.text(0, TransfersModel::Step), QStringLiteral("ProfilerStep#1"));
    QCOMPARE(m.text(1, TransfersModel::Direction), QStringLiteral("DtoH"));
    QCOMPARE(m.text(1, TransfersModel::Bytes), QStringLiteral("1.00 MB"));
    QCOMPARE(m.text(1, TransfersModel::Bandwidth), QStringLiteral("125.00 GB/s"));
    QCOMPARE(m.text(2, TransfersModel::Direction), QStringLiteral("DtoD"));
    QCOMPARE(m.text(2, TransfersModel::Bytes), QStringLiteral("2.00 MB"));
    QCOMPARE(m.text(2, TransfersModel::Bandwidth), QStringLiteral("2000.00 GB/s"));
    QCOMPARE(m.text(2, TransfersModel::Rank), QString::fromStdString(m_trace->ranks[1].label));
    QCOMPARE(m.index(0, TransfersModel::Bytes).data(Qt::TextAlignmentRole).value<Qt::Alignment>(),
        Qt::AlignRight | Qt::AlignVCenter);
    QVERIFY(!m.index(0, TransfersModel::Direction).data(Qt::TextAlignmentRole).isValid());
    // Each row names its copy: rank, lane and interval of an interval that starts and ends where the copy does.
    auto span = [&](int row) {
        const IntervalRef ref = m.transferAt(row);
        const auto& t = m_trace->ranks[std::size_t(ref.rank)].lanes[std::size_t(ref.lane)].intervals;
        return TimeRange { t.start(ref.interval) - m_origin, t.end(ref.interval) - m_origin };
    };
    QCOMPARE(m.transferAt(0).rank, 0);
    QCOMPARE(span(0), (TimeRange { 40'000, 42'000 }));
    QCOMPARE(m.transferAt(2).rank, 1);
    QCOMPARE(span(2), (TimeRange { 35'000, 36'000 }));
    QCOMPARE(m.transferAt(3).rank, -1);
    // Bytes sort by value (as text "1.00 MB" < "2.00 MB" < "4.10 kB"); the intervals follow their rows.
    m.sort(TransfersModel::Bytes, Qt::AscendingOrder);
    QCOMPARE(m.text(0, TransfersModel::Bytes), QStringLiteral("4.10 kB"));
    QCOMPARE(m.text(1, TransfersModel::Bytes), QStringLiteral("1.00 MB"));
    QCOMPARE(m.text(2, TransfersModel::Bytes), QStringLiteral("2.00 MB"));
    QCOMPARE(span(2), (TimeRange { 35'000, 36'000 }));
    m.sort(TransfersModel::Bandwidth, Qt::DescendingOrder);
    QCOMPARE(m.text(0, TransfersModel::Direction), QStringLiteral("DtoD"));
    QCOMPARE(m.text(2, TransfersModel::Direction), QStringLiteral("HtoD"));
    QCOMPARE(span(0), (TimeRange { 35'000, 36'000 }));
    QCOMPARE(span(1), (TimeRange { 50'000, 58'000 }));
    // Refilled with a limit of 2 rows: the first two copies, still sorted by bandwidth.
    m.setTransfers(*m_trace, *m_analysis, rows, 2);
    QCOMPARE(m.rowCount(), 2);
    QCOMPARE(m.text(0, TransfersModel::Direction), QStringLiteral("DtoH"));
    QCOMPARE(span(1), (TimeRange { 40'000, 42'000 }));
    m.clear();
    QCOMPARE(m.rowCount(), 0);
    QCOMPARE(m.transferAt(0).rank, -1);
}

// A memset is reported as a memset, not as a copy: two 1 MB memsets of 10 us and one 4 kB copy of 2 us.
void TestTableModels::memsetsApartFromCopies()
{
    QTemporaryDir dir;
    QByteArray ev;
    auto gpu = [&](const char* cat, const char* name, int ts, int dur, int bytes) {
        ev += QByteArray(ev.isEmpty() ? "" : ",\n") + R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name
            + R"(", "pid": 0, "tid": 7, "ts": )" + QByteArray::number(ts) + R"(, "dur": )" + QByteArray::number(dur)
            + R"(, "args": {"device": 0, "stream": 7, "bytes": )" + QByteArray::number(bytes) + "}}";
    };
    gpu("gpu_memset", "Memset (Device)", 100, 10, 1'048'576);
    gpu("gpu_memset", "Memset (Device)", 200, 10, 1'048'576);
    gpu("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 300, 2, 4096);
    QFile f(dir.filePath(QStringLiteral("rank0.json")));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"schemaVersion\": 1, \"traceEvents\": [\n" + ev + "\n]}");
    f.close();
    const OpenedRun run = openRun(dir.path().toStdString(), {});
    TransfersPanel panel;
    panel.setTrace(run.trace, run.analysis);
    QVERIFY(waitFor([&] { return panel.jobs()->deliveredCount() == 1 && !panel.jobs()->busy(); }));
    QCOMPARE(panel.model()->rowCount(), 3);
    QVERIFY2(panel.summary().contains(QStringLiteral("memset: 2 memsets, 2.10 MB set in 20 µs")),
        qPrintable(panel.summary()));
    QVERIFY2(panel.summary().contains(QStringLiteral("HtoD: 1 copies, 4.10 kB in 2 µs")), qPrintable(panel.summary()));
    QVERIFY(!panel.summary().contains(QStringLiteral("memset: 2 copies")));
}

// The dock fills its model in a job for the visible range; activating a row asks to select its copy.
void TestTableModels::transfersPanelRefills()
{
    TransfersPanel panel;
    Tester tester(panel.model(), kMode);
    QVERIFY(panel.table()->model() == panel.transfersModel());
    panel.setTrace(m_trace, m_analysis);
    QVERIFY(waitFor([&] { return panel.jobs()->deliveredCount() == 1 && !panel.jobs()->busy(); }));
    QCOMPARE(panel.model()->rowCount(), 3);
    // Unsorted until a column is clicked: in rank, lane and time order.
    QCOMPARE(panel.model()->sortColumn(), -1);
    QCOMPARE(panel.model()->text(0, TransfersPanel::Direction), QStringLiteral("HtoD"));
    QCOMPARE(panel.model()->text(1, TransfersPanel::Direction), QStringLiteral("DtoH"));
    QCOMPARE(panel.model()->text(2, TransfersPanel::Direction), QStringLiteral("DtoD"));
    QVERIFY2(panel.summary().contains(QStringLiteral("HtoD: 1 copies, 4.10 kB in 2 µs (2.05 GB/s)")),
        qPrintable(panel.summary()));
    QSignalSpy selected(&panel, &TransfersPanel::transferSelected);
    // A click on the Bytes title sorts by value, descending on the second: the 1 MB copy is then the second row.
    panel.table()->horizontalHeader()->setSortIndicator(TransfersPanel::Bytes, Qt::DescendingOrder);
    QCOMPARE(panel.model()->text(0, TransfersPanel::Bytes), QStringLiteral("2.00 MB"));
    QCOMPARE(panel.model()->text(1, TransfersPanel::Bytes), QStringLiteral("1.00 MB"));
    emit panel.table()->activated(panel.model()->index(1, 0));
    QCOMPARE(selected.size(), 1);
    const auto ref = selected.at(0).at(0).value<IntervalRef>();
    QCOMPARE(ref.rank, 0);
    QVERIFY(ref == panel.transfersModel()->transferAt(1));
    QCOMPARE(m_trace->ranks[0].lanes[std::size_t(ref.lane)].intervals.start(ref.interval), m_origin + 50'000);
    // A visible range with only the HtoD copy in it.
    panel.setVisibleRange({ m_origin + 39'000, m_origin + 45'000 });
    QVERIFY(waitFor([&] { return panel.jobs()->deliveredCount() == 2 && !panel.jobs()->busy(); }));
    QCOMPARE(panel.model()->rowCount(), 1);
    QCOMPARE(panel.model()->text(0, TransfersPanel::Bytes), QStringLiteral("4.10 kB"));
    QCOMPARE(panel.model()->sortColumn(), int(TransfersPanel::Bytes)); // the sort survives the refill
    panel.setTrace(nullptr, nullptr);
    QCOMPARE(panel.model()->rowCount(), 0);
}

void TestTableModels::idlePanel()
{
    IdlePanel panel;
    Tester tester(panel.model(), kMode);
    panel.setTrace(m_trace, m_analysis);
    QVERIFY(waitFor([&] { return panel.jobs()->deliveredCount() == 1 && !panel.jobs()->busy(); }));
    const IdleModel* m = panel.gapsModel();
    QCOMPARE(m->rowCount(), 5);
    // Longest first: rank 1 [36, 60) us, rank 0 [30, 40), [42, 50), rank 1 [30, 35), rank 0 [58, 60).
    const TimeRange expected[]
        = { { 36'000, 60'000 }, { 30'000, 40'000 }, { 42'000, 50'000 }, { 30'000, 35'000 }, { 58'000, 60'000 } };
    const int rank[] = { 1, 0, 0, 1, 0 };
    for (int r = 0; r < 5; ++r) {
        const TimeRange g = m->gapAt(r);
        QCOMPARE((TimeRange { g.start - m_origin, g.end - m_origin }), expected[r]);
        QCOMPARE(m->text(r, IdlePanel::Rank), QString::fromStdString(m_trace->ranks[std::size_t(rank[r])].label));
        QCOMPARE(m->text(r, IdlePanel::Duration), durationText(expected[r].duration()));
        QCOMPARE(m->index(r, IdlePanel::Duration).data(TableModel::SortRole).toLongLong(), expected[r].duration());
    }
    QCOMPARE(m->text(0, IdlePanel::Duration), QStringLiteral("24 µs"));
    QCOMPARE(m->text(4, IdlePanel::Duration), QStringLiteral("2 µs"));
    // Activating a gap zooms to it with twice its length on either side.
    QSignalSpy zoom(&panel, &IdlePanel::zoomRequested);
    emit panel.table()->activated(m->index(3, 0));
    QCOMPARE(zoom.size(), 1);
    QCOMPARE(zoom.at(0).at(0).value<TimeRange>(), (TimeRange { m_origin + 20'000, m_origin + 45'000 }));
    // The visible range [0, 45) us: the gaps between work that starts in it, rank 0's [30, 40) and rank 1's [30, 35).
    panel.setVisibleRange({ m_origin, m_origin + 45'000 });
    QVERIFY(waitFor([&] { return panel.jobs()->deliveredCount() == 2 && !panel.jobs()->busy(); }));
    QCOMPARE(m->rowCount(), 2);
    QCOMPARE(m->text(0, IdlePanel::Duration), QStringLiteral("10 µs"));
    QCOMPARE(m->text(1, IdlePanel::Duration), QStringLiteral("5 µs"));
    QCOMPARE(m->text(1, IdlePanel::Rank), QString::fromStdString(m_trace->ranks[1].label));
    panel.setTrace(nullptr, nullptr);
    QCOMPARE(m->rowCount(), 0);
}

// Split by role: data-parallel all-reduces (group "1 (mesh_dp)") and tensor-parallel ones ("2 (mesh_tp)") on two
// streams of two ranks, beside a GEMM (us):
//   rank 0: dp [100, 160), tp [140, 200), gemm [150, 170)
//   rank 1: dp [120, 160), tp [130, 200), gemm [170, 180)
// Rank 0 waits 20 us for rank 1's dp all-reduce, rank 1 10 us for rank 0's tp one. Per rank the time in which both
// roles' kernels run is a row of its own ("dp+tp"), so the rows add up to the rank's communication busy and exposed
// time.
void TestTableModels::exposedPanelByRole()
{
    QTemporaryDir dir;
    const char* allReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)";
    for (int r = 0; r < 2; ++r) {
        QByteArray ev = "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 1, "
                        "\"tid\": 1, \"ts\": 0, \"dur\": 1000}";
        ev += kinetoKernel(allReduce, 17, r == 0 ? 100 : 120, r == 0 ? 60 : 40, "1 (mesh_dp)");
        ev += kinetoKernel(allReduce, 18, r == 0 ? 140 : 130, r == 0 ? 60 : 70, "2 (mesh_tp)");
        ev += kinetoKernel("ampere_sgemm_128x64_nn", 7, r == 0 ? 150 : 170, r == 0 ? 20 : 10);
        QFile f(dir.filePath(QStringLiteral("rank%1.json").arg(r)));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + QByteArray::number(r)
            + ", \"world_size\": 2}, \"traceEvents\": [\n" + ev + "\n]}");
    }
    RunOptions options;
    options.collectives = true;
    const OpenedRun run = openRun(dir.path().toStdString(), options);
    ExposedPanel panel;
    Tester tester(panel.roleModel(), kMode);
    QSignalSpy updated(&panel, &ExposedPanel::updated);
    panel.setTrace(run.trace, run.analysis, run.collectives);
    QVERIFY(updated.wait(10000));
    QVERIFY(panel.roleShares().empty());
    QCOMPARE(panel.roleModel()->rowCount(), 0);
    auto* splitBox = panel.findChild<QComboBox*>(QStringLiteral("splitBox"));
    QVERIFY(splitBox);
    QCOMPARE(splitBox->count(), 2);
    splitBox->setCurrentIndex(1);
    emit splitBox->activated(1); // as a click on "By role" does
    QCOMPARE(panel.split(), ExposedPanel::Split::ByRole);
    QVERIFY(updated.wait(10000));
    QVERIFY(panel.table()->isHidden());
    QVERIFY(!panel.roleTable()->isHidden());
    TableModel* m = panel.roleModel();
    QCOMPARE(m->rowCount(), 9);
    struct Expected
    {
        const char* title;
        TimeNs busy, exposed, wait, transfer;
        const char* kernels;
    };
    const Expected rows[] = {
        { "Rank 0 \u00B7 dp", 40'000, 40'000, 20'000, 40'000, "1" },
        { "Rank 0 \u00B7 tp", 40'000, 30'000, 0, 60'000, "1" },
        { "Rank 0 \u00B7 dp+tp", 20'000, 10'000, -1, -1, nullptr },
        { "Rank 1 \u00B7 dp", 10'000, 10'000, 0, 40'000, "1" },
        { "Rank 1 \u00B7 tp", 40'000, 30'000, 10'000, 60'000, "1" },
        { "Rank 1 \u00B7 dp+tp", 30'000, 30'000, -1, -1, nullptr },
        { "All ranks \u00B7 dp", 50'000, 50'000, 20'000, 80'000, "2" },
        { "All ranks \u00B7 tp", 80'000, 60'000, 10'000, 120'000, "2" },
        { "All ranks \u00B7 dp+tp", 50'000, 40'000, -1, -1, nullptr },
    };
    const QString none = QStringLiteral("\u2013");
    for (int i = 0; i < 9; ++i) {
        const Expected& e = rows[i];
        QCOMPARE(m->headerData(i, Qt::Vertical).toString(), QString::fromUtf8(e.title));
        QCOMPARE(m->text(i, 0), durationText(e.busy));
        QCOMPARE(m->text(i, 1), durationText(e.exposed));
        QCOMPARE(m->text(i, 2), e.wait < 0 ? none : durationText(e.wait));
        QCOMPARE(m->text(i, 3), e.transfer < 0 ? none : durationText(e.transfer));
        QCOMPARE(m->text(i, 4), e.kernels ? QString::fromUtf8(e.kernels) : none);
        QCOMPARE(m->index(i, 0).data(Qt::FontRole).value<QFont>().bold(), i >= 6);
    }
    // The parts add up to the panel's totals of each rank and of all ranks, and the numbers are exact.
    const auto& shares = panel.roleShares();
    QCOMPARE(shares.size(), std::size_t(3));
    QCOMPARE(shares[0][0].busyNs, TimeNs(40'000));
    for (std::size_t r = 0; r < shares.size(); ++r) {
        TimeNs busy = 0, exposed = 0, wait = 0, transfer = 0;
        std::uint64_t kernels = 0;
        for (const CommRoleShare& s : shares[r]) {
            busy += s.busyNs;
            exposed += s.exposedNs;
            wait += s.waitNs;
            transfer += s.transferNs;
            kernels += s.count;
        }
        QCOMPARE(busy, panel.stats()[r].commBusyNs);
        QCOMPARE(exposed, panel.stats()[r].exposedNs);
        QCOMPARE(wait, panel.waits()[r].waitNs);
        QCOMPARE(kernels, panel.stats()[r].commKernelCount);
        TimeNs matched = 0;
        for (int k = 0; k < 2; ++k)
            if (r == 2 || std::size_t(k) == r)
                matched += collectiveSplitInWindow(*run.collectives, k, panel.statsWindow()).transferNs;
        QCOMPARE(transfer, matched);
    }
    QCOMPARE(panel.stats()[2].commBusyNs, TimeNs(180'000));
    QCOMPARE(panel.stats()[2].exposedNs, TimeNs(150'000));
    // Step scope: the same, over each rank's step window (which holds all of it).
    panel.setScope(ExposedPanel::Scope::Step, run.analysis->ranks[0].steps.at(0).index);
    QVERIFY(updated.wait(10000));
    QCOMPARE(m->rowCount(), 9);
    QCOMPARE(m->text(7, 0), durationText(80'000));
    // Back to no split: the statistics table again.
    panel.setSplit(ExposedPanel::Split::Totals);
    QVERIFY(updated.wait(10000));
    QVERIFY(!panel.table()->isHidden());
    QVERIFY(panel.roleTable()->isHidden());
    QCOMPARE(m->rowCount(), 0);
}

void TestTableModels::exposedPanel()
{
    ExposedPanel panel;
    Tester tester(panel.model(), kMode);
    QSignalSpy updated(&panel, &ExposedPanel::updated);
    panel.setTrace(m_trace, m_analysis, std::make_shared<CollectiveMatch>(matchCollectives(*m_trace, *m_analysis)));
    QVERIFY(updated.wait(10000));
    TableModel* m = panel.model();
    QCOMPARE(m->rowCount(), 3);
    QCOMPARE(m->headerData(0, Qt::Vertical).toString(), QString::fromStdString(m_trace->ranks[0].label));
    QCOMPARE(m->headerData(2, Qt::Vertical).toString(), QStringLiteral("All ranks"));
    QCOMPARE(m->headerData(0, Qt::Horizontal).toString(), QStringLiteral("Span"));
    // Rank 0: compute 50 us (two GEMMs), communication 10 us, all of it under the first GEMM (hidden).
    QCOMPARE(m->text(0, 1), QStringLiteral("50 µs"));
    QCOMPARE(m->text(0, 2), QStringLiteral("10 µs"));
    QCOMPARE(m->text(0, 4), QStringLiteral("10 µs"));
    QCOMPARE(m->text(0, 5), durationText(0));
    QCOMPARE(m->text(1, 2), QStringLiteral("5 µs"));
    QCOMPARE(m->text(2, 2), QStringLiteral("15 µs")); // all ranks: the sum
    QCOMPARE(m->text(0, 8), QStringLiteral("100.0 %"));
    // Rank 0 waited 5 us for rank 1 to join the all-reduce.
    QCOMPARE(m->text(0, 6), QStringLiteral("5 µs"));
    QCOMPARE(m->text(1, 6), durationText(0));
    QVERIFY(m->index(2, 0).data(Qt::FontRole).value<QFont>().bold());
    QVERIFY(!m->index(0, 0).data(Qt::FontRole).isValid());
    QVERIFY(m->text(2, 0).endsWith(QStringLiteral(" (longest)")));
    QVERIFY(panel.table()->isColumnHidden(11)); // no unclassified time
    // Step scope: the first column's title changes, the rows are refilled.
    panel.setScope(ExposedPanel::Scope::Step, m_analysis->ranks[0].steps.at(0).index);
    QVERIFY(updated.wait(10000));
    QCOMPARE(m->headerData(0, Qt::Horizontal).toString(), QStringLiteral("Step time"));
    QCOMPARE(m->rowCount(), 3);
    QCOMPARE(m->text(0, 1), QStringLiteral("50 µs"));
    panel.setTrace(nullptr, nullptr);
    QCOMPARE(m->rowCount(), 0);
}

void TestTableModels::rulesPanel()
{
    RulesPanel panel;
    Tester tester(panel.model(), kMode);
    QCOMPARE(panel.model()->rowCount(), 0);
    const Rules& rules = m_analysis->rules;
    panel.setRules(&rules, ruleUsage(*m_trace, *m_analysis));
    TableModel* m = panel.model();
    QCOMPARE(m->rowCount(), int(rules.rules().size()));
    QCOMPARE(m->columnCount(), 8);
    // The all-reduce kernels (one per rank, 15 us together) matched one rule.
    int nccl = -1;
    for (int r = 0; r < m->rowCount(); ++r)
        if (m->text(r, 6) != QStringLiteral("0") && m->text(r, 4).startsWith(QStringLiteral("communication")))
            nccl = r;
    QVERIFY(nccl >= 0);
    QCOMPARE(m->text(nccl, 0), QString::number(nccl));
    QCOMPARE(m->text(nccl, 1), QString::fromStdString(rules.rules()[std::size_t(nccl)].id));
    QCOMPARE(m->text(nccl, 6), QStringLiteral("2"));
    QCOMPARE(m->text(nccl, 7), QStringLiteral("15 µs"));
    QVERIFY(!m->index(nccl, 6).data(Qt::ForegroundRole).isValid());
    // A rule that matched nothing is greyed.
    int unused = -1;
    for (int r = 0; r < m->rowCount() && unused < 0; ++r)
        if (m->text(r, 6) == QStringLiteral("0"))
            unused = r;
    QVERIFY(unused >= 0);
    QVERIFY(m->index(unused, 1).data(Qt::ForegroundRole).isValid());
    panel.setRules(nullptr, {});
    QCOMPARE(m->rowCount(), 0);
}

void TestTableModels::collectivesPanel()
{
    CollectivesPanel panel;
    Tester tester(panel.model(), kMode);
    QCOMPARE(panel.model()->rowCount(), 0);
    const auto match = std::make_shared<CollectiveMatch>(matchCollectives(*m_trace, *m_analysis));
    panel.setTrace(m_trace, match);
    const CollectivesModel* m = panel.model();
    QVERIFY(panel.tree()->model() == m);
    QCOMPARE(m->rowCount(), 1);
    QCOMPARE(m->columnCount(), int(CollectivesModel::ColumnCount));
    const QModelIndex group = m->index(0, 0);
    // No process group in a Score-P archive: matched by the stream the kernels ran on.
    QCOMPARE(
        group.data().toString(), QStringLiteral("Group stream 13: 1 collectives, 2 of 2 kernels matched by stream"));
    QVERIFY(m->isSpanned(group));
    QVERIFY(panel.tree()->isFirstColumnSpanned(0, {}));
    QVERIFY(panel.tree()->isExpanded(group));
    // The all-reduce row, then the stragglers.
    QCOMPARE(m->rowCount(group), 2);
    auto text = [&](int row, int column) { return m->index(row, column, group).data().toString(); };
    QCOMPARE(text(0, CollectivesModel::Type), QStringLiteral("allreduce"));
    QCOMPARE(text(0, CollectivesModel::DataType), QString()); // the kernel name alone does not give it
    // The collective lasts from the first member's start to the end: [20, 30) us; the last member's 5 us is latency.
    QCOMPARE(text(0, CollectivesModel::Total), QStringLiteral("10 µs"));
    QCOMPARE(text(0, CollectivesModel::Mean), QStringLiteral("10 µs"));
    QCOMPARE(text(0, CollectivesModel::Count), QStringLiteral("1"));
    QCOMPARE(text(0, CollectivesModel::Latency), QStringLiteral("5 µs"));
    QCOMPARE(text(0, CollectivesModel::Waiting), QStringLiteral("33.3 %")); // 5 of the members' 15 us
    QCOMPARE(m->index(0, CollectivesModel::Count, group).data(Qt::TextAlignmentRole).value<Qt::Alignment>(),
        Qt::AlignRight | Qt::AlignVCenter);
    QVERIFY(!m->isSpanned(m->index(0, 0, group)));
    QCOMPARE(text(1, 0),
        QStringLiteral("Stragglers: %1 last in 1 (others waited 5 µs)")
            .arg(QString::fromStdString(m_trace->ranks[1].label)));
    QVERIFY(m->isSpanned(m->index(1, 0, group)));
    QVERIFY(panel.tree()->isFirstColumnSpanned(1, group));
    QVERIFY(!m->index(1, 1, group).data().isValid());
    QCOMPARE(m->rowCount(m->index(0, 0, group)), 0);
    // One rank: nothing to match.
    panel.setTrace(nullptr, nullptr);
    QCOMPARE(m->rowCount(), 0);
    panel.setTrace(m_trace, match);
    QCOMPARE(m->rowCount(), 1);
}

// Two ranks whose all-reduce and all-to-all both run as NCCL SendRecv kernels (one process group): with the analysis
// the dock's rows are the operations the program called, each saying which kernels carried it.
void TestTableModels::collectivesByOperation()
{
    QTemporaryDir dir;
    const QByteArray pg = R"(, "Process Group Name": "0", "Process Group Ranks": "[0, 1]")";
    for (int r = 0; r < 2; ++r) {
        QByteArray ev = R"({"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}})";
        auto cpu = [&](const char* name, double ts, double dur, int corr) {
            ev += QByteArray(R"(, {"ph": "X", "cat": "cpu_op", "name": ")") + name + R"(", "pid": 1, "tid": 1, "ts": )"
                + QByteArray::number(ts) + R"(, "dur": )" + QByteArray::number(dur)
                + (corr >= 0 ? R"(, "args": {"correlation": )" + QByteArray::number(corr) + "}}" : QByteArray("}"));
        };
        auto kernel = [&](double ts, double dur, int corr) {
            ev += QByteArray(
                      R"K(, {"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(x)", )K")
                + R"("pid": 0, "tid": 17, "ts": )" + QByteArray::number(ts) + R"(, "dur": )" + QByteArray::number(dur)
                + R"(, "args": {"device": 0, "stream": 17, "correlation": )" + QByteArray::number(corr) + pg + "}}";
        };
        cpu("nccl:all_reduce", 100, 20, -1);
        cpu("cudaLaunchKernel", 101, 2, 1);
        kernel(200, 50 + 10 * r, 1);
        cpu("nccl:all_to_all", 300, 20, -1);
        cpu("cudaLaunchKernel", 301, 2, 2);
        cpu("cudaLaunchKernel", 305, 2, 3);
        kernel(400, 30, 2);
        kernel(440, 20, 3);
        QFile f(dir.filePath(QStringLiteral("rank%1.json").arg(r)));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"schemaVersion\": 1, \"traceEvents\": [" + ev + "]}");
    }
    RunOptions options;
    options.collectives = true;
    const OpenedRun run = openRun(dir.path().toStdString(), options);
    CollectivesPanel panel;
    panel.setTrace(run.trace, run.collectives, run.analysis);
    const CollectivesModel* m = panel.model();
    QCOMPARE(m->rowCount(), 1);
    const QModelIndex group = m->index(0, 0);
    QCOMPARE(m->rowCount(group), 3); // all_reduce, all_to_all, stragglers
    auto text = [&](int row, int column) { return m->index(row, column, group).data().toString(); };
    QCOMPARE(text(0, CollectivesModel::Type), QStringLiteral("all_reduce (sendrecv kernels)"));
    QCOMPARE(text(0, CollectivesModel::Count), QStringLiteral("1"));
    QCOMPARE(text(1, CollectivesModel::Type), QStringLiteral("all_to_all (sendrecv kernels)"));
    QCOMPARE(text(1, CollectivesModel::Count), QStringLiteral("2"));
    // Without the analysis: one row for the SendRecv kernels, as the kernels' names say.
    panel.setTrace(run.trace, run.collectives);
    QCOMPARE(m->rowCount(m->index(0, 0)), 2);
    QCOMPARE(m->index(0, CollectivesModel::Type, m->index(0, 0)).data().toString(), QStringLiteral("sendrecv"));
}

// The kernels table (a model of its own, behind a filter proxy).
void TestTableModels::kernelsPanel()
{
    KernelsPanel panel;
    Tester tester(panel.model(), kMode);
    Tester proxyTester(panel.proxy(), kMode);
    panel.setTrace(m_trace, m_analysis);
    QVERIFY(waitFor([&] { return panel.model()->rowCount() > 0 && !panel.jobs()->busy(); }));
    const KernelsModel* m = panel.model();
    QCOMPARE(std::size_t(m->rowCount()), kernelTable(*m_trace, *m_analysis, m_trace->extent).size());
    int gemm = -1;
    for (int r = 0; r < m->rowCount(); ++r)
        if (m->index(r, KernelsModel::Name).data().toString() == QStringLiteral("gemm"))
            gemm = r;
    QVERIFY(gemm >= 0);
    // Two GEMMs of 20 and 30 us on each rank.
    auto text = [&](int column) { return m->index(gemm, column).data().toString(); };
    QCOMPARE(text(KernelsModel::Count), QStringLiteral("4"));
    QCOMPARE(text(KernelsModel::Total), QStringLiteral("100 µs"));
    QCOMPARE(text(KernelsModel::Mean), QStringLiteral("25 µs"));
    QCOMPARE(text(KernelsModel::Min), QStringLiteral("20 µs"));
    QCOMPARE(text(KernelsModel::Max), QStringLiteral("30 µs"));
    panel.setFilterText(QStringLiteral("gemm"));
    QCOMPARE(panel.proxy()->rowCount(), 1);
    QCOMPARE(panel.proxy()->index(0, KernelsModel::Total).data().toString(), QStringLiteral("100 µs"));
    panel.setFilterText(QString());
    panel.setTrace(nullptr, nullptr);
    QCOMPARE(m->rowCount(), 0);
}

QTEST_MAIN(TestTableModels)
#include "tst_tablemodels.moc"
