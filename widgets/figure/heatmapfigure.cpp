// SPDX-License-Identifier: GPL-3.0-or-later
#include "figure/heatmapfigure.h"

#include "figure/figureencode.h"

#include <QBuffer>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <cmath>

namespace exposure {

HeatMapFigure::HeatMapFigure(std::shared_ptr<const Trace> trace, std::shared_ptr<const StepHeatMap> map)
    : m_trace(std::move(trace))
    , m_map(std::move(map))
{ }

HeatMapFigure::HeatMapFigure(HeatMapScene scene)
    : m_trace(scene.trace)
    , m_map(scene.map)
    , m_given(std::move(scene))
{ }

void HeatMapFigure::prepare(const FigureSpec& spec)
{
    spec.validate(spec.tracePath.isEmpty() ? QStringLiteral("figure") : spec.tracePath);
    if (!spec.heatmap)
        throw FigureRenderError("the figure spec names no heat map metric");
    if (!m_trace || !m_map)
        throw FigureRenderError("no trace to render");
    if (m_given) {
        if (m_given->order.empty() || m_given->columnCount() == 0)
            throw FigureRenderError("the grid has no cells");
        m_scene = *m_given;
    } else {
        prepareScene(spec);
    }
    m_scene.title = spec.title;
    const QSize device = spec.pixelSize();
    const double scale = double(spec.dpi) / figureLayoutDpi();
    m_logical = QSize(
        std::max(1, int(std::lround(device.width() / scale))), std::max(1, int(std::lround(device.height() / scale))));
    m_sx = double(device.width()) / m_logical.width();
    m_sy = double(device.height()) / m_logical.height();
    m_font = QFont(spec.fontFamily);
    m_font.setPointSizeF(spec.fontSize);
    m_layout = layOutHeatMap(m_scene, QSizeF(m_logical), m_font);

    // The legibility, as FigureRenderer::measure() finds it for the timeline.
    FigureCheck c;
    c.texts = m_layout.texts;
    c.measureTexts(m_logical);
    const double mmPerPx = 25.4 / figureLayoutDpi();
    c.rowCount = int(m_scene.order.size());
    c.rowMm = m_layout.cellH * mmPerPx;
    c.plotMm = m_layout.cells.height() * mmPerPx;
    m_cellWMm = m_layout.cellW * mmPerPx;
    m_check = c;
}

void HeatMapFigure::prepareScene(const FigureSpec& spec)
{
    const HeatMetric metric = *spec.heatmap;
    if (metric == HeatMetric::Bubble && !m_map->hasBubble)
        throw FigureRenderError("no per-step pipeline bubble: the trace has no steps");
    if (metric == HeatMetric::Slowdown && !m_map->hasSlowdown)
        throw FigureRenderError("no slowdown: the straggler what-if was not run (whatif::addSlowdown)");
    if (metric == HeatMetric::Waiting && !m_map->hasWaiting)
        throw FigureRenderError("no waiting for peers: the collectives were not matched");
    if (m_map->columns.empty())
        throw FigureRenderError("the trace has no training steps: there is no heat map to draw");
    m_scene = HeatMapScene::make(m_trace, m_map, metric, spec.heatmapOrder);
}

bool HeatMapFigure::legible() const
{
    return m_check.textLegible() && m_check.rowMm + 1e-9 >= kMinCellMm && m_cellWMm + 1e-9 >= kMinCellMm;
}

void HeatMapFigure::requireLegible(const FigureSpec& spec) const
{
    if (legible())
        return;
    FigureProposal p;
    // The text's part of the timeline's check (its rows are this figure's cells, measured against kMinCellMm here).
    FigureCheck text = m_check;
    text.rowCount = 1;
    text.rowMm = FigureCheck::kMinRowMm;
    QString problem = m_check.textLegible() ? QString() : text.problem();
    const double mmPerPx = 25.4 / figureLayoutDpi();
    if (m_check.rowMm + 1e-9 < kMinCellMm) {
        p.heightMm = std::ceil(m_layout.textHeight * mmPerPx + m_check.rowCount * kMinCellMm + 1);
        problem += QStringLiteral("%1cells of %2 mm (at least %3 mm)")
                       .arg(problem.isEmpty() ? QString() : QStringLiteral("; "))
                       .arg(m_check.rowMm, 0, 'f', 2)
                       .arg(kMinCellMm);
    } else if (m_cellWMm + 1e-9 < kMinCellMm) {
        problem += QStringLiteral("%1cells %2 mm wide (at least %3 mm); try a wider figure")
                       .arg(problem.isEmpty() ? QString() : QStringLiteral("; "))
                       .arg(m_cellWMm, 0, 'f', 2)
                       .arg(kMinCellMm);
    }
    if (!m_check.textLegible())
        p.fontPt = std::max(FigureCheck::kMinFontPt, std::floor(spec.fontSize) - 1);
    const QSizeF mm = spec.sizeMm();
    throw FigureLegibilityError(QStringLiteral("not legible at %1 × %2 mm: %3; try %4")
                                    .arg(mm.width(), 0, 'g', 4)
                                    .arg(mm.height(), 0, 'g', 4)
                                    .arg(problem, p.text(true))
                                    .toStdString(),
        p);
}

void HeatMapFigure::paint(QPainter& painter) const
{
    paintHeatMap(painter, m_scene, m_layout, m_font, Qt::black);
}

QImage HeatMapFigure::renderImage(const FigureSpec& spec)
{
    prepare(spec);
    QImage image(spec.pixelSize(), QImage::Format_RGB32);
    // Painted at the layout DPI (fonts in points resolve as QFontMetrics resolved them), tagged with the real one.
    image.setDotsPerMeterX(dotsPerMeter(figureLayoutDpi()));
    image.setDotsPerMeterY(dotsPerMeter(figureLayoutDpi()));
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        painter.scale(m_sx, m_sy);
        paint(painter);
    }
    image.setDotsPerMeterX(dotsPerMeter(spec.dpi));
    image.setDotsPerMeterY(dotsPerMeter(spec.dpi));
    return image;
}

