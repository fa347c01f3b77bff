// SPDX-License-Identifier: GPL-3.0-or-later
// The timeline renders a TraceBuilder trace: rows, pixel colours, picking, zoom history.
#include "testtraces.h"
#include "timelineplot.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace exposure;
using L = testing::DdpTraceLayout;

class TestTimelinePlot : public QObject
{
    Q_OBJECT
private slots:
    void rowsOfGeneratedTrace();
    void rendersKernelColoursAndGaps();
    void savesPngOffscreen();
    void clickSelectsKernel();
    void foldedRunsAtWholeTraceZoom();
    void zoomHistoryRestoresExactRanges();
    void collapseRank();
    void twoToneAndOverlapColoursWithAnalysis();
    void darkPaletteBackground();
    void rubberBandAndDrag();
};

namespace {

QColor pixel(const QImage& img, QPoint p)
{
    return QColor(img.pixel(p));
}

} // namespace

void TestTimelinePlot::rowsOfGeneratedTrace()
{
    TimelinePlot plot;
    plot.setTrace(testing::makeDdpTrace(2, 3), nullptr);
    const QStringList expected = {
        QStringLiteral("Rank 0 \u00B7 CUDA[0:7] compute"), QStringLiteral("CUDA[0:17] NCCL"),
        QStringLiteral("Master thread"),
        QStringLiteral("Rank 1 \u00B7 CUDA[1:7] compute"), QStringLiteral("CUDA[1:17] NCCL"),
        QStringLiteral("Master thread"),
    };
    QCOMPARE(plot.rowLabels(), expected);

    TimelineOptions o;
    o.rows = RowSelection::GpuOnly;
    plot.setOptions(o);
    QCOMPARE(plot.rowLabels().size(), 4);
    QCOMPARE(plot.rowLabels().at(2), QStringLiteral("Rank 1 \u00B7 CUDA[1:7] compute"));
}

void TestTimelinePlot::rendersKernelColoursAndGaps()
{
    TimelinePlot plot;
    plot.resize(1000, 400);
    auto trace = testing::makeDdpTrace(1, 1);
    plot.setTrace(trace, nullptr);
    TimelineOptions o;
    o.legend = false;
    o.blockLabels = false; // text inside boxes would make the centre pixel depend on the font
    plot.setOptions(o);
    plot.setVisibleRange({0, L::kStep});
    plot.replot();
    const QImage img = plot.toPixmap().toImage();

    // Forward GEMM 2 of step 0 on the compute stream: compute colour (no analysis: no sub-group).
    const auto p = plot.pixelOf(0, L::kCompute, 2);
    QVERIFY(p);
    const QColor compute = plot.scene().palette.block(Category::Compute, std::string());
    QCOMPARE(pixel(img, *p).name(), compute.name());
    QCOMPARE(compute.name(), QStringLiteral("#6c9bcb"));

    // The first AllReduce: communication colour in its upper half.
    const auto q = plot.pixelOf(0, L::kNccl, 0);
    QVERIFY(q);
    const QColor comm = plot.scene().palette.block(Category::Communication, std::string());
    QCOMPARE(pixel(img, *q - QPoint(0, 4)).name(), comm.name());

    // A gap on the NCCL stream (t = 2.3 ms, off the grid lines): background.
    const double x = plot.xAxis->coordToPixel(2.3 * L::kMs);
    QCOMPARE(pixel(img, QPoint(int(x), q->y())).name(), plot.scene().palette.background().name());
}

void TestTimelinePlot::savesPngOffscreen()
{
    QTemporaryDir dir;
    TimelinePlot plot;
    plot.setTrace(testing::makeDdpTrace(2, 3), nullptr);
    TimelineOptions o;
    o.title = QStringLiteral("DDP test");
    plot.setOptions(o);
    const QString path = dir.filePath(QStringLiteral("t.png"));
    QVERIFY(plot.savePng(path, 640, 360));
    QImage img(path);
    QCOMPARE(img.size(), QSize(640, 360));
    // For looking at it: EXPOSURE_TEST_SHOT=/tmp/plot.png
    if (qEnvironmentVariableIsSet("EXPOSURE_TEST_SHOT"))
        plot.savePng(qEnvironmentVariable("EXPOSURE_TEST_SHOT"), 1200, 500);
}

void TestTimelinePlot::clickSelectsKernel()
{
    TimelinePlot plot;
    plot.resize(1000, 400);
    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    plot.setTrace(testing::makeDdpTrace(2, 2), nullptr);
    plot.setVisibleRange({0, L::kStep});
    plot.replot();
    QSignalSpy spy(&plot, &TimelinePlot::intervalSelected);
    // Backward kernel 1 of step 0 on rank 1: interval index 5 of the compute lane.
    const auto p = plot.pixelOf(1, L::kCompute, 5);
    QVERIFY(p);
    QTest::mouseClick(&plot, Qt::LeftButton, Qt::NoModifier, *p);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).toInt(), 1);
    QCOMPARE(spy.at(0).at(1).toInt(), L::kCompute);
    QCOMPARE(spy.at(0).at(2).toUInt(), 5u);
    QVERIFY(plot.selection());
    QCOMPARE(plot.selection()->interval, 5u);
    const auto hit = plot.hitAt(*p);
    QVERIFY(hit);
    QCOMPARE(plot.tooltipFor(*hit), QStringLiteral("ampere_sgemm_64x64_tn_backward\n800 \u00B5s \u00B7 compute"));
}

