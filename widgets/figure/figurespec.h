// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/heatmap.h"
#include "model/trace.h"
#include "timeline/timelineoptions.h"

#include <QString>
#include <QStringList>
#include <optional>
#include <stdexcept>

namespace exposure {

struct Analysis;

// A "figure spec": everything needed to remake a timeline figure later, stored as a small JSON file
// (written by File ▸ Export Figure…, read by `exposure-cli render --spec`). Example:
//
//   {
//     "exposureFigure": 1,                      // format version (required)
//     "trace": "/data/run3",                    // the trace folder or anchor file
//     "format": "pdf",                          // png | svg | pdf
//     "range": { "kind": "step", "step": 4 },   // whole | visible | range (fromNs/toNs) | step (step)
//     "rows": { "select": "list", "list": ["0", "1:2", "1:overlap"], "overlapLanes": true },
//                                               // select: auto | all | gpu | overlap | list
//     "palette": "grayscale",                   // default | colorblind | grayscale
//     "size": { "unit": "mm", "width": 178, "height": 60, "dpi": 600 },   // unit: px | mm
//     "font": { "family": "DejaVu Sans", "size": 8 },                      // size in points
//     "legend": { "show": true, "position": "top" },                       // top | bottom | right | inside
//     "title": "BERT, 2 ranks, step 4",
//     "timeAxis": { "label": "Time since trace start", "unit": "ms" },     // auto | ns | us | ms | s
//     "heatmap": { "metric": "compute", "order": "host" }  // instead of the timeline: the rank × step heat map
//   }
//
// Every key but "exposureFigure" is optional and defaults to the value of a default-constructed FigureSpec.
// Times are integer nanoseconds relative to the trace start ("fromNs"/"toNs"); "from"/"to" strings with a
// unit ("1.5ms") are accepted too. Unknown keys are rejected so that a typo does not silently change a figure.
struct FigureSpec
{
    static constexpr int kVersion = 1;

    enum class Format { Png, Svg, Pdf };
    enum class RangeKind { Whole, Visible, Custom, Step };
    // Auto: every row if all are legible at the figure's size, else GPU streams and overlap rows, else overlap
    // rows only, else (more than kGroupRanksAbove ranks) one row per group of ranks (FigureRenderer decides; see
    // kMinRowMm).
    // Groups: one collapsed, area-true row per group of ranks (`grouping`), for jobs of many ranks.
    enum class RowsKind { Auto, All, Gpu, Overlap, List, Groups };
    enum class SizeUnit { Pixels, Millimetres };

    QString tracePath;
    Format format = Format::Png;

    RangeKind rangeKind = RangeKind::Whole;
    TimeRange range { 0, 0 }; // Visible / Custom: trace-relative ns
    int step = 0; // Step: the StepWindow::number of the step (ProfilerStep#N: N; the same step on every rank)
    // Step: the time axis reads the time since the step's start (JSON range "origin": "step"), else since the trace's.
    bool stepOrigin = true;

    RowsKind rows = RowsKind::Auto;
    // RowsKind::List: "R" (every row of rank R), "R:L" (lane L of rank R), "R:overlap" (its overlap row).
    // R and L are indexes as `exposure-cli info` lists them.
    QStringList rowList;
    // RowsKind::Groups: how ranks are grouped (auto, host, stage, dp, blocks: core/view/rankgroups.h).
    RankGrouping grouping = RankGrouping::Auto;
    bool overlapLanes = true;

    PaletteKind palette = PaletteKind::Default;

    SizeUnit sizeUnit = SizeUnit::Pixels;
    int widthPx = 1600;
    int heightPx = 900;
    double widthMm = 178;
    double heightMm = 70;
    int dpi = 96; // pixels mode: DPI metadata and font scale (points are 1/72 inch at this DPI)

    QString fontFamily = QStringLiteral("DejaVu Sans");
    double fontSize = 9; // points

    bool legend = true;
    LegendPosition legendPosition = LegendPosition::Top;
    QString title;
    QString timeAxisLabel = QStringLiteral("Time since trace start");
    TimeUnit timeUnit = TimeUnit::Auto;
    // "clock": "aligned" (default: ranks' clocks aligned across hosts where significant) or "recorded".
    bool alignedClocks = true;
    // Set: the figure is the rank × step heat map of this metric (analysis/heatmap.h: step, compute, exposed,
    // waiting, idle, bubble) with its rows in `heatmapOrder`, instead of the timeline (range, rows, palette, legend
    // and time axis do not apply). Written to JSON only when set.
    std::optional<HeatMetric> heatmap;
    RankOrder heatmapOrder = RankOrder::Number;

    // The output size in device pixels (mm × dpi / 25.4, rounded, in millimetre mode).
    QSize pixelSize() const;
    // Physical size in millimetres (pixels / dpi in pixel mode).
    QSizeF sizeMm() const;

    // Throws FigureSpecError naming `sourceName` and the problem.
    static FigureSpec fromJson(const QByteArray& json, const QString& sourceName);
    QByteArray toJson() const;
    // File I/O; errors read "<file>: <problem>". save() writes atomically (QSaveFile).
    static FigureSpec load(const QString& path);
    void save(const QString& path) const;

    // Checks the values (sizes, dpi, font size, range); throws FigureSpecError("<sourceName>: ...").
    void validate(const QString& sourceName) const;

    // The range to draw for a trace (and its analysis, for steps); throws FigureSpecError on a step the
    // trace does not have or a range outside it.
    TimeRange resolveRange(const Trace& trace, const Analysis* analysis) const;
    // The timeline options this spec stands for (range resolved, rows resolved against the trace).
    TimelineOptions timelineOptions(const Trace& trace, const Analysis* analysis) const;

    bool operator==(const FigureSpec&) const = default;
};

class FigureSpecError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

QString figureFormatName(FigureSpec::Format f); // "png", "svg", "pdf"
bool figureFormatFromName(const QString& name, FigureSpec::Format* f); // also accepts upper case
QString legendPositionName(LegendPosition p); // "top", "bottom", "right", "inside"
bool legendPositionFromName(const QString& name, LegendPosition* p);
QString timeUnitName(TimeUnit u); // "auto", "ns", "us", "ms", "s"
bool timeUnitFromName(const QString& name, TimeUnit* u);
// Parses "auto" | "all" | "gpu" | "overlap" | a comma-separated list ("0,1:2,1:overlap") into the spec.
bool parseRowsArgument(const QString& text, FigureSpec* spec, QString* error);

} // namespace exposure
