// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Copies and memsets (memcpy intervals of the GPU lanes): direction, bytes, duration and bandwidth of each, and sums
// per direction and per step.
#include "model/timerange.h"
#include "model/trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace exposure {

struct Analysis;

struct TransferRow
{
    IntervalRef ref;
    std::string direction; // HtoD, DtoH, DtoD, PtoP, memset, ... (the name's memcpy sub-group)
    std::uint64_t bytes = 0; // 0 when the trace does not say
    TimeNs start = 0;
    TimeNs durationNs = 0;
    int step = -1; // index into the rank's steps of the step whose GPU window holds its start, -1 if none
    double bytesPerSecond() const { return durationNs > 0 ? double(bytes) * 1e9 / double(durationNs) : 0.0; }
};

// Copies and memsets that start in the window, over all ranks, in rank, lane and time order.
std::vector<TransferRow> transfers(const Trace& trace, const Analysis& analysis, TimeRange window);

struct TransferSum
{
    int rank = -1; // index into Trace::ranks; -1: all ranks
    int step = -1; // -1: the whole window
    std::string direction;
    std::uint64_t count = 0;
    std::uint64_t bytes = 0;
    TimeNs timeNs = 0;
};
// Sums per (rank, step, direction); with perStep false per (direction) over all ranks.
std::vector<TransferSum> sumTransfers(const std::vector<TransferRow>& rows, bool perStep);

} // namespace exposure
