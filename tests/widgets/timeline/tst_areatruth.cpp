// SPDX-License-Identifier: GPL-3.0-or-later
// The picture is a measurement: in every row, at every width, in the widget and in figures (PNG, SVG,
// greyscale), the painted share of each class equals its share of the visible time. Pixels are counted by
// exact colour inside each row's box and compared with the statistics (overlap rows) or with the clipped
// interval sums (stream rows), on generated launch-bound and GPU-bound traces.
#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "support/areameasure.h"
#include "support/heatmaptraces.h"
#include "support/testtraces.h"
#include "timeline/timelineplot.h"
#include "timeline/timelineplottable.h"

#include <QTest>
#include <map>
#include <numeric>
#include <set>

using namespace exposure;
using namespace exposure::testing;

class TestAreaTruth : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void paintedSharesEqualTimeShares_data();
    void paintedSharesEqualTimeShares();
    void ranksDoingTheSameWorkLookAlike();
    void gapsAreNeverPaintedAsBusy();
    void foldTooltipGivesCountBusyAndTimePerCategory();
    void nestedCpuRegionsInOneRowPaintTheirUnion();
    void peerCopiesDrawAnArrowBetweenDevices();
    void collapsedGroupsPaintTheirRanksShares_data();
    void collapsedGroupsPaintTheirRanksShares();
    void hostGroupsWithWaitingForPeers();

private:
    std::shared_ptr<const Trace> m_launch, m_gpu;
    std::shared_ptr<const Analysis> m_launchA, m_gpuA;
};

void TestAreaTruth::initTestCase()
{
    m_launch = testing::makeLaunchBoundTrace();
    m_gpu = testing::makeGpuBoundTrace();
    m_launchA = analyze(*m_launch, Rules::defaults());
    m_gpuA = analyze(*m_gpu, Rules::defaults());
}

void TestAreaTruth::paintedSharesEqualTimeShares_data()
{
    QTest::addColumn<bool>("launchBound");
    QTest::addColumn<int>("target");
    QTest::addColumn<int>("width");
    const std::pair<const char*, Target> targets[] = { { "widget", Target::Widget }, { "png", Target::Png },
        { "svg", Target::Svg }, { "grayscale png", Target::GrayPng } };
    for (bool launch : { true, false })
        for (const auto& [name, target] : targets)
            for (int width : { 600, 1000, 2000, 4000 })
                QTest::addRow("%s %s %d px", launch ? "launch-bound" : "GPU-bound", name, width)
                    << launch << int(target) << width;
}

void TestAreaTruth::paintedSharesEqualTimeShares()
{
    QFETCH(bool, launchBound);
    QFETCH(int, target);
    QFETCH(int, width);
    const auto& trace = launchBound ? m_launch : m_gpu;
    const auto& analysis = launchBound ? m_launchA : m_gpuA;
    const Render r = render(trace, analysis, Target(target), width);
    QCOMPARE(r.image.width(), width);
    QCOMPARE(int(r.rows.size()), 6); // per rank: compute stream, NCCL stream, overlap row
    const auto shares = measure(*trace, *analysis, r, Target(target) == Target::GrayPng);
    QVERIFY(shares.size() >= 6);
    double worst = 0;
    QString worstWhat;
    for (const Share& s : shares) {
        const double err = std::abs(s.painted - s.time);
        if (err > worst) {
            worst = err;
            worstWhat = s.what;
        }
        // The acceptance of the area-true rule: within 1 percentage point or 10 % of the value.
        const double tolerance = std::max(0.01, 0.1 * s.time);
        if (err > tolerance)
            QFAIL(qPrintable(QStringLiteral("%1: painted %2 % of the row, time share %3 %")
                                 .arg(s.what)
                                 .arg(s.painted * 100, 0, 'f', 2)
                                 .arg(s.time * 100, 0, 'f', 2)));
    }
    qInfo("%d shares, worst error %.3f pp (%s)", int(shares.size()), worst * 100, qPrintable(worstWhat));
}

