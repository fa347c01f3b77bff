// SPDX-License-Identifier: GPL-3.0-or-later
// End-to-end GUI tests on the generated demo trace (real OTF2 loader + analysis) and on
// TraceBuilder traces behind an injected load function.
#include "common/labels.h"
#include "figure/exportfiguredialog.h"
#include "panels/collectivesmodel.h"
#include "panels/collectivespanel.h"
#include "panels/detailspanel.h"
#include "panels/exposedpanel.h"
#include "panels/idlepanel.h"
#include "panels/kernelspanel.h"
#include "panels/rulespanel.h"
#include "panels/transferspanel.h"
#include "shell/emptystate.h"
#include "shell/mainwindow.h"
#include "shell/recentfilesmenu.h"
#include "shell/shortcutsdialog.h"
#include "support/kinetotraces.h"
#include "support/nsystraces.h"
#include "support/testtraces.h"
#include "timeline/timelineplot.h"

#include <QDockWidget>
#include <QDropEvent>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QInputDialog>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMimeData>
#include <QProcess>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>
#include <QTreeView>
#include <QUrl>
#include <thread>

using namespace exposure;
using L = testing::DdpTraceLayout;

// Writes the generated 1-rank torch.profiler trace (support/kinetotraces.h) into `dir` and opens it in `w`.
// Two torch.profiler ranks with ten all-reduces of process group 0; rank 1's clock reads 5 ms later.
static QByteArray shiftedRank(int rank, TimeNs offsetNs)
{
    QByteArray events;
    for (int k = 0; k < 10; ++k) {
        const TimeNs start = 1'000'000 + TimeNs(k) * 400'000 + (rank == 0 ? 0 : 50'000) + offsetNs;
        const TimeNs end = 1'000'000 + TimeNs(k) * 400'000 + 200'000 + offsetNs;
        events += QByteArray(k ? ",\n" : "\n")
            + R"({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 17, "ts": )"
            + QByteArray::number(double(start) / 1000.0, 'f', 3) + R"(, "dur": )"
            + QByteArray::number(double(end - start) / 1000.0, 'f', 3)
            + R"(, "args": {"device": 0, "stream": 17, "Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": 2, "dtype": "Float", "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]"}})";
    }
    return R"({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": )" + QByteArray::number(rank)
        + R"(, "world_size": 2}, "traceEvents": [)" + events + "]}";
}

static bool openGeneratedRank(MainWindow& w, const QTemporaryDir& dir)
{
    const QString path = testing::write(dir, QStringLiteral("rank0.json"), testing::rankTrace(0, 1));
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    w.openTrace(path);
    return loaded.wait(10000);
}

namespace {

// Shows `w` at `size` and loads a generated DDP trace of `ranks` ranks and `steps` steps through its loader; false
// where the window did not appear or the trace did not load.
bool showWithDdpTrace(MainWindow& w, QSize size, int ranks, int steps)
{
    w.resize(size);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w))
        return false;
    w.loader()->setLoadFunction(
        [ranks, steps](const std::string&, const LoadOptions&) { return testing::makeDdpTrace(ranks, steps); });
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    w.openTrace(QStringLiteral("generated"));
    return loaded.wait(10000);
}

} // namespace

class TestMainWindow : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void opensTorchProfilerFolder();
    void opensDroppedNsightReport();
    void idlePanelListsGapsAndZooms();
    void everyShortcutIsBoundOnce();
    void shortcutListCoversEveryAction();
    void transfersPanelListsCopies();
    void opensDemoTraceRows();
    void clickFillsDetails();
    void exposedPanelEqualsCliStats();
    void visibleRangeStatsFollowZoom();
    void kernelsPanelHighlights();
    void badTraceShowsError();
    void cancelKeepsPreviousTrace();
    void stalledLoadFailsAndWindowStaysUsable();
    void keyboardZoomAndHistory();
    void clickOnFoldExplainsIt();
    void collectivesInDetailsAndExposed();
    void sendLinksToItsReceive();
    void screenshotCommandLine();
    void reloadKeepsZoomAndSelection();
    void emptyStateInsteadOfEmptyTimeline();
    void failureMessageLeavesStatusBar();
    void exposedTableFitsAt1400x900();
    void savedFigureIsConfirmed();
    void clocksAlignedAcrossHosts();

private:
    bool loadDemo(MainWindow& w);
    QString m_demo = QStringLiteral(EXPOSURE_DEMO_TRACE_DIR);
};

void TestMainWindow::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true); // keep QSettings (recent files, geometry) out of the user's config
    QVERIFY2(QFileInfo(m_demo).isDir(), qPrintable(m_demo));
}

bool TestMainWindow::loadDemo(MainWindow& w)
{
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    w.openTrace(m_demo);
    return loaded.wait(20000);
}

void TestMainWindow::opensDemoTraceRows()
{
    MainWindow w;
    w.resize(1400, 900);
    QVERIFY(loadDemo(w));
    const QStringList expected = {
        QStringLiteral("Rank 0 \u00B7 CUDA[0:7] compute"),
        QStringLiteral("CUDA[0:17] NCCL"),
        QStringLiteral("overlap"),
        QStringLiteral("Master thread"),
        QString(),
        QString(),
        QString(), // nesting depths 0..3 (3: 3 and deeper)
        QStringLiteral("Rank 1 \u00B7 CUDA[1:7] compute"),
        QStringLiteral("CUDA[1:17] NCCL"),
        QStringLiteral("overlap"),
        QStringLiteral("Master thread"),
        QString(),
        QString(),
        QString(),
    };
    QCOMPARE(w.timeline()->rowLabels(), expected);
    // The top CPU sub-row shows the ProfilerStep regions (depth 0), which the deeper regions no longer hide.
    const int cpuLane = w.timeline()->scene().rows[3].lane;
    const auto& cpu = w.trace()->ranks[0].lanes[std::size_t(cpuLane)].intervals;
    for (std::uint32_t i = 0; i < cpu.size(); ++i)
        QCOMPARE(w.timeline()->scene().rowOf({ 0, cpuLane, i }), 3 + std::min<int>(cpu.depth(i), 3));
    // The details panel says which depth a selected CPU region has.
    std::uint32_t nested = 0;
    while (nested < cpu.size() && cpu.depth(nested) != 1)
        ++nested;
    QVERIFY(nested < cpu.size());
    w.timeline()->select({ 0, cpuLane, nested });
    QCOMPARE(w.detailsPanel()->field(QStringLiteral("Nesting depth")), QStringLiteral("1"));
    QVERIFY(w.windowTitle().contains(QStringLiteral("demo-trace")));
    // A new trace shows the whole-trace window: the recorded activity (Trace::activity), which ends with the last GPU
    // work, before the CPU's last region ends.
    QCOMPARE(w.visibleRange(), activityRange(*w.trace()));
    QVERIFY(w.trace()->activity.end < w.trace()->extent.end);
    QVERIFY(w.recentFilesMenu()->paths().contains(QFileInfo(m_demo).absoluteFilePath()));
    // Hiding CPU threads and overlap lanes from the View menu.
    TimelineOptions o = w.timelineOptions();
    o.showCpu = false;
    o.showOverlap = false;
    o.range.reset();
    w.timeline()->setOptions(o);
    QCOMPARE(w.timeline()->rowLabels().size(), 4);
}

