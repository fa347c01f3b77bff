// SPDX-License-Identifier: GPL-3.0-or-later
// openRun(): the one path from what the user opened to an analysed trace. Every front end (the CLI commands, the
// GUI loader, Compare Runs, exposure-mpi) calls it; importers only import.
//
// The stages, in order (RunStage):
//   detect       which input kind holds `path` and its files (inputkinds.h: OTF2, torch.profiler, ...)
//   ranks        the rank subset of LoadOptions::ranks (kinds that number ranks by folder)
//   estimate     the memory the events need, checked against the budget (TraceTooLarge); caps the address space
//   import       the kind's importer reads the events into a Trace
//   consistency  per-lane checks, then (for a whole run) the cross-rank alignment check
//   align        cross-host clock alignment (RunOptions::clock): shifts ranks' times by the collective matching
//                and re-analyses where an offset is significant (analysis/clockalign.h)
//   analyse      analyze() with RunOptions::rules
//   view index   ViewIndex::build (the GUI)
//   collectives  matchCollectives (the GUI)
// detect .. consistency run on a watched thread: when reading stops making progress for stallSeconds, openRun
// throws LoadStalled and leaves the stuck thread behind (libotf2 can loop forever on damaged data).
//
// Errors: LoadError ("<file>: <problem>"; TraceTooLarge and LoadStalled are LoadErrors) for anything wrong with the
// input, LoadCancelled when LoadOptions::cancel was set. Nothing else escapes.
#pragma once

#include "analysis/analysis.h"
#include "analysis/clockalign.h"
#include "analysis/collectives.h"
#include "analysis/rules.h"
#include "import/archivefinder.h"
#include "import/loadoptions.h"
#include "model/trace.h"
#include "view/viewindex.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace exposure {

enum class RunStage : std::uint8_t {
    Detect,
    Ranks,
    Estimate,
    Import,
    Consistency,
    Align,
    Analyse,
    ViewIndex,
    Collectives
};

// Reading made no progress for RunOptions::stallSeconds. The reading thread cannot be stopped from outside: it is
// left behind (a command-line program should end with _Exit; the GUI goes on without it).
class LoadStalled : public LoadError
{
public:
    using LoadError::LoadError;
};

struct RunOptions
{
    // Progress, cancel, reader threads, launch parameters, memory limit, rank subset (see import/loadoptions.h).
    LoadOptions load;
    // The classification the analysis uses.
    Rules rules = Rules::defaults();
    // The stages after the import (each needs the one before).
    bool analyse = true;
    // Stage "align": put the ranks' clocks on one time base (Aligned) or keep them as recorded.
    ClockMode clock = ClockMode::Aligned;
    bool viewIndex = false;
    bool collectives = false;
    // Stall watchdog: seconds without progress in the reading stages before LoadStalled; 0 = not watched.
    int stallSeconds = 15;
    // While reading, cap the address space at what the process has plus twice the estimate plus 1 GiB, so that
    // damaged data that makes a library allocate without end fails with a message instead of swapping the machine
    // until the process is killed. The limits the process had are restored before the analysis.
    bool capAddressSpace = true;
    // Part of a run (a process of exposure-mpi): read only these archives of `path`, in this order, without the
    // rank subset and the cross-rank checks, which need every rank. laneWarningsPerRank (if given) gets how many of
    // the trace's last warnings the lane check added for each rank.
    const std::vector<ArchiveRef>* part = nullptr;
    std::vector<std::size_t>* laneWarningsPerRank = nullptr;
    // Called (on the thread that runs the stage) as each stage begins.
    std::function<void(RunStage)> stageStarted;
    // For tests: replaces the reading stages (detect .. consistency), e.g. by a generated or a slow trace.
    std::function<std::shared_ptr<Trace>(const std::string& path, const LoadOptions& options)> read;
};

// What openRun computed; the members after `trace` are null for stages not asked for.
struct OpenedRun
{
    std::shared_ptr<Trace> trace;
    std::shared_ptr<const Analysis> analysis;
    std::shared_ptr<const ViewIndex> viewIndex;
    std::shared_ptr<const CollectiveMatch> collectives;
};

// Reads `path` (an OTF2 anchor or archive folder, a folder of per-rank archives, a torch.profiler file or a folder
// of them, ...) and runs the stages `options` asks for. Throws LoadError (incl. TraceTooLarge, LoadStalled) or
// LoadCancelled.
OpenedRun openRun(const std::string& path, const RunOptions& options = {});

// openRun for the command-line front ends (exposure-cli, exposure-mpi), with their one mapping of its errors:
// nullopt, with `error` set to the one line to report ("<file>: <problem>", for a cancel too). A stalled read is
// such an error as well; `stalled` (if given) says that it was one, whose reading thread is left behind and cannot be
// stopped (a program that wants to end should _Exit).
std::optional<OpenedRun> openRunOrError(
    const std::string& path, const RunOptions& options, std::string& error, bool* stalled = nullptr);

// The reading stages alone (detect .. consistency), unwatched, in the calling thread: openRun(path) without the
// analysis, for tests and tools that want just the Trace.
std::shared_ptr<Trace> loadTrace(const std::string& path, const LoadOptions& options = {});

// The rank numbers a path offers for LoadOptions::ranks (as `info` lists them); empty when its input kind does not
// number ranks by folder or the path cannot be read.
std::vector<int> selectableRanks(const std::string& path);

} // namespace exposure
