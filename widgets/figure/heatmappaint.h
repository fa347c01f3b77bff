// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The drawing of a rank × step heat map (analysis/heatmap.h), shared by the Heat Map dock and its figure
// (`exposure-cli render --heatmap METRIC`): cells of equal size, one per rank and step, coloured on a viridis-like
// scale (perceptually uniform, readable with colour-blindness, and in grey scale from dark to light); outlier cells
// outlined black outside and white inside, so that the mark stands out on every colour of the scale; absent cells
// light grey; rank labels on the left (thinned so that they never overprint), step labels below, a colour bar with
// ticks in milliseconds on the right.
#include "analysis/heatmap.h"
#include "timeline/timelineplottable.h"

#include <QColor>
#include <QFont>
#include <QRectF>
#include <QString>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QPainter;

namespace exposure {

namespace whatif {
struct EvenResult;
}

// The colour scale at t in [0, 1] (clamped): linear in sRGB between nine samples of viridis.
QColor heatColour(double t);
// Absent cells (the rank has no such step).
QColor heatAbsentColour();

// What a heat map shows: one metric of a map, its rows in display order.
struct HeatMapScene
{
    std::shared_ptr<const Trace> trace;
    std::shared_ptr<const StepHeatMap> map;
    HeatMatrix matrix;
    std::vector<int> order; // rank indexes, top row first
    QString title; // above everything; empty: none
    // A grid other than rank × step (the straggler what-if's DP rank × stage grid): the label of each matrix row
    // and column and the two axis titles. Empty: rows are ranks (Rank::rank), columns steps ("Rank", "Step").
    std::vector<QString> rowLabels, columnLabels;
    QString rowTitle, columnTitle;

    // Builds matrix and order from map for a metric and an order.
    static HeatMapScene make(
        std::shared_ptr<const Trace> trace, std::shared_ptr<const StepHeatMap> map, HeatMetric metric, RankOrder order);
    // The DP rank × pipeline stage grid of a straggler what-if run with EvenOptions::grid: row d, column p is the
    // job's mean step with only the ranks of (d, p) as recorded and everything else evened, minus the evened mean
    // step (the Slowdown metric's quantity, over the mean step instead of one step); absent where no rank has those
    // coordinates. No outliers are marked. `trace` and `map` are kept for the views; an empty grid gives no rows.
    static HeatMapScene makeSlowdownGrid(
        std::shared_ptr<const Trace> trace, std::shared_ptr<const StepHeatMap> map, const whatif::EvenResult& even);
    bool isGrid() const { return !rowLabels.empty(); }
    std::size_t columnCount() const { return matrix.columns; }
    // The label of matrix row `row` (a rank index unless isGrid()): the rank's number, or the grid's label.
    QString rowLabel(int row) const;
    // The label of a step column: the number its name ends with ("ProfilerStep#6" → "6"), else its index.
    QString columnLabel(std::size_t column) const;
    // The colour of a cell's value on this scene's scale (t from the matrix's minimum to its maximum).
    double scaleOf(TimeNs value) const;
    QString unitTitle() const; // "Compute (ms)"
};

// Where everything of a heat map goes on a canvas, in the canvas's (logical) pixels.
struct HeatMapLayout
{
    QRectF cells; // the area of all cells
    double cellW = 0, cellH = 0;
    QRectF bar; // the colour bar (low values at the bottom)
    double textHeight = 0; // the canvas height that is not cells (title, header, step labels, margins)
    std::vector<PlotText> texts; // every text with its box
    std::vector<std::pair<double, QString>> barTicks; // (y, label)
    std::vector<std::pair<int, double>> rankTicks; // (row, y centre) of the labelled rows
    std::vector<std::pair<int, double>> stepTicks; // (column, x centre) of the labelled columns

    QRectF cellRect(int row, int column) const;
    // The (row, column) under a point; nullopt outside the cells.
    std::optional<std::pair<int, int>> cellAt(QPointF p) const;
};

HeatMapLayout layOutHeatMap(const HeatMapScene& scene, QSizeF canvas, const QFont& font);
// Paints the scene as laid out; `text` is the colour of text and axes (the background is left as it is).
void paintHeatMap(
    QPainter& painter, const HeatMapScene& scene, const HeatMapLayout& layout, const QFont& font, QColor text);

} // namespace exposure
