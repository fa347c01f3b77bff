// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "timeline/palette.h"
#include "view/timeaxis.h"
#include "view/viewindex.h"

#include <QString>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace exposure {

enum class LegendPosition { Top, Bottom, Right, InsideTopRight };
enum class RowSelection { All, GpuOnly, Custom };

// Everything that decides what a TimelinePlot draws. The GUI and figure export (off-screen
// TimelinePlot + savePng/savePdf/toPainter) use the same struct, so a figure looks like the view.
struct TimelineOptions
{
    std::optional<TimeRange> range; // visible range; nullopt = the whole trace
    RowSelection rows = RowSelection::All;
    std::vector<std::pair<int, int>> customRows; // RowSelection::Custom: (rank, lane); lane -1 = overlap row
    bool showCpu = true; // CPU thread rows (ignored for GpuOnly)
    bool showOverlap = true; // per-rank derived overlap rows
    bool cpuDepthRows = true; // nested CPU regions: one sub-row per depth (else all in one row)
    std::set<int> collapsedRanks; // rank indexes drawn as a single row
    // Ranks in groups (view/rankgroups.h; the plot groups its trace's ranks so): a group's header row paints the share
    // of its ranks in each overlap state, and a collapsed group is that row alone.
    RankGrouping grouping = RankGrouping::None;
    std::set<int> collapsedGroups; // indexes of the groups drawn as their header row alone
    PaletteKind palette = PaletteKind::Default;
    bool legend = true;
    LegendPosition legendPosition = LegendPosition::Top;
    QString title; // empty: no title
    QString fontFamily; // empty: the application font
    double fontPointSize = 0; // <= 0: the application font size
    QString timeAxisLabel = QStringLiteral("Time since trace start");
    TimeUnit timeUnit = TimeUnit::Auto; // unit of tick labels
    TimeNs timeOrigin = 0; // tick labels read the time since this (a step's start); ticks fall on it
    bool twoToneCommunication = true; // split communication blocks into hidden / exposed parts
    bool outlineBackwardOverlap = true; // outline backward kernels that overlap communication
    bool blockLabels = true; // write names into blocks wide enough for them
    bool disclosureMarks = true; // ▾/▸ before rank labels (clickable on screen; off in figures)
    double minFoldPixels = 2; // intervals narrower than this fold into counted runs
    double maxRowPixels = 64; // rows never get taller (spare height stays empty); <= 0: fill
    // Rows never get thinner: when they do not all fit, the plot shows a window of rows that scrolls vertically
    // (TimelinePlot::setFirstRow). <= 0: every row is shown, however thin (figures, which check their rows).
    double minRowPixels = 14;
    bool legendDrawnOnly = false; // the legend names only classes drawn in the visible range (figures)
    int maxRowLabelPixels = 0; // row labels wider than this are elided in the middle; <= 0: never

    RowFilter rowFilter() const
    {
        RowFilter f;
        f.showCpu = showCpu && rows != RowSelection::GpuOnly;
        f.gpuOnly = rows == RowSelection::GpuOnly;
        f.showOverlap = showOverlap;
        f.collapsedRanks = collapsedRanks;
        f.collapsedGroups = collapsedGroups; // the groups themselves come from the plot, which knows the trace
        f.cpuDepthRows = cpuDepthRows;
        if (rows == RowSelection::Custom)
            f.only = customRows;
        return f;
    }
};

} // namespace exposure
