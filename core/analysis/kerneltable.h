// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Per-name kernel statistics of a window (the Kernels panel, `exposure-cli stats` top kernels).
#include "analysis/categories.h"
#include "model/timerange.h"
#include "model/trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace exposure {

struct Analysis;

struct KernelRow
{
    StringId name = 0;
    Category category = Category::Compute;
    std::string subgroup;
    Phase phase = Phase::Unknown; // the phase most of its instances have
    std::uint64_t count = 0;
    TimeNs totalNs = 0;
    TimeNs minNs = 0;
    TimeNs maxNs = 0;
    double meanNs = 0;
    double gpuShare = 0; // totalNs / sum of all GPU kernel and memcpy time in the window
};
// Kernels (GPU intervals) whose start lies in the window; rankIndex -1 = all ranks.
std::vector<KernelRow> kernelTable(const Trace& trace, const Analysis& analysis, TimeRange window, int rankIndex = -1);

} // namespace exposure
