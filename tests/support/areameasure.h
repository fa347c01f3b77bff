// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Test helpers that measure a rendered timeline: render a trace in the widget or as a figure (PNG, SVG, greyscale
// PNG), count the pixels of each colour inside every row's box, and set them against the time shares.
#include "analysis/analysis.h"
#include "figure/figurerenderer.h"
#include "figure/figurespec.h"
#include "timeline/timelineplot.h"
#include "timeline/timelineplottable.h"

#include <QPainter>
#include <QSvgRenderer>
#include <map>
#include <memory>
#include <vector>

namespace exposure::testing {

// Shows the whole trace in `plot` at `size` (legend off unless the options say otherwise) and draws it.
inline void showWholeTrace(TimelinePlot& plot, const std::shared_ptr<const Trace>& trace,
    const std::shared_ptr<const Analysis>& analysis, QSize size, TimelineOptions options = {})
{
    plot.setOptions(options);
    plot.setTrace(trace, analysis);
    plot.resize(size);
    plot.zoomToFit();
    plot.replot();
}

// showWholeTrace, then what the plot draws as an RGB32 image.
inline QImage drawWholeTrace(TimelinePlot& plot, const std::shared_ptr<const Trace>& trace,
    const std::shared_ptr<const Analysis>& analysis, QSize size, TimelineOptions options = {})
{
    showWholeTrace(plot, trace, analysis, size, options);
    return plot.toPixmap().toImage().convertToFormat(QImage::Format_RGB32);
}

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

// rows: the expected number of rows (sets the height: 46 px per row plus axis); overlapOnly: figures of the overlap
// rows alone (what `exposure-cli render --rows overlap` draws), else GPU rows and overlap rows.
inline Render render(const std::shared_ptr<const Trace>& trace, const std::shared_ptr<const Analysis>& analysis,
    Target target, int width, int rows = 6, bool overlapOnly = false)
{
    Render out;
    const int height = 46 * rows + 80;
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
        out.image = drawWholeTrace(plot, trace, analysis, QSize(width, height), o);
        collect(&plot);
        return out;
    }
    FigureRenderer r(trace, analysis);
    FigureSpec s;
    s.widthPx = width;
    s.heightPx = height;
    s.dpi = 96; // layout pixels are image pixels
    s.legend = false;
    s.rows = overlapOnly ? FigureSpec::RowsKind::Overlap : FigureSpec::RowsKind::Gpu;
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

inline std::map<QRgb, long> countColours(const QImage& img, const QRect& box)
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

inline long countOf(const std::map<QRgb, long>& counts, const QColor& c)
{
    const auto it = counts.find(c.rgb() | 0xFF000000u);
    return it == counts.end() ? 0 : it->second;
}

struct Share
{
    QString what;
    double painted = 0; // fraction of the row's box
    double time = 0; // fraction of the window
};

// Painted and true shares of every class of every row.
inline std::vector<Share> measure(const Trace& trace, const Analysis& analysis, const Render& r, bool gray)
{
    std::vector<Share> out;
    const double span = double(r.window.duration());
    for (std::size_t row = 0; row < r.rows.size(); ++row) {
        const TimelineRow& info = r.rows[row];
        const QRect box = r.boxes[row];
        const auto counts = countColours(r.image, box);
        const double area = double(box.width()) * box.height();
        const QString rowName = QStringLiteral("rank %1 %2")
                                    .arg(info.rank)
                                    .arg(info.kind == TimelineRow::Kind::Overlap ? QStringLiteral("overlap")
                                                                                 : QString::fromStdString(info.label));
        if (info.kind == TimelineRow::Kind::Overlap) {
            const WindowStats st = computeStats(trace, analysis, info.rank, r.window);
            long hidden = countOf(counts, r.palette.overlap(OverlapState::Hidden));
            if (gray) // the hidden state is hatched in greyscale: its lines count as hidden too
                hidden += countOf(counts, r.palette.hiddenBrush().color());
            out.push_back({ rowName + QStringLiteral(" exposed"),
                countOf(counts, r.palette.overlap(OverlapState::Exposed)) / area, st.exposedNs / span });
            out.push_back({ rowName + QStringLiteral(" hidden"), hidden / area, st.overlappedNs / span });
            out.push_back({ rowName + QStringLiteral(" compute only"),
                countOf(counts, r.palette.overlap(OverlapState::ComputeOnly)) / area,
                (st.computeBusyNs - st.overlappedNs) / span });
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
            out.push_back({ rowName + QStringLiteral(" ") + QColor::fromRgb(rgb).name(), painted / area, ns / span });
        }
    }
    return out;
}

} // namespace exposure::testing
