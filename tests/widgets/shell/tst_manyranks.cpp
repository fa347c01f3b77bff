// SPDX-License-Identifier: GPL-3.0-or-later
// A trace of 512 ranks through the real window and loader: it opens with its ranks in groups, every group collapsed
// to one row, every rank in exactly one group, and the group rows painted as full stacks of their ranks' states.
#include "shell/mainwindow.h"
#include "support/areameasure.h"
#include "support/kinetotraces.h"
#include "timeline/timelineplot.h"
#include "timeline/timelineplottable.h"
#include "view/rankgroups.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <numeric>

using namespace exposure;

class TestManyRanks : public QObject
{
    Q_OBJECT
private slots:
    void opensWithCollapsedGroups();
};

void TestManyRanks::opensWithCollapsedGroups()
{
    constexpr int kRanks = 512;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString run = testing::writeKinetoRun(dir, QStringLiteral("run512"), kRanks);
    QVERIFY(!run.isEmpty());
    MainWindow w;
    QStringList errors;
    w.setMessageSink(
        [&errors](const QString& title, const QString& text) { errors << title + QStringLiteral(": ") + text; });
    w.setRemembersRecentFiles(false);
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    w.openTrace(run);
    QVERIFY(loaded.wait(240000));
    QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QLatin1Char('\n'))));
    const auto trace = w.trace();
    QCOMPARE(int(trace->ranks.size()), kRanks);

    // torch.profiler files name no host and no parallel coordinates: blocks of 8 consecutive ranks, all collapsed.
    TimelinePlot* plot = w.timeline();
    QCOMPARE(plot->options().grouping, RankGrouping::Auto);
    QCOMPARE(resolveGrouping(*trace, RankGrouping::Auto), RankGrouping::Blocks);
    const auto& groups = plot->rankGroups();
    QCOMPARE(int(groups.size()), 64);
    std::vector<int> seen(kRanks, 0);
    for (const RankGroup& g : groups) {
        QCOMPARE(int(g.ranks.size()), 8);
        for (const int r : g.ranks)
            ++seen[std::size_t(r)];
    }
    QVERIFY(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; })); // every rank in exactly one group
    QCOMPARE(int(plot->rows().size()), 64);
    for (std::size_t i = 0; i < plot->rows().size(); ++i) {
        QCOMPARE(plot->rows()[i].kind, TimelineRow::Kind::Group);
        QCOMPARE(plot->rows()[i].group, int(i));
    }
    QCOMPARE(plot->options().collapsedGroups.size(), std::size_t(64));
    const QList<QAction*> groupings = w.groupingActions();
    QCOMPARE(groupings.size(), 6);
    const auto checked
        = std::find_if(groupings.begin(), groupings.end(), [](const QAction* a) { return a->isChecked(); });
    QVERIFY(checked != groupings.end());
    QCOMPARE(RankGrouping((*checked)->data().toInt()), RankGrouping::Auto);

    // Painted: every shown group row is a full stack of states, its compute share that of its ranks.
    plot->layOutNow();
    const QImage image = plot->toPixmap().toImage().convertToFormat(QImage::Format_RGB32);
    if (qEnvironmentVariableIsSet("EXPOSURE_FIGURE_DUMP"))
        image.save(qEnvironmentVariable("EXPOSURE_FIGURE_DUMP") + QStringLiteral("/512-ranks.png"));
    QCOMPARE(image.size(), plot->size());
    QVERIFY(plot->shownRowCount() >= 20);
    const TimelineScene& s = plot->scene();
    const TimeRange window = plot->visibleRange().intersected(trace->extent);
    for (int row = plot->firstRow(); row < plot->firstRow() + plot->shownRowCount(); ++row) {
        const QRect box = plot->plottable()->rowBox(row);
        QVERIFY(box.height() >= 8);
        const auto counts = testing::countColours(image, box);
        long states = 0;
        for (int st = 0; st < kGroupStateCount; ++st)
            states
                += testing::countOf(counts, st == kGroupIdle ? s.palette.idle() : s.palette.overlap(OverlapState(st)));
        QVERIFY2(double(states) >= 0.99 * box.width() * box.height(),
            qPrintable(QStringLiteral("row %1: %2 of %3 px").arg(row).arg(states).arg(box.width() * box.height())));
        const auto times = groupStateTimes(s.groupMembers(row), window, trace->extent);
        const double total = double(std::accumulate(times.begin(), times.end(), TimeNs(0)));
        const double compute = double(times[std::size_t(OverlapState::ComputeOnly)]) / total;
        const double painted = double(testing::countOf(counts, s.palette.overlap(OverlapState::ComputeOnly)))
            / (double(box.width()) * box.height());
        QVERIFY(compute > 0.05);
        QVERIFY2(std::abs(painted - compute) <= std::max(0.005, 0.05 * compute),
            qPrintable(QStringLiteral("row %1: compute %2 % painted, %3 % of the rank-time")
                           .arg(row)
                           .arg(painted * 100)
                           .arg(compute * 100)));
    }
    // Hovering a group row names the group and its ranks' shares there; the label area and other rows say nothing.
    const QRect box = plot->plottable()->rowBox(plot->firstRow());
    const QString tip = plot->groupTooltipAt(box.center());
    QVERIFY2(tip.startsWith(QStringLiteral("ranks 0\u20137 \u00B7 8 ranks, ")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral(" %")), qPrintable(tip));
    QVERIFY(plot->groupTooltipAt(QPoint(box.left() - 20, box.center().y())).isEmpty());
    // The heat map's way to a rank (a cell click): its group expands (its 8 ranks' rows under the header), the others
    // stay collapsed, and the rank's rows scroll into view.
    w.showRankWindow(13, trace->extent);
    QCOMPARE(plot->options().collapsedGroups.count(1), std::size_t(0));
    QCOMPARE(plot->options().collapsedGroups.size(), std::size_t(63));
    QVERIFY(int(plot->rows().size()) > 64 + 8);
    QVERIFY(std::all_of(plot->rows().begin(), plot->rows().end(),
        [](const TimelineRow& r) { return r.kind == TimelineRow::Kind::Group || (r.rank >= 8 && r.rank < 16); }));
    int first13 = -1;
    for (std::size_t i = 0; i < plot->rows().size() && first13 < 0; ++i)
        if (plot->rows()[i].rank == 13 && plot->rows()[i].kind != TimelineRow::Kind::Group)
            first13 = int(i);
    QVERIFY(first13 > 0);
    QVERIFY(plot->firstRow() <= first13 && first13 < plot->firstRow() + plot->shownRowCount());
}

QTEST_MAIN(TestManyRanks)
#include "tst_manyranks.moc"
