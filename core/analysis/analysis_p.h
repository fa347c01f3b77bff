// SPDX-License-Identifier: GPL-3.0-or-later
// Internals shared by the analysis sources (not part of the contract).
#pragma once

#include "analysis.h"

#include <boost/icl/interval_map.hpp>
#include <boost/icl/right_open_interval.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace exposure::detail {

// Time -> bit-mask of what runs (ActivityBit). Overlaps combine with |=; neighbours with equal masks join
// (interval_map is a joining container: that is what we want for unions, see STYLE.md on ICL).
// Right-open static intervals: no per-interval bound byte, and [a,b) matches TimeRange.
using MaskMap = boost::icl::interval_map<TimeNs, std::uint8_t, boost::icl::partial_absorber, std::less,
                                         boost::icl::inplace_bit_add, boost::icl::inplace_bit_and,
                                         boost::icl::right_open_interval<TimeNs, std::less>>;

inline bool isKernel(Category c) { return c == Category::Compute || c == Category::Communication; }

// ActivityBit mask of one GPU interval (0 for idle/sync and anything that is no GPU work).
inline std::uint8_t activityBits(const NameClass& nc, Phase phase)
{
    switch (nc.category) {
    case Category::Communication: return ActivityComm;
    case Category::Compute:
        return std::uint8_t(ActivityCompute | (phase == Phase::Backward ? ActivityBackward : 0)
                            | (nc.unclassified ? ActivityUnclassified : 0));
    case Category::Memcpy: return ActivityMemcpy;
    case Category::Idle:
    case Category::Host: break;
    }
    return 0;
}

// Sums of the busy fields (comm, compute, overlap, backward overlap, memcpy, gpu, unclassified) and the span
// over disjoint segments, clipped to the window. Counts are filled elsewhere.
struct BusyAccumulator
{
    TimeRange window;
    WindowStats s;
    TimeNs first = 0, last = 0;
    bool any = false;

    void add(TimeNs start, TimeNs end, std::uint8_t mask)
    {
        start = std::max(start, window.start);
        end = std::min(end, window.end);
        if (end <= start || mask == 0)
            return;
        const TimeNs len = end - start;
        if (mask & ActivityComm)
            s.commBusyNs += len;
        if (mask & ActivityCompute)
            s.computeBusyNs += len;
        if ((mask & ActivityComm) && (mask & ActivityCompute))
            s.overlappedNs += len;
        if ((mask & ActivityComm) && (mask & ActivityBackward))
            s.backwardOverlappedNs += len;
        if (mask & ActivityMemcpy)
            s.memcpyBusyNs += len;
        if (mask & ActivityUnclassified)
            s.unclassifiedNs += len;
        s.gpuBusyNs += len;
        if (!any)
            first = start;
        last = end;
        any = true;
    }
    WindowStats finish()
    {
        s.exposedNs = s.commBusyNs - s.overlappedNs;
        s.spanNs = any ? last - first : 0;
        s.idleNs = s.spanNs - s.gpuBusyNs;
        if (s.commBusyNs > 0)
            s.overlapRatio = double(s.overlappedNs) / double(s.commBusyNs);
        return s;
    }
};

inline constexpr std::uint32_t kNoLane = 0xFFFFFFFFu;

// Which CPU interval launched each kernel of a rank: [lane][interval] -> LaunchRef (cpuLane == kNoLane if
// unknown; empty vectors for CPU lanes and when nothing could be paired). Kernels on one stream run in launch
// order, so the k-th kernel-launch call aimed at a stream launched the k-th kernel on it. Launch records of
// other API calls (copies, event records) are skipped by name (rules of category "launch").
//  1. A stream whose kernel-launch records (CUDA_STREAM_REF) are as many as its kernels: paired in order.
//  2. Else, when the rank has a single stream with kernels and the rank's CPU lanes hold exactly as many
//     kernel-launch calls (with or without a stream reference: Score-P writes none on cuLaunchKernelEx) as it
//     has kernels: all those calls, in time order, are paired with its kernels in order.
//  3. Else the stream's kernels stay unpaired, with a warning: pairing a shifted sequence would be wrong.
struct LaunchPairing
{
    std::vector<std::vector<LaunchRef>> launchOf;
    std::vector<std::string> warnings;
    std::string method; // "stream references", "launch order", "stream references, partly", "none"
};
LaunchPairing pairLaunches(const Trace& trace, const Analysis& analysis, const Rank& rank);

} // namespace exposure::detail
