// SPDX-License-Identifier: GPL-3.0-or-later
// The links from a CPU launch call to the GPU work it started (analysis: RankAnalysis::launchCalls), drawn on the
// timeline when one end is selected.
#pragma once

#include "analysis/analysis.h"

#include <cstddef>
#include <vector>

namespace exposure {

struct LaunchLink
{
    IntervalRef call; // the runtime or driver call on a CPU lane
    IntervalRef work; // a kernel, copy or memset it launched
    bool operator==(const LaunchLink&) const = default;
};

// What to draw for a selection: for a GPU interval whose launch is known, the link from its call to it; for a call
// that launched GPU work, one link to each interval it launched (a CUDA graph launch: every kernel of the replay), in
// start order, at most `max`. Empty when nothing is known.
std::vector<LaunchLink> launchLinksOf(
    const Trace& trace, const Analysis& analysis, IntervalRef selected, std::size_t max = 512);

} // namespace exposure
