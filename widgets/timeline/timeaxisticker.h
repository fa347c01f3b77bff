// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "view/timeaxis.h"

#include <qcustomplot.h>

namespace exposure {

// Ticks at 1/2/5 × 10^k ns with ns/µs/ms/s labels (trace-relative time in ns on the key axis).
class TimeAxisTicker : public QCPAxisTicker
{
public:
    // With an axis, the tick count follows its pixel length (about one tick per 110 px).
    explicit TimeAxisTicker(QCPAxis* axis = nullptr)
        : m_axis(axis)
    { }
    void setUnit(TimeUnit unit) { m_unit = unit; }
    // Labels read the time since `origin` (a step's start), and ticks are whole steps from it.
    void setOrigin(double origin)
    {
        m_origin = origin;
        setTickOrigin(origin);
    }
    TimeUnit unit() const { return m_unit; }
    double lastStep() const { return m_step; }

protected:
    double getTickStep(const QCPRange& range) override;
    int getSubTickCount(double tickStep) override;
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar, int precision) override;

private:
    QCPAxis* m_axis;
    TimeUnit m_unit = TimeUnit::Auto;
    double m_step = 1;
    double m_origin = 0;
};

} // namespace exposure