void TestMainWindow::clickFillsDetails()
{
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(loadDemo(w));
    const auto trace = w.trace();
    // The first AllReduce on rank 0's NCCL stream: find it, zoom to it, click its pixel.
    const Rank& r0 = trace->ranks[0];
    int ncclLane = -1;
    for (std::size_t l = 0; l < r0.lanes.size(); ++l)
        if (r0.lanes[l].name == "CUDA[0:17]")
            ncclLane = int(l);
    QVERIFY(ncclLane >= 0);
    const auto& t = r0.lanes[ncclLane].intervals;
    QVERIFY(t.size() > 1);
    const std::uint32_t k = 1;
    w.timeline()->setVisibleRange({ t.start(k) - 200'000, t.end(k) + 200'000 });
    w.timeline()->replot();
    const auto p = w.timeline()->pixelOf({ 0, ncclLane, k });
    QVERIFY(p);
    QTest::mouseClick(w.timeline(), Qt::LeftButton, Qt::NoModifier, *p);
    const DetailsPanel* d = w.detailsPanel();
    if (qEnvironmentVariableIsSet("EXPOSURE_TEST_SHOT")) // for looking at it
        w.grab().save(qEnvironmentVariable("EXPOSURE_TEST_SHOT"));
    const std::string& name = trace->name(t.name(k));
    const auto& nc = w.analysis()->names[t.name(k)];
    QCOMPARE(d->field(QStringLiteral("Name")), QString::fromStdString(nc.displayName.empty() ? name : nc.displayName));
    QCOMPARE(d->field(QStringLiteral("Category")), QStringLiteral("communication"));
    QCOMPARE(d->field(QStringLiteral("Collective")), QString::fromStdString(nc.collective));
    QCOMPARE(d->field(QStringLiteral("Rank")), QStringLiteral("Rank 0"));
    QCOMPARE(d->field(QStringLiteral("Stream")), QStringLiteral("CUDA[0:17] (stream 17)"));
    QCOMPARE(d->field(QStringLiteral("Duration")),
        QStringLiteral("%1 (%2 ns)").arg(durationText(t.duration(k)), groupDigits(std::uint64_t(t.duration(k)))));
    const InstanceOverlap ov = instanceOverlap(*trace, *w.analysis(), { 0, ncclLane, std::uint32_t(k) });
    QCOMPARE(ov.hiddenNs + ov.exposedNs, t.duration(k));
    // Like every other time: "335.3 µs (335 323 ns, 97.4 %)".
    auto part = [&](TimeNs ns) {
        return QStringLiteral("%1 (%2 ns, %3 %)")
            .arg(durationText(ns), groupDigits(std::uint64_t(ns)))
            .arg(100.0 * double(ns) / double(t.duration(k)), 0, 'f', 1);
    };
    QCOMPARE(d->field(QStringLiteral("Hidden")), part(ov.hiddenNs));
    QCOMPARE(d->field(QStringLiteral("Exposed")), part(ov.exposedNs));
    QVERIFY(!d->field(QStringLiteral("Step")).isEmpty());
    // Statistics over all instances, and next instance.
    std::uint64_t count = 0;
    for (const auto& rank : trace->ranks)
        for (const auto& lane : rank.lanes)
            for (std::size_t i = 0; i < lane.intervals.size(); ++i)
                count += lane.intervals.name(i) == t.name(k);
    QCOMPARE(d->field(QStringLiteral("Count")), groupDigits(count));
    emit const_cast<DetailsPanel*>(d)->nextInstanceRequested();
    QVERIFY(w.timeline()->selection());
    const std::uint32_t next = w.timeline()->selection()->interval;
    QVERIFY(next > k);
    QCOMPARE(t.name(next), t.name(k));
    for (std::uint32_t i = k + 1; i < next; ++i)
        QVERIFY(t.name(i) != t.name(k));
}

void TestMainWindow::exposedPanelEqualsCliStats()
{
    MainWindow w;
    QVERIFY(loadDemo(w));
    ExposedPanel* panel = w.exposedPanel();
    QTRY_VERIFY_WITH_TIMEOUT(!panel->stats().empty(), 10000);
    QCOMPARE(panel->stats().size(), w.trace()->ranks.size() + 1);

    QProcess cli;
    cli.start(QStringLiteral(EXPOSURE_CLI), { QStringLiteral("stats"), m_demo, QStringLiteral("--json") });
    QVERIFY(cli.waitForFinished(30000));
    QCOMPARE(cli.exitCode(), 0);
    const QJsonObject json = QJsonDocument::fromJson(cli.readAllStandardOutput()).object();
    const QJsonArray ranks = json.value(QStringLiteral("ranks")).toArray();
    QCOMPARE(std::size_t(ranks.size()), w.trace()->ranks.size());
    auto check = [](const WindowStats& s, const QJsonObject& o) {
        QCOMPARE(s.commBusyNs, o.value(QStringLiteral("comm_busy_ns")).toInteger());
        QCOMPARE(s.commKernelSumNs, o.value(QStringLiteral("comm_kernel_sum_ns")).toInteger());
        QCOMPARE(s.computeBusyNs, o.value(QStringLiteral("compute_busy_ns")).toInteger());
        QCOMPARE(s.overlappedNs, o.value(QStringLiteral("overlapped_ns")).toInteger());
        QCOMPARE(s.exposedNs, o.value(QStringLiteral("exposed_ns")).toInteger());
        QCOMPARE(s.backwardOverlappedNs, o.value(QStringLiteral("backward_overlapped_ns")).toInteger());
        QCOMPARE(s.idleNs, o.value(QStringLiteral("idle_ns")).toInteger());
        QCOMPARE(s.spanNs, o.value(QStringLiteral("span_ns")).toInteger());
        QCOMPARE(s.unclassifiedNs, o.value(QStringLiteral("unclassified_ns")).toInteger());
        QVERIFY(s.exposedNs > 0);
    };
    for (int r = 0; r < ranks.size(); ++r)
        check(panel->stats()[r], ranks[r].toObject());
    check(panel->stats().back(), json.value(QStringLiteral("total")).toObject());
    // The table shows the same numbers.
    QCOMPARE(panel->model()->text(0, 5), durationText(panel->stats()[0].exposedNs));
    // Waiting for peers: whole trace = matchCollectives' per-rank totals; a step scope clips to each rank's step.
    const auto match = w.collectives();
    QVERIFY(match && !match->groups.empty());
    QCOMPARE(panel->waits().size(), w.trace()->ranks.size() + 1);
    TimeNs waitSum = 0;
    for (std::size_t r = 0; r < w.trace()->ranks.size(); ++r) {
        QCOMPARE(panel->waits()[r].waitNs, match->ranks[r].waitNs);
        QCOMPARE(panel->waits()[r].exposedWaitNs, match->ranks[r].exposedWaitNs);
        waitSum += match->ranks[r].waitNs;
    }
    QVERIFY(waitSum > 0); // the demo's ranks do wait for each other
    QCOMPARE(panel->waits().back().waitNs, waitSum);
    QCOMPARE(panel->model()->headerData(0, Qt::Horizontal).toString(), QStringLiteral("Span"));
    const StepWindow step = w.analysis()->ranks[0].steps.at(1);
    panel->setScope(ExposedPanel::Scope::Step, step.index);
    QTRY_COMPARE_WITH_TIMEOUT(
        panel->model()->headerData(0, Qt::Horizontal).toString(), QStringLiteral("Step time"), 10000);
    QTRY_VERIFY_WITH_TIMEOUT(panel->waits().size() == w.trace()->ranks.size() + 1
            && panel->waits()[0].waitNs == collectiveWaitInWindow(*match, *w.analysis(), 0, step.range).waitNs,
        10000);
    for (std::size_t r = 0; r < w.trace()->ranks.size(); ++r) {
        TimeRange range;
        for (const auto& st : w.analysis()->ranks[r].steps)
            if (st.index == step.index)
                range = st.range;
        const auto expected = collectiveWaitInWindow(*match, *w.analysis(), int(r), range);
        QCOMPARE(panel->waits()[r].waitNs, expected.waitNs);
        QCOMPARE(panel->waits()[r].exposedWaitNs, expected.exposedWaitNs);
    }
    QVERIFY(panel->waits().back().waitNs > 0);
    QVERIFY(panel->waits().back().waitNs < waitSum);
    // Statistics and waiting share each rank's step window on the GPU: nothing exceeds the step, waiting stays
    // within communication; the All-ranks row shows the longest step, not a sum of step times.
    const std::size_t rankCount = w.trace()->ranks.size();
    QCOMPARE(panel->lengths().size(), rankCount);
    TimeNs longest = 0;
    for (std::size_t r = 0; r < rankCount; ++r) {
        const WindowStats& s = panel->stats()[r];
        QVERIFY(panel->waits()[r].waitNs <= s.commBusyNs);
        QVERIFY(s.computeBusyNs <= panel->lengths()[r] && s.gpuBusyNs <= panel->lengths()[r]);
        QCOMPARE(panel->lengths()[r], w.analysis()->ranks[r].steps.at(1).range.duration());
        QCOMPARE(panel->model()->text(int(r), 0), durationText(panel->lengths()[r]));
        longest = std::max(longest, panel->lengths()[r]);
    }
    QCOMPARE(panel->model()->text(int(rankCount), 0), QStringLiteral("%1 (longest)").arg(durationText(longest)));
}

