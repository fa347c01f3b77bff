// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/launchlinks.h"

namespace exposure {

std::vector<LaunchLink> launchLinksOf(
    const Trace& trace, const Analysis& analysis, IntervalRef selected, std::size_t max)
{
    std::vector<LaunchLink> out;
    if (selected.rank < 0 || std::size_t(selected.rank) >= trace.ranks.size()
        || std::size_t(selected.rank) >= analysis.ranks.size() || selected.lane < 0
        || std::size_t(selected.lane) >= trace.ranks[std::size_t(selected.rank)].lanes.size())
        return out;
    const Lane& lane = trace.ranks[std::size_t(selected.rank)].lanes[std::size_t(selected.lane)];
    if (lane.isGpu()) {
        if (const auto w = launchOfWork(analysis, selected))
            out.push_back({ w->call, selected });
        return out;
    }
    const LaunchTable& table = analysis.ranks[std::size_t(selected.rank)].launchCalls;
    const LaunchCall* call = table.find(LaunchRef { std::uint32_t(selected.lane), selected.interval });
    if (!call)
        return out;
    for (std::uint32_t k = 0; k < call->workCount && out.size() < max; ++k)
        out.push_back({ selected, table.work[call->firstWork + k] });
    return out;
}

} // namespace exposure
