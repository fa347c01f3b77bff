// SPDX-License-Identifier: GPL-3.0-or-later
// The Heat Map dock (panels/heatmappanel.h) on a generated run with one slow rank: its cells are the core heat map's
// (computed in its job), metrics it cannot show are disabled, the straggler table ranks the slow rank first, a click
// on a cell names that rank and step; in the main window the dock opens by itself above 16 ranks and a click on a
// cell zooms the timeline to the step's window and scrolls to the rank's rows. Screenshots land in
// screenshots/ of this build folder.
#include "panels/heatmappanel.h"
#include "run/openrun.h"
#include "shell/mainwindow.h"
#include "support/heatmaptraces.h"
#include "support/pipelinejob.h"
#include "timeline/timelineplot.h"
#include "whatif/whatif.h"

#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace exposure;

namespace {

constexpr int kSteps = 4, kSlow = 13;

void saveScreenshot(QWidget& w, const QString& name)
{
    QDir().mkpath(QStringLiteral(EXPOSURE_SCREENSHOT_DIR));
    w.grab().save(QStringLiteral(EXPOSURE_SCREENSHOT_DIR "/") + name);
}

// A dock the user sees: shown and, where tabbed with others, the current tab (the others are "visible" but covered).
bool onScreen(const QDockWidget* dock)
{
    return dock && dock->isVisible() && !dock->visibleRegion().isEmpty();
}

// Shows `w` and loads the straggler run of `ranks` ranks through its loader; false where it did not load.
bool showWithStragglers(MainWindow& w, int ranks)
{
    w.resize(1400, 900);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w))
        return false;
    w.loader()->setLoadFunction([ranks](const std::string&, const LoadOptions&) {
        return testing::makeStragglerTrace(ranks, kSteps, std::min(kSlow, ranks - 1));
    });
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    w.openTrace(QStringLiteral("generated"));
    if (!loaded.wait(20000))
        return false;
    bool idle = false;
    w.whenIdle([&idle] { idle = true; });
    return QTest::qWaitFor([&idle] { return idle; }, 20000);
}

} // namespace

class TestHeatMapPanel : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void panelShowsTheHeatMap();
    void clickNamesRankAndStep();
    void slowdownComputedWhenChosen();
    void slowdownPerDpRankAndStage();
    void dockStaysClosedAt16Ranks();
    void dockOpensAbove16RanksAndClickZooms();
};

void TestHeatMapPanel::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true); // keep QSettings (dock state) out of the user's config
}

