// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/timeaxisticker.h"

#include <QFontMetrics>
#include <algorithm>
#include <cmath>

namespace exposure {

double TimeAxisTicker::getTickStep(const QCPRange& range)
{
    // About one tick per 110 px, and never closer than a wide label ("88.8 ms") and some air: labels must not
    // overprint on a narrow figure.
    int count = tickCount();
    int widthPx = 0;
    int labelPx = 1;
    if (m_axis && m_axis->axisRect()) {
        const QFontMetrics fm(m_axis->tickLabelFont());
        labelPx
            = std::max(1, fm.horizontalAdvance(QStringLiteral("88.8 ms")) + fm.horizontalAdvance(QStringLiteral("MM")));
        widthPx = m_axis->axisRect()->width();
        count = std::max(2, std::min(widthPx / 110, widthPx / labelPx));
    }
    m_step = timeaxis::niceStep(range.size(), count);
    // niceStep rounds up: the step could leave one or two labelled ticks (0, 2 and 4 s on a 4.9 s figure). At least
    // four where their labels do not overprint, else at least two, so that the scale can be read: the largest step of
    // 5, 4, 2 or 1 × 10^k below it that puts that many ticks in the range a label's width apart (on a narrow figure
    // 40 ms may fit where 20 ms would not); else the step as it was. Ticks count from the axis' origin.
    constexpr double kWanted = 4, kLeast = 2;
    auto inside = [&](double step) {
        return std::floor((range.upper - m_origin) / step) - std::ceil((range.lower - m_origin) / step) + 1;
    };
    if (inside(m_step) >= kWanted)
        return m_step;
    if (widthPx <= 0) {
        for (int c = count + 1; inside(m_step) < kLeast && c < count + 10; ++c)
            m_step = timeaxis::niceStep(range.size(), c);
        return m_step;
    }
    double fallback = inside(m_step) >= kLeast ? m_step : 0;
    const double decade = std::pow(10.0, std::floor(std::log10(m_step)));
    for (double mag = decade; mag >= 1 && mag >= decade / 1000; mag /= 10) {
        for (const double mantissa : { 5.0, 4.0, 2.0, 1.0 }) {
            const double step = mantissa * mag;
            if (step >= m_step)
                continue;
            if (widthPx * step / range.size() < labelPx)
                return m_step = fallback > 0 ? fallback : m_step; // smaller steps overprint
            if (inside(step) >= kWanted)
                return m_step = step;
            if (fallback == 0 && inside(step) >= kLeast)
                fallback = step;
        }
    }
    return m_step = fallback > 0 ? fallback : m_step;
}

int TimeAxisTicker::getSubTickCount(double tickStep)
{
    // 1·10^k and 5·10^k steps split in 5, 2·10^k and 4·10^k in 4, so sub-ticks land on round values.
    const double mantissa = tickStep / std::pow(10.0, std::floor(std::log10(tickStep)));
    return std::abs(mantissa - 2.0) < 1e-6 || std::abs(mantissa - 4.0) < 1e-6 ? 3 : 4;
}

QString TimeAxisTicker::getTickLabel(double tick, const QLocale&, QChar, int)
{
    return QString::fromStdString(timeaxis::label(tick - m_origin, m_step, m_unit));
}

} // namespace exposure
