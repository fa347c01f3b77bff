// SPDX-License-Identifier: GPL-3.0-or-later
// The timeline's legend: one swatch and a text per class the plot draws (TimelinePlot::rebuildLegend and the layout
// of title and legend live in timelinelegend.cpp).
#pragma once

#include <qcustomplot.h>

namespace exposure {

// A colour swatch and a text; the legend lists categories, not plottables.
class SwatchLegendItem : public QCPAbstractLegendItem
{
public:
    SwatchLegendItem(QCPLegend* legend, QBrush brush, QString text, bool outlined = false, QColor base = Qt::white)
        : QCPAbstractLegendItem(legend)
        , m_brush(std::move(brush))
        , m_text(std::move(text))
        , m_outlined(outlined)
        , m_base(std::move(base))
    {
        setSelectable(false);
        // An item is laid out exactly one text line tall and QCustomPlot clips it to that: without some air the
        // descenders of g, p, y are cut (as figure export found first).
        setMargins(QMargins(0, 1, 0, 2));
    }

protected:
    void draw(QCPPainter* painter) override
    {
        const QSize icon = mParentLegend->iconSize();
        const QRect r = mRect;
        const QRect swatch(r.left(), r.top() + (r.height() - icon.height()) / 2, icon.width(), icon.height());
        painter->setPen(m_outlined ? QPen(mParentLegend->textColor(), 1) : QPen(Qt::NoPen));
        painter->setBrush(m_brush);
        painter->fillRect(swatch, m_brush.style() == Qt::SolidPattern ? m_brush : QBrush(m_base));
        if (m_brush.style() != Qt::SolidPattern)
            painter->fillRect(swatch, m_brush);
        if (m_outlined) {
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(swatch.adjusted(0, 0, -1, -1));
        }
        painter->setFont(mParentLegend->font());
        painter->setPen(mParentLegend->textColor());
        // Not clipped to the line: scaled for print, glyph descenders can reach below the font's nominal height.
        painter->drawText(QRect(swatch.right() + 1 + mParentLegend->iconTextPadding(), r.top(), r.width(), r.height()),
            Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip, m_text);
    }
    QSize minimumOuterSizeHint() const override
    {
        const QFontMetrics fm(mParentLegend->font());
        const QSize icon = mParentLegend->iconSize();
        const int w = icon.width() + mParentLegend->iconTextPadding() + fm.horizontalAdvance(m_text) + 4;
        const int h = std::max(icon.height(), fm.height());
        return QSize(w + mMargins.left() + mMargins.right(), h + mMargins.top() + mMargins.bottom());
    }

public:
    const QString& text() const { return m_text; }

protected:
    // Legend items clip to their outer rect; a line of text scaled for print may reach a little past it.
    QRect clipRect() const override { return mOuterRect.adjusted(0, -2, 0, 3); }

private:
    QBrush m_brush;
    QString m_text;
    bool m_outlined;
    QColor m_base; // under a pattern brush
};

} // namespace exposure
