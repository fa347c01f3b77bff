// SPDX-License-Identifier: GPL-3.0-or-later
// Progressive loading through the real window: a run of 24 torch.profiler files read one file at a time shows a
// preview after each file but the last (the ranks read so far, grouped as the whole run), each preview rank's lanes,
// intervals and rows equal the full trace's for that rank, and the full trace equals a load without previews.
#include "common/elidedlabel.h"
#include "report/statsreport.h"
#include "shell/mainwindow.h"
#include "support/demoarchive.h"
#include "support/kinetotraces.h"
#include "timeline/timelineplot.h"

#include <QRegularExpression>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <map>
#include <numeric>

using namespace exposure;

namespace {

constexpr int kRanks = 24;

// Rank r's file with its events kRanks - r microseconds late: the last file holds the run's first event, so the
// previews (files in order) start later than the full trace and are rebased differently.
QString writeShiftedRun(const QTemporaryDir& dir)
{
    const QString folder = dir.filePath(QStringLiteral("run"));
    if (!QDir().mkpath(folder))
        return {};
    for (int r = 0; r < kRanks; ++r) {
        QString text = QString::fromUtf8(testing::rankTrace(r, kRanks));
        static const QRegularExpression ts(QStringLiteral(R"("ts": (\d+))"));
        QString shifted;
        qsizetype at = 0;
        for (auto m = ts.globalMatch(text); m.hasNext();) {
            const QRegularExpressionMatch match = m.next();
            shifted += text.mid(at, match.capturedStart(1) - at);
            shifted += QString::number(match.captured(1).toLongLong() + (kRanks - r));
            at = match.capturedEnd(1);
        }
        shifted += text.mid(at);
        if (!testing::writeFile(folder + QStringLiteral("/rank%1.json").arg(r), shifted.toUtf8()))
            return {};
    }
    return folder;
}

// A rank as a row of text per lane and interval, times absolute (origin + relative).
std::vector<std::string> rankRows(const Trace& trace, const Rank& rank)
{
    std::vector<std::string> rows;
    rows.push_back(rank.label + " " + rank.archivePath + " " + std::to_string(rank.lanes.size()));
    for (const Lane& lane : rank.lanes) {
        rows.push_back(lane.name + " kind " + std::to_string(int(lane.kind)) + " device " + std::to_string(lane.device)
            + " stream " + std::to_string(lane.stream) + " intervals " + std::to_string(lane.intervals.size())
            + " launches " + std::to_string(lane.launchByInterval.size()) + " collectives "
            + std::to_string(lane.collectiveArgs.size()));
        std::string launches = "launched by"; // OTF2: the launch calls of a stream's kernels, in launch order
        for (const LaunchRef& l : lane.launches)
            launches += " " + std::to_string(l.cpuLane) + ":" + std::to_string(l.interval);
        rows.push_back(launches);
        std::string params = "parameters"; // OTF2: each kernel's launch parameters
        for (const std::uint32_t id : lane.launchParamIds)
            params += id == kNoLaunchParams ? std::string(" -")
                                            : " " + std::to_string(trace.launchParams[id].blocksPerGrid) + "x"
                    + std::to_string(trace.launchParams[id].threadsPerBlock);
        rows.push_back(params);
        for (std::size_t i = 0; i < lane.intervals.size(); ++i)
            rows.push_back(std::to_string(trace.originAbsNs + lane.intervals.start(i)) + " "
                + std::to_string(lane.intervals.duration(i)) + " " + std::to_string(lane.intervals.depth(i)) + " "
                + trace.name(lane.intervals.name(i)));
    }
    return rows;
}

// The timeline's rows of each rank (by rank number) with every group expanded: kind, lane, depth and label.
std::map<int, std::vector<std::string>> timelineRows(TimelinePlot& plot, const Trace& trace)
{
    plot.setAllGroupsCollapsed(false);
    std::map<int, std::vector<std::string>> rows;
    for (const TimelineRow& row : plot.rows())
        if (row.kind != TimelineRow::Kind::Group)
            rows[trace.ranks[std::size_t(row.rank)].rank].push_back(std::to_string(int(row.kind)) + " "
                + std::to_string(row.lane) + " " + std::to_string(row.depth) + " " + row.label);
    plot.setAllGroupsCollapsed(true);
    return rows;
}

struct Preview
{
    int read = 0, total = 0;
    std::shared_ptr<const Trace> trace;
    std::map<int, std::vector<std::string>> rows;
    RankGrouping grouping = RankGrouping::None;
    QString status;
};

// A window that reads a run one file at a time and records each preview it shows; the reading waits after each
// preview until the window has shown it, so there is one preview per file but the last.
struct PreviewedLoad
{
    MainWindow w;
    QStringList errors;
    std::vector<Preview> previews;
    QSemaphore shown;
    bool waitTimedOut = false;

