// SPDX-License-Identifier: GPL-3.0-or-later
#include "figure/figurerenderer.h"

#include "common/atomicwrite.h"

#include "analysis/analysis.h"
#include "timeline/timelineplot.h"
#include "view/viewindex.h"

#include <QBuffer>
#include <QFileInfo>
#include <QGuiApplication>
#include <QPageLayout>
#include <QPageSize>
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
    for (auto group : {QPalette::Active, QPalette::Inactive, QPalette::Disabled}) {
        p.setColor(group, QPalette::Base, Qt::white);
        p.setColor(group, QPalette::Window, Qt::white);
        p.setColor(group, QPalette::WindowText, Qt::black);
        p.setColor(group, QPalette::Text, Qt::black);
        p.setColor(group, QPalette::Highlight, QColor(0x30, 0x8C, 0xC6));
    }
    return p;
}

int dotsPerMeter(double dpi)
{
    return int(std::lround(dpi / 0.0254));
}

// Overwrites every match of `re` (its first capture group) in place with `replacement` cut or padded to the same
// length, so the PDF's cross-reference byte offsets stay valid.
void replaceSameLength(QByteArray& data, const QRegularExpression& re, const QByteArray& replacement)
{
    const QString text = QString::fromLatin1(data);
    auto it = re.globalMatch(text);
    while (it.hasNext()) {
        const auto m = it.next();
        const qsizetype start = m.capturedStart(1), len = m.capturedLength(1);
        QByteArray r = replacement.left(len);
        while (r.size() < len)
            r.append(r.isEmpty() ? '0' : replacement.at(r.size() % std::max<qsizetype>(1, replacement.size())));
        data.replace(start, len, r);
    }
}

// Qt writes the wall-clock time into /CreationDate and XMP, and derives the trailer /ID from it and a random
// UUID; a figure must be byte-identical when remade, so those become fixed values.
void makePdfDeterministic(QByteArray& pdf)
{
    replaceSameLength(pdf, QRegularExpression(QStringLiteral("/CreationDate \\(D:([^)]*)\\)")),
                      QByteArrayLiteral("20000101000000Z"));
    replaceSameLength(pdf, QRegularExpression(QStringLiteral("/ModDate \\(D:([^)]*)\\)")),
                      QByteArrayLiteral("20000101000000Z"));
    replaceSameLength(pdf, QRegularExpression(QStringLiteral("/ID \\[\\s*<([0-9a-fA-F]*)>")), QByteArrayLiteral("0"));
    replaceSameLength(pdf, QRegularExpression(QStringLiteral("/ID \\[\\s*<[0-9a-fA-F]*>\\s*<([0-9a-fA-F]*)>")),
                      QByteArrayLiteral("0"));
}