void TestHeatMapPanel::panelShowsTheHeatMap()
{
    const auto trace = testing::makeStragglerTrace(20, kSteps, kSlow);
    const auto analysis = analyze(*trace, Rules::defaults());
    const auto match = std::make_shared<const CollectiveMatch>(matchCollectives(*trace, *analysis));
    HeatMapPanel panel;
    panel.resize(900, 420);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QCOMPARE(panel.view()->emptyText(), QStringLiteral("Open a trace to see its heat map."));
    panel.setTrace(trace, analysis, match);
    // Until the map arrives the view says it is being computed, not that a trace is missing.
    QCOMPARE(panel.view()->emptyText(), QStringLiteral("Computing the heat map of 20 ranks…"));
    QTRY_VERIFY_WITH_TIMEOUT(panel.heatMap() != nullptr, 20000);
    const StepHeatMap expected = computeStepHeatMap(*trace, *analysis, match.get());
    panel.setMetric(HeatMetric::Compute);
    const HeatMatrix& m = panel.view()->scene().matrix;
    QCOMPARE(m.metric, HeatMetric::Compute);
    QCOMPARE(m.rows, std::size_t(20));
    QCOMPARE(m.columns, std::size_t(kSteps));
    for (std::size_t r = 0; r < m.rows; ++r)
        for (std::size_t c = 0; c < m.columns; ++c) {
            QCOMPARE(m.values[m.at(r, c)], expected.cell(r, c).values[std::size_t(HeatMetric::Compute)]);
            QCOMPARE(bool(m.outlier[m.at(r, c)]), int(r) == kSlow);
        }
    QVERIFY2(panel.summaryLabel()->text().contains(QStringLiteral("4 cells outlined")),
        qPrintable(panel.summaryLabel()->text()));
    // Every metric can be chosen, the bubble too (the analysis computes it per step).
    auto* items = qobject_cast<QStandardItemModel*>(panel.metricBox()->model());
    QVERIFY(items);
    QVERIFY(items->item(int(HeatMetric::Bubble))->isEnabled());
    QVERIFY(items->item(int(HeatMetric::Waiting))->isEnabled());
    // Stragglers: the slow rank first, arrived last in all 4 steps, 19 ranks × 0.9 ms waiting each time.
    QCOMPARE(panel.stragglers()->rowCount(), 20);
    QCOMPARE(panel.stragglers()->text(0, HeatMapPanel::Rank), QStringLiteral("Rank 13"));
    QCOMPARE(panel.stragglers()->text(0, HeatMapPanel::ArrivedLast), QStringLiteral("4"));
    QCOMPARE(panel.stragglers()->cell(0, HeatMapPanel::CausedWait).sortKey.toLongLong(), 4 * 19 * 900'000LL);
    QCOMPARE(panel.stragglers()->cell(0, HeatMapPanel::ExcessStep).sortKey.toLongLong(), 4 * 200'000LL);
    panel.setOrder(RankOrder::Value);
    QCOMPARE(panel.view()->scene().order.front(), kSlow);
    saveScreenshot(panel, QStringLiteral("heatmap-panel.png"));
}

// The Slowdown metric on the generated DP 2 x PP 4 job whose worker 5 computes 2x slower: computed in the panel's job
// when chosen, its cells those of the straggler what-if's attribution replays, the slow worker's row on top by value.
void TestHeatMapPanel::slowdownComputedWhenChosen()
{
    QTemporaryDir dir;
    testing::PipelineJob job;
    job.compute = [](int d, int p, int, int, bool backward) {
        return TimeNs((backward ? 2'000'000 : 1'000'000) * (d == 1 && p == 2 ? 2 : 1));
    };
    const QString path = dir.filePath(QStringLiteral("timeline.json"));
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(testing::pipelineTimeline(job, testing::simulate(job)));
    }
    RunOptions o;
    o.collectives = true;
    const OpenedRun run = openRun(path.toStdString(), o);
    HeatMapPanel panel;
    panel.resize(700, 300);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setTrace(run.trace, run.analysis, run.collectives);
    QTRY_VERIFY_WITH_TIMEOUT(panel.heatMap() != nullptr, 20000);
    QVERIFY(!panel.heatMap()->hasSlowdown); // not computed until chosen
    auto* items = qobject_cast<QStandardItemModel*>(panel.metricBox()->model());
    QVERIFY(items && items->item(int(HeatMetric::Slowdown))->isEnabled());
    panel.setOrder(RankOrder::Value);
    panel.setMetric(HeatMetric::Slowdown);
    QTRY_VERIFY_WITH_TIMEOUT(panel.view()->scene().matrix.metric == HeatMetric::Slowdown, 20000);
    StepHeatMap expected = computeStepHeatMap(*run.trace, *run.analysis, run.collectives.get());
    whatif::addSlowdown(expected, *run.trace, whatif::WhatIfModel(run.trace, run.analysis, run.collectives).even());
    const HeatMatrix& m = panel.view()->scene().matrix;
    QCOMPARE(m.rows, std::size_t(8));
    QCOMPARE(m.columns, std::size_t(job.steps));
    for (std::size_t r = 0; r < m.rows; ++r)
        for (std::size_t c = 0; c < m.columns; ++c)
            QCOMPARE(m.values[m.at(r, c)], expected.cell(r, c).values[std::size_t(HeatMetric::Slowdown)]);
    QCOMPARE(panel.view()->scene().order.front(), 5); // by value: the slow worker first
    QVERIFY(m.values[m.at(5, 0)] > 1'000'000);
    QCOMPARE(panel.view()->scene().unitTitle(), QStringLiteral("Slowdown (ms)"));
    saveScreenshot(panel, QStringLiteral("heatmap-panel-slowdown.png"));
}

// The DP rank x stage choice on the same job: one cell per (DP rank, stage), each the job's mean step with only that
// worker as recorded less the evened mean step (the attribution's grid); the slow worker's cell alone above zero, at
// the top of the colour scale, every other cell exactly zero, at its bottom; painted so.
void TestHeatMapPanel::slowdownPerDpRankAndStage()
{
    QTemporaryDir dir;
    testing::PipelineJob job;
    job.compute = [](int d, int p, int, int, bool backward) {
        return TimeNs((backward ? 2'000'000 : 1'000'000) * (d == 1 && p == 2 ? 2 : 1));
    };
    const QString path = dir.filePath(QStringLiteral("timeline.json"));
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(testing::pipelineTimeline(job, testing::simulate(job)));
    }
    RunOptions o;
    o.collectives = true;
    const OpenedRun run = openRun(path.toStdString(), o);
    HeatMapPanel panel;
    panel.resize(700, 300);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setTrace(run.trace, run.analysis, run.collectives);
    QTRY_VERIFY_WITH_TIMEOUT(panel.heatMap() != nullptr, 20000);
    QVERIFY(panel.dpPpGridAvailable());
    QVERIFY(panel.gridBox()->isEnabled());
    panel.setDpPpGrid(true);
    QCOMPARE(panel.metric(), HeatMetric::Slowdown); // the grid is the slowdown's
    QTRY_VERIFY_WITH_TIMEOUT(panel.view()->scene().isGrid(), 20000);
    whatif::EvenOptions options;
    options.grid = true;
    const whatif::EvenResult even = whatif::WhatIfModel(run.trace, run.analysis, run.collectives).even(options);
    const HeatMapScene& scene = panel.view()->scene();
    const HeatMatrix& m = scene.matrix;
    QCOMPARE(m.rows, std::size_t(2));
    QCOMPARE(m.columns, std::size_t(4));
    QCOMPARE(scene.rowTitle, QStringLiteral("DP rank"));
    QCOMPARE(scene.columnTitle, QStringLiteral("Pipeline stage"));
    QCOMPARE(scene.unitTitle(), QStringLiteral("Slowdown (ms)"));
    for (int d = 0; d < 2; ++d)
        for (int p = 0; p < 4; ++p) {
            const TimeNs v = m.values[m.at(std::size_t(d), std::size_t(p))];
            QCOMPARE(v, even.grid.cell(d, p).meanStep - even.evenedMean);
            if (d == 1 && p == 2)
                QVERIFY2(v > 1'000'000, qPrintable(QString::number(v)));
            else
                QCOMPARE(v, TimeNs(0));
        }
    QCOMPARE(m.maxValue, m.values[m.at(1, 2)]);
    QCOMPARE(m.minValue, TimeNs(0));
    // The pixels: the slow cell at the top of the scale, the others at its bottom.
    const QImage image = panel.view()->grab().toImage();
    const qreal dpr = image.devicePixelRatio();
    for (int d = 0; d < 2; ++d)
        for (int p = 0; p < 4; ++p) {
            const auto centre = panel.view()->cellCentre(d, std::size_t(p));
            QVERIFY(centre);
            const QColor got = image.pixelColor(QPoint(int(centre->x() * dpr), int(centre->y() * dpr)));
            QCOMPARE(got, heatColour(d == 1 && p == 2 ? 1.0 : 0.0));
        }
    saveScreenshot(panel, QStringLiteral("heatmap-panel-dp-pp.png"));
    // Back to rank x step when another metric is chosen.
    panel.setMetric(HeatMetric::Step);
    QVERIFY(!panel.dpPpGrid());
    QTRY_VERIFY_WITH_TIMEOUT(!panel.view()->scene().isGrid(), 20000);
}

