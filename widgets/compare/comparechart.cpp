// SPDX-License-Identifier: GPL-3.0-or-later
#include "compare/comparechart.h"

#include "common/labels.h"
#include "common/theme.h"
#include "model/timeformat.h"
#include "timeline/palette.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

namespace exposure {

namespace {

// A tick spacing of 1, 2 or 5 × 10^k giving about `target` ticks over `range`.
TimeNs niceStep(TimeNs range, int target)
{
    if (range <= 0)
        return 1;
    const double raw = double(range) / std::max(1, target);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double norm = raw / mag;
    const double step = (norm < 1.5 ? 1.0 : norm < 3.5 ? 2.0 : norm < 7.5 ? 5.0 : 10.0) * mag;
    return std::max<TimeNs>(1, TimeNs(std::llround(step)));
}

} // namespace

QString CompareChart::durationLabel(TimeNs ns)
{
    return QString::fromStdString(formatDuration(ns));
}

// Same rounding as compareTable's percentages, so the window and `exposure-cli compare` agree to the digit.
QString CompareChart::shareLabel(std::optional<double> v)
{
    return v ? QString::asprintf("%.1f %%", *v * 100.0) : QStringLiteral("-");
}

// ---------------------------------------------------------------------------------------------------------------
// CompareChart

CompareChart::CompareChart(QWidget* parent)
    : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    setMouseTracking(true);
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::Base);
}

void CompareChart::setBars(std::vector<Bar> bars)
{
    m_bars = std::move(bars);
    updateGeometry();
    update();
}

std::array<TimeNs, CompareChart::PartCount> CompareChart::parts(const RunSummary& s)
{
    const TimeNs computeOnly = std::max<TimeNs>(0, s.computeNs - s.hiddenNs);
    const TimeNs hidden = std::max<TimeNs>(0, s.hiddenNs);
    const TimeNs exposed = std::max<TimeNs>(0, s.exposedNs);
    // Whatever of the step is neither compute nor exposed communication: idle GPU, memcpy, host work.
    const TimeNs rest = std::max<TimeNs>(0, s.stepNs - computeOnly - hidden - exposed);
    return { computeOnly, hidden, exposed, rest };
}

QString CompareChart::partName(Part part)
{
    switch (part) {
    case ComputeOnly:
        return overlapStateLabel(OverlapState::ComputeOnly);
    case Hidden:
        return overlapStateLabel(OverlapState::Hidden);
    case Exposed:
        return overlapStateLabel(OverlapState::Exposed);
    case Idle:
        return tr("idle / other");
    case PartCount:
        break;
    }
    return {};
}

TimeNs CompareChart::scaleMax() const
{
    TimeNs m = 1;
    for (const auto& b : m_bars) {
        const auto p = parts(b.summary);
        m = std::max(m, p[0] + p[1] + p[2] + p[3]);
    }
    return m;
}

CompareChart::Geometry CompareChart::geometry() const
{
    const QFontMetrics fm(font());
    Geometry g;
    for (const auto& b : m_bars)
        g.labelW = std::max(g.labelW, fm.horizontalAdvance(b.label));
    g.labelW = std::min(g.labelW + 16, width() / 3);
    const int valueW = fm.horizontalAdvance(QStringLiteral("8888.8 ms")) + 12;
    g.x0 = g.labelW;
    g.width = std::max(20.0, double(width() - g.labelW - valueW));
    const double legendH = fm.height() + 14;
    const double axisH = fm.height() + 10;
    g.top = legendH + 6;
    const int n = std::max(1, int(m_bars.size()));
    const double avail = double(height()) - g.top - axisH - 4;
    g.gap = 10;
    g.barH = std::clamp(avail / n - g.gap, 12.0, 40.0);
    return g;
}

QRectF CompareChart::partRect(int index, Part part) const
{
    if (index < 0 || index >= int(m_bars.size()) || part >= PartCount)
        return {};
    const Geometry g = geometry();
    const auto p = parts(m_bars[std::size_t(index)].summary);
    const double scale = g.width / double(scaleMax());
    double x = g.x0;
    for (int k = 0; k < part; ++k)
        x += double(p[std::size_t(k)]) * scale;
    const double w = double(p[std::size_t(part)]) * scale;
    if (w <= 0)
        return {};
    return QRectF(x, g.top + index * (g.barH + g.gap), w, g.barH);
}

QSize CompareChart::sizeHint() const
{
    const QFontMetrics fm(font());
    // Legend, bars of 40 px with 10 px gaps, time axis: what geometry() lays out at the largest bar height.
    return QSize(640, fm.height() * 2 + 44 + std::max(2, int(m_bars.size())) * 50);
}

QSize CompareChart::minimumSizeHint() const
{
    const QFontMetrics fm(font());
    return QSize(320, fm.height() * 3 + 30 + std::max(1, int(m_bars.size())) * 22);
}