QByteArray HeatMapFigure::render(const FigureSpec& spec)
{
    QByteArray out;
    if (spec.format == FigureSpec::Format::Png) {
        const QImage image = renderImage(spec);
        requireLegible(spec);
        QBuffer buffer(&out);
        buffer.open(QIODevice::WriteOnly);
        if (!image.save(&buffer, "PNG"))
            throw FigureRenderError("the PNG encoder failed");
        return out;
    }
    prepare(spec);
    requireLegible(spec);
    QBuffer buffer(&out);
    buffer.open(QIODevice::WriteOnly);
    const QString title = spec.title.isEmpty() ? QStringLiteral("Exposure heat map") : spec.title;
    if (spec.format == FigureSpec::Format::Svg) {
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setSize(m_logical);
        svg.setViewBox(QRect(QPoint(0, 0), m_logical));
        svg.setResolution(figureLayoutDpi());
        svg.setTitle(title.toHtmlEscaped());
        svg.setDescription(m_scene.isGrid() ? QStringLiteral("DP rank × pipeline stage heat map made by Exposure")
                                            : QStringLiteral("Rank × step heat map made by Exposure"));
        QPainter painter;
        if (!painter.begin(&svg))
            throw FigureRenderError("the SVG generator failed to start");
        paint(painter);
        painter.end();
        buffer.close();
        stateSvgSizeMm(out, spec.sizeMm());
        return out;
    }
    QPdfWriter pdf(&buffer);
    setUpFigurePdf(pdf, spec.title, xmpPacket(spec.title), spec.sizeMm(), figureLayoutDpi());
    QPainter painter;
    if (!painter.begin(&pdf))
        throw FigureRenderError("the PDF writer failed to start");
    painter.scale(double(pdf.width()) / m_logical.width(), double(pdf.height()) / m_logical.height());
    paint(painter);
    painter.end();
    buffer.close();
    makePdfDeterministic(out);
    return out;
}

void HeatMapFigure::renderToFile(const FigureSpec& spec, const QString& path, bool overwrite)
{
    writeFigureFile(path, overwrite, spec.format, [&] { return render(spec); });
}

} // namespace exposure