void TestMainWindow::visibleRangeStatsFollowZoom()
{
    MainWindow w;
    QVERIFY(loadDemo(w));
    ExposedPanel* panel = w.exposedPanel();
    panel->setScope(ExposedPanel::Scope::VisibleRange);
    const TimeRange half { w.trace()->extent.start, w.trace()->extent.end / 2 };
    // Several quick zooms: only the newest result may be delivered.
    w.timeline()->setVisibleRange({ 0, w.trace()->extent.end / 4 });
    w.timeline()->setVisibleRange({ 0, w.trace()->extent.end / 3 });
    w.timeline()->setVisibleRange(half);
    QTRY_COMPARE_WITH_TIMEOUT(panel->statsWindow(), half, 10000);
    QTest::qWait(200);
    QCOMPARE(panel->statsWindow(), half);
    for (std::size_t r = 0; r < w.trace()->ranks.size(); ++r) {
        const WindowStats expected = computeStats(*w.trace(), *w.analysis(), int(r), half);
        QCOMPARE(panel->stats()[r].exposedNs, expected.exposedNs);
        QCOMPARE(panel->stats()[r].overlappedNs, expected.overlappedNs);
        QCOMPARE(panel->stats()[r].computeBusyNs, expected.computeBusyNs);
    }
}

void TestMainWindow::kernelsPanelHighlights()
{
    MainWindow w;
    QVERIFY(loadDemo(w));
    KernelsPanel* k = w.kernelsPanel();
    QTRY_VERIFY_WITH_TIMEOUT(k->model()->rowCount() > 0, 10000);
    const auto rows = kernelTable(*w.trace(), *w.analysis(), w.trace()->extent);
    QCOMPARE(std::size_t(k->model()->rowCount()), rows.size());
    k->setFilterText(QStringLiteral("AllReduce"));
    QVERIFY(k->proxy()->rowCount() >= 1);
    QVERIFY(k->proxy()->rowCount() < k->model()->rowCount());
    for (int r = 0; r < k->proxy()->rowCount(); ++r)
        QVERIFY(k->proxy()->index(r, 0).data().toString().contains(QStringLiteral("AllReduce"), Qt::CaseInsensitive));
    k->view()->setCurrentIndex(k->proxy()->index(0, 0));
    const auto id = StringId(k->proxy()->index(0, 0).data(Qt::UserRole + 1).toUInt());
    QCOMPARE(w.timeline()->highlightedName(), id);
    QVERIFY(w.trace()->name(id).find("AllReduce") != std::string::npos);
}

void TestMainWindow::badTraceShowsError()
{
    QTemporaryDir dir;
    const QString bad = dir.filePath(QStringLiteral("traces.otf2"));
    {
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("this is not an OTF2 anchor file\n");
    }
    MainWindow w;
    QStringList messages;
    w.setMessageSink([&](const QString&, const QString& text) { messages << text; });
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.openTrace(bad);
    QVERIFY(failed.wait(10000));
    QCOMPARE(messages.size(), 1);
    // "<file>: <problem>" naming the archive (or one of its files) and what is wrong.
    QVERIFY2(messages.first().startsWith(dir.path()), qPrintable(messages.first()));
    QVERIFY2(messages.first().section(QStringLiteral(": "), 1).size() > 5, qPrintable(messages.first()));
    QVERIFY(!w.trace());
    // A missing path, too.
    w.openTrace(dir.filePath(QStringLiteral("nope")));
    QVERIFY(failed.wait(10000));
    QCOMPARE(messages.size(), 2);
    QVERIFY2(messages.last().contains(QStringLiteral("nope")), qPrintable(messages.last()));
    QVERIFY(!w.trace());
}