void CompareChart::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const Palette pal(PaletteKind::Default, palette());
    const QColor text = palette().color(QPalette::Text);
    const QFontMetrics fm(font());
    const QBrush brushes[PartCount]
        = { QBrush(pal.overlap(OverlapState::ComputeOnly)), pal.hiddenBrush(), pal.exposedBrush(), QBrush(pal.idle()) };

    // Legend across the top.
    int lx = 8;
    const int ly = 7;
    for (int k = 0; k < PartCount; ++k) {
        const QString name = partName(Part(k));
        p.fillRect(QRect(lx, ly + 2, 14, fm.height() - 4), brushes[k]);
        p.setPen(pal.grid());
        p.drawRect(QRect(lx, ly + 2, 14, fm.height() - 4));
        p.setPen(text);
        p.drawText(
            QRect(lx + 20, ly, fm.horizontalAdvance(name) + 2, fm.height()), Qt::AlignLeft | Qt::AlignVCenter, name);
        lx += 20 + fm.horizontalAdvance(name) + 18;
    }

    if (m_bars.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("Add runs to see where each run's step time goes."));
        return;
    }

    const Geometry g = geometry();
    const TimeNs maxNs = scaleMax();
    const double scale = g.width / double(maxNs);
    const double bottom = g.top + int(m_bars.size()) * (g.barH + g.gap) - g.gap;

    // Vertical grid and time axis below the bars.
    const TimeNs step = niceStep(maxNs, std::max(2, int(g.width / 110)));
    for (TimeNs t = 0; t <= maxNs; t += step) {
        const double x = g.x0 + double(t) * scale;
        p.setPen(QPen(pal.grid(), 0, t == 0 ? Qt::SolidLine : Qt::DotLine));
        p.drawLine(QPointF(x, g.top - 3), QPointF(x, bottom + 3));
        p.setPen(text);
        const QString label = t == 0 ? QStringLiteral("0") : QString::fromStdString(formatDuration(t, 3));
        const int lw = fm.horizontalAdvance(label);
        p.drawText(QRectF(x - lw / 2.0 - 2, bottom + 5, lw + 4, fm.height()), Qt::AlignCenter, label);
    }

    for (int i = 0; i < int(m_bars.size()); ++i) {
        const auto& bar = m_bars[std::size_t(i)];
        const double y = g.top + i * (g.barH + g.gap);
        p.setPen(text);
        p.drawText(QRectF(0, y, g.labelW - 8, g.barH), Qt::AlignRight | Qt::AlignVCenter,
            fm.elidedText(bar.label, Qt::ElideMiddle, g.labelW - 8));
        const auto parts = CompareChart::parts(bar.summary);
        double x = g.x0;
        for (int k = 0; k < PartCount; ++k) {
            const double w = double(parts[std::size_t(k)]) * scale;
            if (w <= 0)
                continue;
            const QRectF r(x, y, w, g.barH);
            p.fillRect(r, brushes[k]);
            // The value inside its segment when it fits: the reader need not hover to compare.
            const QString v = QString::fromStdString(formatDuration(parts[std::size_t(k)], 3));
            if (fm.horizontalAdvance(v) + 8 < w && g.barH >= fm.height()) {
                p.setPen(Palette::textOn(brushes[k].color()));
                p.drawText(r, Qt::AlignCenter, v);
            }
            x += w;
        }
        p.setPen(pal.grid());
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRectF(g.x0, y, x - g.x0, g.barH));
        p.setPen(text);
        QFont bold = font();
        bold.setBold(true);
        p.setFont(bold);
        p.drawText(QRectF(x + 6, y, width() - x - 6, g.barH), Qt::AlignLeft | Qt::AlignVCenter,
            durationLabel(bar.summary.stepNs));
        p.setFont(font());
    }
}

bool CompareChart::event(QEvent* e)
{
    if (e->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(e);
        for (int i = 0; i < int(m_bars.size()); ++i) {
            for (int k = 0; k < PartCount; ++k) {
                if (!partRect(i, Part(k)).contains(help->pos()))
                    continue;
                const auto& s = m_bars[std::size_t(i)].summary;
                const TimeNs v = parts(s)[std::size_t(k)];
                QToolTip::showText(help->globalPos(),
                    tr("%1\n%2: %3 (%4 of the step)")
                        .arg(m_bars[std::size_t(i)].label, partName(Part(k)), durationLabel(v),
                            shareLabel(
                                s.stepNs > 0 ? std::optional<double>(double(v) / double(s.stepNs)) : std::nullopt)),
                    this);
                return true;
            }
        }
        QToolTip::hideText();
        e->ignore();
        return true;
    }
    return QWidget::event(e);
}

} // namespace exposure
