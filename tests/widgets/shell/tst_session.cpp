// SPDX-License-Identifier: GPL-3.0-or-later
// Sessions and bookmarks through the real window: a saved session reopens with the identical view state (range,
// selection, rows, palette, docks, rules file, figure spec, bookmarks, find); a moved trace is asked for by its
// folder; bad files say what is wrong; bookmarks jump by shortcut; `exposure --session FILE` opens one.
#include "analysis/rules.h"
#include "panels/bookmarkspanel.h"
#include "shell/findbar.h"
#include "shell/mainwindow.h"
#include "shell/session.h"
#include "support/testtraces.h"
#include "timeline/timelineplot.h"
#include "timeline/timelineplottable.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace exposure;
using L = testing::DdpTraceLayout;

namespace {

// A window whose loader makes the 2-rank DDP trace for any path (the path must exist for a session to find it).
void prepare(MainWindow& w, QStringList* errors)
{
    w.setMessageSink([errors](const QString& title, const QString& text) {
        if (errors)
            *errors << title + QStringLiteral(": ") + text;
    });
    w.loader()->setLoadFunction([](const std::string&, const LoadOptions&) { return testing::makeDdpTrace(2, 3); });
    w.resize(1400, 900);
    w.show();
}

bool writeFile(const QString& path, const QByteArray& data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(data) == data.size();
}

} // namespace

class TestSession : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QVERIFY(m_dir.isValid());
    }
    void roundTripKeepsTheViewState();
    void groupsRoundTrip();
    void movedTraceIsAskedFor();
    void badFilesSayWhatIsWrong();
    void bookmarksJumpByShortcut();
    void commandLineOpensASession();
    void closedWindowReopensItsSession();

private:
    QTemporaryDir m_dir;
};

