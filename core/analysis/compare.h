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
    int stepsUsed = 0;          // (rank, step) pairs averaged over; 0 = no steps found, whole-trace values per rank
    StepSource stepSource = StepSource::None; // of rank 0
    // Means per step over all ranks and the steps used (per rank when no steps were found).
    TimeNs stepNs = 0;          // wall-clock step time (step window length)
    TimeNs computeNs = 0;       // compute_busy
    TimeNs commBusyNs = 0;
    TimeNs commKernelSumNs = 0;
    TimeNs hiddenNs = 0;        // overlapped
    TimeNs exposedNs = 0;
    TimeNs idleNs = 0;
    std::optional<double> overlapRatio; // Σ hidden / Σ comm busy over the same steps
    TimeNs worstExposedNs = 0;  // the largest per-rank mean exposed time (the rank that holds the others back)
    int worstExposedRank = -1;
    // Whole trace, from the cross-rank collective matching, per rank and divided by the number of steps per rank.
    TimeNs waitNs = 0;          // NCCL time spent waiting for the last peer
    TimeNs transferNs = 0;      // NCCL time with all peers present
    std::uint64_t unmatchedCollectives = 0;
};

struct CompareOptions
{
    int skipSteps = 1; // leave out each rank's first steps (warm-up), as long as one step remains
};

RunSummary summarizeRun(const Trace& trace, const Analysis& analysis, const CompareOptions& options = {});

// Scaling efficiency of run `r` against `base` under weak scaling (the same per-GPU batch): step time of the base
// divided by step time of r (1.0 = perfect). nullopt when a step time is zero.
std::optional<double> weakScalingEfficiency(const RunSummary& base, const RunSummary& r);

std::string compareTable(const std::vector<RunSummary>& runs);
std::string compareJson(const std::vector<RunSummary>& runs);

} // namespace exposure