void TestAreaTruth::ranksDoingTheSameWorkLookAlike()
{
    // The same work, 37 us apart: at 1920 px every class covers the same share of the two ranks' rows.
    const Render r = render(m_gpu, m_gpuA, Target::Png, 1920);
    QCOMPARE(int(r.rows.size()), 6);
    for (int row = 0; row < 3; ++row) {
        const QRect a = r.boxes[std::size_t(row)], b = r.boxes[std::size_t(row + 3)];
        QCOMPARE(a.size(), b.size());
        const auto ca = countColours(r.image, a), cb = countColours(r.image, b);
        std::set<QRgb> colours;
        for (const auto& [rgb, n] : ca)
            colours.insert(rgb);
        for (const auto& [rgb, n] : cb)
            colours.insert(rgb);
        const double area = double(a.width()) * a.height();
        for (QRgb rgb : colours) {
            const QColor c = QColor::fromRgb(rgb);
            if (c.red() == c.green() && c.green() == c.blue() && c.red() >= 200)
                continue; // background, rank shading, tick grid
            const double sa = countOf(ca, c) / area, sb = countOf(cb, c) / area;
            QVERIFY2(std::abs(sa - sb) <= 0.003,
                qPrintable(
                    QStringLiteral("row %1, %2: %3 % vs %4 %").arg(row).arg(c.name()).arg(sa * 100).arg(sb * 100)));
        }
    }
}

void TestAreaTruth::gapsAreNeverPaintedAsBusy()
{
    // Launch-bound rank 0 at 600 px: every column of the compute row whose time span holds no kernel stays
    // background, and no column is painted taller than its busy share (plus the one pixel of rounding).
    const Render r = render(m_launch, m_launchA, Target::Png, 600);
    if (qEnvironmentVariableIsSet("EXPOSURE_FIGURE_DUMP"))
        r.image.save(qEnvironmentVariable("EXPOSURE_FIGURE_DUMP") + QStringLiteral("/launch-bound-600.png"));
    const QRect box = r.boxes[0];
    const auto& t = m_launch->ranks[0].lanes[0].intervals;
    const auto* plotRow = &r.rows[0];
    QCOMPARE(plotRow->lane, 0);
    std::set<QRgb> kernelColours; // what paints kernels (the background and the dotted tick grid do not)
    for (std::size_t i = 0; i < t.size(); ++i)
        kernelColours.insert(r.nameColors[t.name(i)].rgb() | 0xFF000000u);
    QCOMPARE(kernelColours.size(), std::size_t(2)); // gemm and elementwise
    int checked = 0, empty = 0;
    for (int px = box.left(); px <= box.right(); ++px) {
        const int x = px - r.xOrigin;
        const TimeNs a = r.grid.edge(x);
        const TimeNs b = r.grid.edge(x + 1);
        TimeNs busy = 0;
        for (std::size_t i = t.lowerBoundStart(a - t.maxDuration()); i < t.size() && t.start(i) < b; ++i)
            busy += std::max<TimeNs>(0, std::min(t.end(i), b) - std::max(t.start(i), a));
        int painted = 0;
        for (int y = box.top(); y <= box.bottom(); ++y)
            painted += kernelColours.count(r.image.pixel(px, y) | 0xFF000000u) ? 1 : 0;
        if (busy == 0) {
            ++empty;
            QCOMPARE(painted, 0);
        }
        QVERIFY2(painted <= std::ceil(double(busy) / double(b - a) * box.height()) + 1,
            qPrintable(QStringLiteral("column %1: %2 px painted for %3 % busy")
                           .arg(px)
                           .arg(painted)
                           .arg(100.0 * busy / (b - a))));
        ++checked;
    }
    QCOMPARE(checked, box.width());
    QVERIFY(empty > 0); // the host gaps are wider than a column at 600 px
}