void TestHeatMapPanel::clickNamesRankAndStep()
{
    const auto trace = testing::makeStragglerTrace(20, kSteps, kSlow);
    const auto analysis = analyze(*trace, Rules::defaults());
    HeatMapPanel panel;
    panel.resize(800, 400);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setTrace(trace, analysis, nullptr);
    QTRY_VERIFY_WITH_TIMEOUT(panel.heatMap() != nullptr, 20000);
    QSignalSpy activated(&panel, &HeatMapPanel::cellActivated);
    const auto centre = panel.view()->cellCentre(kSlow, 2);
    QVERIFY(centre);
    QTest::mouseClick(panel.view(), Qt::LeftButton, {}, *centre);
    QCOMPARE(activated.size(), 1);
    const auto& column = panel.heatMap()->columns[2];
    QCOMPARE(activated.front().at(0).toInt(), kSlow);
    QCOMPARE(activated.front().at(1).toInt(), column.stepIndex);
    QCOMPARE(activated.front().at(2).value<TimeRange>(), column.window);
    // Outside the cells: nothing.
    QTest::mouseClick(panel.view(), Qt::LeftButton, {}, QPoint(1, 1));
    QCOMPARE(activated.size(), 1);
}

void TestHeatMapPanel::dockStaysClosedAt16Ranks()
{
    MainWindow w;
    w.setRemembersRecentFiles(false);
    QVERIFY(showWithStragglers(w, HeatMapPanel::kAutoOpenRanks));
    QTest::qWait(100);
    QVERIFY(!onScreen(w.heatMapDock()));
    QVERIFY(onScreen(w.findChild<QDockWidget*>(QStringLiteral("exposedDock"))));
}

