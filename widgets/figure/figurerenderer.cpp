// SPDX-License-Identifier: GPL-3.0-or-later
#include "figure/figurerenderer.h"

#include "analysis/analysis.h"
#include "common/atomicwrite.h"
#include "figure/figureencode.h"
#include "model/timeformat.h"
#include "timeline/timelineplot.h"
#include "view/rankgroups.h"
#include "view/viewindex.h"

#include <QBuffer>
#include <QFileInfo>
#include <QGuiApplication>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QScreen>
#include <QSvgGenerator>
#include <cmath>

namespace exposure {

namespace {

// Paper figures are black on white whatever the desktop theme is.
QPalette figurePalette()
{
    QPalette p;
    for (auto group : { QPalette::Active, QPalette::Inactive, QPalette::Disabled }) {
        p.setColor(group, QPalette::Base, Qt::white);
        p.setColor(group, QPalette::Window, Qt::white);
        p.setColor(group, QPalette::WindowText, Qt::black);
        p.setColor(group, QPalette::Text, Qt::black);
        p.setColor(group, QPalette::Highlight, QColor(0x30, 0x8C, 0xC6));
    }
    return p;
}

// QSvgGenerator wraps every fillRect in its own <g> carrying the whole painter state (~250 bytes); a timeline is
// mostly such boxes. Rewrites each fill-only group of <rect>s into bare <rect fill=...>s and drops empty groups:
// the same drawing in less than half the bytes.
QByteArray compactSvg(const QByteArray& svg)
{
    static const QRegularExpression fillGroup(
        QStringLiteral("<g fill=\"(#[0-9a-f]{6})\" fill-opacity=\"1\" stroke=\"none\" "
                       "transform=\"matrix\\(1,0,0,1,0,0\\)\"\nfont-family=\"[^\"]*\" font-size=\"[^\"]*\" "
                       "font-weight=\"[^\"]*\" font-style=\"[^\"]*\" \n>\n((?:<rect [^>]*/>\n)+)</g>\n"));
    static const QRegularExpression emptyGroup(QStringLiteral("<g [^>]*>\\s*</g>\\n?"));
    const QString in = QString::fromUtf8(svg);
    QString out;
    out.reserve(in.size() / 2);
    qsizetype pos = 0;
    auto it = fillGroup.globalMatch(in);
    while (it.hasNext()) {
        const auto m = it.next();
        out += QStringView(in).mid(pos, m.capturedStart() - pos);
        const QString fill = QStringLiteral("<rect fill=\"") + m.captured(1) + QStringLiteral("\" stroke=\"none\" ");
        const QStringView rects = m.capturedView(2);
        qsizetype start = 0;
        while (start < rects.size()) {
            const qsizetype end = rects.indexOf(QLatin1Char('\n'), start);
            out += fill;
            out += rects.mid(start + 6, end - start - 6 + 1); // after "<rect "
            start = end + 1;
        }
        pos = m.capturedEnd();
    }
    out += QStringView(in).mid(pos);
    out.remove(emptyGroup);
    return out.toUtf8();
}

} // namespace

int figureLayoutDpi()
{
    // QFontMetrics (which QCustomPlot lays text out with) converts points at the primary screen's DPI.
    if (const QScreen* s = QGuiApplication::primaryScreen())
        return std::max(1, int(std::lround(s->logicalDotsPerInchY())));
    return 96;
}

FigureRenderer::FigureRenderer(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis,
    std::shared_ptr<const ViewIndex> index)
    : m_plot(std::make_unique<TimelinePlot>())
{
    m_plot->setAttribute(Qt::WA_DontShowOnScreen);
    m_plot->setPalette(figurePalette());
    m_plot->setTrace(std::move(trace), std::move(analysis), std::move(index));
}

FigureRenderer::~FigureRenderer() = default;

void FigureRenderer::setCollectives(std::shared_ptr<const CollectiveMatch> collectives)
{
    m_plot->setCollectives(std::move(collectives));
}

void FigureRenderer::prepare(const FigureSpec& spec, QSize device)
{
    const auto& trace = m_plot->trace();
    if (!trace)
        throw FigureRenderError("no trace to render");
    spec.validate(spec.tracePath.isEmpty() ? QStringLiteral("figure") : spec.tracePath);
    const double scale = double(spec.dpi) / figureLayoutDpi();
    m_logical = QSize(
        std::max(1, int(std::lround(device.width() / scale))), std::max(1, int(std::lround(device.height() / scale))));
    // Separate x/y factors make the logical canvas fill the device exactly (they differ by < 1 px).
    m_sx = double(device.width()) / m_logical.width();
    m_sy = double(device.height()) / m_logical.height();
    // The layout (legend wrapping) reads the widget size: resize before applying the options.
    m_plot->resize(m_logical);
    m_spec = spec;
    m_requestedLegend = spec.legendPosition;
    m_tried.clear();
    // Auto: every row when all are legible, else what a paper needs most: GPU streams and overlap rows, else
    // the overlap rows alone, else (many ranks) a row per group of ranks.
    std::vector<FigureSpec::RowsKind> ladder { spec.rows };
    if (spec.rows == FigureSpec::RowsKind::Auto) {
        ladder = { FigureSpec::RowsKind::All, FigureSpec::RowsKind::Gpu, FigureSpec::RowsKind::Overlap };
        if (trace->ranks.size() > kGroupRanksAbove)
            ladder.push_back(FigureSpec::RowsKind::Groups);
    }
    for (const FigureSpec::RowsKind rows : ladder) {
        m_check = tryRows(spec, rows);
        m_rowsUsed = rows;
        m_tried.emplace_back(rows, m_check);
        const bool cpuRowsFit = ladder.size() == 1 || rows != FigureSpec::RowsKind::All
            || m_check.rowMm + 1e-9 >= FigureCheck::kAutoCpuRowMm;
        if (m_check.legible() && cpuRowsFit)
            return;
    }
    // Rows too thin under a legend of several lines: the legend moves right of the plot, if it takes at most
    // 45 % of the width there (every row is worth less than a time axis of half the width).
    const bool legendAbove
        = spec.legend && (spec.legendPosition == LegendPosition::Top || spec.legendPosition == LegendPosition::Bottom);
    if (legendAbove) {
        FigureSpec right = spec;
        right.legendPosition = LegendPosition::Right;
        for (const FigureSpec::RowsKind rows : ladder) {
            if (rows == FigureSpec::RowsKind::All && ladder.size() > 1)
                continue;
            m_check = tryRows(right, rows);
            m_rowsUsed = rows;
            if (m_check.legible() && m_plot->legend->outerRect().width() <= 0.45 * m_logical.width()) {
                m_spec = right;
                return;
            }
        }
    }
    // Nothing is legible: the try with the thickest rows stays laid out (the dialog previews it); render()
    // refuses.
    std::size_t best = 0;
    for (std::size_t i = 1; i < m_tried.size(); ++i)
        if (m_tried[i].second.rowCount > 0 && m_tried[i].second.rowMm > m_tried[best].second.rowMm)
            best = i;
    m_rowsUsed = m_tried[best].first;
    m_check = tryRows(spec, m_rowsUsed);
}

FigureCheck FigureRenderer::tryRows(const FigureSpec& spec, FigureSpec::RowsKind rows)
{
    FigureSpec candidate = spec;
    candidate.rows = rows;
    TimelineOptions options = candidate.timelineOptions(*m_plot->trace(), m_plot->analysis().get());
    options.disclosureMarks = false; // the ▾ before rank labels is a control, not part of a figure
    // Fold at one layout pixel rather than the screen's two: a figure is looked at closely, and a gap of one
    // pixel between steps should stay visible. Still at most about one box per layout pixel and row.
    options.minFoldPixels = 1;
    // The figure's size is chosen by its author: rows fill it (the screen caps row height instead), and all of
    // them are drawn (the screen scrolls instead).
    options.maxRowPixels = 0;
    options.minRowPixels = 0;
    // The legend names what the figure shows; row labels take at most a third of the width.
    options.legendDrawnOnly = true;
    options.maxRowLabelPixels = std::max(40, m_logical.width() / 3);
    layOut(options);
    return measure(false);
}

void FigureRenderer::layOut(const TimelineOptions& options)
{
    m_plot->setOptions(options);
    m_plot->setVisibleRange(*options.range, false);
    // Space is dear in print: no 15 px frame above the rows (QCustomPlot's default minimum margins), rows close
    // under the legend; on the right, room for half a tick label.
    m_plot->axisRect()->setMinimumMargins(QMargins(0, 2, 12, 0));
    // QCustomPlot keeps an axis rect at least 50 px tall by squeezing the legend; a figure measures its rows instead.
    m_plot->axisRect()->setMinimumSize(QSize(20, 0));
    m_plot->plotLayout()->setRowSpacing(2);
    // A compact legend: entries one text line apart (their text is not clipped to the line, so descenders drawn
    // scaled for print stay whole), columns close together.
    for (int i = 0; i < m_plot->legend->itemCount(); ++i)
        if (QCPAbstractLegendItem* item = m_plot->legend->item(i))
            item->setMargins(QMargins(0, 0, 0, 0));
    m_plot->legend->setRowSpacing(0);
    m_plot->legend->setColumnSpacing(10);
    m_plot->legend->setMargins(QMargins(4, 2, 4, 4));
    // A legend above or below the plot gets as many columns as fit at this width.
    if (options.legend
        && (options.legendPosition == LegendPosition::Top || options.legendPosition == LegendPosition::Bottom))
        m_plot->wrapLegend(m_logical.width());
    // QCustomPlot picks ticks in the first layout phase, from the axis rect of the *previous* layout; the
    // plot has never been laid out at this size, so run the layout twice before toPainter() lays it out again.
    m_plot->setViewport(QRect(QPoint(0, 0), m_logical));
    for (int pass = 0; pass < 2; ++pass)
        m_plot->layOutNow();
    // A tick label at the very end of the axis is centred on it: widen the right margin so that it is not cut.
    double overflow = 0;
    for (const PlotText& t : m_plot->textBoxes())
        if (t.role == PlotText::Role::TickLabel)
            overflow = std::max(overflow, t.rect.right() - (m_logical.width() - 1));
    if (overflow > 0) {
        QMargins margins = m_plot->axisRect()->minimumMargins();
        margins.setRight(margins.right() + int(std::ceil(overflow)));
        m_plot->axisRect()->setMinimumMargins(margins);
        for (int pass = 0; pass < 2; ++pass)
            m_plot->layOutNow();
    }
}

FigureCheck FigureRenderer::measure(bool blockLabels) const
{
    FigureCheck c;
    for (PlotText& t : m_plot->textBoxes())
        if (blockLabels || t.role != PlotText::Role::BlockLabel) // the plottable's labels of the last draw
            c.texts.push_back(std::move(t));
    c.measureTexts(m_logical);
    const double mmPerPx = 25.4 / figureLayoutDpi();
    c.rowCount = int(m_plot->rows().size());
    const double rows = m_plot->yAxis->range().size();
    c.plotMm = m_plot->axisRect()->height() * mmPerPx;
    c.rowMm = rows > 0 ? c.plotMm / rows : 0;
    return c;
}

void FigureCheck::measureTexts(QSize logical)
{
    overlaps.clear();
    clipped.clear();
    const QRectF canvas = QRectF(QPointF(0, 0), QSizeF(logical)).adjusted(-0.5, -0.5, 0.5, 0.5);
    minFontPt = texts.empty() ? kMinFontPt : 1e9;
    for (std::size_t i = 0; i < texts.size(); ++i) {
        const QRectF& a = texts[i].rect;
        minFontPt = std::min(minFontPt, texts[i].pointSize);
        if (!canvas.contains(a))
            clipped.push_back(int(i));
        for (std::size_t j = i + 1; j < texts.size(); ++j) {
            // Boxes are a line tall (leading included): touching lines do not overprint, so allow half a pixel.
            const QRectF both = a.intersected(texts[j].rect);
            if (both.width() > 0.5 && both.height() > 0.5)
                overlaps.emplace_back(int(i), int(j));
        }
    }
}

QString FigureCheck::problem() const
{
    QStringList p;
    if (rowCount == 0)
        p << QObject::tr("no rows to draw");
    else if (!rowsLegible())
        p << QObject::tr("%1 rows of %2 mm (at least %3 mm each)")
                 .arg(rowCount)
                 .arg(rowMm, 0, 'f', 2)
                 .arg(kMinRowMm, 0, 'f', 1);
    if (!overlaps.empty())
        p << QObject::tr("%1 texts overlap ('%2' and '%3')")
                 .arg(overlaps.size() * 2)
                 .arg(
                     texts[std::size_t(overlaps.front().first)].text, texts[std::size_t(overlaps.front().second)].text);
    if (!clipped.empty())
        p << QObject::tr("text cut at the edge ('%1')").arg(texts[std::size_t(clipped.front())].text);
    if (minFontPt + 1e-9 < kMinFontPt)
        p << QObject::tr("text of %1 pt (at least %2 pt)").arg(minFontPt).arg(kMinFontPt);
    return p.join(QStringLiteral("; "));
}

FigureProposal FigureRenderer::proposal(const FigureSpec& spec)
{
    // What would make this figure legible: the height its rows need (when thin rows are the problem), and a
    // narrower row selection that is legible at this very size.
    FigureProposal p;
    const FigureSpec::RowsKind wanted = spec.rows == FigureSpec::RowsKind::Auto ? FigureSpec::RowsKind::Gpu : spec.rows;
    FigureCheck c = m_check;
    for (const auto& [rows, check] : m_tried)
        if (rows == wanted)
            c = check;
    if (c.rowCount > 0 && !c.rowsLegible()) {
        const double extra = c.rowCount * FigureCheck::kMinRowMm - c.plotMm;
        p.heightMm = std::ceil(spec.sizeMm().height() + extra + 1);
    }
    if (spec.rows != FigureSpec::RowsKind::Auto) {
        for (const FigureSpec::RowsKind rows :
            { FigureSpec::RowsKind::Gpu, FigureSpec::RowsKind::Overlap, FigureSpec::RowsKind::Groups }) {
            if (rows == spec.rows)
                break;
            if (rows == FigureSpec::RowsKind::Groups && m_plot->trace()->ranks.size() <= kGroupRanksAbove)
                continue;
            FigureSpec right = spec;
            right.legendPosition = LegendPosition::Right;
            if (tryRows(spec, rows).legible() || (spec.legend && tryRows(right, rows).legible())) {
                p.rows = rows;
                p.hasRows = true;
                break;
            }
        }
        tryRows(spec, m_rowsUsed); // back to the figure that was asked for
    }
    if (!c.textLegible() && c.rowsLegible())
        p.fontPt = std::max(FigureCheck::kMinFontPt, std::floor(spec.fontSize) - 1);
    return p;
}

QString FigureProposal::text(bool commandLine) const
{
    QStringList p;
    if (heightMm > 0)
        p << (commandLine ? QStringLiteral("--height-mm %1").arg(heightMm)
                          : QObject::tr("a height of %1 mm").arg(heightMm));
    if (hasRows) {
        const QString name = rows == FigureSpec::RowsKind::Overlap ? QStringLiteral("overlap")
            : rows == FigureSpec::RowsKind::Groups                 ? QStringLiteral("groups")
                                                                   : QStringLiteral("gpu");
        p << (commandLine                               ? QStringLiteral("--rows %1").arg(name)
                : rows == FigureSpec::RowsKind::Overlap ? QObject::tr("overlap rows only")
                : rows == FigureSpec::RowsKind::Groups  ? QObject::tr("a row per group of ranks")
                                                        : QObject::tr("GPU streams only"));
    }
    if (fontPt > 0)
        p << (commandLine ? QStringLiteral("--font-size %1").arg(fontPt) : QObject::tr("a font of %1 pt").arg(fontPt));
    if (p.isEmpty())
        return commandLine ? QStringLiteral("a larger size") : QObject::tr("a larger size");
    return p.join(commandLine ? QStringLiteral(" or ") : QObject::tr(" or "));
}

void FigureRenderer::requireLegible(const FigureSpec& spec)
{
    if (m_check.legible())
        return;
    const FigureProposal p = proposal(spec);
    const QSizeF mm = spec.sizeMm();
    const QString message = QStringLiteral("not legible at %1 × %2 mm: %3; try %4")
                                .arg(mm.width(), 0, 'g', 4)
                                .arg(mm.height(), 0, 'g', 4)
                                .arg(m_check.problem(), p.text(true));
    throw FigureLegibilityError(message.toStdString(), p);
}

QString FigureRenderer::selectionNote() const
{
    if (m_spec.rows != FigureSpec::RowsKind::Auto || !m_check.legible())
        return {};
    QString rows;
    if (m_rowsUsed == FigureSpec::RowsKind::Gpu)
        rows = QObject::tr("GPU streams and overlap rows (every row would be thinner than %1 mm)");
    else if (m_rowsUsed == FigureSpec::RowsKind::Overlap)
        rows = QObject::tr("the overlap rows (GPU streams would be thinner than %1 mm)");
    QString note = rows.isEmpty() ? QString() : QObject::tr("Rows: %1.").arg(rows.arg(FigureCheck::kMinRowMm));
    if (m_spec.legendPosition != m_requestedLegend)
        note += (note.isEmpty() ? QString() : QStringLiteral(" "))
            + QObject::tr("The legend is right of the plot, where the rows have room.");
    return note;
}

QString FigureRenderer::crowdingWarning()
{
    if (m_check.legible())
        return {};
    return QObject::tr("Not legible at this size: %1. Try %2.").arg(m_check.problem(), proposal(m_spec).text(false));
}

QImage FigureRenderer::renderImage(const FigureSpec& spec)
{
    prepare(spec, spec.pixelSize());
    return paintImage(spec);
}

QImage FigureRenderer::paintImage(const FigureSpec& spec)
{
    const QSize px = spec.pixelSize();
    QImage image(px, QImage::Format_RGB32);
    // Paint at the layout DPI (fonts in points resolve as QFontMetrics resolved them), tag the real DPI after.
    image.setDotsPerMeterX(dotsPerMeter(figureLayoutDpi()));
    image.setDotsPerMeterY(dotsPerMeter(figureLayoutDpi()));
    image.fill(Qt::white);
    {
        QCPPainter painter(&image);
        painter.scale(m_sx, m_sy);
        m_plot->toPainter(&painter, m_logical.width(), m_logical.height());
    }
    m_check = measure(true);
    image.setDotsPerMeterX(dotsPerMeter(spec.dpi));
    image.setDotsPerMeterY(dotsPerMeter(spec.dpi));
    return image;
}

QString FigureRenderer::description(const FigureSpec& spec) const
{
    const TimeRange r = spec.resolveRange(*m_plot->trace(), m_plot->analysis().get());
    const QString kind = spec.rangeKind == FigureSpec::RangeKind::Whole
        ? QStringLiteral("whole trace: the recorded activity")
        : spec.rangeKind == FigureSpec::RangeKind::Step ? QStringLiteral("one step")
                                                        : QStringLiteral("a chosen range");
    return QStringLiteral("Timeline figure made by Exposure; window %1 to %2 (%3, %4 ns to %5 ns)")
        .arg(QString::fromStdString(formatDuration(r.start)), QString::fromStdString(formatDuration(r.end)), kind)
        .arg(r.start)
        .arg(r.end);
}

QByteArray FigureRenderer::render(const FigureSpec& spec)
{
    QByteArray out;
    QBuffer buffer(&out);
    buffer.open(QIODevice::WriteOnly);
    switch (spec.format) {
    case FigureSpec::Format::Png: {
        prepare(spec, spec.pixelSize());
        requireLegible(spec);
        const QImage image = paintImage(spec);
        if (!image.save(&buffer, "PNG"))
            throw FigureRenderError("the PNG encoder failed");
        break;
    }
    case FigureSpec::Format::Svg: {
        const QSize px = spec.pixelSize();
        prepare(spec, px);
        requireLegible(spec);
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        // Logical pixels as user units; the physical size follows from the layout DPI.
        svg.setSize(m_logical);
        svg.setViewBox(QRect(QPoint(0, 0), m_logical));
        svg.setResolution(figureLayoutDpi());
        // QSvgGenerator writes <title> and <desc> verbatim (unlike <text>): escape them ourselves.
        svg.setTitle((spec.title.isEmpty() ? QStringLiteral("Exposure timeline") : spec.title).toHtmlEscaped());
        svg.setDescription(description(spec).toHtmlEscaped());
        QCPPainter painter;
        if (!painter.begin(&svg))
            throw FigureRenderError("the SVG generator failed to start");
        painter.setMode(QCPPainter::pmVectorized);
        m_plot->toPainter(&painter, m_logical.width(), m_logical.height());
        painter.end();
        m_check = measure(true);
        buffer.close();
        out = compactSvg(out);
        stateSvgSizeMm(out, spec.sizeMm());
        return out;
    }
    case FigureSpec::Format::Pdf: {
        const QSize px = spec.pixelSize();
        prepare(spec, px);
        requireLegible(spec);
        QPdfWriter pdf(&buffer);
        // The device unit is the layout pixel (see the class comment: points convert like QFontMetrics's).
        setUpFigurePdf(pdf, spec.title, xmpPacket(spec.title, description(spec)), spec.sizeMm(), figureLayoutDpi());
        QCPPainter painter;
        if (!painter.begin(&pdf))
            throw FigureRenderError("the PDF writer failed to start");
        painter.setMode(QCPPainter::pmVectorized);
        painter.scale(double(pdf.width()) / m_logical.width(), double(pdf.height()) / m_logical.height());
        m_plot->toPainter(&painter, m_logical.width(), m_logical.height());
        painter.end();
        m_check = measure(true);
        buffer.close();
        makePdfDeterministic(out);
        return out;
    }
    }
    buffer.close();
    return out;
}

void FigureRenderer::renderToFile(const FigureSpec& spec, const QString& path, bool overwrite)
{
    writeFigureFile(path, overwrite, spec.format, [&] { return render(spec); });
}

void writeFigureFile(
    const QString& path, bool overwrite, FigureSpec::Format format, const std::function<QByteArray()>& render)
{
    auto fail = [&](const QString& problem) {
        throw FigureRenderError(QString(path + QStringLiteral(": ") + problem).toStdString());
    };
    // A name that ends in another format's extension would hold bytes its name contradicts.
    FigureSpec::Format named = format;
    if (figureFormatFromName(QFileInfo(path).suffix(), &named) && named != format)
        fail(QStringLiteral("the name says %1 but the format is %2 (not written)")
                 .arg(figureFormatName(named), figureFormatName(format)));
    if (!overwrite && QFileInfo::exists(path))
        fail(QStringLiteral("already exists (not overwritten; use --force to replace it)"));
    QByteArray data;
    try {
        data = render();
    } catch (const FigureLegibilityError& e) {
        throw FigureLegibilityError(
            QString(path + QStringLiteral(": not written, ") + QString::fromUtf8(e.what())).toStdString(), e.proposal);
    } catch (const FigureRenderError& e) {
        fail(QString::fromUtf8(e.what()));
    }
    const QString problem = writeFileAtomically(path, data);
    if (!problem.isEmpty())
        fail(QStringLiteral("cannot write (%1); nothing was changed").arg(problem));
}

} // namespace exposure