void TestMainWindow::cancelKeepsPreviousTrace()
{
    MainWindow w;
    // First a small trace, then a "large" one whose generation only stops when cancelled.
    std::atomic<bool> sawCancel { false };
    w.loader()->setLoadFunction([&](const std::string& path, const LoadOptions& o) -> std::shared_ptr<Trace> {
        if (path == "small")
            return testing::makeDdpTrace(2, 3);
        TraceBuilder b;
        const int r = b.addRank("Rank 0");
        const int lane = b.addLane(r, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
        for (TimeNs i = 0;; ++i) {
            if (o.cancel && o.cancel->load()) {
                sawCancel = true;
                throw LoadCancelled();
            }
            b.addInterval(r, lane, i * 100, i * 100 + 50, "k", RegionKind::Kernel);
            if (i % 100000 == 0 && o.progress)
                o.progress(LoadProgress { std::uint64_t(i), 100'000'000, "large" });
            if (i > 50'000'000) // never reached in the test; bounded just in case
                return b.finish();
        }
    });
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    w.openTrace(QStringLiteral("small"));
    QVERIFY(loaded.wait(10000));
    const auto previous = w.trace();
    QVERIFY(previous);
    const QStringList rows = w.timeline()->rowLabels();

    QSignalSpy cancelled(&w, &MainWindow::loadCancelled);
    w.openTrace(QStringLiteral("large"));
    QTest::qWait(150);
    QVERIFY(w.loader()->isLoading());
    QElapsedTimer timer;
    timer.start();
    w.cancelLoading();
    QCOMPARE(cancelled.count(), 1); // the GUI returns at once; the job winds down in the background
    QCOMPARE(w.trace(), previous);
    QCOMPARE(w.timeline()->rowLabels(), rows);
    QCOMPARE(w.tracePath(), QStringLiteral("small"));
    w.loader()->waitForIdle();
    QVERIFY(sawCancel.load());
    QTest::qWait(50);
    QCOMPARE(w.trace(), previous); // nothing late replaced it
    QCOMPARE(loaded.count(), 1);
}

// A reader stuck without progress (as libotf2 on some damaged event files) and deaf to the cancel flag: the load
// fails with one line after the stall time, and the window goes on loading other traces.
void TestMainWindow::stalledLoadFailsAndWindowStaysUsable()
{
    MainWindow w;
    QStringList messages;
    w.setMessageSink([&](const QString&, const QString& text) { messages << text; });
    w.loader()->setStallSeconds(1);
    auto release = std::make_shared<std::atomic<bool>>(false);
    w.loader()->setLoadFunction([release](const std::string& path, const LoadOptions&) -> std::shared_ptr<Trace> {
        if (path == "small")
            return testing::makeDdpTrace(2, 3);
        while (!release->load())
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return testing::makeDdpTrace(1, 1);
    });
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    QElapsedTimer timer;
    timer.start();
    w.openTrace(QStringLiteral("stuck"));
    QVERIFY(failed.wait(10000));
    QVERIFY(timer.elapsed() >= 1000);
    QCOMPARE(messages.size(), 1);
    QCOMPARE(messages.first(),
        QStringLiteral("stuck: reading stopped making progress for 1 s inside the OTF2 library "
                       "(a damaged event file: check it with otf2-print)"));
    QVERIFY(!w.loader()->isLoading());
    QVERIFY(!w.trace());

    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    w.openTrace(QStringLiteral("small"));
    QVERIFY(loaded.wait(10000));
    QCOMPARE(w.trace()->ranks.size(), std::size_t(2));
    QCOMPARE(loaded.count(), 1);
    release->store(true); // the reader left behind ends; nothing of it is delivered
    QTest::qWait(100);
    QCOMPARE(loaded.count(), 1);
    QCOMPARE(w.trace()->ranks.size(), std::size_t(2));
}

// Two ranks: one AllReduce that rank 0 starts 2 ms before rank 1 (rank 0 waits 2 ms, compute hides the first 1 ms
// of it), and one AllReduce on rank 0 only (unmatched).
void TestMainWindow::collectivesInDetailsAndExposed()
{
    MainWindow w;
    w.resize(1400, 900);
    w.loader()->setLoadFunction([](const std::string&, const LoadOptions&) {
        const std::string allReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
        TraceBuilder b;
        for (int r = 0; r < 2; ++r) {
            b.addRank("Rank " + std::to_string(r), "node0", r);
            b.addLane(r, "CUDA[" + std::to_string(r) + ":7]", LaneKind::GpuStream, r, 7);
            b.addLane(r, "CUDA[" + std::to_string(r) + ":17]", LaneKind::GpuStream, r, 17);
        }
        b.addInterval(0, 0, 0, 2 * L::kMs, "ampere_sgemm_128x64_nn", RegionKind::Kernel);
        b.addInterval(1, 0, 0, 1 * L::kMs, "ampere_sgemm_128x64_nn", RegionKind::Kernel);
        b.addInterval(0, 1, 1 * L::kMs, 5 * L::kMs, allReduce, RegionKind::Kernel);
        b.addInterval(1, 1, 3 * L::kMs, 5 * L::kMs + 1000, allReduce, RegionKind::Kernel);
        b.addInterval(0, 1, 10 * L::kMs, 11 * L::kMs, allReduce, RegionKind::Kernel);
        return b.finish();
    });
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    w.openTrace(QStringLiteral("two-ranks"));
    QVERIFY(loaded.wait(10000));
    QVERIFY(w.collectives());
    QCOMPARE(w.collectives()->groups.size(), std::size_t(1));

    DetailsPanel* d = w.detailsPanel();
    w.timeline()->select({ 0, 1, 0 });
    QCOMPARE(d->field(QStringLiteral("Ranks in collective")), QStringLiteral("2"));
    QCOMPARE(d->field(QStringLiteral("Waiting for peers")),
        QStringLiteral("%1 (2 000 000 ns, 50.0 %)").arg(durationText(2 * L::kMs)));
    QCOMPARE(d->field(QStringLiteral("Transfer")),
        QStringLiteral("%1 (2 000 000 ns, 50.0 %)").arg(durationText(2 * L::kMs)));
    QCOMPARE(d->field(QStringLiteral("Arrived last")),
        QStringLiteral("Rank 1 arrived last, %1 after this rank").arg(durationText(2 * L::kMs)));
    QCOMPARE(d->summary(),
        QStringLiteral("Waiting for peers %1 (50.0 %) · transfer %1 · Rank 1 arrived last")
            .arg(durationText(2 * L::kMs)));
    QCOMPARE(d->peers().size(), 1);
    QCOMPARE(d->peers().front(), (TimelineSelection { 1, 1, 0 }));
    QVERIFY(d->browser()->toHtml().contains(QStringLiteral("peer:0")));
    // Following the peer link selects rank 1's instance and shows the whole collective.
    emit d->browser()->anchorClicked(QUrl(QStringLiteral("peer:0")));
    QVERIFY(w.timeline()->selection());
    QCOMPARE(*w.timeline()->selection(), (TimelineSelection { 1, 1, 0 }));
    QVERIFY(w.visibleRange().start <= 1 * L::kMs && w.visibleRange().end >= 5 * L::kMs + 1000);
    QVERIFY(w.visibleRange().duration() < 8 * L::kMs);
    QCOMPARE(d->field(QStringLiteral("Rank")), QStringLiteral("Rank 1"));
    QCOMPARE(d->field(QStringLiteral("Waiting for peers")), QStringLiteral("%1 (0 ns, 0.0 %)").arg(durationText(0)));
    QVERIFY(d->field(QStringLiteral("Arrived last")).startsWith(QStringLiteral("this rank (Rank 1)")));
    // The unmatched one.
    w.timeline()->select({ 0, 1, 1 });
    QCOMPARE(d->field(QStringLiteral("Peers")), QStringLiteral("no matching instance on other ranks"));
    QVERIFY(d->peers().isEmpty());
    QVERIFY(d->summary().isEmpty());
    QCOMPARE(w.timeline()->scene().collectives, w.collectives());

    // Exposed Communication panel, whole trace: rank 0 waits 2 ms, of which [2 ms, 3 ms) is not hidden.
    ExposedPanel* panel = w.exposedPanel();
    panel->setScope(ExposedPanel::Scope::WholeTrace);
    QTRY_COMPARE_WITH_TIMEOUT(panel->waits().size(), std::size_t(3), 10000);
    QCOMPARE(panel->waits()[0].waitNs, 2 * L::kMs);
    QCOMPARE(panel->waits()[0].exposedWaitNs, 1 * L::kMs);
    QCOMPARE(panel->waits()[1].waitNs, TimeNs(0));
    QCOMPARE(panel->waits()[2].waitNs, 2 * L::kMs);
    QCOMPARE(panel->model()->headerData(0, Qt::Horizontal).toString(), QStringLiteral("Span"));
    QCOMPARE(panel->model()->headerData(6, Qt::Horizontal).toString(), QStringLiteral("Waiting"));
    QCOMPARE(panel->model()->headerData(7, Qt::Horizontal).toString(), QStringLiteral("Exposed\nwaiting"));
    QCOMPARE(panel->model()->text(0, 6), durationText(2 * L::kMs));
    QCOMPARE(panel->model()->text(0, 7), durationText(1 * L::kMs));
    // Visible range [2.5 ms, 11 ms): 0.5 ms of waiting, all of it exposed.
    panel->setScope(ExposedPanel::Scope::VisibleRange);
    w.timeline()->setVisibleRange({ 2'500'000, 11 * L::kMs });
    QTRY_COMPARE_WITH_TIMEOUT(panel->statsWindow(), (TimeRange { 2'500'000, 11 * L::kMs }), 10000);
    QCOMPARE(panel->waits()[0].waitNs, TimeNs(500'000));
    QCOMPARE(panel->waits()[0].exposedWaitNs, TimeNs(500'000));
    QCOMPARE(panel->model()->headerData(0, Qt::Horizontal).toString(), QStringLiteral("Span"));
}

void TestMainWindow::keyboardZoomAndHistory()
{
    MainWindow w;
    QVERIFY(showWithDdpTrace(w, QSize(1200, 800), 1, 4));
    const TimeRange full = w.visibleRange();
    QCOMPARE(full, (TimeRange { 0, 3 * L::kStep + 9'200'000 }));
    w.timeline()->setFocus();
    QTest::keyClick(&w, Qt::Key_Equal, Qt::ControlModifier);
    const TimeRange in { full.duration() / 4, full.end - full.duration() / 4 };
    QCOMPARE(w.visibleRange(), in);
    QTest::keyClick(w.timeline(), Qt::Key_Right);
    const TimeNs shift = in.duration() / 5;
    QCOMPARE(w.visibleRange(), (TimeRange { in.start + shift, in.end + shift }));
    QTest::keyClick(&w, Qt::Key_Left, Qt::AltModifier);
    QCOMPARE(w.visibleRange(), in);
    QTest::keyClick(&w, Qt::Key_Left, Qt::AltModifier);
    QCOMPARE(w.visibleRange(), full);
    QTest::keyClick(&w, Qt::Key_Right, Qt::AltModifier);
    QCOMPARE(w.visibleRange(), in);
    QTest::keyClick(&w, Qt::Key_0, Qt::ControlModifier);
    QCOMPARE(w.visibleRange(), full);
    // Zoom to step 2 (steps come from the ProfilerStep regions).
    QVERIFY(w.timeline()->zoomToStep(2));
    const auto& steps = w.analysis()->ranks[0].steps;
    QVERIFY(steps.size() >= 3);
    QCOMPARE(w.visibleRange(), steps[2].range);
    // Zoom to Step takes the step as the timeline labels it.
    const QString name2 = QString::fromStdString(steps[2].name);
    QVERIFY(name2.startsWith(QStringLiteral("ProfilerStep#")));
    const QString number2 = name2.mid(13); // the number the timeline labels step 2 with
    QCOMPARE(stepIndexNamed(*w.analysis(), steps[2].name), steps[2].index);
    QCOMPARE(stepIndexNamed(*w.analysis(), name2.toLower().toStdString()), steps[2].index);
    QCOMPARE(stepIndexNamed(*w.analysis(), number2.toStdString()), steps[2].index);
    QCOMPARE(stepIndexNamed(*w.analysis(), "ProfilerStep#99"), -1);
    // Ctrl+G asks for the step by its label.
    QVERIFY(w.timeline()->zoomToStep(1));
    const TimeRange second = w.visibleRange();
    QTest::keyClick(&w, Qt::Key_0, Qt::ControlModifier);
    QCOMPARE(w.visibleRange(), full);
    bool asked = false;
    const QString label1 = QString::fromStdString(steps[1].name);
    QTimer::singleShot(0, &w, [&asked, &label1] {
        if (auto* d = qobject_cast<QInputDialog*>(QApplication::activeModalWidget())) {
            asked = true;
            d->setTextValue(label1);
            d->accept();
        }
    });
    QTest::keyClick(&w, Qt::Key_G, Qt::ControlModifier);
    QVERIFY(asked);
    QCOMPARE(w.visibleRange(), second);
}

void TestMainWindow::clickOnFoldExplainsIt()
{
    MainWindow w;
    QVERIFY(showWithDdpTrace(w, QSize(1000, 700), 1, 200));
    w.timeline()->replot();
    // 200 steps over a few hundred pixels: the 8 kernels of a step fold into one block.
    const int row = w.timeline()->scene().rowOf(0, L::kCompute);
    const auto& items = w.timeline()->plottable()->items(row);
    QVERIFY(!items.empty());
    const DrawItem item = items[items.size() / 2];
    QVERIFY(item.folded());
    const QRect box = w.timeline()->plottable()->boxRect(row, item);
    QSignalSpy folds(w.timeline(), &TimelinePlot::foldClicked);
    QTest::mouseClick(w.timeline(), Qt::LeftButton, Qt::NoModifier, box.center());
    QCOMPARE(folds.count(), 1);
    // Named by the class with the most time (every kernel of the DDP trace is a GEMM), not by its longest member;
    // the busy share is the kernels' exact time in the block's span.
    QCOMPARE(w.detailsPanel()->heading(), QStringLiteral("%1 kernels, mostly gemm").arg(groupDigits(item.count)));
    const auto& lane = w.trace()->ranks[0].lanes[L::kCompute].intervals;
    TimeNs busy = 0;
    for (std::uint32_t i = item.first; i < item.first + item.count; ++i)
        busy += lane.duration(i);
    const QString busyText = QString::number(100.0 * double(busy) / double(item.end - item.start), 'f', 1);
    QVERIFY2(w.detailsPanel()->field(QStringLiteral("Busy")).startsWith(busyText + QStringLiteral(" %")),
        qPrintable(w.detailsPanel()->field(QStringLiteral("Busy"))));
    QVERIFY2(w.detailsPanel()->field(QStringLiteral("  gemm")).startsWith(busyText + QStringLiteral(" %")),
        qPrintable(w.detailsPanel()->field(QStringLiteral("  gemm"))));
    // The tooltip of the same block.
    const auto hit = w.timeline()->hitAt(box.center());
    QVERIFY(hit);
    QCOMPARE(hit->count, item.count);
    QVERIFY(w.timeline()->tooltipFor(*hit).startsWith(QStringLiteral("%1 kernels in ").arg(groupDigits(item.count))));
    // The fold's largest interval is selected; zoom to selection shows it.
    QVERIFY(w.timeline()->zoomToSelection());
    const auto& t = w.trace()->ranks[0].lanes[L::kCompute].intervals;
    QVERIFY(w.visibleRange().start < t.start(item.largest));
    QVERIFY(w.visibleRange().end > t.end(item.largest));
}

void TestMainWindow::screenshotCommandLine()
{
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("shot.png"));
    QProcess gui;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.path()); // no settings from (or for) the user
    gui.setProcessEnvironment(env);
    gui.start(QStringLiteral(EXPOSURE_GUI),
        { QStringLiteral("--screenshot"), png, QStringLiteral("--size"), QStringLiteral("1024x700"), m_demo });
    QVERIFY(gui.waitForFinished(60000));
    QCOMPARE(gui.exitCode(), 0);
    const QImage image(png);
    QCOMPARE(image.size(), QSize(1024, 700));
    // Not blank: the timeline's colours are in it.
    int coloured = 0;
    for (int y = 0; y < image.height(); y += 7)
        for (int x = 0; x < image.width(); x += 7)
            coloured += QColor(image.pixel(x, y)).saturation() > 80;
    QVERIFY(coloured > 500);

    gui.start(
        QStringLiteral(EXPOSURE_GUI), { QStringLiteral("--screenshot"), png, dir.filePath(QStringLiteral("missing")) });
    QVERIFY(gui.waitForFinished(60000));
    QCOMPARE(gui.exitCode(), 2);
    const QString err = QString::fromUtf8(gui.readAllStandardError());
    QVERIFY2(
        err.contains(QStringLiteral("exposure: ") + dir.filePath(QStringLiteral("missing")) + QStringLiteral(": ")),
        qPrintable(err));
}

// Issue 13.5: F5 reset the zoom and cleared the selection. Both stay when the reloaded trace still has them.
void TestMainWindow::reloadKeepsZoomAndSelection()
{
    MainWindow w;
    w.resize(1400, 900);
    int steps = 3;
    w.loader()->setLoadFunction(
        [&steps](const std::string&, const LoadOptions&) { return testing::makeDdpTrace(2, steps); });
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    w.openTrace(QStringLiteral("ddp"));
    QVERIFY(loaded.wait(10000));
    const TimeRange zoom { 12 * L::kMs, 19 * L::kMs };
    w.timeline()->setVisibleRange(zoom);
    const TimelineSelection sel { 1, L::kNccl, 3 }; // rank 1's second-step exposed AllReduce
    w.timeline()->select(sel);
    QCOMPARE(w.detailsPanel()->field(QStringLiteral("Rank")), QStringLiteral("Rank 1"));
    w.reload();
    QVERIFY(loaded.wait(10000));
    QCOMPARE(w.visibleRange(), zoom);
    QVERIFY(w.timeline()->selection());
    QCOMPARE(*w.timeline()->selection(), sel);
    QCOMPARE(w.detailsPanel()->field(QStringLiteral("Rank")), QStringLiteral("Rank 1"));
    QVERIFY(
        w.detailsPanel()
            ->field(QStringLiteral("Start"))
            .startsWith(durationText(w.trace()->ranks[1].lanes[L::kNccl].intervals.start(3)) + QStringLiteral(" (")));
    // A shorter trace no longer has that interval nor all of that range: the range is clipped, the selection goes.
    steps = 1;
    w.reload();
    QVERIFY(loaded.wait(10000));
    QVERIFY(!w.timeline()->selection());
    QCOMPARE(w.visibleRange(), w.trace()->extent); // [12, 19) ms lies past its 9.2 ms: the whole trace
    // A plain open (not a reload) starts from the whole trace, as before.
    steps = 3;
    w.timeline()->setVisibleRange({ 1 * L::kMs, 2 * L::kMs });
    w.openTrace(QStringLiteral("ddp"));
    QVERIFY(loaded.wait(10000));
    QCOMPARE(w.visibleRange(), w.trace()->extent);
}

// Issue 13.5: after a failed start the window showed an empty timeline with a 0-5 ns axis.
void TestMainWindow::emptyStateInsteadOfEmptyTimeline()
{
    MainWindow w;
    w.setMessageSink([](const QString&, const QString&) {});
    w.resize(1000, 700);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.openTrace(QStringLiteral("/nonexistent/trace"));
    QVERIFY(failed.wait(10000));
    if (qEnvironmentVariableIsSet("EXPOSURE_TEST_SHOT")) // for looking at it
        w.grab().save(qEnvironmentVariable("EXPOSURE_TEST_SHOT"));
    QVERIFY(!w.timeline()->isVisible());
    QVERIFY(w.emptyState()->isVisible());
    QVERIFY(w.emptyState()->openButton()->isVisible());
    QVERIFY(!w.statusBar()->findChildren<QLabel*>().isEmpty());
    for (const QLabel* label : w.statusBar()->findChildren<QLabel*>()) // no "visible: 5 ns" of an empty timeline
        QVERIFY2(!label->text().startsWith(QStringLiteral("visible:")), qPrintable(label->text()));
    for (QLabel* label : w.emptyState()->findChildren<QLabel*>()) // the explanation is not cut off
        if (label->wordWrap())
            QVERIFY2(label->height() >= label->heightForWidth(label->width()),
                qPrintable(QStringLiteral("%1 < %2").arg(label->height()).arg(label->heightForWidth(label->width()))));
    QVERIFY(w.emptyState()->openFolderButton()->isVisible());
    QCOMPARE(w.emptyState()->demoButton()->isVisible(), !MainWindow::demoTracePath().isEmpty());
    // Open Demo Trace from the page loads the demo and shows the timeline.
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    QTest::mouseClick(w.emptyState()->demoButton(), Qt::LeftButton);
    QVERIFY(loaded.wait(20000));
    QVERIFY(w.timeline()->isVisible());
    QVERIFY(!w.emptyState()->isVisible());
    w.closeTrace();
    QVERIFY(w.emptyState()->isVisible());
}

// Issue 13.5: "Could not open …" stayed in the status bar forever.
void TestMainWindow::failureMessageLeavesStatusBar()
{
    MainWindow w;
    w.setMessageSink([](const QString&, const QString&) {});
    w.setTransientStatusTimeout(50);
    // The message is read when the failure is reported (synchronously, before any timer can run), and the time until
    // it goes is measured from there: the 50 ms set (a coarse timer may fire 5 % early), and it does go.
    QString atFailure;
    QElapsedTimer sinceFailure;
    connect(&w, &MainWindow::loadFailed, &w, [&] {
        atFailure = w.statusText();
        sinceFailure.start();
    });
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.openTrace(QStringLiteral("/nonexistent/trace"));
    QVERIFY(failed.wait(10000));
    QCOMPARE(atFailure, QStringLiteral("Could not open trace"));
    QTRY_VERIFY_WITH_TIMEOUT(w.statusText().isEmpty(), 5000);
    QVERIFY2(sinceFailure.elapsed() >= 40, qPrintable(QString::number(sinceFailure.elapsed())));
}

// Issue 13.5: at 1400x900 the Exposed Communication table needed horizontal scrolling.
void TestMainWindow::exposedTableFitsAt1400x900()
{
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(loadDemo(w));
    QTRY_COMPARE_WITH_TIMEOUT(w.exposedPanel()->stats().size(), std::size_t(3), 10000);
    QApplication::processEvents();
    const QTableView* table = w.exposedPanel()->table();
    int columns = table->verticalHeader()->width();
    const int columnCount = table->model()->columnCount();
    for (int c = 0; c < columnCount; ++c)
        columns += table->isColumnHidden(c) ? 0 : table->columnWidth(c);
    QVERIFY2(columns <= table->width(),
        qPrintable(QStringLiteral("columns %1 px in a %2 px table").arg(columns).arg(table->width())));
    QVERIFY(!table->horizontalScrollBar()->isVisible());
    QVERIFY(table->isColumnHidden(columnCount - 1)); // Unclassified: 0 everywhere in the demo
}

// Issue 13.5: saving a figure gave no confirmation.
void TestMainWindow::savedFigureIsConfirmed()
{
    QTemporaryDir dir;
    MainWindow w;
    w.resize(1400, 900);
    QVERIFY(loadDemo(w));
    QAction* exportAction = nullptr;
    for (QAction* a : w.fileMenu()->actions())
        if (a->objectName() == QLatin1String("exportFigure"))
            exportAction = a;
    QVERIFY(exportAction);
    emit w.fileMenu()->aboutToShow(); // enables the action (a trace is open)
    QVERIFY(exportAction->isEnabled());
    const QString png = dir.filePath(QStringLiteral("fig.png"));
    bool exported = false;
    QTimer::singleShot(0, &w, [&] {
        auto* dialog = w.findChild<ExportFigureDialog*>();
        QVERIFY(dialog);
        exported = dialog->exportTo(png, false);
        if (!exported)
            qWarning() << dialog->lastError();
        dialog->reject(); // the file dialog of accept() is skipped; the dialog closes as after saving
    });
    exportAction->trigger();
    QVERIFY(exported);
    QVERIFY(QFileInfo(png).size() > 0);
    const QString message = w.statusBar()->currentMessage();
    QVERIFY2(message.startsWith(QStringLiteral("Saved figure %1 (").arg(QDir::toNativeSeparators(png))),
        qPrintable(message));
    QVERIFY(message.endsWith(QStringLiteral(" KB)")));
}

void TestMainWindow::sendLinksToItsReceive()
{
    // A two-stage pipeline whose second receive ends before the first (testing::pipelinePairRank): selecting a send,
    // the details link to its own receive on the other rank (matched by sequence number, not by end time), and
    // following the link selects that receive.
    QTemporaryDir dir;
    testing::write(dir, QStringLiteral("rank0.json"), testing::pipelinePairRank(0));
    testing::write(dir, QStringLiteral("rank1.json"), testing::pipelinePairRank(1));
    MainWindow w;
    w.resize(1200, 800);
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    w.openTrace(dir.path());
    QVERIFY(loaded.wait(10000));
    QVERIFY(w.collectives());
    // Each rank's lane of stream 20 (Seq 1) and of stream 21 (Seq 2).
    auto laneOf = [&](int rank, int stream) {
        const auto& lanes = w.trace()->ranks[std::size_t(rank)].lanes;
        for (std::size_t l = 0; l < lanes.size(); ++l)
            if (lanes[l].isGpu() && lanes[l].stream == stream)
                return int(l);
        return -1;
    };
    DetailsPanel* d = w.detailsPanel();
    for (const int stream : { 20, 21 }) {
        const TimelineSelection send { 0, laneOf(0, stream), 0 }, receive { 1, laneOf(1, stream), 0 };
        QVERIFY(send.lane >= 0 && receive.lane >= 0);
        w.timeline()->select(send);
        QCOMPARE(d->field(QStringLiteral("Ranks in collective")), QStringLiteral("2"));
        // The first send waits 30 us for its receive to start, the second none.
        QCOMPARE(d->field(QStringLiteral("Waiting for peers")),
            stream == 20 ? QStringLiteral("%1 (30 000 ns, 30.0 %)").arg(durationText(30'000))
                         : QStringLiteral("%1 (0 ns, 0.0 %)").arg(durationText(0)));
        QVERIFY2(d->field(QStringLiteral("Matched by")).startsWith(QStringLiteral("process group 3 (mesh_pp), 0 → 1")),
            qPrintable(d->field(QStringLiteral("Matched by"))));
        QCOMPARE(d->peers().size(), 1);
        QCOMPARE(d->peers().front(), receive);
        emit d->browser()->anchorClicked(QUrl(QStringLiteral("peer:0")));
        QVERIFY(w.timeline()->selection());
        QCOMPARE(*w.timeline()->selection(), receive);
        QCOMPARE(d->field(QStringLiteral("Rank")), QStringLiteral("Rank 1"));
        QCOMPARE(d->peers().front(), send);
    }
}

void TestMainWindow::clocksAlignedAcrossHosts()
{
    // Rank 1's clock reads 5 ms later: the status bar says the clocks were aligned, the Collectives dock lists the
    // process group, the details name the group and the collective's place in its order; the View switch reloads
    // with the recorded clocks.
    QTemporaryDir dir;
    testing::write(dir, QStringLiteral("run_rank0.json"), shiftedRank(0, 0));
    testing::write(dir, QStringLiteral("run_rank1.json"), shiftedRank(1, 5'000'000));
    MainWindow w;
    w.resize(1200, 800);
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    w.openTrace(dir.path());
    QVERIFY(loaded.wait(10000));
    // Rank 1 arrives last in every collective: its own transfer time is known, rank 0's is not, so the offset
    // comes from end times, and the note says the skew could not be separated.
    QVERIFY2(w.clockNote().startsWith(QStringLiteral("clocks aligned across 2 ranks (hosts not recorded) from "
                                                     "collective end times: offsets up to 5 ms, ±0 ns; for Rank 1 the "
                                                     "members' end skew cannot be told from the offset")),
        qPrintable(w.clockNote()));
    QCOMPARE(w.trace()->clocks.ranks[1].offsetNs, TimeNs(5'000'000));
    QCOMPARE(w.collectivesPanel()->summary(), QStringLiteral("1 process group, 10 collectives matched"));
    const CollectivesModel* tree = w.collectivesPanel()->model();
    QVERIFY(w.collectivesPanel()->tree()->model() == tree);
    QCOMPARE(tree->rowCount(), 1);
    const QModelIndex group = tree->index(0, 0);
    auto text = [&](int row, int column) { return tree->index(row, column, group).data().toString(); };
    QCOMPARE(group.data().toString(),
        QStringLiteral("Group 0 (default_pg) ranks [0, 1]: 10 collectives, 20 of 20 kernels matched by "
                       "process_group"));
    // Rows: the collective row, then the stragglers (rank 1 arrives 50 us after rank 0 each time).
    QCOMPARE(tree->rowCount(group), 2);
    // The operation the program called (the kernels' own type, allreduce, says the same).
    QCOMPARE(text(0, CollectivesPanel::Type), QStringLiteral("all_reduce"));
    QCOMPARE(text(0, CollectivesPanel::Count), QStringLiteral("10"));
    QCOMPARE(text(0, CollectivesPanel::Latency), QStringLiteral("150 µs"));
    QVERIFY(!tree->isSpanned(tree->index(0, 0, group)));
    QVERIFY(tree->isSpanned(tree->index(1, 0, group)));
    QVERIFY(w.collectivesPanel()->tree()->isFirstColumnSpanned(1, group));
    QVERIFY(w.collectivesPanel()->tree()->isExpanded(group));
    QCOMPARE(text(1, 0), QStringLiteral("Stragglers: Rank 1 last in 10 (others waited 500 µs)"));
    // Sizes in human units with the exact count in the tooltip (1 048 576 floats); "Total" says what it sums.
    QCOMPARE(text(0, CollectivesModel::Size), QStringLiteral("4.19 MB"));
    QCOMPARE(tree->index(0, CollectivesModel::Size, group).data(Qt::ToolTipRole).toString(),
        QStringLiteral("4 194 304 bytes"));
    QVERIFY(tree->headerData(CollectivesModel::Total, Qt::Horizontal, Qt::ToolTipRole)
                .toString()
                .startsWith(QStringLiteral("Σ over the collectives of each one's span")));
    // Columns sit under their headers: every figure right-aligned under a right-aligned header, no column stretched
    // (the Waiting share was about 1 000 px right of its header), and the Type column as wide as its own cells, not
    // as the group's title spanned over all columns.
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    for (QDockWidget* d : w.findChildren<QDockWidget*>())
        if (d->objectName() == QStringLiteral("collectivesDock"))
            d->raise();
    QCoreApplication::processEvents();
    QTreeView* view = w.collectivesPanel()->tree();
    QVERIFY(!view->header()->stretchLastSection());
    for (int c = CollectivesModel::Count; c < CollectivesModel::ColumnCount; ++c) {
        QCOMPARE(tree->headerData(c, Qt::Horizontal, Qt::TextAlignmentRole).value<Qt::Alignment>() & Qt::AlignRight,
            Qt::AlignRight);
        const QRect cell = view->visualRect(tree->index(0, c, group));
        QCOMPARE(cell.left(), view->header()->sectionViewportPosition(c));
        QCOMPARE(cell.width(), view->header()->sectionSize(c));
        QVERIFY2(view->header()->sectionSize(c) < 200, qPrintable(QString::number(view->header()->sectionSize(c))));
    }
    QVERIFY(view->header()->sectionSize(CollectivesModel::Type)
        < view->fontMetrics().horizontalAdvance(group.data().toString()) / 2);
    int ncclLane = -1;
    for (std::size_t l = 0; l < w.trace()->ranks[0].lanes.size(); ++l)
        if (w.trace()->ranks[0].lanes[l].name == "CUDA[0:17]")
            ncclLane = int(l);
    QVERIFY(ncclLane >= 0);
    w.detailsPanel()->showInterval(
        *w.trace(), w.analysis().get(), w.timeline()->viewIndex().get(), { 0, ncclLane, 2 }, w.collectives().get());
    QCOMPARE(w.detailsPanel()->field(QStringLiteral("Matched by")),
        QStringLiteral("process group 0 (default_pg) [0, 1]: collective 3 of its order"));
    QCOMPARE(w.detailsPanel()->field(QStringLiteral("Waiting for peers")).left(5), QStringLiteral("50 µs"));

    w.alignClocksAction()->setChecked(false);
    QVERIFY(loaded.wait(10000));
    QVERIFY(
        w.clockNote().startsWith(QStringLiteral("clocks as recorded (--clock recorded; estimated offsets up to 5 ms")));
    QCOMPARE(w.trace()->clocks.ranks[1].offsetNs, TimeNs(0));
}

QTEST_MAIN(TestMainWindow)
void TestMainWindow::opensTorchProfilerFolder()
{
    // A folder of two torch.profiler files opens as one 2-rank trace; the NCCL kernel's details show what the
    // profiler recorded about the collective, with its bus bandwidth over the kernel and over the transfer.
    QTemporaryDir dir;
    testing::write(dir, QStringLiteral("rank0.pt.trace.json.gz"), testing::rankTrace(0, 2));
    testing::write(dir, QStringLiteral("rank1.pt.trace.json"), testing::rankTrace(1, 2));
    MainWindow w;
    w.resize(1200, 800);
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    w.openTrace(dir.path());
    QVERIFY(loaded.wait(10000));
    QCOMPARE(w.trace()->ranks.size(), std::size_t(2));
    int ncclLane = -1;
    for (std::size_t l = 0; l < w.trace()->ranks[0].lanes.size(); ++l)
        if (w.trace()->ranks[0].lanes[l].name == "CUDA[0:17]")
            ncclLane = int(l);
    QVERIFY(ncclLane >= 0);
    w.timeline()->select({ 0, ncclLane, 0 });
    w.detailsPanel()->showInterval(
        *w.trace(), w.analysis().get(), w.timeline()->viewIndex().get(), { 0, ncclLane, 0 }, w.collectives().get());
    const DetailsPanel* d = w.detailsPanel();
    QCOMPARE(d->field(QStringLiteral("Collective (profiler)")), QStringLiteral("allreduce"));
    QCOMPARE(d->field(QStringLiteral("Message size")), QStringLiteral("4.00 MB (4 000 000 bytes)"));
    QCOMPARE(d->field(QStringLiteral("Process group")), QStringLiteral("0 (default_pg), 2 ranks [0, 1]"));
    // 4 MB in 30 us among 2 ranks: 133.33 GB/s; both ranks run it at the same time, so nothing waits.
    QCOMPARE(d->field(QStringLiteral("Bus bandwidth")), QStringLiteral("133.33 GB/s over the kernel's duration"));
    QCOMPARE(d->field(QStringLiteral("Bus bandwidth (transfer)")),
        QStringLiteral("133.33 GB/s over the transfer, after the last rank joined"));
}

void TestMainWindow::opensDroppedNsightReport()
{
    // An Nsight Systems SQLite export dropped on the window opens like any trace.
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("train.sqlite"));
    {
        testing::NsysWriter n(path.toStdString());
        const std::int64_t main = testing::nsysTid(42, 42);
        n.nvtx(main, 1'000, 100'000, "ProfilerStep#1");
        n.runtime(main, 2'000, 2'010, 1, "cudaLaunchKernel_v7000");
        n.kernel(42, 0, 7, 3'000, 53'000, 1, "ampere_sgemm_128x64_nn");
        n.runtime(main, 4'000, 4'010, 2, "cudaLaunchKernel_v7000");
        n.kernel(42, 0, 17, 40'000, 70'000, 2, "ncclKernel_AllReduce_RING_LL_Sum_float");
    }
    MainWindow w;
    w.resize(1200, 800);
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    QMimeData mime;
    mime.setUrls({ QUrl::fromLocalFile(path) });
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QDragEnterEvent enter(QPoint(100, 100), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&w, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(100, 100), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&w, &drop);
    QVERIFY(drop.isAccepted());
    QVERIFY2(loaded.wait(10000), failed.isEmpty() ? "no signal" : qPrintable(failed.first().at(1).toString()));
    QCOMPARE(w.trace()->ranks.size(), std::size_t(1));
    const auto& lanes = w.trace()->ranks[0].lanes;
    QCOMPARE(lanes.size(), std::size_t(3));
    QCOMPARE(lanes[1].name, std::string("CUDA[0:7]"));
    QCOMPARE(lanes[2].name, std::string("CUDA[0:17]"));
    QCOMPARE(lanes[2].intervals.duration(0), TimeNs(30'000));
}

void TestMainWindow::idlePanelListsGapsAndZooms()
{
    // Rank 0 of the generated torch.profiler trace: the longest gap [15.123, 35) us ends in the backward GEMM whose
    // launch ran [31, 33) us: 17.877 us host-bound, 2 us queued.
    QTemporaryDir dir;
    MainWindow w;
    w.resize(1200, 800);
    QVERIFY(openGeneratedRank(w, dir));
    IdlePanel* p = w.idlePanel();
    QTRY_VERIFY(p->jobs()->deliveredCount() > 0 && !p->jobs()->busy());
    QVERIFY2(p->findings().startsWith(QStringLiteral("Rank 0: GPU idle ")), qPrintable(p->findings()));
    const IdleModel* t = p->gapsModel();
    QVERIFY(p->table()->model() == t);
    QCOMPARE(t->rowCount(), 2);
    QCOMPARE(t->text(0, IdlePanel::Duration), durationText(19'877));
    QCOMPARE(t->text(0, IdlePanel::HostBound), durationText(17'877));
    QCOMPARE(t->text(0, IdlePanel::Queued), durationText(2'000));
    QCOMPARE(t->text(0, IdlePanel::Cause), QStringLiteral("host-bound"));
    QCOMPARE(t->text(0, IdlePanel::Launch), QStringLiteral("cudaLaunchKernel"));
    QCOMPARE(t->gapAt(0), (TimeRange { 15'123, 35'000 }));
    emit p->table()->activated(t->index(0, 0));
    const TimeRange v = w.timeline()->visibleRange();
    QVERIFY(v.start <= 15'123 && v.end >= 35'000);
    QVERIFY(v.duration() < 200'000);
}

void TestMainWindow::transfersPanelListsCopies()
{
    // The generated torch.profiler trace has one host-to-device copy of 4 096 bytes taking 2 us: 2.05 GB/s.
    QTemporaryDir dir;
    MainWindow w;
    w.resize(1200, 800);
    QVERIFY(openGeneratedRank(w, dir));
    TransfersPanel* p = w.transfersPanel();
    QTRY_VERIFY(p->jobs()->deliveredCount() > 0 && !p->jobs()->busy());
    const TransfersModel* t = p->transfersModel();
    QVERIFY(p->table()->model() == t);
    QCOMPARE(t->rowCount(), 1);
    QCOMPARE(t->text(0, TransfersPanel::Direction), QStringLiteral("HtoD"));
    QCOMPARE(t->text(0, TransfersPanel::Bytes), QStringLiteral("4.10 kB"));
    QCOMPARE(t->text(0, TransfersPanel::Bandwidth), QStringLiteral("2.05 GB/s"));
    QCOMPARE(t->text(0, TransfersPanel::Step), QStringLiteral("ProfilerStep#4"));
    QVERIFY2(p->summary().startsWith(QStringLiteral("HtoD: 1 copies, 4.10 kB in 2 µs (2.05 GB/s)")),
        qPrintable(p->summary()));
    // Activating the copy selects it on the timeline and shows its details.
    emit p->table()->activated(t->index(0, 0));
    QVERIFY(w.timeline()->selection());
    QVERIFY(*w.timeline()->selection() == t->transferAt(0));
    QCOMPARE(w.detailsPanel()->field(QStringLiteral("Category")), QStringLiteral("memcpy"));
}

// Help ▸ Keyboard Shortcuts lists every action of the window that has a shortcut, from the actions themselves, and
// F1 opens it.
void TestMainWindow::shortcutListCoversEveryAction()
{
    MainWindow w;
    const QVector<ShortcutRow> rows = shortcutRows(&w, w.menuBar());
    int withKeys = 0;
    for (QAction* a : w.findChildren<QAction*>()) {
        if (a->shortcuts().isEmpty())
            continue;
        ++withKeys;
        const QString keys = a->shortcut().toString(QKeySequence::NativeText);
        const bool listed
            = std::any_of(rows.begin(), rows.end(), [&](const ShortcutRow& r) { return r.keys.contains(keys); });
        QVERIFY2(listed, qPrintable(a->text() + QStringLiteral(" (") + keys + QStringLiteral(") is not listed")));
    }
    QCOMPARE(int(rows.size()), withKeys);
    QVERIFY(withKeys >= 10);
    const auto fit = std::find_if(
        rows.begin(), rows.end(), [](const ShortcutRow& r) { return r.action == QStringLiteral("Zoom to Fit"); });
    QVERIFY(fit != rows.end());
    QCOMPARE(fit->keys, QKeySequence(Qt::CTRL | Qt::Key_0).toString(QKeySequence::NativeText));
    QVERIFY(!fit->menu.isEmpty());
    bool opened = false;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTimer::singleShot(0, &w, [&] {
        auto* dialog = w.findChild<ShortcutsDialog*>();
        opened = dialog && dialog->table()->rowCount() == int(rows.size()) + 5;
        if (dialog)
            dialog->reject();
    });
    QTest::keyClick(&w, Qt::Key_F1);
    QVERIFY(opened);
}

void TestMainWindow::everyShortcutIsBoundOnce()
{
    // A key sequence bound twice (in one action or in two) is ambiguous for Qt, and then neither fires.
    MainWindow w;
    QMap<QString, QString> owner;
    int keys = 0;
    for (QAction* a : w.findChildren<QAction*>()) {
        for (const QKeySequence& k : a->shortcuts()) {
            const QString key = k.toString(QKeySequence::PortableText);
            const QString scope = a->shortcutContext() == Qt::WidgetShortcut ? QStringLiteral("widget:") : QString();
            QVERIFY2(!owner.contains(scope + key),
                qPrintable(
                    QStringLiteral("%1 is bound to '%2' and '%3'").arg(key, owner.value(scope + key), a->text())));
            owner.insert(scope + key, a->text());
            ++keys;
        }
    }
    QVERIFY(keys >= 10);
    // Ctrl+- zooms out (it was bound twice to Zoom Out: Qt reported an ambiguous shortcut and did nothing).
    QTemporaryDir dir;
    w.resize(1000, 700);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(openGeneratedRank(w, dir));
    const TimeRange full = w.timeline()->visibleRange();
    w.timeline()->zoomIn();
    w.timeline()->zoomIn();
    const TimeRange zoomed = w.timeline()->visibleRange();
    QVERIFY(zoomed.duration() < full.duration());
    QTest::keyClick(&w, Qt::Key_Minus, Qt::ControlModifier);
    QVERIFY(w.timeline()->visibleRange().duration() > zoomed.duration());
}
#include "tst_mainwindow.moc"