void TestHeatMapPanel::dockOpensAbove16RanksAndClickZooms()
{
    MainWindow w;
    w.setRemembersRecentFiles(false);
    QVERIFY(showWithStragglers(w, HeatMapPanel::kAutoOpenRanks + 1));
    QTRY_VERIFY(onScreen(w.heatMapDock()));
    QVERIFY(!onScreen(w.findChild<QDockWidget*>(QStringLiteral("exposedDock"))));
    HeatMapPanel* panel = w.heatMapPanel();
    QTRY_VERIFY_WITH_TIMEOUT(panel->heatMap() != nullptr, 20000);
    QCOMPARE(panel->heatMap()->rankCount, std::size_t(HeatMapPanel::kAutoOpenRanks + 1));
    saveScreenshot(w, QStringLiteral("heatmap-mainwindow.png"));

    // Step 3 (column 3) of the slow rank: the union of the ranks' windows of that step.
    const StepHeatMap::Column& column = panel->heatMap()->columns[3];
    TimeRange expected { 0, 0 };
    for (const auto& ra : w.analysis()->ranks)
        for (const auto& st : ra.steps)
            if (st.index == column.stepIndex)
                expected = expected.isEmpty()
                    ? st.range
                    : TimeRange { std::min(expected.start, st.range.start), std::max(expected.end, st.range.end) };
    QCOMPARE(column.window, expected);
    QVERIFY(w.visibleRange() != expected);
    QTest::qWait(100); // the window's layout after the dock opened: the timeline's height, so the rows that fit
    const auto centre = panel->view()->cellCentre(kSlow, 3);
    QVERIFY(centre);
    QTest::mouseClick(panel->view(), Qt::LeftButton, {}, *centre);
    QCOMPARE(w.visibleRange(), expected);
    // The slow rank's rows are on screen: inside the row range the timeline draws once it has painted.
    w.timeline()->replot();
    const auto& rows = w.timeline()->rows();
    int first = -1, last = -1;
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i].rank == kSlow) {
            first = first < 0 ? int(i) : first;
            last = int(i);
        }
    QVERIFY(first >= 0);
    const QCPRange shown = w.timeline()->yAxis->range();
    QVERIFY2(shown.lower <= first - 0.5 && last + 0.5 <= shown.upper + 1e-9,
        qPrintable(QStringLiteral("rows %1..%2, shown %3..%4").arg(first).arg(last).arg(shown.lower).arg(shown.upper)));
    // 17 ranks open in collapsed groups of consecutive ranks (0–7, 8–15, 16): the click expanded the slow rank's group
    // alone, which brought its rows on screen.
    QCOMPARE(w.timelineOptions().grouping, RankGrouping::Auto);
    QCOMPARE(w.timelineOptions().collapsedGroups, std::set<int>({ 0, 2 }));
    QCOMPARE(rows.front().kind, TimelineRow::Kind::Group);
    w.timeline()->replot(); // the screenshot shows the new range, not the last queued paint
    QTest::qWait(50);
    saveScreenshot(w, QStringLiteral("heatmap-mainwindow-clicked.png"));
}

QTEST_MAIN(TestHeatMapPanel)
#include "tst_heatmappanel.moc"
