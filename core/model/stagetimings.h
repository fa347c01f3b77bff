// SPDX-License-Identifier: GPL-3.0-or-later
// EXPOSURE_TIMINGS=1 (any value): where a run's time goes, stage by stage. Each stageTiming(name) ends the stage
// before it and prints one line on stderr with its wall time and the CPU time of the whole process (every thread)
// over it, and their ratio (the cores busy on average):
//   exposure: import 12.345 s wall, 180.2 s CPU (14.6 cores)
// Without the variable, a call costs one relaxed load. For measuring, not for tests (the times vary).
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <sys/resource.h>

namespace exposure {

namespace detail {

inline double processCpuSeconds()
{
    rusage u {};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

inline void printStage(const std::string& stage, double wall, double cpu)
{
    std::fprintf(stderr, "exposure: %-28s %8.3f s wall, %8.3f s CPU (%.1f cores)\n", stage.c_str(), wall, cpu,
        wall > 0 ? cpu / wall : 0.0);
}

struct StageClock
{
    bool on = std::getenv("EXPOSURE_TIMINGS") != nullptr;
    std::mutex mutex;
    std::string current; // the stage running; empty before the first
    std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
    double cpu = 0;
    ~StageClock(); // ends the stage still running at exit
};

inline StageClock& stageClock()
{
    static StageClock clock;
    return clock;
}

} // namespace detail

// Ends the stage running (if any) with a line on stderr and starts `next` (nullptr: none; the last stage's end).
inline void stageTiming(const char* next)
{
    detail::StageClock& c = detail::stageClock();
    if (!c.on)
        return;
    std::lock_guard lock(c.mutex);
    const auto now = std::chrono::steady_clock::now();
    const double cpu = detail::processCpuSeconds();
    if (!c.current.empty())
        detail::printStage(c.current, std::chrono::duration<double>(now - c.wall).count(), cpu - c.cpu);
    c.current = next ? next : "";
    c.wall = now;
    c.cpu = cpu;
}

inline detail::StageClock::~StageClock()
{
    if (on && !current.empty())
        printStage(current, std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count(),
            processCpuSeconds() - cpu);
}

} // namespace exposure
