// SPDX-License-Identifier: GPL-3.0-or-later
#include "figure/figureencode.h"

#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>

namespace exposure {

int dotsPerMeter(double dpi)
{
    return int(std::lround(dpi / 0.0254));
}

namespace {

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

} // namespace

void makePdfDeterministic(QByteArray& pdf)
{
    replaceSameLength(
        pdf, QRegularExpression(QStringLiteral("/CreationDate \\(D:([^)]*)\\)")), QByteArrayLiteral("20000101000000Z"));
    replaceSameLength(
        pdf, QRegularExpression(QStringLiteral("/ModDate \\(D:([^)]*)\\)")), QByteArrayLiteral("20000101000000Z"));
    replaceSameLength(pdf, QRegularExpression(QStringLiteral("/ID \\[\\s*<([0-9a-fA-F]*)>")), QByteArrayLiteral("0"));
    replaceSameLength(pdf, QRegularExpression(QStringLiteral("/ID \\[\\s*<[0-9a-fA-F]*>\\s*<([0-9a-fA-F]*)>")),
        QByteArrayLiteral("0"));
}

QByteArray xmpPacket(const QString& title, const QString& description)
{
    QByteArray desc;
    if (!description.isEmpty())
        desc = QByteArrayLiteral("<dc:description><rdf:Alt><rdf:li xml:lang='x-default'>")
            + description.toHtmlEscaped().toUtf8() + QByteArrayLiteral("</rdf:li></rdf:Alt></dc:description>\n");
    QByteArray out = QByteArrayLiteral("<?xpacket begin='' id='W5M0MpCehiHzreSzNTczkc9d'?>\n"
                                       "<x:xmpmeta xmlns:x='adobe:ns:meta/'>\n"
                                       "<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>\n"
                                       "<rdf:Description rdf:about='' xmlns:dc='http://purl.org/dc/elements/1.1/' "
                                       "xmlns:xmp='http://ns.adobe.com/xap/1.0/'>\n"
                                       "<dc:title><rdf:Alt><rdf:li xml:lang='x-default'>");
    out += title.toHtmlEscaped().toUtf8();
    out += QByteArrayLiteral("</rdf:li></rdf:Alt></dc:title>\n");
    out += desc;
    out += QByteArrayLiteral("<xmp:CreatorTool>Exposure</xmp:CreatorTool>\n"
                             "</rdf:Description>\n</rdf:RDF>\n</x:xmpmeta>\n<?xpacket end='w'?>");
    return out;
}

void stateSvgSizeMm(QByteArray& svg, QSizeF mm)
{
    const QRegularExpression root(QStringLiteral("<svg width=\"[^\"]*\" height=\"[^\"]*\""));
    const auto m = root.match(QString::fromUtf8(svg.left(400)));
    if (m.hasMatch())
        svg.replace(m.capturedStart(), m.capturedLength(),
            QStringLiteral("<svg width=\"%1mm\" height=\"%2mm\"").arg(mm.width()).arg(mm.height()).toUtf8());
}

void setUpFigurePdf(QPdfWriter& pdf, const QString& title, const QByteArray& xmp, QSizeF mm, int dpi)
{
    pdf.setCreator(QStringLiteral("Exposure"));
    pdf.setTitle(title);
    pdf.setDocumentXmpMetadata(xmp);
    pdf.setPageLayout(QPageLayout(QPageSize(mm, QPageSize::Millimeter, QString(), QPageSize::ExactMatch),
        QPageLayout::Portrait, QMarginsF(0, 0, 0, 0)));
    pdf.setResolution(dpi);
}

} // namespace exposure
