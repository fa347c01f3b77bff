// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Training steps and phases: where a rank's steps come from, how its kernels were paired with their CPU launches,
// and how their phases were decided.
#include "model/timerange.h"
#include "model/trace.h"

#include <cstdint>
#include <string>

namespace exposure {

struct Analysis;

// How the phases of a rank's kernels were decided (best source that applied).
enum class PhaseSource : std::uint8_t { None, Launch, KernelName, StepHeuristic };
const char* phaseSourceName(PhaseSource s);

// Where a rank's steps come from.
enum class StepSource : std::uint8_t {
    None, // no steps found
    Regions, // CPU regions matched by a step rule (ProfilerStep#N, ...)
    KernelPattern, // runs of optimizer kernels that end each iteration
};
const char* stepSourceName(StepSource s); // "none", "regions", "kernel pattern"

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

struct StepWindow
{
    int index = 0;
    std::string name; // "ProfilerStep#4", "step 3"
    TimeRange range;
};

// Index into RankAnalysis::steps of the step that a GPU interval belongs to, -1 if none.
int stepOfInterval(const Trace& trace, const Analysis& analysis, IntervalRef interval);

} // namespace exposure