void TestSession::roundTripKeepsTheViewState()
{
    const QString traceDir = m_dir.filePath(QStringLiteral("roundtrip/run1"));
    QVERIFY(QDir().mkpath(traceDir));
    const QString rulesFile = m_dir.filePath(QStringLiteral("roundtrip/rules.json"));
    QVERIFY(writeFile(rulesFile, QByteArray(Rules::defaultJson())));
    QSettings().setValue(QStringLiteral("ExportFigure/spec"), QByteArray(R"({"widthMm":85,"heightMm":50})"));
    const QString file = m_dir.filePath(QStringLiteral("roundtrip/view.exposure-session"));
    Session saved;
    QSize savedSize;
    {
        MainWindow w;
        QStringList errors;
        prepare(w, &errors);
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.setRulesFile(rulesFile));
        QSignalSpy loaded(&w, &MainWindow::traceLoaded);
        w.openTrace(traceDir);
        QVERIFY(loaded.wait(10000));
        // A view worth keeping: step 1 zoomed, rank 1 collapsed, CPU rows hidden, greyscale, a selected AllReduce,
        // two bookmarks and a search.
        TimelineOptions o = w.timeline()->options();
        o.collapsedRanks = { 1 };
        o.showCpu = false;
        o.range.reset();
        w.timeline()->setOptions(o);
        for (QAction* a : w.findChildren<QAction*>())
            if (a->text() == QStringLiteral("&Greyscale"))
                a->trigger();
        w.timeline()->setVisibleRange({ L::kStep + 3 * L::kMs, L::kStep + 7 * L::kMs });
        w.timeline()->select({ 0, L::kNccl, 2 });
        w.timeline()->setVisibleRange({ 5 * L::kMs, 6 * L::kMs });
        w.addBookmark(QStringLiteral("first AllReduce"));
        w.timeline()->setVisibleRange({ L::kStep + 3 * L::kMs, L::kStep + 7 * L::kMs });
        w.addBookmark(QStringLiteral("step 1 backward"));
        QSignalSpy found(w.findBar()->search(), &TraceSearch::finished);
        w.findBar()->find(QStringLiteral("sgemm_64"), true);
        QVERIFY(found.wait(5000));
        QVERIFY(w.saveSession(file));
        QVERIFY(errors.isEmpty());
        saved = w.currentSession();
        savedSize = w.size();
        QCOMPARE(saved.window, std::optional<TimeRange>(TimeRange { L::kStep + 3 * L::kMs, L::kStep + 7 * L::kMs }));
        QCOMPARE(saved.selection, std::optional<IntervalRef>(IntervalRef { 0, L::kNccl, 2 }));
        QCOMPARE(saved.collapsedRanks, std::set<int>({ 1 }));
        QCOMPARE(saved.showCpu, false);
        QCOMPARE(saved.palette, QStringLiteral("grayscale"));
        QCOMPARE(int(saved.bookmarks.size()), 2);
        QCOMPARE(saved.rulesFile, QFileInfo(rulesFile).absoluteFilePath());
        QCOMPARE(saved.findText, QStringLiteral("sgemm_64"));
    }
    // The file holds what was saved.
    const Session read = Session::load(file);
    QCOMPARE(read.tracePath, QFileInfo(traceDir).absoluteFilePath());
    QCOMPARE(read.traceRelative, QStringLiteral("run1"));
    QCOMPARE(read.bookmarks, saved.bookmarks);
    QCOMPARE(read.figureSpec, QByteArray(R"({"heightMm":50,"widthMm":85})"));
    // Another window, other settings: opening the session gives the same state.
    QSettings().remove(QStringLiteral("ExportFigure/spec"));
    MainWindow w;
    QStringList errors;
    prepare(w, &errors);
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy restored(&w, &MainWindow::sessionRestored);
    QVERIFY(w.openSession(file));
    QVERIFY(restored.wait(10000));
    QTRY_VERIFY(!w.findBar()->search()->running());
    QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QLatin1Char('\n'))));
    QCOMPARE(w.visibleRange(), *saved.window);
    QCOMPARE(w.timeline()->selection(), saved.selection);
    QCOMPARE(w.timelineOptions().collapsedRanks, saved.collapsedRanks);
    QCOMPARE(w.timelineOptions().showCpu, false);
    QCOMPARE(w.timelineOptions().palette, PaletteKind::Grayscale);
    QCOMPARE(w.timeline()->rowLabels().size(), 3 + 1); // rank 0: compute, NCCL, overlap; rank 1 collapsed
    QCOMPARE(w.bookmarksPanel()->bookmarks(), saved.bookmarks);
    QCOMPARE(w.rulesFile(), saved.rulesFile);
    QCOMPARE(w.findBar()->matchCount(), std::uint64_t(24));
    QCOMPARE(QSettings().value(QStringLiteral("ExportFigure/spec")).toByteArray(), read.figureSpec);
    QCOMPARE(w.tracePath(), QFileInfo(traceDir).absoluteFilePath());
    const Session again = w.currentSession();
    QCOMPARE(again.window, saved.window);
    QCOMPARE(again.selection, saved.selection);
    QCOMPARE(again.firstRow, saved.firstRow);
    QCOMPARE(again.docks, saved.docks);
    // The geometry restored: the same size (the position is the window manager's; offscreen it adds a frame offset).
    QCOMPARE(w.size(), savedSize);
    Session normalized = again;
    normalized.geometry = saved.geometry;
    QVERIFY(normalized == saved);
}

