// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/timeaxisticker.h"


namespace exposure {

double TimeAxisTicker::getTickStep(const QCPRange& range)
{
    const int count = m_axis && m_axis->axisRect() ? std::max(2, m_axis->axisRect()->width() / 110) : tickCount();
    m_step = timeaxis::niceStep(range.size(), std::max(2, count));
    return m_step;
}

int TimeAxisTicker::getSubTickCount(double tickStep)
{
    // 1·10^k and 5·10^k steps split in 5, 2·10^k in 4, so sub-ticks land on round values.
    const double mantissa = tickStep / std::pow(10.0, std::floor(std::log10(tickStep)));
    return std::abs(mantissa - 2.0) < 1e-6 ? 3 : 4;
}

QString TimeAxisTicker::getTickLabel(double tick, const QLocale&, QChar, int)
{
    return QString::fromStdString(timeaxis::label(tick, m_step, m_unit));
}

} // namespace exposure
