// SPDX-License-Identifier: GPL-3.0-or-later
// Window statistics. The interval algebra (unions over streams, comm ∩ compute) was done once by Boost.ICL in
// analyze(); a window query binary-searches the rank's disjoint activity segments and sums the clipped ones:
// O(log n + segments in the window). Per-step statistics build one ICL map per step from that step's kernels,
// because a step's kernels are chosen by launch, not by time, and may interleave with the next step's.
#include "analysis/analysis_p.h"

#include <algorithm>
#include <limits>

namespace exposure {

namespace {

using detail::isKernel;

bool intersects(TimeNs s, TimeNs e, TimeRange w)
{
    // A zero-length kernel counts where its instant lies in the closed window.
    return e > s ? (s < w.end && e > w.start) : (s >= w.start && s <= w.end);
}

struct Counts
{
    std::uint64_t kernels = 0, comm = 0;
    TimeNs commSum = 0;
    void add(TimeNs s, TimeNs e, Category c, TimeRange w)
    {
        if (!isKernel(c) || !intersects(s, e, w))
            return;
        ++kernels;
        if (c == Category::Communication) {
            ++comm;
            commSum += std::max<TimeNs>(0, std::min(e, w.end) - std::max(s, w.start));
        }
    }
};

} // namespace

WindowStats computeStats(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window)
{
    const Rank& rank = trace.ranks.at(std::size_t(rankIndex));
    const RankAnalysis& ra = analysis.ranks.at(std::size_t(rankIndex));

    detail::BusyAccumulator acc;
    acc.window = window;
    const auto& st = ra.activityStart;
    const auto& en = ra.activityEnd;
    // Segments are disjoint and sorted, so their ends are sorted too: first segment ending after window.start.
    std::size_t k = std::size_t(std::upper_bound(en.begin(), en.end(), window.start) - en.begin());
    for (; k < st.size() && st[k] < window.end; ++k)
        acc.add(st[k], en[k], ra.activityMask[k]);
    WindowStats s = acc.finish();

    Counts c;
    for (const Lane& lane : rank.lanes) {
        if (!lane.isGpu())
            continue;
        const auto& t = lane.intervals;
        // Intervals that can reach the window start begin at most maxDuration before it.
        const TimeNs md = t.maxDuration();
        const TimeNs from = window.start < std::numeric_limits<TimeNs>::min() + md ? std::numeric_limits<TimeNs>::min()
                                                                                  : window.start - md;
        for (std::size_t i = t.lowerBoundStart(from); i < t.size() && t.start(i) <= window.end; ++i)
            c.add(t.start(i), t.end(i), analysis.names[t.name(i)].category, window);
    }
    s.kernelCount = c.kernels;
    s.commKernelCount = c.comm;
    s.commKernelSumNs = c.commSum;
    return s;
}

WindowStats sumStats(const std::vector<WindowStats>& parts)
{
    WindowStats total;
    for (const WindowStats& s : parts) {
        total.kernelCount += s.kernelCount;
        total.commKernelCount += s.commKernelCount;
        total.commKernelSumNs += s.commKernelSumNs;
        total.commBusyNs += s.commBusyNs;
        total.computeBusyNs += s.computeBusyNs;
        total.overlappedNs += s.overlappedNs;
        total.exposedNs += s.exposedNs;
        total.backwardOverlappedNs += s.backwardOverlappedNs;
        total.memcpyBusyNs += s.memcpyBusyNs;
        total.gpuBusyNs += s.gpuBusyNs;
        total.spanNs += s.spanNs;
        total.idleNs += s.idleNs;
        total.unclassifiedNs += s.unclassifiedNs;
    }
    if (total.commBusyNs > 0)
        total.overlapRatio = double(total.overlappedNs) / double(total.commBusyNs);
    return total;
}

WindowStats computeTotal(const Trace& trace, const Analysis& analysis, TimeRange window)
{
    std::vector<WindowStats> parts;
    parts.reserve(trace.ranks.size());
    for (std::size_t r = 0; r < trace.ranks.size(); ++r)
        parts.push_back(computeStats(trace, analysis, int(r), window));
    return sumStats(parts);
}

std::vector<WindowStats> computeStepStats(const Trace& trace, const Analysis& analysis, int rankIndex,
                                          TimeRange window)
{
    const Rank& rank = trace.ranks.at(std::size_t(rankIndex));
    const RankAnalysis& ra = analysis.ranks.at(std::size_t(rankIndex));
    const std::size_t n = ra.steps.size();
    if (n == 0)
        return {};
    // Bucket each lane's intervals by step (a counting sort keeps them in start order within a step), then
    // build each step's activity from its own intervals only.
    std::vector<Counts> counts(n);
    std::vector<std::vector<std::uint32_t>> order(rank.lanes.size());
    std::vector<std::vector<std::size_t>> offset(rank.lanes.size());
    for (std::size_t li = 0; li < rank.lanes.size(); ++li) {
        const Lane& lane = rank.lanes[li];
        if (!lane.isGpu() || li >= ra.stepOf.size())
            continue;
        const auto& t = lane.intervals;
        const auto& so = ra.stepOf[li];
        auto& off = offset[li];
        off.assign(n + 1, 0);
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (so[i] < 0)
                continue;
            ++off[std::size_t(so[i]) + 1];
            counts[std::size_t(so[i])].add(t.start(i), t.end(i), analysis.names[t.name(i)].category, window);
        }
        for (std::size_t k = 0; k < n; ++k)
            off[k + 1] += off[k];
        auto& ord = order[li];
        ord.resize(off[n]);
        std::vector<std::size_t> fill(off.begin(), off.end() - 1);
        for (std::size_t i = 0; i < t.size(); ++i)
            if (so[i] >= 0)
                ord[fill[std::size_t(so[i])]++] = std::uint32_t(i);
    }
    auto bits = [&](std::size_t li, std::size_t i) {
        return detail::activityBits(analysis.names[rank.lanes[li].intervals.name(i)], ra.phases[li][i]);
    };
    std::vector<WindowStats> out(n);
    detail::Segments seg;
    for (std::size_t k = 0; k < n; ++k) {
        std::vector<detail::LaneSource> sources;
        for (std::size_t li = 0; li < rank.lanes.size(); ++li)
            if (!order[li].empty() && offset[li][k + 1] > offset[li][k])
                sources.push_back({&rank.lanes[li].intervals, li, order[li].data() + offset[li][k],
                                   offset[li][k + 1] - offset[li][k]});
        seg.start.clear();
        seg.end.clear();
        seg.mask.clear();
        detail::buildActivity(sources, bits, window, seg);
        detail::BusyAccumulator acc;
        acc.window = window;
        for (std::size_t j = 0; j < seg.start.size(); ++j)
            acc.add(seg.start[j], seg.end[j], seg.mask[j]);
        out[k] = acc.finish();
        out[k].kernelCount = counts[k].kernels;
        out[k].commKernelCount = counts[k].comm;
        out[k].commKernelSumNs = counts[k].commSum;
    }
    return out;
}