void TestSession::groupsRoundTrip()
{
    // 20 ranks (more than kGroupRanksAbove) on one host, no parallel coordinates: they open in blocks of 8 (8, 8, 4),
    // every group collapsed.
    const QString traceDir = m_dir.filePath(QStringLiteral("groups/run20"));
    QVERIFY(QDir().mkpath(traceDir));
    const QString file = m_dir.filePath(QStringLiteral("groups/view.exposure-session"));
    auto twentyRanks = [](MainWindow& w) {
        w.loader()->setLoadFunction(
            [](const std::string&, const LoadOptions&) { return testing::makeDdpTrace(20, 1); });
    };
    Session saved;
    {
        MainWindow w;
        QStringList errors;
        prepare(w, &errors);
        twentyRanks(w);
        QSignalSpy loaded(&w, &MainWindow::traceLoaded);
        w.openTrace(traceDir);
        QVERIFY(loaded.wait(10000));
        QCOMPARE(w.timelineOptions().grouping, RankGrouping::Auto);
        QCOMPARE(w.timelineOptions().collapsedGroups, std::set<int>({ 0, 1, 2 }));
        QCOMPARE(int(w.timeline()->rows().size()), 3);
        QCOMPARE(w.timeline()->rowLabels(),
            QStringList({ QStringLiteral("ranks 0\u20137 \u00B7 8 ranks"),
                QStringLiteral("ranks 8\u201315 \u00B7 8 ranks"), QStringLiteral("ranks 16\u201319 \u00B7 4 ranks") }));
        // Blocks chosen by hand, the last block collapsed: two headers with 8 ranks of 4 rows each (compute, NCCL,
        // overlap, CPU), and the last header.
        w.setRankGrouping(RankGrouping::Blocks, false);
        QVERIFY(w.timeline()->toggleGroupCollapsed(2));
        QCOMPARE(int(w.timeline()->rows().size()), 3 + 2 * 8 * 4);
        const QList<QAction*> groupings = w.groupingActions();
        QCOMPARE(groupings.size(), 6);
        const auto checked
            = std::find_if(groupings.begin(), groupings.end(), [](const QAction* a) { return a->isChecked(); });
        QVERIFY(checked != groupings.end());
        QCOMPARE(RankGrouping((*checked)->data().toInt()), RankGrouping::Blocks);
        QVERIFY(w.saveSession(file));
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QLatin1Char('\n'))));
        saved = w.currentSession();
        QCOMPARE(saved.grouping, QStringLiteral("blocks"));
        QCOMPARE(saved.collapsedGroups, std::set<int>({ 2 }));
    }
    const Session read = Session::load(file);
    QCOMPARE(read.grouping, QStringLiteral("blocks"));
    QCOMPARE(read.collapsedGroups, std::set<int>({ 2 }));
    // Another window: the session's groups, not the default (all collapsed).
    MainWindow w;
    QStringList errors;
    prepare(w, &errors);
    twentyRanks(w);
    QSignalSpy restored(&w, &MainWindow::sessionRestored);
    QVERIFY(w.openSession(file));
    QVERIFY(restored.wait(10000));
    QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QLatin1Char('\n'))));
    QCOMPARE(w.timelineOptions().grouping, RankGrouping::Blocks);
    QCOMPARE(w.timelineOptions().collapsedGroups, std::set<int>({ 2 }));
    QCOMPARE(int(w.timeline()->rows().size()), 3 + 2 * 8 * 4);
    QCOMPARE(w.timeline()->rows()[0].kind, TimelineRow::Kind::Group);
    QCOMPARE(w.timeline()->rows()[1 + 8 * 4].kind, TimelineRow::Kind::Group);
    QCOMPARE(w.currentSession().collapsedGroups, saved.collapsedGroups);
    // Collapse All / Expand All.
    w.collapseGroupsAction()->trigger();
    QCOMPARE(int(w.timeline()->rows().size()), 3);
    w.expandGroupsAction()->trigger();
    QCOMPARE(int(w.timeline()->rows().size()), 3 + 20 * 4);
    // A click on a group's label collapses it.
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.timeline()->layOutNow();
    w.timeline()->replot();
    const QRect band = w.timeline()->plottable()->rowBand(0);
    QTest::mouseClick(
        w.timeline(), Qt::LeftButton, {}, QPoint(w.timeline()->axisRect()->left() / 2, band.center().y()));
    QCOMPARE(w.timelineOptions().collapsedGroups, std::set<int>({ 0 }));
    QCOMPARE(int(w.timeline()->rows().size()), 3 + 12 * 4);
}