void TestTimelinePlot::foldedRunsAtWholeTraceZoom()
{
    // 100 steps in 300 px: each 0.8 ms kernel is ~0.24 px, so runs fold.
    TimelinePlot plot;
    plot.resize(400, 300);
    plot.setTrace(testing::makeDdpTrace(1, 100), nullptr);
    plot.replot();
    const int row = plot.scene().rowOf(0, L::kCompute);
    const auto& items = plot.plottable()->items(row);
    QVERIFY(!items.empty());
    std::uint64_t total = 0;
    for (const auto& item : items)
        total += item.count;
    QCOMPARE(total, std::uint64_t(800)); // every kernel is in exactly one item
    QVERIFY(items.size() < 800);
    QVERIFY(items.front().folded());
}

void TestTimelinePlot::zoomHistoryRestoresExactRanges()
{
    TimelinePlot plot;
    plot.resize(800, 300);
    plot.setTrace(testing::makeDdpTrace(1, 4), nullptr);
    const TimeRange full{0, 3 * L::kStep + 9'200'000};
    QCOMPARE(plot.visibleRange(), full);
    plot.setVisibleRange({L::kStep, 2 * L::kStep});
    plot.zoomIn();
    const TimeRange zoomed{L::kStep + L::kStep / 4, 2 * L::kStep - L::kStep / 4};
    QCOMPARE(plot.visibleRange(), zoomed);
    plot.zoomOut();
    QCOMPARE(plot.visibleRange(), (TimeRange{L::kStep, 2 * L::kStep}));
    QVERIFY(plot.back());
    QCOMPARE(plot.visibleRange(), zoomed);
    QVERIFY(plot.back());
    QCOMPARE(plot.visibleRange(), (TimeRange{L::kStep, 2 * L::kStep}));
    QVERIFY(plot.back());
    QCOMPARE(plot.visibleRange(), full);
    QVERIFY(!plot.back());
    QVERIFY(plot.forward());
    QVERIFY(plot.forward());
    QCOMPARE(plot.visibleRange(), zoomed);
    plot.zoomToFit();
    QCOMPARE(plot.visibleRange(), full);
    QVERIFY(!plot.history().canGoForward());
}

void TestTimelinePlot::collapseRank()
{
    TimelinePlot plot;
    plot.setTrace(testing::makeDdpTrace(2, 1), nullptr);
    QCOMPARE(plot.rows().size(), std::size_t(6));
    QVERIFY(plot.toggleRankCollapsed(0));
    QCOMPARE(plot.rows().size(), std::size_t(4));
    QCOMPARE(plot.rowLabels().front(), QStringLiteral("Rank 0 \u00B7 CUDA[0:7] compute (collapsed)"));
    QVERIFY(plot.toggleRankCollapsed(0));
    QCOMPARE(plot.rows().size(), std::size_t(6));
}

void TestTimelinePlot::twoToneAndOverlapColoursWithAnalysis()
{
    auto trace = testing::makeDdpTrace(1, 1);
    auto analysis = analyze(*trace, Rules::defaults());
    TimelinePlot plot;
    plot.resize(1000, 500);
    plot.setTrace(trace, analysis);
    TimelineOptions o;
    o.legend = false;
    o.blockLabels = false;
    plot.setOptions(o);
    plot.setVisibleRange({0, L::kStep});
    plot.replot();
    const QImage img = plot.toPixmap().toImage();
    const Palette& pal = plot.scene().palette;
    const QRect ar = plot.axisRect()->rect();
    const int ncclRow = plot.scene().rowOf(0, L::kNccl);
    QVERIFY(ncclRow >= 0);
    // AllReduce A [5.5, 6.5) ms runs while backward kernels run: the lower half is "hidden" green
    // except where it falls in the 0.2 ms gap between backward kernels 1 and 2 ([5.8, 6.0) ms).
    // AllReduce B [8.2, 9.2) ms has no compute beside it: "exposed" vermillion.
    auto lowerHalf = [&](double ms) {
        const QRect box = plot.plottable()->boxRect(ncclRow, 0, 1);
        const int x = int(plot.xAxis->coordToPixel(ms * L::kMs));
        return QColor(img.pixel(x, box.bottom() - 2)).name();
    };
    auto upperHalf = [&](double ms) {
        const QRect box = plot.plottable()->boxRect(ncclRow, 0, 1);
        const int x = int(plot.xAxis->coordToPixel(ms * L::kMs));
        return QColor(img.pixel(x, box.top() + 2)).name();
    };
    QCOMPARE(lowerHalf(5.65), pal.overlap(OverlapState::Hidden).name());
    QCOMPARE(lowerHalf(5.9), pal.overlap(OverlapState::Exposed).name());
    QCOMPARE(lowerHalf(6.3), pal.overlap(OverlapState::Hidden).name());
    QCOMPARE(lowerHalf(8.7), pal.overlap(OverlapState::Exposed).name());
    const auto& nc = analysis->names[trace->ranks[0].lanes[L::kNccl].intervals.name(0)];
    QCOMPARE(nc.category, Category::Communication);
    QCOMPARE(upperHalf(8.7), pal.block(Category::Communication, nc.subgroup).name());
    // The overlap row: compute only at 1 ms, hidden at 5.65 ms, exposed at 8.7 ms, idle band in the gap at 3.9 ms.
    const int overlapRow = plot.scene().rowOf(0, -1);
    QVERIFY(overlapRow >= 0);
    const int y = plot.plottable()->rowBand(overlapRow).center().y();
    auto at = [&](double ms) { return QColor(img.pixel(int(plot.xAxis->coordToPixel(ms * L::kMs)), y)).name(); };
    QCOMPARE(at(1.3), pal.overlap(OverlapState::ComputeOnly).name());
    QCOMPARE(at(5.65), pal.overlap(OverlapState::Hidden).name());
    QCOMPARE(at(8.7), pal.overlap(OverlapState::Exposed).name());
    QCOMPARE(at(3.9), pal.idle().name());
    Q_UNUSED(ar);
}

