// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "figure/figurespec.h"

#include <QByteArray>
#include <QImage>

#include <memory>
#include <stdexcept>

namespace exposure {

struct Analysis;
struct Trace;
struct ViewIndex;
class TimelinePlot;

class FigureRenderError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

// Renders timeline figures (PNG, SVG, PDF) of one trace with an off-screen TimelinePlot: the very drawing
// code of the GUI timeline, so a figure looks like the view and the CLI and the dialog give the same bytes.
//
// Sizes: the plot is laid out in "logical" pixels at the DPI that QFontMetrics uses (96 under the offscreen
// platform) and then scaled by dpi / that DPI, so a 9 pt font is 9/72 inch tall in the output at any DPI, and
// the level-of-detail folding happens per logical pixel (a 600 DPI figure holds no more boxes than a 96 DPI one,
// which keeps SVG/PDF small). PNG: exactly spec.pixelSize() pixels with the DPI in its pHYs chunk. SVG: the
// physical size in mm, a viewBox in logical pixels, real <rect>/<path> and <text>. PDF: one page of exactly the
// physical size (whole points), vector paths and embedded text.
//
// Deterministic: identical inputs give identical bytes (the PDF's creation date and document id, which Qt fills
// from the clock and a random UUID, are replaced by fixed values of the same length).
//
// Needs a QApplication (QWidget); not thread-safe: use from the GUI thread.
class FigureRenderer
{
public:
    FigureRenderer(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis,
                   std::shared_ptr<const ViewIndex> index = {});
    ~FigureRenderer();
    FigureRenderer(const FigureRenderer&) = delete;
    FigureRenderer& operator=(const FigureRenderer&) = delete;

    // The raster figure, spec.pixelSize() pixels, DPI metadata = spec.dpi. Throws FigureSpecError.
    QImage renderImage(const FigureSpec& spec);
    // The file contents in spec.format. Throws FigureSpecError / FigureRenderError.
    QByteArray render(const FigureSpec& spec);
    // Writes render(spec) to `path` atomically (QSaveFile). Refuses an existing file unless `overwrite`.
    // Errors read "<path>: <problem>".
    void renderToFile(const FigureSpec& spec, const QString& path, bool overwrite);

    // The plot used for rendering (for tests: row labels, pixel positions after renderImage).
    TimelinePlot* plot() const { return m_plot.get(); }
    // After a render: a hint when the rows came out shorter than their labels ("" when the figure is fine).
    QString crowdingWarning() const;
    // Logical (layout) size and scale of the last render.
    QSize logicalSize() const { return m_logical; }
    double scaleX() const { return m_sx; }
    double scaleY() const { return m_sy; }

private:
    void prepare(const FigureSpec& spec, QSize device);

    std::unique_ptr<TimelinePlot> m_plot;
    QSize m_logical;
    double m_sx = 1, m_sy = 1;
};

// The DPI at which the plot is laid out (what QFontMetrics uses for point sizes).
int figureLayoutDpi();

} // namespace exposure
