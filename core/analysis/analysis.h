// SPDX-License-Identifier: GPL-3.0-or-later
// The analysis of a trace: every name classified once, and per rank the phases of its kernels, its steps, its
// overlap segments and its activity map, computed once by analyze() and then immutable (shared between threads).
// Including this header gives the whole analysis API (rules, steps, statistics, kernel table).
#pragma once

#include "analysis/categories.h"
#include "analysis/kerneltable.h"
#include "analysis/rules.h"
#include "analysis/statistics.h"
#include "analysis/steps.h"
#include "model/trace.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exposure {

struct OverlapSegment
{
    TimeNs start = 0;
    TimeNs end = 0;
    OverlapState state = OverlapState::ComputeOnly;
};

// One CPU call that launched GPU work: a kernel launch, a copy or memset call, a CUDA graph launch that replays many
// kernels, a library or multi-device call that launches several.
struct LaunchCall
{
    LaunchRef call; // the runtime or driver call: CPU lane and interval
    std::uint32_t firstWork = 0; // what it launched: LaunchTable::work[firstWork, firstWork + workCount)
    std::uint32_t workCount = 0; // GPU intervals (kernels, copies, memsets) it launched
    std::uint32_t kernels = 0; // of those, kernels (compute or communication)
    bool graph = false; // a CUDA graph launch (a launch rule of subgroup "graph")
};

// A rank's launch pairing from the calls' side (RankAnalysis::launchOf is the GPU side): every call that launched
// something, with the GPU intervals it launched. Steps, phases, the idle breakdown and the launch diagnosis all read
// this one pairing.
struct LaunchTable
{
    std::vector<LaunchCall> calls; // sorted by (cpuLane, interval)
    std::vector<IntervalRef> work; // grouped by call; within a call in start order (then lane, interval)
    const LaunchCall* find(LaunchRef call) const; // nullptr if that call launched nothing
    // Calls that launched at least one kernel, by how many they launched: (kernels, calls), ascending.
    std::vector<std::pair<std::uint32_t, std::uint64_t>> kernelsPerCall() const;
};

struct RankAnalysis
{
    std::vector<std::vector<Phase>> phases; // [lane][interval]; empty vector for CPU lanes
    PhaseSource phaseSource = PhaseSource::None;
    std::uint64_t phaseFromLaunch = 0, phaseFromName = 0, phaseFromHeuristic = 0, phaseUnknown = 0;
    std::vector<StepWindow> steps;
    StepSource stepSource = StepSource::None;
    bool stepsByLaunch = false; // kernels were assigned to steps by their launch time
    StepAxis stepAxis = StepAxis::None; // where the steps' ranges lie (steps.h)
    std::vector<OverlapSegment> overlap; // sorted, non-overlapping; gaps are idle

    // The rank's GPU activity as disjoint, sorted segments, each with a bit-mask of what runs in it
    // (ActivityBit). Built once with a Boost.ICL interval_map; window statistics are clipped sums over it.
    std::vector<TimeNs> activityStart, activityEnd;
    std::vector<std::uint8_t> activityMask;
    std::vector<std::string> warnings; // e.g. launch/kernel count mismatches on a stream
    LaunchPairing launchPairing = LaunchPairing::None; // how kernels were paired with their CPU launches
    std::uint64_t kernelsPaired = 0, kernelsUnpaired = 0; // kernels with / without a known launch
    // [lane][interval]: the CPU call that launched a GPU kernel (cpuLane == kUnknownLaunch if none); empty for lanes
    // without pairing and for CPU lanes.
    std::vector<std::vector<LaunchRef>> launchOf;
    LaunchTable launchCalls; // the same pairing by call: what each call launched
    // [lane][interval]: index into steps of the host step that launched a GPU interval (its start when the launch
    // is unknown), -1 if none (empty when no steps, and for CPU lanes). Phases are decided per host step; every
    // per-step statistic uses the steps' GPU windows (StepWindow::range) instead.
    std::vector<std::vector<std::int32_t>> stepOf;
};

struct Analysis
{
    Rules rules;
    std::vector<NameClass> names; // by StringId
    std::vector<RankAnalysis> ranks;

    const NameClass& classOf(StringId id) const { return names[id]; }
};

std::shared_ptr<const Analysis> analyze(const Trace& trace, Rules rules);

// The call that launched a GPU interval and the interval's place among what that call launched ("node k of n" of a
// CUDA graph replay: the k-th, from 0, in start order); nullopt when its launch is unknown.
struct WorkLaunch
{
    IntervalRef call;
    bool graph = false;
    std::uint32_t node = 0, nodes = 0;
};
std::optional<WorkLaunch> launchOfWork(const Analysis& analysis, IntervalRef gpuInterval);
// The name shown for `id`: as the analysis has it (demangled) when there is one, else as the trace has it.
inline const std::string& displayName(const Trace& trace, const Analysis* analysis, StringId id)
{
    if (analysis && id < analysis->names.size() && !analysis->names[id].displayName.empty())
        return analysis->names[id].displayName;
    return trace.name(id);
}

// analyze() in its two parts, for a trace that holds only some ranks of a run (a process of exposure-mpi):
// the analysis of each rank on its own (threads: at most that many; 0 = one per hardware thread), then the one
// finding that needs all ranks: a run of several ranks without any communication kernel gets a warning on each.
std::shared_ptr<Analysis> analyzeRanks(const Trace& trace, Rules rules, int threads = 0);
bool hasCommunicationKernel(const Trace& trace, const Analysis& analysis);
void warnNoCommunication(Analysis& analysis, std::size_t runRanks);

} // namespace exposure