void TestTimelinePlot::darkPaletteBackground()
{
    TimelinePlot plot;
    QPalette dark;
    dark.setColor(QPalette::Base, QColor(30, 30, 30));
    dark.setColor(QPalette::WindowText, QColor(230, 230, 230));
    plot.setPalette(dark);
    plot.resize(600, 300);
    plot.setTrace(testing::makeDdpTrace(1, 1), nullptr);
    plot.replot();
    const QImage img = plot.toPixmap().toImage();
    QCOMPARE(plot.scene().palette.background().name(), QStringLiteral("#1e1e1e"));
    QCOMPARE(QColor(img.pixel(2, img.height() - 2)).name(), QStringLiteral("#1e1e1e"));
    QCOMPARE(plot.xAxis->tickLabelColor().name(), QStringLiteral("#e6e6e6"));
}

void TestTimelinePlot::rubberBandAndDrag()
{
    TimelinePlot plot;
    plot.resize(1000, 400);
    plot.show();
    QVERIFY(QTest::qWaitForWindowExposed(&plot));
    plot.setTrace(testing::makeDdpTrace(1, 4), nullptr);
    plot.replot();
    const TimeRange full = plot.visibleRange();
    const QRect ar = plot.axisRect()->rect();
    const int y = ar.center().y();
    const int xa = ar.left() + ar.width() / 4, xb = ar.left() + ar.width() / 2;
    const double ta = plot.xAxis->pixelToCoord(xa), tb = plot.xAxis->pixelToCoord(xb);
    // Shift + drag: rubber-band zoom to the dragged time span.
    QTest::mousePress(&plot, Qt::LeftButton, Qt::ShiftModifier, QPoint(xa, y));
    QTest::mouseMove(&plot, QPoint((xa + xb) / 2, y));
    QTest::mouseMove(&plot, QPoint(xb, y));
    QTest::mouseRelease(&plot, Qt::LeftButton, Qt::ShiftModifier, QPoint(xb, y));
    const TimeRange zoomed = plot.visibleRange();
    QVERIFY2(std::abs(double(zoomed.start) - ta) < 2 * (tb - ta) / ar.width()
                 && std::abs(double(zoomed.end) - tb) < 2 * (tb - ta) / ar.width(),
             qPrintable(QStringLiteral("%1..%2 vs %3..%4").arg(zoomed.start).arg(zoomed.end).arg(ta).arg(tb)));
    QCOMPARE(plot.history().current(), zoomed);
    // Plain drag pans (keeping the duration) and is committed to the history on release.
    QTest::mousePress(&plot, Qt::LeftButton, Qt::NoModifier, QPoint(xb, y));
    QTest::mouseMove(&plot, QPoint(xb - 50, y));
    QTest::mouseMove(&plot, QPoint(xb - 100, y));
    QTest::mouseRelease(&plot, Qt::LeftButton, Qt::NoModifier, QPoint(xb - 100, y));
    const TimeRange panned = plot.visibleRange();
    QVERIFY(panned.start > zoomed.start);
    QVERIFY(std::abs(panned.duration() - zoomed.duration()) <= 2);
    QCOMPARE(plot.history().current(), panned);
    QVERIFY(plot.back());
    QCOMPARE(plot.visibleRange(), zoomed);
    QVERIFY(plot.back());
    QCOMPARE(plot.visibleRange(), full);
}

QTEST_MAIN(TestTimelinePlot)
#include "tst_timelineplot.moc"
