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
// Adds the counts and times of `part` to `total`, field by field; the ratio is left as it is.
void accumulate(WindowStats& total, const WindowStats& part);
// Field-wise sum of per-rank statistics; the ratio is recomputed from the sums.
WindowStats sumStats(const std::vector<WindowStats>& parts);
// Whole-run total: sums of the per-rank values over the window (ratio from the sums).
WindowStats computeTotal(const Trace& trace, const Analysis& analysis, TimeRange window);
// Statistics of one step window: computeStats() over it, except that spanNs is the part of the window between the
// rank's first and last GPU activity of the whole trace (activityExtent), so that idle time that crosses a step
// boundary is counted on both sides and the values of adjacent windows add up to the values over their union.
// An empty window has no values (no kernel is counted at its instant).
WindowStats computeStepWindowStats(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window);
// From the start of the rank's first to the end of its last GPU activity; empty when it has none.
TimeRange activityExtent(const Analysis& analysis, int rankIndex);
// Per-step statistics of a rank: computeStepWindowStats() over each step's window (StepWindow::range).
std::vector<WindowStats> computeStepStats(const Trace& trace, const Analysis& analysis, int rankIndex);
// Same, with every step's window clipped to `window`.
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
    LaunchRef launch { kUnknownLaunch, 0 }; // the launch of the work that ends the gap
    // The innermost CPU region of the launching thread at the gap's start (kUnknownLaunch lane if none).
    LaunchRef cpuRegion { kUnknownLaunch, 0 };
};
std::vector<IdleGap> idleGaps(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window);
// The gaps between any two GPU activities of the rank (anywhere in the trace) cut to the window, each split by cause
// over its part inside the window (a gap's cause is decided over the whole gap): what a step window's idle time is.
// The parts of adjacent windows add up to the parts over their union; the sum equals computeStepWindowStats().idleNs.
std::vector<IdleGap> idleGapsCut(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window);
IdleBreakdown sumIdleGaps(const std::vector<IdleGap>& gaps);

// Launch-bound diagnosis of a rank: its kernels (starting in the window) that have a known launch, against that
// launch call's duration. Kernels replayed from a CUDA graph are counted apart: their launch call is the graph's, and
// their launch overhead is the graph's, not theirs.
struct LaunchDiagnosis
{
    std::uint64_t kernels = 0; // paired kernels starting in the window, not from a graph
    TimeNs medianKernelNs = 0, p90KernelNs = 0;
    TimeNs medianLaunchNs = 0, p90LaunchNs = 0;
    double shorterThanLaunch = 0; // share of those kernels that run shorter than their own launch call
    double launchesPerSecond = 0; // those kernels per second of the window
    // The calls that launched the paired kernels starting in the window (each call counted once), by how many kernels
    // each launched in all.
    std::uint64_t calls = 0; // calls that launched kernels
    std::uint64_t multiKernelCalls = 0; // of those, calls that launched more than one kernel
    std::uint64_t multiKernelKernels = 0; // the window's kernels those launched
    std::uint32_t maxKernelsPerCall = 0;
    std::uint64_t graphLaunches = 0; // CUDA graph launches among the calls
    std::uint64_t graphKernels = 0; // the window's kernels they replayed
};
LaunchDiagnosis diagnoseLaunches(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window);

// How much of a rank's NCCL time in a window its matched communication kernels spent waiting for peers, and the
// rank it waited for most (from the cross-rank matching, analysis/collectives.h: peerWaitInWindow).
struct PeerWait
{
    TimeNs waitNs = 0; // Σ of the rank's wait parts clipped to the window
    std::string mostWaitedFor; // label of the rank that arrived last in the groups holding most of that waiting
};

// One line on what keeps the rank's GPU idle, with what usually helps as a hint ("GPU idle 83 %: 96 % of it waiting
// for the CPU to launch; 71 % of kernels run shorter than their launch (…)"). With `peers`, a rank whose GPU is busy
// but whose NCCL time (stats.commKernelSumNs) is mostly waiting says so ("GPU busy, but 96 % of its NCCL time waits
// for Rank 1").
std::string idleFinding(const WindowStats& stats, const IdleBreakdown& idle, const LaunchDiagnosis& launches,
    const PeerWait* peers = nullptr);

} // namespace exposure
