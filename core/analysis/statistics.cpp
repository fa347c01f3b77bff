// SPDX-License-Identifier: GPL-3.0-or-later
// Window statistics. The interval algebra (unions over streams, comm ∩ compute) was done once by Boost.ICL in
// analyze(); a window query binary-searches the rank's disjoint activity segments and sums the clipped ones:
// O(log n + segments in the window). Per-step statistics are window statistics over each step's window on the GPU's
// time axis (StepWindow::range): the windows tile the covered time, so the steps' values add up.
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

void accumulate(WindowStats& total, const WindowStats& s)
{
    // Every field of WindowStats but the ratio.
    static constexpr std::uint64_t WindowStats::*counts[]
        = { &WindowStats::kernelCount, &WindowStats::commKernelCount };
    static constexpr TimeNs WindowStats::*times[] = { &WindowStats::commKernelSumNs, &WindowStats::commBusyNs,
        &WindowStats::computeBusyNs, &WindowStats::overlappedNs, &WindowStats::exposedNs,
        &WindowStats::backwardOverlappedNs, &WindowStats::memcpyBusyNs, &WindowStats::gpuBusyNs, &WindowStats::spanNs,
        &WindowStats::idleNs, &WindowStats::unclassifiedNs };
    for (const auto field : counts)
        total.*field += s.*field;
    for (const auto field : times)
        total.*field += s.*field;
}

WindowStats sumStats(const std::vector<WindowStats>& parts)
{
    WindowStats total;
    for (const WindowStats& s : parts)
        accumulate(total, s);
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

TimeRange activityExtent(const Analysis& analysis, int rankIndex)
{
    const RankAnalysis& ra = analysis.ranks.at(std::size_t(rankIndex));
    std::size_t first = 0, last = ra.activityMask.size();
    while (first < last && ra.activityMask[first] == 0)
        ++first;
    while (last > first && ra.activityMask[last - 1] == 0)
        --last;
    return first < last ? TimeRange { ra.activityStart[first], ra.activityEnd[last - 1] } : TimeRange {};
}

WindowStats computeStepWindowStats(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window)
{
    if (window.isEmpty())
        return {}; // a step outside the report window, or one that launched no GPU work
    WindowStats s = computeStats(trace, analysis, rankIndex, window);
    const TimeRange extent = activityExtent(analysis, rankIndex);
    s.spanNs = extent.isEmpty() ? 0 : window.intersected(extent).duration();
    s.idleNs = s.spanNs - s.gpuBusyNs;
    return s;
}

std::vector<WindowStats> computeStepStats(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window)
{
    const RankAnalysis& ra = analysis.ranks.at(std::size_t(rankIndex));
    std::vector<WindowStats> out;
    out.reserve(ra.steps.size());
    for (const StepWindow& w : ra.steps)
        out.push_back(computeStepWindowStats(trace, analysis, rankIndex, w.range.intersected(window)));
    return out;
}

std::vector<WindowStats> computeStepStats(const Trace& trace, const Analysis& analysis, int rankIndex)
{
    return computeStepStats(
        trace, analysis, rankIndex, { std::numeric_limits<TimeNs>::min(), std::numeric_limits<TimeNs>::max() });
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
           "Steps: when the trace links launches to GPU work and the steps are CPU regions (ProfilerStep#N), a\n"
           "step's window lies on the GPU's time axis: from the end of the previous step's GPU work (the first\n"
           "step: from its CPU region's start, or from the end of the GPU work launched before it or before\n"
           "recording began, whichever is later) to the end of the GPU work launched in its CPU region. Without\n"
           "launches a step's window is its CPU region (step_windows \"host\"); steps found from the optimizer-kernel\n"
           "pattern lie on the GPU already. A step's values are the window's values over that window, so none\n"
           "exceeds the step and the steps' values add up to the values over the time they cover; a step's span_ns\n"
           "is the part of its window between the rank's first and last GPU activity of the whole trace, and its\n"
           "idle_ns is span_ns - gpu_busy_ns. Mean step (step_mean in JSON): the mean length of the rank's\n"
           "step windows in the window, leaving out start-up steps: the first step is start-up when it lasts more\n"
           "than 3x the median of the later steps, then the next step likewise (one step always stays); the output\n"
           "names the steps the mean covers, JSON steps carry \"startup\": true|false. exposure-cli compare uses the\n"
           "same rule. Total: the sum of the ranks' values (overlap_ratio from the sums). Kernels table:\n"
           "instances whose start lies in the window; share = total / the sum of the durations of all\n"
           "kernels, copies and memsets that start in the window.\n";
}

} // namespace exposure
