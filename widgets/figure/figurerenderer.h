// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "figure/figurespec.h"
#include "timeline/timelineplottable.h"

#include <QByteArray>
#include <QImage>
#include <functional>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

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

// What a figure would look like, measured on its layout: every text box (row labels, ticks, axis label, legend,
// title, block names), the pairs that overlap, the boxes cut by the figure's edge, the smallest font and the
// thinnest row. A figure is legible when no text overlaps or is cut, no font is under kMinFontPt and every row
// is at least kMinRowMm tall.
struct FigureCheck
{
    static constexpr double kMinRowMm = 1.5;
    static constexpr double kMinFontPt = 6;
    // Rows "auto" keeps the CPU rows only while every row (the GPU rows among them) is at least this tall: CPU rows
    // go first, before GPU rows become slivers.
    static constexpr double kAutoCpuRowMm = 3.0;

    std::vector<PlotText> texts;
    std::vector<std::pair<int, int>> overlaps; // indexes into texts
    std::vector<int> clipped; // indexes into texts
    double minFontPt = 0;
    double rowMm = 0; // height of a row in the output, mm
    int rowCount = 0;
    double plotMm = 0; // height of the rows' area, mm

    bool rowsLegible() const { return rowCount > 0 && rowMm + 1e-9 >= kMinRowMm; }
    bool textLegible() const { return overlaps.empty() && clipped.empty() && minFontPt + 1e-9 >= kMinFontPt; }
    bool legible() const { return rowsLegible() && textLegible(); }
    // From `texts` on a canvas of `logical` pixels: the overlapping pairs, the boxes cut by its edge, the smallest
    // font (the timeline and the heat map figures measure alike).
    void measureTexts(QSize logical);
    // "2 texts overlap ('Rank 0' / 'gemm (compute)')", "rows are 0.4 mm tall (at least 1.5 mm)", ...; "" if legible.
    QString problem() const;
};

// What would make an illegible figure legible: a height, a narrower row selection, a smaller font (0 / false:
// not proposed).
struct FigureProposal
{
    double heightMm = 0;
    FigureSpec::RowsKind rows = FigureSpec::RowsKind::Auto;
    bool hasRows = false;
    double fontPt = 0;
    // "--height-mm 72 or --rows overlap" (command line) / "a height of 72 mm or overlap rows only" (dialog).
    QString text(bool commandLine) const;
};

// Thrown instead of writing a figure that is not legible (FigureCheck): says why and what would do instead.
class FigureLegibilityError : public FigureRenderError
{
public:
    FigureLegibilityError(const std::string& message, FigureProposal p)
        : FigureRenderError(message)
        , proposal(p)
    { }
    FigureProposal proposal;
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

    // The raster figure, spec.pixelSize() pixels, DPI metadata = spec.dpi, legible or not (check() says; the
    // dialog's preview). Throws FigureSpecError.
    QImage renderImage(const FigureSpec& spec);
    // The file contents in spec.format. Throws FigureSpecError / FigureRenderError, and FigureLegibilityError
    // (with a proposed height or row selection) rather than make a figure whose text overprints or whose rows
    // are too thin to read.
    QByteArray render(const FigureSpec& spec);
    // "Timeline figure made by Exposure; window A to B (...)": the SVG <desc> and the PDF's XMP description, so that
    // a figure says which window its shares are of.
    QString description(const FigureSpec& spec) const;
    // Writes render(spec) to `path` atomically (QSaveFile). Refuses an existing file unless `overwrite`.
    // Errors read "<path>: <problem>".
    void renderToFile(const FigureSpec& spec, const QString& path, bool overwrite);

    // Matched collectives: the waiting part of communication becomes its own state in the overlap rows and is
    // hatched in communication blocks, as on screen (null: drawn without).
    void setCollectives(std::shared_ptr<const CollectiveMatch> collectives);

    // The plot used for rendering (for tests: row labels, pixel positions after renderImage).
    TimelinePlot* plot() const { return m_plot.get(); }
    // After a render: what makes the figure illegible and what to do instead ("" when it is fine).
    QString crowdingWarning();
    // After a render of an illegible figure: what would make it legible (lays out other selections to find out).
    FigureProposal proposal(const FigureSpec& spec);
    // The legibility of the last render (block labels as drawn by it; before drawing, the layout's text only).
    const FigureCheck& check() const { return m_check; }
    // After a legible render with rows "auto" that left rows out or moved the legend: says so ("" otherwise).
    QString selectionNote() const;
    // The rows the last render drew (Auto resolved).
    FigureSpec::RowsKind rowsUsed() const { return m_rowsUsed; }
    // Measures the plot's current layout; with `blockLabels`, the names the last draw wrote into blocks too.
    FigureCheck measure(bool blockLabels) const;
    // Logical (layout) size and scale of the last render.
    QSize logicalSize() const { return m_logical; }
    double scaleX() const { return m_sx; }
    double scaleY() const { return m_sy; }

private:
    void prepare(const FigureSpec& spec, QSize device);
    void layOut(const TimelineOptions& options);
    QImage paintImage(const FigureSpec& spec); // after prepare()
    FigureCheck tryRows(const FigureSpec& spec, FigureSpec::RowsKind rows);
    void requireLegible(const FigureSpec& spec);

    std::unique_ptr<TimelinePlot> m_plot;
    FigureSpec m_spec; // of the last prepare (with the legend where it ended up)
    LegendPosition m_requestedLegend = LegendPosition::Top;
    FigureCheck m_check;
    FigureSpec::RowsKind m_rowsUsed = FigureSpec::RowsKind::All;
    std::vector<std::pair<FigureSpec::RowsKind, FigureCheck>> m_tried; // the selections tried by the last prepare
    QSize m_logical;
    double m_sx = 1, m_sy = 1;
};

// The DPI at which the plot is laid out (what QFontMetrics uses for point sizes).
int figureLayoutDpi();

// Writes what `render` makes to `path` (atomically), for every figure (the timeline, the heat map). Refuses a name
// whose extension names another format than `format` and an existing file unless `overwrite`; every error it throws
// (FigureRenderError, FigureLegibilityError keeping its proposal) names the file, and nothing is written then.
void writeFigureFile(
    const QString& path, bool overwrite, FigureSpec::Format format, const std::function<QByteArray()>& render);

} // namespace exposure
