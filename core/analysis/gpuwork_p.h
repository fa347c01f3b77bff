// SPDX-License-Identifier: GPL-3.0-or-later
// Internal: the walk over one rank's GPU work that the kernel table and the report's kernel parts accumulate.
#pragma once

#include "analysis/analysis.h"

#include <cstddef>

namespace exposure::detail {

// Calls fn(name, nameClass, durationNs, phase) for every GPU interval of rank `r` whose start lies in `window`,
// skipping idle and host regions (kernels and copies remain).
template <class Fn>
void forEachGpuWork(const Trace& trace, const Analysis& analysis, std::size_t r, TimeRange window, Fn&& fn)
{
    const Rank& rank = trace.ranks[r];
    const RankAnalysis& ra = analysis.ranks.at(r);
    forEachGpuInterval(rank, window, [&](std::size_t li, const Lane& lane, std::size_t i) {
        const auto& t = lane.intervals;
        const StringId id = t.name(i);
        const NameClass& nc = analysis.names[id];
        if (nc.category == Category::Idle || nc.category == Category::Host)
            return;
        const Phase p = li < ra.phases.size() && i < ra.phases[li].size() ? ra.phases[li][i] : Phase::Unknown;
        fn(id, nc, t.duration(i), p);
    });
}

} // namespace exposure::detail
