// SPDX-License-Identifier: GPL-3.0-or-later
// Internal: the walk over one rank's GPU work that the kernel table and the report's kernel parts accumulate.
#pragma once

#include "analysis/analysis.h"

#include <algorithm>
#include <cstddef>

namespace exposure::detail {

// Calls fn(name, nameClass, durationNs, phase) for every GPU interval of rank `r` whose start lies in `window`,
// skipping idle and host regions (kernels and copies remain).
// Adds one instance of duration d to a row of per-name sums (count, total, min, max; a new row takes the name's
// category and sub-group): the one rule of the kernel table and of its parts in exposure-mpi.
template <class Row> void addKernelInstance(Row& row, bool fresh, const NameClass& nc, TimeNs d)
{
    if (fresh) {
        row.category = nc.category;
        row.subgroup = nc.subgroup;
        row.minNs = d;
        row.maxNs = d;
    }
    ++row.count;
    row.totalNs += d;
    row.minNs = std::min(row.minNs, d);
    row.maxNs = std::max(row.maxNs, d);
}

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
