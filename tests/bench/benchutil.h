// SPDX-License-Identifier: GPL-3.0-or-later
// Shared by the bench executables: the best-of-N wall time of a callable, in milliseconds.
#pragma once

#include <algorithm>
#include <chrono>

namespace exposure::bench {

template <typename F> double bestOfMs(int runs, F&& f)
{
    using Clock = std::chrono::steady_clock;
    double best = 1e300;
    for (int i = 0; i < runs; ++i) {
        const auto t0 = Clock::now();
        f();
        best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    return best;
}

} // namespace exposure::bench