void TestAreaTruth::foldTooltipGivesCountBusyAndTimePerCategory()
{
    TimelinePlot plot;
    TimelineOptions o;
    o.legend = false;
    o.showCpu = false;
    showWholeTrace(plot, m_launch, m_launchA, QSize(600, 400), o);
    const QRect box = plot.plottable()->rowBox(0);
    // Find a folded column in the compute row and read its tooltip.
    std::optional<TimelineHit> hit;
    for (int x = box.left() + 5; x < box.right() && !hit; x += 3) {
        const auto h = plot.hitAt(QPoint(x, box.center().y()));
        if (h && h->count > 1)
            hit = h;
    }
    QVERIFY(hit);
    const QString tip = plot.tooltipFor(*hit);
    // "412 kernels, 18 % busy: gemm 9.1 %, elementwise 6.0 %" (in the span of the fold)
    const QRegularExpression re(QStringLiteral("^([\\d ]+) kernels in [^,]+, ([\\d.]+) % busy\\n([^\\n]+)"));
    const auto m = re.match(tip);
    QVERIFY2(m.hasMatch(), qPrintable(tip));
    QCOMPARE(QString(m.captured(1)).remove(QRegularExpression(QStringLiteral("\\D"))).toUInt(), hit->count);
    // The busy fraction is exact: the kernels' time inside the fold's span.
    const auto& t = m_launch->ranks[0].lanes[0].intervals;
    TimeNs busy = 0, gemm = 0;
    for (std::uint32_t i = hit->first; i < hit->first + hit->count; ++i) {
        busy += t.duration(i);
        if (m_launchA->names[t.name(i)].subgroup == "gemm")
            gemm += t.duration(i);
    }
    const double span = double(hit->end - hit->start);
    QCOMPARE(m.captured(2), QString::number(100.0 * busy / span, 'f', 1));
    QVERIFY2(m.captured(3).contains(QStringLiteral("gemm %1 %").arg(QString::number(100.0 * gemm / span, 'f', 1))),
        qPrintable(tip));
}

