// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Training steps and phases: where a rank's steps come from, how its kernels were paired with their CPU launches,
// and how their phases were decided.
#include "model/timerange.h"
#include "model/trace.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace exposure {

struct Analysis;

// How the phases of a rank's kernels were decided (best source that applied).
enum class PhaseSource : std::uint8_t { None, Launch, KernelName, StepHeuristic };
const char* phaseSourceName(PhaseSource s);

// Where a rank's steps come from.
enum class StepSource : std::uint8_t {
    None, // no steps found
    Regions, // CPU regions matched by a step rule (ProfilerStep#N, ...)
    Markers, // step regions far shorter than their spacing: each step runs from its region to the next one
    KernelPattern, // runs of optimizer kernels that end each iteration
};
const char* stepSourceName(StepSource s); // "none", "regions", "region markers", "kernel pattern"

// Where a rank's step windows (StepWindow::range) lie on the time axis.
enum class StepAxis : std::uint8_t {
    None, // no steps
    GpuByLaunch, // GPU windows: each step ends where the GPU work launched in its host step ends
    Host, // the host windows themselves: the trace links no launch to its GPU work
    KernelPattern, // the windows between optimizer runs, found on the GPU already
};
const char* stepAxisName(StepAxis a); // "gpu by launch", "host", "kernel pattern"

// How a rank's kernels were paired with the CPU calls that launched them.
enum class LaunchPairing : std::uint8_t {
    None, // no pairing
    StreamReferences, // every launch names its stream (Score-P CUDA_STREAM_REF)
    StreamReferencesPartly, // some launches name their stream
    LaunchOrder, // one kernel stream: every launch call of the rank, in time order
    CorrelationIds, // by identity: every kernel, copy and memset names its call (torch.profiler correlation ids)
};
// "none", "stream references", "stream references, partly", "launch order", "correlation ids"
const char* launchPairingName(LaunchPairing p);

// One training step of a rank. `range` is the step on the GPU's time axis (RankAnalysis::stepAxis): with launches
// known, from the end of the previous step's GPU work (for the first step: the host step's start, or the end of the
// GPU work launched before it, whichever is later) to the end of the GPU work launched in this host step (a step
// that launched nothing ends with its host step, or where it starts, whichever is later). The ranges of a rank's
// steps are contiguous, in order, and never overlap; every per-step statistic is computed inside `range`.
struct StepWindow
{
    int index = 0; // position among the rank's steps (steps are aligned by index across ranks)
    std::string name; // "ProfilerStep#4", "step 3"
    TimeRange range; // on the GPU's time axis (see above)
    TimeRange hostRange; // the step's CPU region (ProfilerStep#N); == range for steps from the kernel pattern
    // The step's number as the user sees it everywhere (Zoom to Step, --step, figures, stats, whatif): N of a name
    // that ends in "#N" (ProfilerStep#N) as recorded, else `index`.
    int number = 0;
};

// Index into RankAnalysis::steps of the host step that launched a GPU interval (its start when the launch is
// unknown), -1 if none.
int stepOfInterval(const Trace& trace, const Analysis& analysis, IntervalRef interval);
// Index into `steps` of the step whose (GPU) range holds `t`, -1 if none.
int stepAtTime(const std::vector<StepWindow>& steps, TimeNs t);
// The index into `steps` of the step a user names: its name ("ProfilerStep#6", case-insensitive), else its
// StepWindow::number ("6" for ProfilerStep#6); -1 if none matches.
int findStep(const std::vector<StepWindow>& steps, std::string_view text);
// Sets every step's StepWindow::number from its name and index.
void numberSteps(std::vector<StepWindow>& steps);
// The StepWindow::index of the step a user names (findStep over the ranks in order: steps are aligned by index across
// ranks), -1 if no rank has it.
int stepIndexNamed(const Analysis& analysis, std::string_view text);

} // namespace exposure
