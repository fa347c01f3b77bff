// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What every figure's file needs, whatever it draws (the timeline: FigureRenderer; the heat map: HeatMapFigure):
// the DPI tag of a PNG, an SVG of the requested physical size, and a PDF page of it whose bytes do not depend on the
// clock or a random id.
#include <QByteArray>
#include <QSizeF>
#include <QString>

class QPdfWriter;

namespace exposure {

int dotsPerMeter(double dpi);
// Qt writes the wall-clock time into /CreationDate and XMP, and derives the trailer /ID from it and a random
// UUID; a figure must be byte-identical when remade, so those become fixed values (of the same length, so the
// cross-reference offsets stay valid).
void makePdfDeterministic(QByteArray& pdf);
// A minimal XMP packet without dates or UUIDs (Qt would otherwise generate both).
QByteArray xmpPacket(const QString& title, const QString& description = {});
// QSvgGenerator derives the root's width and height from whole logical pixels; this states `mm` exactly instead.
void stateSvgSizeMm(QByteArray& svg, QSizeF mm);
// One page of exactly `mm` without margins, its device unit the layout pixel (`dpi`), with the creator, the title
// and the XMP packet `xmp` set.
void setUpFigurePdf(QPdfWriter& pdf, const QString& title, const QByteArray& xmp, QSizeF mm, int dpi);

} // namespace exposure
