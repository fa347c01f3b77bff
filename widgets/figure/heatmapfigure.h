// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "figure/figurerenderer.h"
#include "figure/figurespec.h"
#include "figure/heatmappaint.h"

#include <QByteArray>
#include <QImage>
#include <memory>
#include <optional>

namespace exposure {

// Renders the rank × step heat map of a trace (FigureSpec::heatmap: its metric and row order) as PNG, SVG or PDF:
// the drawing of the Heat Map dock (heatmappaint.h), laid out in logical pixels at figureLayoutDpi() and scaled to
// the spec's size and DPI like FigureRenderer's timeline, byte-deterministic like it. The spec's size, DPI, font,
// title and format apply; its range, rows, palette, legend and time axis do not.
//
// Legible means: no text overlaps another or is cut by the edge, fonts are at least FigureCheck::kMinFontPt and a
// cell is at least kMinCellMm wide and tall; render() refuses anything else (FigureLegibilityError, proposing a
// height or a font size).
class HeatMapFigure
{
public:
    static constexpr double kMinCellMm = 0.3;

    HeatMapFigure(std::shared_ptr<const Trace> trace, std::shared_ptr<const StepHeatMap> map);
    // A scene made beforehand (HeatMapScene::makeSlowdownGrid: the DP rank × stage grid); the spec's metric and order
    // do not apply, its title does.
    explicit HeatMapFigure(HeatMapScene scene);

    // spec.pixelSize() pixels with the DPI in its metadata, legible or not (check() says). Throws FigureSpecError,
    // FigureRenderError (no heat map metric, a metric the trace does not have, no steps).
    QImage renderImage(const FigureSpec& spec);
    QByteArray render(const FigureSpec& spec);
    void renderToFile(const FigureSpec& spec, const QString& path, bool overwrite);

    // Of the last render: what was drawn, where (logical pixels; scaleX/Y map them to the image's pixels), and
    // the legibility (texts, overlaps, clipped, smallest font; rowMm: a cell's height).
    const HeatMapScene& scene() const { return m_scene; }
    const HeatMapLayout& layout() const { return m_layout; }
    double scaleX() const { return m_sx; }
    double scaleY() const { return m_sy; }
    const FigureCheck& check() const { return m_check; }
    bool legible() const;

private:
    void prepare(const FigureSpec& spec);
    void prepareScene(const FigureSpec& spec); // m_scene from the map, the spec's metric and order
    void paint(QPainter& painter) const;
    void requireLegible(const FigureSpec& spec) const;

    std::shared_ptr<const Trace> m_trace;
    std::shared_ptr<const StepHeatMap> m_map;
    HeatMapScene m_scene;
    std::optional<HeatMapScene> m_given;
    HeatMapLayout m_layout;
    QFont m_font;
    FigureCheck m_check;
    QSize m_logical;
    double m_sx = 1, m_sy = 1;
    double m_cellWMm = 0;
};

} // namespace exposure