    PreviewedLoad()
    {
        w.setRemembersRecentFiles(false);
        w.setMessageSink(
            [this](const QString& title, const QString& text) { errors << title + QStringLiteral(": ") + text; });
        w.resize(1400, 900);
        TraceLoader* loader = w.loader();
        loader->setClockMode(ClockMode::Recorded); // the ranks' times as in the files: previews and full trace alike
        loader->setReaderThreads(1); // files in order, one at a time
        loader->setPreviewIntervalMs(0);
        loader->setPreviewShare(1.0);
        loader->setAfterPreview([this](std::size_t) {
            if (!shown.tryAcquire(1, 60000))
                waitTimedOut = true;
        });
        QObject::connect(&w, &MainWindow::previewShown, &w, [this](int read, int total) {
            Preview p;
            p.read = read;
            p.total = total;
            p.trace = w.trace();
            p.grouping = w.timeline()->options().grouping;
            p.status = w.statusLabel()->text();
            p.rows = timelineRows(*w.timeline(), *p.trace);
            if (read == 12 && qEnvironmentVariableIsSet("EXPOSURE_FIGURE_DUMP")) // to look at: half the run read
                w.grab().save(qEnvironmentVariable("EXPOSURE_FIGURE_DUMP") + QStringLiteral("/preview-12-of-24.png"));
            previews.push_back(std::move(p));
            shown.release();
        });
    }
    // Shows the window and reads `run` to the end: empty, or what went wrong (the window did not appear, the load
    // did not end, a preview was not shown in time, the window reported errors).
    QString load(const QString& run)
    {
        w.show();
        if (!QTest::qWaitForWindowExposed(&w))
            return QStringLiteral("the window did not appear");
        QSignalSpy loaded(&w, &MainWindow::traceLoaded);
        w.openTrace(run);
        if (!loaded.wait(120000))
            return QStringLiteral("the load did not end");
        if (waitTimedOut)
            return QStringLiteral("a preview was not shown in time");
        return errors.join(QLatin1Char('\n'));
    }
};

} // namespace

class TestProgressive : public QObject
{
    Q_OBJECT
private slots:
    void previewsThenTheFullTrace();
    void otf2ArchivesPreviewToo();
    void cancelDropsThePreview();
};

