// SPDX-License-Identifier: GPL-3.0-or-later
// The reading stages of openRun on a thread of their own, watched for stalls, under a capped address space.
#pragma once

#include "import/loadoptions.h"
#include "model/trace.h"
#include "run/openrun.h"

#include <functional>
#include <memory>
#include <string>

namespace exposure {

struct WatchOptions
{
    // Seconds without progress (events or bytes read, a new file, a new stage) before LoadStalled; 0 = not watched
    // (`read` then runs in the calling thread).
    int stallSeconds = 15;
    // Cap the address space once LoadOptions::memoryEstimated reports the estimate (see RunOptions), until `read`
    // returns.
    bool capAddressSpace = true;
    std::function<void(RunStage)> stageStarted;
};

// Runs read(options', stage) where options' is `options` with progress, cancel and memoryEstimated routed through the
// watch, and stage(s) reports that stage s begins (it counts as progress and calls WatchOptions::stageStarted). Maps
// std::bad_alloc and any other std::exception to LoadError (naming the file being read), passes LoadError and
// LoadCancelled on. When `read` stalls, throws LoadStalled and leaves its thread behind: from then on it calls none of
// `options`' callbacks.
std::shared_ptr<Trace> readWatched(const std::string& path, const LoadOptions& options, const WatchOptions& watch,
    const std::function<std::shared_ptr<Trace>(const LoadOptions&, const std::function<void(RunStage)>& stage)>& read);

} // namespace exposure