// A minimal XMP packet without dates or UUIDs (Qt would otherwise generate both).
QByteArray xmpPacket(const QString& title)
{
    QString t = title.toHtmlEscaped();
    return QByteArrayLiteral("<?xpacket begin='' id='W5M0MpCehiHzreSzNTczkc9d'?>\n"
                             "<x:xmpmeta xmlns:x='adobe:ns:meta/'>\n"
                             "<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>\n"
                             "<rdf:Description rdf:about='' xmlns:dc='http://purl.org/dc/elements/1.1/' "
                             "xmlns:xmp='http://ns.adobe.com/xap/1.0/'>\n"
                             "<dc:title><rdf:Alt><rdf:li xml:lang='x-default'>")
        + t.toUtf8()
        + QByteArrayLiteral("</rdf:li></rdf:Alt></dc:title>\n"
                            "<xmp:CreatorTool>Exposure</xmp:CreatorTool>\n"
                            "</rdf:Description>\n</rdf:RDF>\n</x:xmpmeta>\n<?xpacket end='w'?>");
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

void FigureRenderer::prepare(const FigureSpec& spec, QSize device)
{
    const auto& trace = m_plot->trace();
    if (!trace)
        throw FigureRenderError("no trace to render");
    spec.validate(spec.tracePath.isEmpty() ? QStringLiteral("figure") : spec.tracePath);
    const double scale = double(spec.dpi) / figureLayoutDpi();
    m_logical = QSize(std::max(1, int(std::lround(device.width() / scale))),
                      std::max(1, int(std::lround(device.height() / scale))));
    // Separate x/y factors make the logical canvas fill the device exactly (they differ by < 1 px).
    m_sx = double(device.width()) / m_logical.width();
    m_sy = double(device.height()) / m_logical.height();
    TimelineOptions options = spec.timelineOptions(*trace, m_plot->analysis().get());
    // The layout (legend wrapping) reads the widget size: resize before applying the options.
    options.disclosureMarks = false; // the ▾ before rank labels is a control, not part of a figure
    // Fold at one layout pixel rather than the screen's two: a figure is looked at closely, and a gap of one
    // pixel between steps should stay visible. Still at most about one box per layout pixel and row.
    options.minFoldPixels = 1;
    // The figure's size is chosen by its author: rows fill it (the screen caps row height instead).
    options.maxRowPixels = 0;
    m_plot->resize(m_logical);
    m_plot->setOptions(options);
    m_plot->setVisibleRange(*options.range, false);
    // Legend items are exactly one text line tall and clip to that; glyph descenders ("g", "p") can reach a pixel
    // or two lower when drawn scaled, so give every item some air.
    std::vector<int> widths;
    for (int i = 0; i < m_plot->legend->itemCount(); ++i) {
        if (QCPAbstractLegendItem* item = m_plot->legend->item(i)) {
            item->setMargins(QMargins(0, 1, 0, 2));
            widths.push_back(item->minimumOuterSizeHint().width());
        }
    }
    // A legend above or below the plot gets as many columns as fit at this width (the timeline's own wrap
    // assumes a screen-sized plot; in an 85 mm figure it would stack every entry and squeeze the plot).
    // Entries fill row by row, so column c holds entries c, c + n, c + 2n, ... and is as wide as the widest.
    if (options.legend && !widths.empty()
        && (options.legendPosition == LegendPosition::Top || options.legendPosition == LegendPosition::Bottom)) {
        const QMargins lm = m_plot->legend->margins();
        const int spacing = m_plot->legend->columnSpacing();
        const int avail = m_logical.width() - lm.left() - lm.right();
        int columns = 1;
        for (int n = int(widths.size()); n > 1; --n) {
            int total = (n - 1) * spacing;
            for (int c = 0; c < n; ++c) {
                int w = 0;
                for (std::size_t i = std::size_t(c); i < widths.size(); i += std::size_t(n))
                    w = std::max(w, widths[i]);
                total += w;
            }
            if (total <= avail) {
                columns = n;
                break;
            }
        }
        m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, false);
        m_plot->legend->setWrap(columns);
        m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    }
    // QCustomPlot picks ticks in the first layout phase, from the axis rect of the *previous* layout; the
    // plot has never been laid out at this size, so run the layout twice before toPainter() lays it out again.
    m_plot->setViewport(QRect(QPoint(0, 0), m_logical));
    for (int pass = 0; pass < 2; ++pass) {
        for (auto phase : {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout})
            m_plot->plotLayout()->update(phase);
    }
}

QString FigureRenderer::crowdingWarning() const
{
    if (m_plot->rows().empty())
        return QObject::tr("No rows to draw: choose other rows.");
    const int rowHeight = m_plot->plottable()->rowBand(0).height();
    const int textHeight = QFontMetrics(m_plot->yAxis->tickLabelFont()).height();
    if (rowHeight >= textHeight)
        return {};
    return QObject::tr("Rows are %1 px tall, less than their %2 px labels: choose fewer rows, a taller figure "
                       "or a smaller font.")
        .arg(rowHeight)
        .arg(textHeight);
}

