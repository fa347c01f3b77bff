// SPDX-License-Identifier: GPL-3.0-or-later
// One summary row per run, for comparing runs of the same training at different scales (1, 4, 8 GPUs ...).
#pragma once

#include "analysis/analysis.h"
#include "analysis/collectives.h"

#include <optional>
#include <string>
#include <vector>

namespace exposure {

struct RunSummary
{
    std::string trace;
    int ranks = 0;
    int hosts = 0;
    int stepsUsed = 0; // (rank, step) pairs averaged over; 0 = no steps found, whole-trace values per rank
    int stepsLeftOut = 0; // (rank, step) pairs left out as start-up (or skipped on request)
    std::string stepsCovered; // which steps of rank 0 the means cover: "steps 1–14 (step 0 left out: …)"
    StepSource stepSource = StepSource::None; // of rank 0
    // Means per step over all ranks and the steps used (per rank when no steps were found).
    TimeNs stepNs = 0; // step time: the length of the step's window on the GPU (StepWindow::range)
    TimeNs computeNs = 0; // compute_busy
    TimeNs commBusyNs = 0;
    TimeNs commKernelSumNs = 0;
    TimeNs hiddenNs = 0; // overlapped
    TimeNs exposedNs = 0;
    TimeNs idleNs = 0;
    std::optional<double> overlapRatio; // Σ hidden / Σ comm busy over the same steps
    TimeNs worstExposedNs = 0; // the largest per-rank mean exposed time (the rank that holds the others back)
    int worstExposedRank = -1;
    // From the cross-rank collective matching: the waiting and transfer parts inside each step's window, averaged
    // over the same (rank, step) pairs as the values above (per rank over the whole trace when no steps were found).
    TimeNs waitNs = 0; // NCCL time spent waiting for the last peer
    TimeNs transferNs = 0; // NCCL time with all peers present
    std::uint64_t unmatchedCollectives = 0;
};

struct CompareOptions
{
    // < 0: leave out each rank's start-up steps by the rule of `exposure-cli stats` (analysis/stepmean.h);
    // N >= 0: leave out exactly each rank's first N steps instead, as long as one step remains.
    int skipSteps = -1;
};

RunSummary summarizeRun(const Trace& trace, const Analysis& analysis, const CompareOptions& options = {});

// Scaling efficiency of run `r` against `base` under weak scaling (the same per-GPU workload): step time of the
// base divided by step time of r (1.0 = perfect). nullopt when both have the same number of GPUs (scaling needs
// different GPU counts: two runs at one scale differ in workload or noise, not in scale) or a step time is zero.
std::optional<double> weakScalingEfficiency(const RunSummary& base, const RunSummary& r);
// Why a run has no efficiency: it is the baseline itself (`isBase`), it has the baseline's GPU count, or a step time is
// missing; None when it has one.
enum class EfficiencyNote : std::uint8_t { None, Baseline, SameGpuCount, NoStepTime };
EfficiencyNote efficiencyNote(const RunSummary& base, const RunSummary& r, bool isBase);
// "baseline", "same GPU count as the baseline", "no step time"; "" for None (the JSON's efficiency_note).
const char* efficiencyNoteText(EfficiencyNote note);
// Runs ordered by GPU count (stable: runs with equal counts keep their order); the first is the baseline.
void orderByGpuCount(std::vector<RunSummary>& runs);

// The first run is the baseline of the efficiency (see orderByGpuCount).
std::string compareTable(const std::vector<RunSummary>& runs);
std::string compareJson(const std::vector<RunSummary>& runs);

} // namespace exposure
