// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <ctime>

namespace exposure::testing {

// Records the longest time between two ticks of a 5 ms timer on the GUI thread.
class StallMeter : public QObject
{
public:
    StallMeter()
    {
        m_timer.setInterval(5);
        m_timer.setTimerType(Qt::PreciseTimer);
        connect(&m_timer, &QTimer::timeout, this, [this] {
            const qint64 gap = m_clock.restart();
            if (gap > m_longest) {
                m_longest = gap;
                m_longestAt = m_since.elapsed();
            }
            ++m_ticks;
        });
        m_clock.start();
        m_since.start();
        m_timer.start();
    }
    qint64 longestMs() const { return m_longest; }
    qint64 longestEndedAtMs() const { return m_longestAt; } // since the meter started
    qint64 elapsedMs() const { return m_since.elapsed(); }
    int ticks() const { return m_ticks; }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    QElapsedTimer m_since;
    qint64 m_longest = 0;
    qint64 m_longestAt = 0;
    int m_ticks = 0;
};

// CPU time of the calling thread in milliseconds: what the GUI thread itself spent, whatever else the machine runs.
inline double threadCpuMs()
{
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

} // namespace exposure::testing