QImage FigureRenderer::renderImage(const FigureSpec& spec)
{
    const QSize px = spec.pixelSize();
    prepare(spec, px);
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
    image.setDotsPerMeterX(dotsPerMeter(spec.dpi));
    image.setDotsPerMeterY(dotsPerMeter(spec.dpi));
    return image;
}

QByteArray FigureRenderer::render(const FigureSpec& spec)
{
    QByteArray out;
    QBuffer buffer(&out);
    buffer.open(QIODevice::WriteOnly);
    switch (spec.format) {
    case FigureSpec::Format::Png: {
        const QImage image = renderImage(spec);
        if (!image.save(&buffer, "PNG"))
            throw FigureRenderError("the PNG encoder failed");
        break;
    }
    case FigureSpec::Format::Svg: {
        const QSize px = spec.pixelSize();
        prepare(spec, px);
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        // Logical pixels as user units; the physical size follows from the layout DPI.
        svg.setSize(m_logical);
        svg.setViewBox(QRect(QPoint(0, 0), m_logical));
        svg.setResolution(figureLayoutDpi());
        // QSvgGenerator writes <title> and <desc> verbatim (unlike <text>): escape them ourselves.
        svg.setTitle((spec.title.isEmpty() ? QStringLiteral("Exposure timeline") : spec.title).toHtmlEscaped());
        svg.setDescription(QStringLiteral("Timeline figure made by Exposure"));
        QCPPainter painter;
        if (!painter.begin(&svg))
            throw FigureRenderError("the SVG generator failed to start");
        painter.setMode(QCPPainter::pmVectorized);
        m_plot->toPainter(&painter, m_logical.width(), m_logical.height());
        painter.end();
        buffer.close();
        out = compactSvg(out);
        // The generator derives width/height from whole logical pixels; state the requested size exactly.
        const QSizeF mm = spec.sizeMm();
        const QRegularExpression root(QStringLiteral("<svg width=\"[^\"]*\" height=\"[^\"]*\""));
        const auto m = root.match(QString::fromUtf8(out.left(400)));
        if (m.hasMatch())
            out.replace(m.capturedStart(), m.capturedLength(),
                        QStringLiteral("<svg width=\"%1mm\" height=\"%2mm\"").arg(mm.width()).arg(mm.height()).toUtf8());
        return out;
    }
    case FigureSpec::Format::Pdf: {
        const QSize px = spec.pixelSize();
        prepare(spec, px);
        QPdfWriter pdf(&buffer);
        pdf.setCreator(QStringLiteral("Exposure"));
        pdf.setTitle(spec.title);
        pdf.setDocumentXmpMetadata(xmpPacket(spec.title));
        const QSizeF mm = spec.sizeMm();
        pdf.setPageLayout(QPageLayout(QPageSize(mm, QPageSize::Millimeter, QString(), QPageSize::ExactMatch),
                                      QPageLayout::Portrait, QMarginsF(0, 0, 0, 0)));
        // The device unit is the layout pixel (see the class comment: points convert like QFontMetrics's).
        pdf.setResolution(figureLayoutDpi());
        QCPPainter painter;
        if (!painter.begin(&pdf))
            throw FigureRenderError("the PDF writer failed to start");
        painter.setMode(QCPPainter::pmVectorized);
        painter.scale(double(pdf.width()) / m_logical.width(), double(pdf.height()) / m_logical.height());
        m_plot->toPainter(&painter, m_logical.width(), m_logical.height());
        painter.end();
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
    auto fail = [&](const QString& problem) {
        throw FigureRenderError(QString(path + QStringLiteral(": ") + problem).toStdString());
    };
    if (!overwrite && QFileInfo::exists(path))
        fail(QStringLiteral("already exists (not overwritten; use --force to replace it)"));
    const QByteArray data = render(spec);
    const QString problem = writeFileAtomically(path, data);
    if (!problem.isEmpty())
        fail(QStringLiteral("cannot write (%1); nothing was changed").arg(problem));
}

} // namespace exposure