void TestProgressive::previewsThenTheFullTrace()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString run = writeShiftedRun(dir);
    QVERIFY(!run.isEmpty());

    PreviewedLoad load;
    QVERIFY(load.w.loader()->progressive()); // the window loads progressively
    QCOMPARE(load.load(run), QString());
    MainWindow& w = load.w;
    const std::vector<Preview>& previews = load.previews;
    const auto full = w.trace();
    QCOMPARE(int(full->ranks.size()), kRanks);
    QCOMPARE(int(previews.size()), kRanks - 1);
    std::map<int, const Rank*> fullRanks;
    for (const Rank& r : full->ranks)
        fullRanks[r.rank] = &r;
    const auto fullRows = timelineRows(*w.timeline(), *full);
    for (std::size_t k = 0; k < previews.size(); ++k) {
        const Preview& p = previews[k];
        QCOMPARE(p.read, int(k) + 1);
        QCOMPARE(p.total, kRanks);
        QCOMPARE(int(p.trace->ranks.size()), p.read); // a strict subset: the files read so far, in rank order
        QCOMPARE(p.grouping, RankGrouping::Auto); // grouped as the run of 24 ranks opens
        QCOMPARE(p.status, QStringLiteral("Read %1 of %2 ranks: showing those read so far").arg(p.read).arg(kRanks));
        // The files' events are shifted: the preview starts with its last rank, kRanks - read µs after the run.
        QCOMPARE(p.trace->originAbsNs, full->originAbsNs + qint64(kRanks - p.read) * 1000);
        for (int i = 0; i < p.read; ++i) {
            const Rank& rank = p.trace->ranks[std::size_t(i)];
            QCOMPARE(rank.rank, i);
            QVERIFY(fullRanks.count(rank.rank));
            QCOMPARE(rankRows(*p.trace, rank), rankRows(*full, *fullRanks[rank.rank]));
            QVERIFY(!p.rows.at(rank.rank).empty());
            QCOMPARE(p.rows.at(rank.rank), fullRows.at(rank.rank));
        }
    }
    QCOMPARE(w.statusLabel()->text().startsWith(QStringLiteral("Loaded run: 24 ranks")), true);

    // With the default share, previews stop once half the files are read: 12 previews of 1 to 12 ranks, then the
    // full trace.
    MainWindow half;
    half.setRemembersRecentFiles(false);
    half.resize(1400, 900);
    half.show();
    QVERIFY(QTest::qWaitForWindowExposed(&half));
    half.loader()->setClockMode(ClockMode::Recorded);
    half.loader()->setReaderThreads(1);
    half.loader()->setPreviewIntervalMs(0);
    QSemaphore halfShown;
    half.loader()->setAfterPreview([&halfShown](std::size_t) { halfShown.tryAcquire(1, 60000); });
    std::vector<int> halfRead;
    connect(&half, &MainWindow::previewShown, &half, [&](int read, int) {
        halfRead.push_back(read);
        halfShown.release();
    });
    QSignalSpy loadedHalf(&half, &MainWindow::traceLoaded);
    half.openTrace(run);
    QVERIFY(loadedHalf.wait(120000));
    std::vector<int> firstHalf(kRanks / 2);
    std::iota(firstHalf.begin(), firstHalf.end(), 1);
    QCOMPARE(halfRead, firstHalf);
    QCOMPARE(int(half.trace()->ranks.size()), kRanks);

    // The same run without previews: the same trace, statistics, matched collectives and rows.
    MainWindow plain;
    plain.setRemembersRecentFiles(false);
    plain.resize(1400, 900);
    plain.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plain));
    plain.loader()->setProgressive(false);
    plain.loader()->setClockMode(ClockMode::Recorded);
    QSignalSpy previewsPlain(&plain, &MainWindow::previewShown);
    QSignalSpy loadedPlain(&plain, &MainWindow::traceLoaded);
    plain.openTrace(run);
    QVERIFY(loadedPlain.wait(120000));
    QCOMPARE(previewsPlain.count(), 0);
    const auto other = plain.trace();
    QCOMPARE(other->originAbsNs, full->originAbsNs);
    QCOMPARE(other->eventCount, full->eventCount);
    QCOMPARE(other->warnings, full->warnings);
    QCOMPARE(other->strings.size(), full->strings.size());
    for (std::size_t r = 0; r < full->ranks.size(); ++r)
        QCOMPARE(rankRows(*other, other->ranks[r]), rankRows(*full, full->ranks[r]));
    StatsReportOptions stats;
    stats.window = activityRange(*full);
    QCOMPARE(statsJson(*other, *plain.analysis(), stats), statsJson(*full, *w.analysis(), stats));
    QVERIFY(plain.collectives() && w.collectives());
    QCOMPARE(plain.collectives()->groups.size(), w.collectives()->groups.size());
    QVERIFY(!w.collectives()->groups.empty());
    QCOMPARE(plain.timeline()->rows().size(), w.timeline()->rows().size());
    QCOMPARE(timelineRows(*plain.timeline(), *other), fullRows);
    QCOMPARE(plain.timeline()->options().collapsedGroups, w.timeline()->options().collapsedGroups);
}