void TestAreaTruth::nestedCpuRegionsInOneRowPaintTheirUnion()
{
    // A CPU thread with nested regions (step > forward > launches) drawn in one row (no depth sub-rows): the row's
    // painted host share is the union of its regions, not their sum.
    TraceBuilder b;
    const int rank = b.addRank("Rank 0");
    const int gpu = b.addLane(rank, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
    const int cpu = b.addLane(rank, "Master thread", LaneKind::CpuThread);
    TimeNs unionNs = 0;
    for (int s = 0; s < 20; ++s) {
        const TimeNs t = s * 1'000'000;
        b.addInterval(rank, cpu, t, t + 600'000, "ProfilerStep#" + std::to_string(s), RegionKind::HostRegion, 0);
        b.addInterval(rank, cpu, t + 10'000, t + 500'000, "forward", RegionKind::HostRegion, 1);
        for (int k = 0; k < 40; ++k)
            b.addInterval(rank, cpu, t + 20'000 + k * 12'000, t + 26'000 + k * 12'000, "cudaLaunchKernel",
                RegionKind::HostApi, 2);
        b.addInterval(rank, gpu, t + 30'000, t + 700'000, "ampere_sgemm_128x64_nn", RegionKind::Kernel);
        unionNs += 600'000;
    }
    std::shared_ptr<const Trace> trace = b.finish();
    TimelinePlot plot;
    TimelineOptions o;
    o.legend = false;
    o.cpuDepthRows = false;
    const QImage img = drawWholeTrace(plot, trace, analyze(*trace, Rules::defaults()), QSize(700, 300), o);
    const int row = plot.scene().rowOf(0, cpu);
    QVERIFY(row >= 0);
    const ShareIndex* si = plot.scene().shares(row);
    QVERIFY(si && si->flattened());
    const QRect box = plot.plottable()->rowBox(row);
    const QColor host = plot.scene().palette.block(Category::Host, std::string());
    const double painted = double(countOf(countColours(img, box), host)) / (double(box.width()) * box.height());
    const double truth = double(unionNs) / double(plot.visibleRange().duration());
    QVERIFY2(std::abs(painted - truth) <= 0.01,
        qPrintable(QStringLiteral("painted %1 %, union %2 %").arg(painted * 100).arg(truth * 100)));
}

void TestAreaTruth::peerCopiesDrawAnArrowBetweenDevices()
{
    // One process, two GPUs: a peer-to-peer copy on GPU 0 at 40 us gets an arrow down to GPU 1's row.
    std::shared_ptr<const Trace> trace = testing::makePeerCopyTrace();
    TimelinePlot plot;
    TimelineOptions o;
    o.legend = false;
    o.showOverlap = false;
    const QImage img = drawWholeTrace(plot, trace, analyze(*trace, Rules::defaults()), QSize(1000, 300), o);
    if (qEnvironmentVariableIsSet("EXPOSURE_FIGURE_DUMP"))
        img.save(qEnvironmentVariable("EXPOSURE_FIGURE_DUMP") + QStringLiteral("/peer-copy.png"));
    QCOMPARE(plot.rows().size(), std::size_t(2));
    const QRect a = plot.plottable()->rowBox(0), c = plot.plottable()->rowBox(1);
    const int x = int(std::floor(plot.plottable()->xOrigin())) + plot.plottable()->currentGrid().columnOf(40'000);
    const QColor arrow = plot.scene().palette.block(Category::Memcpy, "PtoP").darker(150);
    const int yMid = (a.bottom() + c.top()) / 2; // between the two rows: only the arrow is drawn there
    QCOMPARE(QColor(img.pixel(x, yMid)).name(), arrow.name());
    QVERIFY(QColor(img.pixel(x + 20, yMid)).name() != arrow.name());
}

void TestAreaTruth::collapsedGroupsPaintTheirRanksShares_data()
{
    QTest::addColumn<bool>("launchBound");
    QTest::addColumn<int>("width");
    for (bool launch : { true, false })
        for (int width : { 600, 1500 })
            QTest::addRow("%s %d px", launch ? "launch-bound" : "GPU-bound", width) << launch << width;
}

namespace {

// Checks one group row of a drawn plot: in every pixel column the stacked heights are the shares of the group's ranks
// in each overlap state, idle included (time of the state summed over the ranks / (ranks x the column's span)); over
// the row, a state's painted pixels are within 2 of the sum of those shares x the box height (error diffusion: 1; the
// clipped column at either end: 1), its share of the box is its share of the group's rank-time in view, and every
// pixel of the box is some state's. Returns the states with time.
int checkGroupRow(const TimelinePlot& plot, const QImage& image, int row, const Trace& trace)
{
    const TimelineScene& s = plot.scene();
    const TimeRange window = plot.visibleRange().intersected(trace.extent);
    const ColumnGrid grid = plot.plottable()->currentGrid();
    const int xo = int(std::floor(plot.plottable()->xOrigin()));
    const TimelineRow& info = plot.rows()[std::size_t(row)];
    if (info.kind != TimelineRow::Kind::Group)
        return -1;
    const auto members = s.groupMembers(info.group);
    const QRect box = plot.plottable()->rowBox(row);
    const auto counts = countColours(image, box);
    const auto& cols = plot.plottable()->columnTimes(row);
    if (cols.size() != std::size_t(grid.width) * kGroupStateCount)
        return -1;
    const auto times = groupStateTimes(members, window, trace.extent);
    const TimeNs total = std::accumulate(times.begin(), times.end(), TimeNs(0));
    if (total != TimeNs(members.size()) * window.duration())
        return -1;
    long paintedStates = 0;
    int statesSeen = 0;
    for (int st = 0; st < kGroupStateCount; ++st) {
        const QColor colour = st == kGroupIdle ? s.palette.idle() : s.palette.overlap(OverlapState(st));
        const long painted = countOf(counts, colour);
        paintedStates += painted;
        double owed = 0; // what the columns inside the box owe the state, in pixels
        for (int x = std::max(0, box.left() - xo); x <= box.right() - xo && x < grid.width; ++x) {
            const TimeNs span = TimeNs(members.size()) * columnSpan(grid, x).duration();
            owed += double(cols[std::size_t(x) * kGroupStateCount + std::size_t(st)]) / double(span) * box.height();
        }
        const double share = double(times[std::size_t(st)]) / double(total);
        const double paintedShare = double(painted) / (double(box.width()) * box.height());
        if (std::abs(double(painted) - owed) > 2.0 || std::abs(paintedShare - share) > std::max(0.005, 0.05 * share)) {
            qWarning("group row %d, state %d: %ld px painted, %.1f owed; %.2f %% painted, %.2f %% of the rank-time",
                row, st, painted, owed, paintedShare * 100, share * 100);
            return -1;
        }
        statesSeen += times[std::size_t(st)] > 0 ? 1 : 0;
    }
    if (double(paintedStates) < 0.99 * box.width() * box.height()) {
        qWarning("group row %d: %ld of %d px painted by a state", row, paintedStates, box.width() * box.height());
        return -1;
    }
    return statesSeen;
}

} // namespace

void TestAreaTruth::collapsedGroupsPaintTheirRanksShares()
{
    // 12 ranks in blocks of consecutive ranks (8 and 4), both collapsed: two rows, each area-true over its ranks.
    QFETCH(bool, launchBound);
    QFETCH(int, width);
    const auto trace = launchBound ? testing::makeLaunchBoundTrace(12, 20'000'000) : testing::makeGpuBoundTrace(12, 3);
    const auto analysis = analyze(*trace, Rules::defaults());
    TimelinePlot plot;
    TimelineOptions o;
    o.legend = false;
    o.grouping = RankGrouping::Blocks;
    o.collapsedGroups = { 0, 1 };
    const QImage image = drawWholeTrace(plot, trace, analysis, QSize(width, 300), o);
    QCOMPARE(image.width(), width);
    QCOMPARE(int(plot.rows().size()), 2);
    for (int row = 0; row < 2; ++row) {
        QCOMPARE(plot.rows()[std::size_t(row)].group, row);
        QCOMPARE(int(plot.scene().groupMembers(row).size()), row == 0 ? 8 : 4);
        // Compute only, exposed or hidden communication, idle.
        QVERIFY(checkGroupRow(plot, image, row, *trace) >= 3);
    }
}

void TestAreaTruth::hostGroupsWithWaitingForPeers()
{
    // 256 ranks on 32 hosts (rank r on node<r % 32>: the ranks of a host are not consecutive), rank 77 slow: grouped
    // by host, every group collapsed, collectives matched. 32 rows of 8 ranks; every group waits for the slow rank
    // (the waiting-for-peers state is painted) and every row is area-true over its ranks.
    const auto trace = testing::makeStragglerTrace(256, 3, 77, 32);
    const auto analysis = analyze(*trace, Rules::defaults());
    TimelinePlot plot;
    TimelineOptions o;
    o.grouping = RankGrouping::Auto;
    for (int g = 0; g < 32; ++g)
        o.collapsedGroups.insert(g);
    showWholeTrace(plot, trace, analysis, QSize(1400, 32 * 22 + 120), o);
    plot.setCollectives(std::make_shared<const CollectiveMatch>(matchCollectives(*trace, *analysis)));
    plot.layOutNow();
    plot.replot();
    const QImage image = plot.toPixmap().toImage().convertToFormat(QImage::Format_RGB32);
    if (qEnvironmentVariableIsSet("EXPOSURE_FIGURE_DUMP"))
        image.save(qEnvironmentVariable("EXPOSURE_FIGURE_DUMP") + QStringLiteral("/groups-256-ranks-32-hosts.png"));
    QCOMPARE(resolveGrouping(*trace, RankGrouping::Auto), RankGrouping::Host);
    QCOMPARE(int(plot.rows().size()), 32);
    QCOMPARE(plot.shownRowCount(), 32);
    QCOMPARE(plot.rankGroups()[5].label, std::string("node5"));
    QCOMPARE(plot.rankGroups()[5].ranks, std::vector<int>({ 5, 37, 69, 101, 133, 165, 197, 229 }));
    const QColor waiting = plot.scene().palette.overlap(OverlapState::WaitingExposed);
    for (int row = 0; row < 32; ++row) {
        QVERIFY(checkGroupRow(plot, image, row, *trace) >= 3);
        QVERIFY(countOf(countColours(image, plot.plottable()->rowBox(row)), waiting) > 0);
    }
    // The legend names the waiting state the group rows paint.
    bool named = false;
    for (const PlotText& t : plot.textBoxes())
        named = named || (t.role == PlotText::Role::Legend && t.text.contains(QStringLiteral("waiting")));
    QVERIFY(named);
}

QTEST_MAIN(TestAreaTruth)
#include "tst_areatruth.moc"
