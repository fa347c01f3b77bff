// SPDX-License-Identifier: GPL-3.0-or-later
// The picture is a measurement: in every row, at every width, in the widget and in figures (PNG, SVG,
// greyscale), the painted share of each class equals its share of the visible time. Pixels are counted by
// exact colour inside each row's box and compared with the statistics (overlap rows) or with the clipped
// interval sums (stream rows), on generated launch-bound and GPU-bound traces.
#include "../widgets/testtraces.h"

#include "analysis.h"
#include "figurerenderer.h"
#include "figurespec.h"
#include "timelineplot.h"
#include "timelineplottable.h"

#include <QPainter>
#include <QSvgRenderer>
#include <QTest>

#include <map>
#include <set>

using namespace exposure;

namespace {

enum class Target { Widget, Png, Svg, GrayPng };

struct Render
{
    QImage image;
    std::vector<QRect> boxes; // per timeline row, in image pixels
    std::vector<TimelineRow> rows;
    TimeRange window;
    Palette palette;
    std::vector<QColor> nameColors;
    ColumnGrid grid; // the plot's pixel columns; column x is image column xOrigin + x
    int xOrigin = 0;
};

Render render(const std::shared_ptr<const Trace>& trace, const std::shared_ptr<const Analysis>& analysis,
              Target target, int width)
{
    Render out;
    const int height = 46 * 6 + 80;
    auto collect = [&](TimelinePlot* plot) {
        out.rows = plot->rows();
        for (std::size_t r = 0; r < out.rows.size(); ++r)
            out.boxes.push_back(plot->plottable()->rowBox(int(r)));
        out.window = plot->visibleRange();
        out.palette = plot->scene().palette;
        out.nameColors = plot->scene().nameColors;
        out.grid = plot->plottable()->currentGrid();
        out.xOrigin = int(std::floor(plot->plottable()->xOrigin()));
    };
    if (target == Target::Widget) {
        TimelinePlot plot;
        TimelineOptions o;
        o.legend = false;
        o.showCpu = false;
        plot.setOptions(o);
        plot.setTrace(trace, analysis);
        plot.resize(width, height);
        plot.zoomToFit();
        plot.replot();
        out.image = plot.toPixmap().toImage().convertToFormat(QImage::Format_RGB32);
        collect(&plot);
        return out;
    }
    FigureRenderer r(trace, analysis);
    FigureSpec s;
    s.widthPx = width;
    s.heightPx = height;
    s.dpi = 96; // layout pixels are image pixels
    s.legend = false;
    s.rows = FigureSpec::RowsKind::Gpu;
    s.palette = target == Target::GrayPng ? PaletteKind::Grayscale : PaletteKind::Default;
    if (target == Target::Svg) {
        s.format = FigureSpec::Format::Svg;
        QSvgRenderer svg(r.render(s));
        out.image = QImage(width, height, QImage::Format_RGB32);
        out.image.fill(Qt::white);
        QPainter p(&out.image);
        svg.render(&p, QRectF(0, 0, width, height));
    } else {
        out.image = r.renderImage(s).convertToFormat(QImage::Format_RGB32);
    }
    collect(r.plot());
    return out;
}

std::map<QRgb, long> countColours(const QImage& img, const QRect& box)
{
    std::map<QRgb, long> counts;
    const QRect r = box.intersected(img.rect());
    for (int y = r.top(); y <= r.bottom(); ++y) {
        const auto* line = reinterpret_cast<const QRgb*>(img.constScanLine(y));
        for (int x = r.left(); x <= r.right(); ++x)
            ++counts[line[x] | 0xFF000000u];
    }
    return counts;
}

long countOf(const std::map<QRgb, long>& counts, const QColor& c)
{
    const auto it = counts.find(c.rgb() | 0xFF000000u);
    return it == counts.end() ? 0 : it->second;
}

struct Share
{
    QString what;
    double painted = 0; // fraction of the row's box
    double time = 0;    // fraction of the window
};

// Painted and true shares of every class of every row.
std::vector<Share> measure(const Trace& trace, const Analysis& analysis, const Render& r, bool gray)
{
    std::vector<Share> out;
    const double span = double(r.window.duration());
    for (std::size_t row = 0; row < r.rows.size(); ++row) {
        const TimelineRow& info = r.rows[row];
        const QRect box = r.boxes[row];
        const auto counts = countColours(r.image, box);
        const double area = double(box.width()) * box.height();
        const QString rowName = QStringLiteral("rank %1 %2").arg(info.rank).arg(
            info.kind == TimelineRow::Kind::Overlap ? QStringLiteral("overlap") : QString::fromStdString(info.label));
        if (info.kind == TimelineRow::Kind::Overlap) {
            const WindowStats st = computeStats(trace, analysis, info.rank, r.window);
            long hidden = countOf(counts, r.palette.overlap(OverlapState::Hidden));
            if (gray) // the hidden state is hatched in greyscale: its lines count as hidden too
                hidden += countOf(counts, r.palette.hiddenBrush().color());
            out.push_back({rowName + QStringLiteral(" exposed"),
                           countOf(counts, r.palette.overlap(OverlapState::Exposed)) / area, st.exposedNs / span});
            out.push_back({rowName + QStringLiteral(" hidden"), hidden / area, st.overlappedNs / span});
            out.push_back({rowName + QStringLiteral(" compute only"),
                           countOf(counts, r.palette.overlap(OverlapState::ComputeOnly)) / area,
                           (st.computeBusyNs - st.overlappedNs) / span});
            continue;
        }
        if (gray)
            continue; // greyscale shares several classes per grey level: only overlap rows are measured
        // Stream rows: time per colour from the intervals clipped to the window.
        std::map<QRgb, double> time;
        const auto& t = trace.ranks[info.rank].lanes[info.lane].intervals;
        bool comm = false;
        for (std::size_t i = 0; i < t.size(); ++i) {
            const TimeNs a = std::max(t.start(i), r.window.start), b = std::min(t.end(i), r.window.end);
            if (b > a)
                time[r.nameColors[t.name(i)].rgb() | 0xFF000000u] += double(b - a);
            comm = comm || analysis.names[t.name(i)].category == Category::Communication;
        }
        for (const auto& [rgb, ns] : time) {
            long painted = countOf(counts, QColor::fromRgb(rgb));
            if (comm) // the two-tone lower half of communication shows its hidden / exposed parts
                painted += countOf(counts, r.palette.overlap(OverlapState::Hidden))
                    + countOf(counts, r.palette.overlap(OverlapState::Exposed));
            out.push_back({rowName + QStringLiteral(" ") + QColor::fromRgb(rgb).name(), painted / area, ns / span});
        }
    }
    return out;
}

} // namespace

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
    const std::pair<const char*, Target> targets[] = {
        {"widget", Target::Widget}, {"png", Target::Png}, {"svg", Target::Svg}, {"grayscale png", Target::GrayPng}};
    for (bool launch : {true, false})
        for (const auto& [name, target] : targets)
            for (int width : {600, 1000, 2000, 4000})
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
            QVERIFY2(std::abs(sa - sb) <= 0.003, qPrintable(QStringLiteral("row %1, %2: %3 % vs %4 %")
                                                                .arg(row).arg(c.name()).arg(sa * 100).arg(sb * 100)));
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
                 qPrintable(QStringLiteral("column %1: %2 px painted for %3 % busy").arg(px).arg(painted).arg(100.0 * busy / (b - a))));
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
    plot.setOptions(o);
    plot.setTrace(m_launch, m_launchA);
    plot.resize(600, 400);
    plot.zoomToFit();
    plot.replot();
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

QTEST_MAIN(TestAreaTruth)
#include "tst_areatruth.moc"
