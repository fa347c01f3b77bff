// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Which steps a mean step time covers. One rule for `exposure-cli stats`, `exposure-cli compare` and the GUI's
// Compare Runs: a rank's first step is a *start-up* step, left out of the means, when it lasts more than
// kStartupFactor times the median of the rank's later steps; then the same test is applied to the next step, and so
// on (process start-up, NCCL initialisation, autotuning and the first compilations can take several steps). At least
// one step always remains.
#include "analysis/steps.h"
#include "model/timerange.h"

#include <cstddef>
#include <string>
#include <vector>

namespace exposure {

inline constexpr int kStartupFactor = 3;

struct StepMean
{
    std::vector<std::size_t> used; // indexes into the given steps, in order
    std::vector<std::size_t> startup; // the leading steps left out as start-up (or skipped on request)
    bool skippedOnRequest = false; // the leading steps were given by a fixed count, not by the rule
    TimeNs meanNs = 0; // mean step-window length over `used`; 0 without steps

    // "steps 1–14 (step 0 left out: start-up, 8.2 s)", "steps 0–5", "step 3"; "" without steps. Steps are named by
    // StepWindow::index.
    std::string describe(const std::vector<StepWindow>& steps) const;
};

// The mean over `candidates` (indexes into `steps`, in time order; e.g. the steps inside a report window) by the
// start-up rule above.
StepMean stepMean(const std::vector<StepWindow>& steps, const std::vector<std::size_t>& candidates);
// The same over all of `steps`.
StepMean stepMean(const std::vector<StepWindow>& steps);
// Instead of the rule, leave out exactly the first `skip` candidates (as long as one remains).
StepMean stepMeanSkipping(const std::vector<StepWindow>& steps, const std::vector<std::size_t>& candidates, int skip);

} // namespace exposure