void TestSession::movedTraceIsAskedFor()
{
    const QString before = m_dir.filePath(QStringLiteral("moved/old/run2"));
    QVERIFY(QDir().mkpath(before));
    const QString file = m_dir.filePath(QStringLiteral("moved/session.exposure-session"));
    Session s;
    s.tracePath = before;
    s.window = TimeRange { L::kMs, 2 * L::kMs };
    QVERIFY(writeFile(file, s.toJson(m_dir.filePath(QStringLiteral("elsewhere/x")))));
    // The trace moves to another folder.
    QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("moved/new"))));
    QVERIFY(QDir().rename(before, m_dir.filePath(QStringLiteral("moved/new/run2"))));
    // Asked for and not given: nothing opens, no dialog, a line in the status bar.
    MainWindow w;
    QStringList errors;
    prepare(w, &errors);
    QStringList asked;
    w.setFolderChooser([&asked](const QString& missing) {
        asked << missing;
        return QString();
    });
    QVERIFY(!w.openSession(file));
    QCOMPARE(asked, QStringList { before });
    QCOMPARE(w.statusText(), QStringLiteral("Session not opened: run2 was not found"));
    QVERIFY(errors.isEmpty());
    // A folder without it: a dialog that says so.
    w.setFolderChooser([this](const QString&) { return m_dir.filePath(QStringLiteral("moved")); });
    QVERIFY(!w.openSession(file));
    QCOMPARE(errors.size(), 1);
    QVERIFY2(errors[0].contains(QStringLiteral("run2 is not in")), qPrintable(errors[0]));
    // Its new folder: the session opens there.
    w.setFolderChooser([this](const QString&) { return m_dir.filePath(QStringLiteral("moved/new")); });
    QSignalSpy restored(&w, &MainWindow::sessionRestored);
    QVERIFY(w.openSession(file));
    QVERIFY(restored.wait(10000));
    QCOMPARE(w.tracePath(), m_dir.filePath(QStringLiteral("moved/new/run2")));
    QCOMPARE(w.visibleRange(), (TimeRange { L::kMs, 2 * L::kMs }));
}

void TestSession::badFilesSayWhatIsWrong()
{
    MainWindow w;
    QStringList errors;
    prepare(w, &errors);
    struct Case
    {
        const char* name;
        QByteArray json;
        QString says;
    };
    const Case cases[] = {
        { "broken.exposure-session", "{ \"exposureSession\": 1, ",
            QStringLiteral("broken.exposure-session: not valid JSON") },
        { "other.json", R"({"traceEvents": []})", QStringLiteral("other.json: not an Exposure session") },
        { "newer.exposure-session", R"({"exposureSession": 99})", QStringLiteral("written by a newer Exposure") },
        { "notrace.exposure-session", R"({"exposureSession": 1, "traces": []})", QStringLiteral("names no trace") },
        { "badwindow.exposure-session",
            R"({"exposureSession": 1, "traces": [{"path": "/x"}], "view": {"window": {"start": "9", "end": "1"}}})",
            QStringLiteral("view.window ends before it starts") },
        { "badgrouping.exposure-session",
            R"({"exposureSession": 1, "traces": [{"path": "/x"}], "view": {"grouping": "racks"}})",
            QStringLiteral("badgrouping.exposure-session: view.grouping \"racks\" is none of none, auto, host") },
    };
    for (const Case& c : cases) {
        const QString path = m_dir.filePath(QString::fromLatin1(c.name));
        QVERIFY(writeFile(path, c.json));
        errors.clear();
        QVERIFY(!w.openSession(path));
        QCOMPARE(errors.size(), 1);
        QVERIFY2(errors[0].contains(c.says), qPrintable(errors[0]));
    }
    errors.clear();
    QVERIFY(!w.openSession(m_dir.filePath(QStringLiteral("absent.exposure-session"))));
    QCOMPARE(errors.size(), 1);
    QVERIFY(!w.trace());
}