std::vector<WindowStats> computeStepStats(const Trace& trace, const Analysis& analysis, int rankIndex)
{
    return computeStepStats(trace, analysis, rankIndex,
                            {std::numeric_limits<TimeNs>::min(), std::numeric_limits<TimeNs>::max()});
}

InstanceOverlap instanceOverlap(const Trace& trace, const Analysis& analysis, IntervalRef ref)
{
    const std::size_t interval = ref.interval;
    const Lane& lane = trace.ranks.at(std::size_t(ref.rank)).lanes.at(std::size_t(ref.lane));
    const RankAnalysis& ra = analysis.ranks.at(std::size_t(ref.rank));
    const TimeNs s = lane.intervals.start(interval), e = lane.intervals.end(interval);
    InstanceOverlap out;
    const auto& st = ra.activityStart;
    const auto& en = ra.activityEnd;
    std::size_t k = std::size_t(std::upper_bound(en.begin(), en.end(), s) - en.begin());
    for (; k < st.size() && st[k] < e; ++k) {
        if (ra.activityMask[k] & ActivityCompute)
            out.hiddenNs += std::min(e, en[k]) - std::max(s, st[k]);
    }
    out.exposedNs = (e - s) - out.hiddenNs;
    return out;
}

const char* statisticsDefinitions()
{
    return "All values are per rank, in integer nanoseconds, over a window [from, to) (default: the whole trace).\n"
           "U(S) is the union of the intervals of a set S of GPU intervals of the rank over all its GPU streams,\n"
           "clipped to the window; |U(S)| is its total length. A kernel is a GPU interval classified compute or\n"
           "communication (copies, memsets, idle and synchronisation regions are not kernels).\n"
           "  kernel_count            kernels that intersect the window (a zero-length one: whose instant lies\n"
           "                          in it)\n"
           "  comm_kernel_count       communication (NCCL/RCCL) kernels among them\n"
           "  comm_kernel_sum_ns      sum of the communication kernels' durations, each clipped to the window\n"
           "                          (counts overlapping communication kernels twice)\n"
           "  comm_busy_ns            |U(communication kernels)|\n"
           "  compute_busy_ns         |U(compute kernels)| (including unclassified ones)\n"
           "  overlapped_ns           |U(communication) ∩ U(compute)|: communication hidden behind compute\n"
           "  exposed_ns              comm_busy_ns - overlapped_ns: communication with no compute running\n"
           "  overlap_ratio           overlapped_ns / comm_busy_ns; null when comm_busy_ns is 0\n"
           "  backward_overlapped_ns  |U(communication) ∩ U(compute kernels of phase backward)|\n"
           "  memcpy_busy_ns          |U(copies and memsets)|\n"
           "  gpu_busy_ns             |U(all kernels, copies and memsets)|; idle and synchronisation regions\n"
           "                          (COMPUTE IDLE, DEVICE SYNCHRONIZE, ...) are not GPU activity\n"
           "  span_ns                 from the start of the first to the end of the last GPU activity in the\n"
           "                          window (clipped)\n"
           "  idle_ns                 span_ns - gpu_busy_ns\n"
           "  unclassified_ns         |U(compute kernels that only a catch-all rule matched)|\n"
           "Steps: a kernel belongs to the step whose window holds its CPU launch (when the trace links launches\n"
           "to kernels and the steps are CPU regions such as ProfilerStep#N), else its start; a step's values\n"
           "are computed over its own kernels only. Mean step (step_mean in JSON): the mean length of the rank's\n"
           "step windows in the window, leaving out start-up steps: the first step is start-up when it lasts more\n"
           "than 3x the median of the later steps, then the next step likewise (one step always stays); the output\n"
           "names the steps the mean covers, JSON steps carry \"startup\": true|false. exposure-cli compare uses the\n"
           "same rule. Total: the sum of the ranks' values (overlap_ratio from the sums). Kernels table:\n"
           "instances whose start lies in the window; share = total / the sum of the durations of all\n"
           "kernels, copies and memsets that start in the window.\n";
}

} // namespace exposure
