// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QFrame>
#include <QString>

namespace exposure {

// One line of text that fits any width: cut with "…" where it does not fit, the whole text then in its tooltip. Its
// minimum width is small, so that a status bar on a small screen shrinks it instead of cutting its neighbours.
class ElidedLabel : public QFrame
{
    Q_OBJECT
public:
    explicit ElidedLabel(QWidget* parent = nullptr);
    void setText(const QString& text);
    void clear() { setText(QString()); }
    QString text() const { return m_text; } // the whole text
    QString shownText() const; // as drawn at the current width
    bool isElided() const { return shownText() != m_text; }
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void updateToolTip();
    QString m_text;
};

} // namespace exposure