void TestSession::bookmarksJumpByShortcut()
{
    MainWindow w;
    prepare(w, nullptr);
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    w.openTrace(QStringLiteral("generated"));
    QVERIFY(loaded.wait(10000));
    const TimeRange a { 2 * L::kStep, 2 * L::kStep + L::kMs }, b { L::kMs, 3 * L::kMs };
    w.timeline()->setVisibleRange(a);
    w.addBookmark(QStringLiteral("late"));
    w.timeline()->setVisibleRange(b);
    w.addBookmark(QStringLiteral("early"));
    QVERIFY(w.bookmarksDock()->isVisible());
    // Listed by start: "early" is bookmark 1.
    QCOMPARE(w.bookmarksPanel()->model()->data(w.bookmarksPanel()->model()->index(0, 0), Qt::DisplayRole).toString(),
        QStringLiteral("early"));
    w.timeline()->zoomToFit();
    QTest::keyClick(&w, Qt::Key_2, Qt::ControlModifier);
    QCOMPARE(w.visibleRange(), a);
    QTest::keyClick(&w, Qt::Key_1, Qt::ControlModifier);
    QCOMPARE(w.visibleRange(), b);
    QTest::keyClick(&w, Qt::Key_BracketRight, Qt::ControlModifier); // next after b's start: a
    QCOMPARE(w.visibleRange(), a);
    QTest::keyClick(&w, Qt::Key_BracketRight, Qt::ControlModifier); // wraps
    QCOMPARE(w.visibleRange(), b);
    QTest::keyClick(&w, Qt::Key_BracketLeft, Qt::ControlModifier); // none before b: the last
    QCOMPARE(w.visibleRange(), a);
    QTest::keyClick(&w, Qt::Key_3, Qt::ControlModifier); // no third bookmark: nothing moves
    QCOMPARE(w.visibleRange(), a);
    // Another trace starts without them.
    w.openTrace(QStringLiteral("generated-2"));
    QVERIFY(loaded.wait(10000));
    QVERIFY(w.bookmarksPanel()->bookmarks().empty());
}

// `exposure --session FILE --screenshot PNG` opens the session's trace (the demo) with its view; a bad session file
// exits with status 2 and one line naming it.
void TestSession::commandLineOpensASession()
{
    const QString file = m_dir.filePath(QStringLiteral("demo.exposure-session"));
    Session s;
    s.tracePath = QStringLiteral(EXPOSURE_DEMO_TRACE_DIR);
    s.window = TimeRange { 2'000'000, 3'000'000 };
    QVERIFY(writeFile(file, s.toJson(file)));
    const QString png = m_dir.filePath(QStringLiteral("session.png"));
    QProcess p;
    p.setProcessEnvironment(QProcessEnvironment::systemEnvironment());
    p.start(QStringLiteral(EXPOSURE_GUI),
        { QStringLiteral("--session"), file, QStringLiteral("--screenshot"), png, QStringLiteral("--size"),
            QStringLiteral("1000x700") });
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    QVERIFY(QImage(png).size() == QSize(1000, 700));
    const QString bad = m_dir.filePath(QStringLiteral("bad.exposure-session"));
    QVERIFY(writeFile(bad, "nonsense"));
    p.start(QStringLiteral(EXPOSURE_GUI), { QStringLiteral("--session"), bad, QStringLiteral("--screenshot"), png });
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    QVERIFY2(p.readAllStandardError().contains("bad.exposure-session: not valid JSON"), "no message");
}

// A window that closes with a trace saves its session; File ▸ Reopen Last Session in a new window restores it.
void TestSession::closedWindowReopensItsSession()
{
    QFile::remove(MainWindow::lastSessionPath());
    const QString traceDir = m_dir.filePath(QStringLiteral("last/run3"));
    QVERIFY(QDir().mkpath(traceDir));
    const TimeRange view { L::kStep, L::kStep + 2 * L::kMs };
    {
        MainWindow w;
        prepare(w, nullptr);
        QSignalSpy loaded(&w, &MainWindow::traceLoaded);
        w.openTrace(traceDir);
        QVERIFY(loaded.wait(10000));
        w.timeline()->setVisibleRange(view);
        w.addBookmark(QStringLiteral("here"));
        QVERIFY(w.close());
    }
    QVERIFY(QFile::exists(MainWindow::lastSessionPath()));
    MainWindow w;
    prepare(w, nullptr);
    QSignalSpy restored(&w, &MainWindow::sessionRestored);
    QAction* reopen = w.findChild<QAction*>(QStringLiteral("reopenLastSession"));
    QVERIFY(reopen);
    reopen->trigger();
    QVERIFY(restored.wait(10000));
    QCOMPARE(w.tracePath(), QFileInfo(traceDir).absoluteFilePath());
    QCOMPARE(w.visibleRange(), view);
    QCOMPARE(int(w.bookmarksPanel()->bookmarks().size()), 1);
}

QTEST_MAIN(TestSession)
#include "tst_session.moc"
