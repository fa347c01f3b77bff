// SPDX-License-Identifier: GPL-3.0-or-later
// Internals shared by the analysis sources (not part of the contract).
#pragma once

#include "analysis/analysis.h"

#include <algorithm>
#include <boost/icl/interval_map.hpp>
#include <boost/icl/right_open_interval.hpp>
#include <cstdint>
#include <limits>
#include <vector>

namespace exposure::detail {

// Time -> bit-mask of what runs (ActivityBit). Overlaps combine with |=; neighbours with equal masks join
// (interval_map is a joining container: that is what we want for unions, see STYLE.md on ICL).
// Right-open static intervals: no per-interval bound byte, and [a,b) matches TimeRange.
using MaskMap = boost::icl::interval_map<TimeNs, std::uint8_t, boost::icl::partial_absorber, std::less,
    boost::icl::inplace_bit_add, boost::icl::inplace_bit_and, boost::icl::right_open_interval<TimeNs, std::less>>;

// Calls f(laneIndex, lane) for each GPU lane of `rank`, in lane order.
template <class F> void forEachGpuLane(const Rank& rank, const F& f)
{
    for (std::size_t li = 0; li < rank.lanes.size(); ++li)
        if (rank.lanes[li].isGpu())
            f(li, rank.lanes[li]);
}

inline bool isKernel(Category c)
{
    return c == Category::Compute || c == Category::Communication;
}

// ActivityBit mask of one GPU interval (0 for idle/sync and anything that is no GPU work).
inline std::uint8_t activityBits(const NameClass& nc, Phase phase)
{
    switch (nc.category) {
    case Category::Communication:
        return ActivityComm;
    case Category::Compute:
        return std::uint8_t(ActivityCompute | (phase == Phase::Backward ? ActivityBackward : 0)
            | (nc.unclassified ? ActivityUnclassified : 0));
    case Category::Memcpy:
        return ActivityMemcpy;
    case Category::Idle:
    case Category::Host:
        break;
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

// Disjoint, sorted segments with their ActivityBit masks (the flattened interval_map).
struct Segments
{
    std::vector<TimeNs> start, end;
    std::vector<std::uint8_t> mask;

    void append(TimeNs s, TimeNs e, std::uint8_t m)
    {
        if (!end.empty() && end.back() == s && mask.back() == m) {
            end.back() = e; // the same join the interval_map does, across chunk boundaries
            return;
        }
        start.push_back(s);
        end.push_back(e);
        mask.push_back(m);
    }
};

// One lane's GPU intervals to add: all of them (indices == nullptr) or the listed ones, in start order.
struct LaneSource
{
    const IntervalTable* table = nullptr;
    std::size_t lane = 0;
    const std::uint32_t* indices = nullptr;
    std::size_t count = 0;

    std::size_t at(std::size_t k) const { return indices ? indices[k] : k; }
};

// Builds the union map of the sources' intervals (each with mask bits(lane, interval); 0 = skip), clipped to
// `clip`, into `out`. Boost.ICL does the union/combination. The intervals are fed to it in time chunks of about
// kChunk intervals per lane, each into a fresh small map that is flattened and cleared: the result is the same
// as one big map (segments that touch across a chunk border with equal masks are joined), but the trees stay
// small and hot in cache. Measured here on 2 M sorted intervals: one map 0.61 s, 1024-interval chunks 0.13 s.
template <class BitsFn>
void buildActivity(const std::vector<LaneSource>& sources, BitsFn bits, TimeRange clip, Segments& out)
{
    constexpr std::size_t kChunk = 1024;
    struct Item
    {
        TimeNs s, e;
        std::uint8_t m;
    };
    std::vector<std::size_t> cursor(sources.size(), 0);
    std::vector<Item> carry, nextCarry;
    MaskMap map;
    TimeNs a = std::numeric_limits<TimeNs>::min();
    for (;;) {
        // The chunk ends where the lane that is densest here has kChunk more intervals.
        TimeNs b = std::numeric_limits<TimeNs>::max();
        bool more = !carry.empty();
        for (std::size_t l = 0; l < sources.size(); ++l) {
            const auto& src = sources[l];
            if (cursor[l] < src.count)
                more = true;
            if (cursor[l] + kChunk < src.count)
                b = std::min(b, src.table->start(src.at(cursor[l] + kChunk)));
        }
        if (!more)
            break;
        if (b <= a)
            b = a + 1;
        nextCarry.clear();
        auto hint = map.begin();
        auto add = [&](TimeNs s, TimeNs e, std::uint8_t m) {
            if (e > b) {
                nextCarry.push_back({ b, e, m });
                e = b;
            }
            if (e > s)
                hint = map.add(hint, std::make_pair(boost::icl::right_open_interval<TimeNs>(s, e), m));
        };
        for (const Item& it : carry)
            add(it.s, it.e, it.m);
        for (std::size_t l = 0; l < sources.size(); ++l) {
            const auto& src = sources[l];
            std::size_t& c = cursor[l];
            hint = map.begin();
            for (; c < src.count; ++c) {
                const std::size_t i = src.at(c);
                const TimeNs s0 = src.table->start(i);
                if (s0 >= b)
                    break;
                const std::uint8_t m = bits(src.lane, i);
                const TimeNs s = std::max(s0, clip.start), e = std::min(src.table->end(i), clip.end);
                if (m != 0 && e > s)
                    add(s, e, m);
            }
        }
        for (const auto& [iv, m] : map)
            out.append(boost::icl::lower(iv), boost::icl::upper(iv), m);
        map.clear();
        std::swap(carry, nextCarry);
        a = b;
    }
}

inline constexpr std::uint32_t kNoLane = 0xFFFFFFFFu;

// Which CPU interval launched each GPU interval of a rank: [lane][interval] -> LaunchRef (cpuLane == kNoLane if
// unknown; empty vectors for CPU lanes and when nothing could be paired).
// With correlation ids (Lane::launchByInterval, torch.profiler): by identity, every kernel, copy and memset; one call
// may have launched many (a CUDA graph replay, a library call). Otherwise, in order, one kernel per launch: kernels on
// one stream run in launch order, so the k-th kernel-launch call aimed at a stream launched the k-th kernel on it.
// Launch records of other API calls (copies, event records) are skipped by name (rules of category "launch").
//  1. A stream whose kernel-launch records (CUDA_STREAM_REF) are as many as its kernels: paired in order.
//  2. Else, when the rank has a single stream with kernels and the rank's CPU lanes hold exactly as many
//     kernel-launch calls (with or without a stream reference: Score-P writes none on cuLaunchKernelEx) as it
//     has kernels: all those calls, in time order, are paired with its kernels in order.
//  3. Else the stream's kernels stay unpaired, with a warning: pairing a shifted sequence would be wrong.
struct LaunchPairs
{
    std::vector<std::vector<LaunchRef>> launchOf;
    std::vector<std::string> warnings;
    exposure::LaunchPairing method = exposure::LaunchPairing::None;
    std::uint64_t kernelsPaired = 0, kernelsUnpaired = 0;
};
LaunchPairs pairLaunches(const Trace& trace, const Analysis& analysis, const Rank& rank);
// The pairing by call (see LaunchTable) of rank `rankIndex`.
LaunchTable launchTable(
    const Analysis& analysis, const Rank& rank, int rankIndex, const std::vector<std::vector<LaunchRef>>& launchOf);

} // namespace exposure::detail