// A folder of OTF2 archives, one per rank, read one archive at a time: a preview after each archive but the last,
// its ranks (lanes, intervals, launches in launch order, launch parameters, rows) equal to the full trace's.
void TestProgressive::otf2ArchivesPreviewToo()
{
    constexpr int ranks = 6;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString run = testing::writeDemoRun(dir.filePath(QStringLiteral("otf2run")), ranks, 3);

    PreviewedLoad load;
    QCOMPARE(load.load(run), QString());
    MainWindow& w = load.w;
    const std::vector<Preview>& previews = load.previews;
    const auto full = w.trace();
    QCOMPARE(int(full->ranks.size()), ranks);
    QCOMPARE(int(previews.size()), ranks - 1);
    const auto fullRows = timelineRows(*w.timeline(), *full);
    for (std::size_t k = 0; k < previews.size(); ++k) {
        const Preview& p = previews[k];
        QCOMPARE(p.read, int(k) + 1);
        QCOMPARE(p.total, ranks);
        QCOMPARE(int(p.trace->ranks.size()), p.read);
        QCOMPARE(p.status, QStringLiteral("Read %1 of %2 ranks: showing those read so far").arg(p.read).arg(ranks));
        QVERIFY(p.trace->eventCount > 0);
        for (int i = 0; i < p.read; ++i) {
            const Rank& rank = p.trace->ranks[std::size_t(i)];
            QCOMPARE(rank.rank, full->ranks[std::size_t(i)].rank);
            const auto rows = rankRows(*p.trace, rank);
            QCOMPARE(rows, rankRows(*full, full->ranks[std::size_t(i)]));
            QVERIFY(std::any_of(rows.begin(), rows.end(),
                [](const std::string& row) { return row.rfind("launched by ", 0) == 0; })); // launches were ordered
            QCOMPARE(p.rows.at(rank.rank), fullRows.at(rank.rank));
        }
    }
    QVERIFY(w.statusLabel()->text().startsWith(QStringLiteral("Loaded otf2run: 6 ranks")));
}

// Cancelled while a preview is shown: the window goes back to what it showed before (here: no trace), and nothing of
// the load arrives afterwards.
void TestProgressive::cancelDropsThePreview()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString run = writeShiftedRun(dir);
    QVERIFY(!run.isEmpty());
    MainWindow w;
    w.setRemembersRecentFiles(false);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    TraceLoader* loader = w.loader();
    loader->setReaderThreads(1);
    loader->setPreviewIntervalMs(0);
    QSemaphore release;
    loader->setAfterPreview([&release](std::size_t) { release.tryAcquire(1, 60000); });
    QSignalSpy shown(&w, &MainWindow::previewShown);
    QSignalSpy cancelled(&w, &MainWindow::loadCancelled);
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    w.openTrace(run);
    QVERIFY(shown.wait(60000));
    QCOMPARE(shown.count(), 1);
    QCOMPARE(shown.first().at(0).toInt(), 1);
    QVERIFY(w.trace());
    QCOMPARE(int(w.trace()->ranks.size()), 1);
    loader->cancel(); // the reading waits in the hook: it stops at the next file
    QCOMPARE(cancelled.count(), 1);
    QVERIFY(!w.trace()); // the state before the preview: no trace
    QVERIFY(!w.analysis());
    QCOMPARE(w.statusLabel()->text(), QStringLiteral("Loading cancelled"));
    release.release(kRanks);
    loader->waitForIdle();
    QTest::qWait(200); // whatever the cancelled load still posted is handled, and dropped
    QCOMPARE(shown.count(), 1);
    QCOMPARE(loaded.count(), 0);
    QVERIFY(!w.trace());
    QVERIFY(!loader->isLoading());
}

QTEST_MAIN(TestProgressive)
#include "tst_progressive.moc"
