// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Exact, interval-based statistics of a rank over a time window: communication hidden behind compute, exposed,
// busy and idle time, in integer nanoseconds (definitions: statisticsDefinitions(), README "Statistics").
#include "model/timerange.h"
#include "model/trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace exposure {

struct Analysis;

// Exact statistics of one rank (or all ranks) over a window; see README "Statistics".
struct WindowStats
{
    std::uint64_t kernelCount = 0;
    std::uint64_t commKernelCount = 0;
    TimeNs commKernelSumNs = 0;
    TimeNs commBusyNs = 0;
    TimeNs computeBusyNs = 0;
    TimeNs overlappedNs = 0;
    TimeNs exposedNs = 0;
    std::optional<double> overlapRatio; // overlapped / commBusy; nullopt when no communication
    TimeNs backwardOverlappedNs = 0;
    TimeNs memcpyBusyNs = 0;
    TimeNs gpuBusyNs = 0;
    TimeNs spanNs = 0;
    TimeNs idleNs = 0;
    TimeNs unclassifiedNs = 0;
};

WindowStats computeStats(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window);
// Field-wise sum of per-rank statistics; the ratio is recomputed from the sums.
WindowStats sumStats(const std::vector<WindowStats>& parts);
// Whole-run total: sums of the per-rank values over the window (ratio from the sums).
WindowStats computeTotal(const Trace& trace, const Analysis& analysis, TimeRange window);
// Per-step statistics of a rank (kernels assigned to each step).
std::vector<WindowStats> computeStepStats(const Trace& trace, const Analysis& analysis, int rankIndex);
// Same, with every step's kernels clipped to `window`.
std::vector<WindowStats> computeStepStats(
    const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window);
// The exact definitions of every WindowStats field, as plain text (CLI --help, GUI tool tips).
const char* statisticsDefinitions();

// The part of one communication kernel instance hidden behind compute of the same rank.
struct InstanceOverlap
{
    TimeNs hiddenNs = 0;
    TimeNs exposedNs = 0;
};
InstanceOverlap instanceOverlap(const Trace& trace, const Analysis& analysis, IntervalRef interval);

// Why a rank's GPUs were idle. Every idle nanosecond of the window (the gaps between GPU activity: WindowStats::idleNs)
// falls in exactly one of host-bound, sync wait, queued or unattributed; data loading is a part of host-bound.
// For a gap, L is the CPU call that launched the GPU work ending it:
//  * host-bound: from the gap's start until L ended, when the launching thread was not blocked in a synchronising
//    call as the gap began (the CPU did not issue work fast enough);
//  * sync wait: the same span when the thread was blocked in one (synchronize, a blocking copy, .item());
//  * queued: the rest of the gap, after L had ended (launch latency, dependencies, events);
//  * unattributed: gaps whose next work has no known launch (copies, kernels launched before recording began);
//  * data loading: host-bound time while the launching thread was in a data-loader region.
struct IdleBreakdown
{
    TimeNs hostBoundNs = 0;
    TimeNs syncWaitNs = 0;
    TimeNs queuedNs = 0;
    TimeNs unattributedNs = 0;
    TimeNs dataLoadingNs = 0;
    std::uint64_t gaps = 0;
    TimeNs totalNs() const { return hostBoundNs + syncWaitNs + queuedNs + unattributedNs; }
};
IdleBreakdown computeIdleBreakdown(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window);

// One gap of a rank's GPU activity inside a window, split by cause (see IdleBreakdown).
struct IdleGap
{
    TimeRange range;
    TimeNs hostBoundNs = 0, syncWaitNs = 0, queuedNs = 0, unattributedNs = 0, dataLoadingNs = 0;
    LaunchRef launch{kUnknownLaunch, 0}; // the launch of the work that ends the gap
    // The innermost CPU region of the launching thread at the gap's start (kUnknownLaunch lane if none).
    LaunchRef cpuRegion{kUnknownLaunch, 0};
};
std::vector<IdleGap> idleGaps(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window);
IdleBreakdown sumIdleGaps(const std::vector<IdleGap>& gaps);

// Launch-bound diagnosis of a rank: its kernels (starting in the window) that have a known launch, against that
// launch call's duration. Kernels replayed from a CUDA graph are counted apart: their launch call is the graph's, and
// their launch overhead is the graph's, not theirs.
struct LaunchDiagnosis
{
    std::uint64_t kernels = 0;           // paired kernels starting in the window, not from a graph
    TimeNs medianKernelNs = 0, p90KernelNs = 0;
    TimeNs medianLaunchNs = 0, p90LaunchNs = 0;
    double shorterThanLaunch = 0;        // share of those kernels that run shorter than their own launch call
    double launchesPerSecond = 0;        // those kernels per second of the window
    // The calls that launched the paired kernels starting in the window (each call counted once), by how many kernels
    // each launched in all.
    std::uint64_t calls = 0;             // calls that launched kernels
    std::uint64_t multiKernelCalls = 0;  // of those, calls that launched more than one kernel
    std::uint64_t multiKernelKernels = 0; // the window's kernels those launched
    std::uint32_t maxKernelsPerCall = 0;
    std::uint64_t graphLaunches = 0;     // CUDA graph launches among the calls
    std::uint64_t graphKernels = 0;      // the window's kernels they replayed
};
LaunchDiagnosis diagnoseLaunches(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window);

// One line on what keeps the rank's GPU idle, with what usually helps as a hint ("GPU idle 83 %: 96 % of it waiting
// for the CPU to launch; 71 % of kernels run shorter than their launch (…)").
std::string idleFinding(const WindowStats& stats, const IdleBreakdown& idle, const LaunchDiagnosis& launches);

} // namespace exposure
