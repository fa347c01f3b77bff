// SPDX-License-Identifier: GPL-3.0-or-later
// The timeline renders a TraceBuilder trace: rows, pixel colours, picking, zoom history.
#include "analysis/collectives.h"
#include "support/testtraces.h"
#include "timeline/timelineplot.h"

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
    void cpuRowsShowNesting();
    void waitingPartIsHatched();
};

namespace {

QColor pixel(const QImage& img, QPoint p)
{
    return QColor(img.pixel(p));
}

// Shows `plot` at `size` on screen with `trace` (no analysis); false where the window did not appear.
bool showOnScreen(TimelinePlot& plot, QSize size, const std::shared_ptr<const Trace>& trace)
{
    plot.resize(size);
    plot.show();
    if (!QTest::qWaitForWindowExposed(&plot))
        return false;
    plot.setTrace(trace, nullptr);
    return true;
}

} // namespace

void TestTimelinePlot::rowsOfGeneratedTrace()
{
    TimelinePlot plot;
    plot.setTrace(testing::makeDdpTrace(2, 3), nullptr);
    const QStringList expected = {
        QStringLiteral("Rank 0 \u00B7 CUDA[0:7] compute"),
        QStringLiteral("CUDA[0:17] NCCL"),
        QStringLiteral("Master thread"),
        QStringLiteral("Rank 1 \u00B7 CUDA[1:7] compute"),
        QStringLiteral("CUDA[1:17] NCCL"),
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
    plot.setVisibleRange({ 0, L::kStep });
    plot.replot();
    const QImage img = plot.toPixmap().toImage();

    // Forward GEMM 2 of step 0 on the compute stream: compute colour (no analysis: no sub-group).
    const auto p = plot.pixelOf({ 0, L::kCompute, 2 });
    QVERIFY(p);
    const QColor compute = plot.scene().palette.block(Category::Compute, std::string());
    QCOMPARE(pixel(img, *p).name(), compute.name());
    QCOMPARE(compute.name(), QStringLiteral("#6c9bcb"));

    // The first AllReduce: communication colour in its upper half.
    const auto q = plot.pixelOf({ 0, L::kNccl, 0 });
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
    plot.resize(640, 360); // the size of the file: the plot's own pixel positions are the file's
    plot.setTrace(testing::makeDdpTrace(2, 3), nullptr);
    TimelineOptions o;
    o.title = QStringLiteral("DDP test");
    o.legend = false;
    o.blockLabels = false;
    plot.setOptions(o);
    plot.setVisibleRange({ 0, L::kStep });
    plot.replot();
    const QString path = dir.filePath(QStringLiteral("t.png"));
    QVERIFY(plot.savePng(path, 640, 360));
    QImage img(path);
    QCOMPARE(img.size(), QSize(640, 360));
    // Exact pixels at computed places: a GEMM of step 0 in the compute colour, an AllReduce in the communication
    // colour, a gap on the NCCL stream in the background colour (a blank or shifted picture fails).
    const auto p = plot.pixelOf({ 0, L::kCompute, 2 });
    QVERIFY(p);
    QCOMPARE(pixel(img, *p).name(), plot.scene().palette.block(Category::Compute, std::string()).name());
    const auto q = plot.pixelOf({ 0, L::kNccl, 0 });
    QVERIFY(q);
    QCOMPARE(pixel(img, *q - QPoint(0, 4)).name(),
        plot.scene().palette.block(Category::Communication, std::string()).name());
    const double x = plot.xAxis->coordToPixel(2.3 * L::kMs);
    QCOMPARE(pixel(img, QPoint(int(x), q->y())).name(), plot.scene().palette.background().name());
    // For looking at it: EXPOSURE_TEST_SHOT=/tmp/plot.png
    if (qEnvironmentVariableIsSet("EXPOSURE_TEST_SHOT"))
        plot.savePng(qEnvironmentVariable("EXPOSURE_TEST_SHOT"), 1200, 500);
}

void TestTimelinePlot::clickSelectsKernel()
{
    TimelinePlot plot;
    QVERIFY(showOnScreen(plot, QSize(1000, 400), testing::makeDdpTrace(2, 2)));
    plot.setVisibleRange({ 0, L::kStep });
    plot.replot();
    QSignalSpy spy(&plot, &TimelinePlot::intervalSelected);
    // Backward kernel 1 of step 0 on rank 1: interval index 5 of the compute lane.
    const auto p = plot.pixelOf({ 1, L::kCompute, 5 });
    QVERIFY(p);
    QTest::mouseClick(&plot, Qt::LeftButton, Qt::NoModifier, *p);
    QCOMPARE(spy.count(), 1);
    const auto ref = spy.at(0).at(0).value<IntervalRef>();
    QCOMPARE(ref.rank, 1);
    QCOMPARE(ref.lane, L::kCompute);
    QCOMPARE(ref.interval, 5u);
    QVERIFY(plot.selection());
    QCOMPARE(plot.selection()->interval, 5u);
    const auto hit = plot.hitAt(*p);
    QVERIFY(hit);
    // The host where the trace names it ("node0" in the DDP trace).
    QCOMPARE(plot.tooltipFor(*hit),
        QStringLiteral("ampere_sgemm_64x64_tn_backward\n800 \u00B5s \u00B7 compute\nRank 1 on node0"));
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
    const TimeRange full { 0, 3 * L::kStep + 9'200'000 };
    QCOMPARE(plot.visibleRange(), full);
    plot.setVisibleRange({ L::kStep, 2 * L::kStep });
    plot.zoomIn();
    const TimeRange zoomed { L::kStep + L::kStep / 4, 2 * L::kStep - L::kStep / 4 };
    QCOMPARE(plot.visibleRange(), zoomed);
    plot.zoomOut();
    QCOMPARE(plot.visibleRange(), (TimeRange { L::kStep, 2 * L::kStep }));
    QVERIFY(plot.back());
    QCOMPARE(plot.visibleRange(), zoomed);
    QVERIFY(plot.back());
    QCOMPARE(plot.visibleRange(), (TimeRange { L::kStep, 2 * L::kStep }));
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
    plot.setVisibleRange({ 0, L::kStep });
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
    QVERIFY(showOnScreen(plot, QSize(1000, 400), testing::makeDdpTrace(1, 4)));
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

// A CPU thread with three nesting levels: ProfilerStep#0 [0, 9 ms) > forward [1, 4 ms) > cuStreamSynchronize
// [2, 3 ms), and a depth-5 region that shares the last sub-row. Drawn in one row the deepest region would hide its
// parents; each depth gets its own sub-row, depth 0 on top.
void TestTimelinePlot::cpuRowsShowNesting()
{
    TraceBuilder b;
    b.addRank("Rank 0");
    const int gpu = b.addLane(0, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
    const int cpu = b.addLane(0, "Master thread", LaneKind::CpuThread);
    b.addInterval(0, gpu, 0, 9 * L::kMs, "ampere_sgemm_128x64_nn", RegionKind::Kernel);
    b.addInterval(0, cpu, 0, 9 * L::kMs, "ProfilerStep#0", RegionKind::HostRegion, 0);
    b.addInterval(0, cpu, 1 * L::kMs, 4 * L::kMs, "forward", RegionKind::HostRegion, 1);
    b.addInterval(0, cpu, 2 * L::kMs, 3 * L::kMs, "cuStreamSynchronize", RegionKind::HostRegion, 2);
    b.addInterval(0, cpu, 5 * L::kMs, 6 * L::kMs, "aten::deep", RegionKind::HostRegion, 5);
    auto trace = b.finish();
    const auto& ct = trace->ranks[0].lanes[cpu].intervals;
    auto indexOf = [&](const char* name) {
        for (std::uint32_t i = 0; i < ct.size(); ++i)
            if (trace->name(ct.name(i)) == name)
                return i;
        return ~0u;
    };
    const std::uint32_t step = indexOf("ProfilerStep#0"), fwd = indexOf("forward"),
                        sync = indexOf("cuStreamSynchronize"), deep = indexOf("aten::deep");
    QVERIFY(step != ~0u && fwd != ~0u && sync != ~0u && deep != ~0u);

    TimelinePlot plot;
    QVERIFY(showOnScreen(plot, QSize(1000, 500), trace));
    TimelineOptions o;
    o.legend = false;
    o.blockLabels = false;
    plot.setOptions(o);
    QCOMPARE(plot.rowLabels(),
        (QStringList { QStringLiteral("Rank 0 \u00B7 CUDA[0:7] compute"), QStringLiteral("Master thread"), QString(),
            QString(), QString() }));
    QCOMPARE(plot.scene().rowOf(0, cpu), 1);
    QCOMPARE(plot.scene().rowOf({ 0, cpu, step }), 1);
    QCOMPARE(plot.scene().rowOf({ 0, cpu, fwd }), 2);
    QCOMPARE(plot.scene().rowOf({ 0, cpu, sync }), 3);
    QCOMPARE(plot.scene().rowOf({ 0, cpu, deep }), 4);

    plot.setVisibleRange({ 0, 10 * L::kMs });
    plot.replot();
    const QImage img = plot.toPixmap().toImage();
    const auto& sc = plot.scene();
    const int x = int(plot.xAxis->coordToPixel(2.5 * L::kMs)); // inside all three nested regions
    auto rowY = [&](int row) { return plot.plottable()->rowBand(row).center().y(); };
    const QColor stepColor = sc.colorOf(1, 0);
    QCOMPARE(pixel(img, QPoint(x, rowY(1))).name(), sc.nameColors[ct.name(step)].name());
    QCOMPARE(pixel(img, QPoint(x, rowY(2))).name(), sc.nameColors[ct.name(fwd)].name());
    QCOMPARE(pixel(img, QPoint(x, rowY(3))).name(), sc.nameColors[ct.name(sync)].name());
    QCOMPARE(stepColor.name(), sc.palette.block(Category::Host, std::string()).name());
    // Just after cuStreamSynchronize (t = 3.5 ms): depth 2 is background again, depths 0 and 1 are drawn.
    const int x35 = int(plot.xAxis->coordToPixel(3.5 * L::kMs));
    QCOMPARE(pixel(img, QPoint(x35, rowY(3))).name(), sc.palette.background().name());
    QCOMPARE(pixel(img, QPoint(x35, rowY(2))).name(), stepColor.name());
    QCOMPARE(pixel(img, QPoint(x35, rowY(1))).name(), stepColor.name());
    // aten::deep (depth 5) is drawn in the last sub-row, at 5.5 ms.
    QCOMPARE(pixel(img, QPoint(int(plot.xAxis->coordToPixel(5.5 * L::kMs)), rowY(4))).name(), stepColor.name());
    QCOMPARE(pixel(img, QPoint(x, rowY(4))).name(), sc.palette.background().name());
    // Outside forward (t = 7 ms): depth 1 is background, depth 0 still ProfilerStep.
    const int x7 = int(plot.xAxis->coordToPixel(7.5 * L::kMs));
    QCOMPARE(pixel(img, QPoint(x7, rowY(2))).name(), sc.palette.background().name());
    QCOMPARE(pixel(img, QPoint(x7, rowY(1))).name(), stepColor.name());

    // Picking at one time on each depth: the interval of that depth, as an index into the lane's table.
    auto hit = plot.hitAt(QPoint(x, rowY(1)));
    QVERIFY(hit);
    QCOMPARE(hit->largest, step);
    QCOMPARE(hit->count, 1u);
    hit = plot.hitAt(QPoint(x, rowY(2)));
    QVERIFY(hit);
    QCOMPARE(hit->largest, fwd);
    QVERIFY(plot.tooltipFor(*hit).startsWith(QStringLiteral("forward\n3 ms")));
    const auto p = plot.pixelOf({ 0, cpu, sync });
    QVERIFY(p);
    QCOMPARE(plot.plottable()->rowAtPixel(p->y()), 3);
    QSignalSpy spy(&plot, &TimelinePlot::intervalSelected);
    QTest::mouseClick(&plot, Qt::LeftButton, Qt::NoModifier, *p);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).value<IntervalRef>().interval, sync);

    // The old single-row drawing is still available.
    o.cpuDepthRows = false;
    plot.setOptions(o);
    QCOMPARE(plot.rowLabels().size(), 2);
    QCOMPARE(plot.scene().rowOf({ 0, cpu, fwd }), 1);
}

// Rank 0 starts an AllReduce at 1 ms, rank 1 at 3 ms; both end at 5 ms. Rank 0's block is hatched over [1, 3) ms
// (upper half: the lower half keeps the hidden / exposed split) and plain over [3, 5) ms; rank 1 has no hatch.
void TestTimelinePlot::waitingPartIsHatched()
{
    const std::string allReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
    TraceBuilder b;
    for (int r = 0; r < 2; ++r) {
        b.addRank("Rank " + std::to_string(r), "node0", r);
        b.addLane(r, "CUDA[" + std::to_string(r) + ":17]", LaneKind::GpuStream, r, 17);
    }
    b.addInterval(0, 0, 1 * L::kMs, 5 * L::kMs, allReduce, RegionKind::Kernel);
    b.addInterval(1, 0, 3 * L::kMs, 5 * L::kMs, allReduce, RegionKind::Kernel);
    std::shared_ptr<const Trace> trace = b.finish();
    auto analysis = analyze(*trace, Rules::defaults());
    auto match = std::make_shared<const CollectiveMatch>(matchCollectives(*trace, *analysis));
    QCOMPARE(match->groups.size(), std::size_t(1));

    TimelinePlot plot;
    plot.resize(1000, 400);
    plot.setTrace(trace, analysis);
    TimelineOptions o;
    o.blockLabels = false;
    plot.setOptions(o);
    auto legendItems = [&] { // the legend grid's cell count includes empty cells
        int n = 0;
        for (int i = 0; i < plot.legend->elementCount(); ++i)
            n += plot.legend->elementAt(i) != nullptr;
        return n;
    };
    const int legendWithout = legendItems();
    plot.setCollectives(match);
    QCOMPARE(legendItems(), legendWithout + 2); // the overlap rows' "waiting for peers" and the blocks' hatch
    plot.setVisibleRange({ 0, 6 * L::kMs });
    plot.replot();
    const QImage img = plot.toPixmap().toImage();
    const auto& nc = analysis->names[trace->ranks[0].lanes[0].intervals.name(0)];
    const QColor comm = plot.scene().palette.block(Category::Communication, nc.subgroup);
    const QColor hatch = waitingBrush(plot.scene().palette).color();
    QVERIFY(hatch.name() != comm.name());
    // Counts hatch and plain pixels over a time span, on every pixel row of a block's upper half.
    auto count = [&](int rank, double fromMs, double toMs) {
        const int row = plot.scene().rowOf(rank, 0);
        const QRect box = plot.plottable()->boxRect(row, 0, 1);
        int hatched = 0, plain = 0;
        for (int y = box.top(); y < box.top() + box.height() / 2 - 1; ++y) {
            for (int x = int(plot.xAxis->coordToPixel(fromMs * L::kMs));
                 x < int(plot.xAxis->coordToPixel(toMs * L::kMs)); ++x) {
                const QString c = QColor(img.pixel(x, y)).name();
                hatched += c == hatch.name();
                plain += c == comm.name();
            }
        }
        return std::make_pair(hatched, plain);
    };
    const auto waiting = count(0, 1.05, 2.95);
    QVERIFY2(waiting.first > 50, qPrintable(QString::number(waiting.first)));
    QVERIFY(waiting.second > 50); // a hatch, not a fill: the block colour shows between the lines
    const auto transfer = count(0, 3.05, 4.95);
    QCOMPARE(transfer.first, 0);
    QVERIFY(transfer.second > 0);
    QCOMPARE(count(1, 3.05, 4.95).first, 0);
    // Without collectives: no hatch anywhere.
    plot.setCollectives(nullptr);
    QCOMPARE(legendItems(), legendWithout);
    plot.replot();
    const QImage plain = plot.toPixmap().toImage();
    const int row = plot.scene().rowOf(0, 0);
    const QRect box = plot.plottable()->boxRect(row, 0, 1);
    const int x = int(plot.xAxis->coordToPixel(2 * L::kMs));
    for (int y = box.top(); y < box.top() + box.height() / 2 - 1; ++y)
        QCOMPARE(QColor(plain.pixel(x, y)).name(), comm.name());
}

QTEST_MAIN(TestTimelinePlot)
#include "tst_timelineplot.moc"
