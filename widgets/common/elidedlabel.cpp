// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/elidedlabel.h"

#include <QPainter>
#include <QResizeEvent>

namespace exposure {

ElidedLabel::ElidedLabel(QWidget* parent)
    : QFrame(parent)
{
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
}

void ElidedLabel::setText(const QString& text)
{
    if (text == m_text)
        return;
    m_text = text;
    updateToolTip();
    updateGeometry();
    update();
}

QString ElidedLabel::shownText() const
{
    return fontMetrics().elidedText(m_text, Qt::ElideRight, std::max(0, contentsRect().width()));
}

QSize ElidedLabel::sizeHint() const
{
    return QSize(fontMetrics().horizontalAdvance(m_text) + 4, fontMetrics().height());
}

QSize ElidedLabel::minimumSizeHint() const
{
    return QSize(std::min(sizeHint().width(), fontMetrics().averageCharWidth() * 8), fontMetrics().height());
}

void ElidedLabel::paintEvent(QPaintEvent* event)
{
    QFrame::paintEvent(event);
    QPainter p(this);
    p.setPen(palette().windowText().color());
    p.drawText(contentsRect(), Qt::AlignLeft | Qt::AlignVCenter, shownText());
}

void ElidedLabel::resizeEvent(QResizeEvent* event)
{
    QFrame::resizeEvent(event);
    updateToolTip();
}

void ElidedLabel::updateToolTip()
{
    setToolTip(isElided() ? m_text : QString());
}

} // namespace exposure
