// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/openrun.h"

#include "import/consistency.h"
#include "import/memorybudget.h"
#include "model/stagetimings.h"
#include "run/inputkinds.h"
#include "run/jobcheck.h"
#include "run/watchedread.h"

#include <algorithm>
#include <atomic>

namespace exposure {

namespace {

void throwIfCancelled(const LoadOptions& options)
{
    if (options.cancel && options.cancel->load(std::memory_order_relaxed))
        throw LoadCancelled();
}

// Stage "ranks": only the ranks asked for, where the input kind numbers ranks by folder.
void chooseRanks(RunInput& input, const std::vector<int>& ranks)
{
    if (ranks.empty())
        return;
    if (!input.kind->ranksByFolder)
        throw LoadError(input.path,
            "choosing ranks (--ranks " + formatRankList(ranks) + ") works for folders of OTF2 archives; open the "
                + input.kind->name + " file of each rank you want instead");
    input.archives = selectRanks(input.path, std::move(input.archives), ranks);
}

// Which region names mark idle time or a synchronisation (LoadOptions::markerKind), as the rules say: a name whose
// class (the first rule of a GPU category that matches it) is of the "idle" category, a synchronisation where the
// rule's sub-group is "sync".
RegionKind markerByRules(const Rules& rules, std::string_view name)
{
    const NameClass nc = rules.classify(name, RegionKind::Kernel);
    if (nc.category != Category::Idle || nc.rule < 0)
        return RegionKind::Unknown;
    return nc.subgroup == "sync" ? RegionKind::Sync : RegionKind::Idle;
}

// The previews of a progressive load (LoadOptions::preview) hold copies of the ranks read so far, and their analysis
// and view index: counted as this many times the estimate, they are made only where that fits.
constexpr std::uint64_t kPreviewMemoryFactor = 3;

// Stage "estimate": refuse before reading what cannot fit; the watch caps the address space from the estimate (with
// the previews' share where they are on). Previews are switched on here (`previewsOn`) when their copies fit too.
void checkEstimate(InputReader& reader, const std::string& path, const LoadOptions& options,
    const std::shared_ptr<std::atomic<bool>>& previewsOn)
{
    const MemoryNeed need = reader.estimate();
    checkMemory(path, need.bytes, need.what, options);
    const bool previews = previewsOn && need.bytes * kPreviewMemoryFactor <= availableMemory(options.memoryLimit).bytes;
    if (previews)
        previewsOn->store(true);
    if (options.memoryEstimated)
        options.memoryEstimated(previews ? need.bytes * kPreviewMemoryFactor : need.bytes);
}

// The reading stages, detect .. consistency.
std::shared_ptr<Trace> readStages(const std::string& path, const RunOptions& run, const LoadOptions& options,
    const std::function<void(RunStage)>& stage)
{
    auto trace = std::make_shared<Trace>();
    trace->sourcePath = path;
    stage(RunStage::Detect);
    stageTiming("detect");
    RunInput input;
    if (run.part) {
        input.kind = &otf2InputKind();
        input.path = path;
        input.archives = *run.part;
        if (input.archives.empty()) { // this process of the run reads nothing
            trace->finalize(true);
            if (run.laneWarningsPerRank)
                run.laneWarningsPerRank->clear();
            return trace;
        }
    } else {
        input = detectInput(path);
        stage(RunStage::Ranks);
        chooseRanks(input, options.ranks);
    }
    throwIfCancelled(options);
    LoadOptions load = options;
    if (load.chromeMapping.empty())
        load.chromeMapping = run.rules.chromeMapping(); // a rules file's mapping of Chrome traces' threads
    if (!load.markerKind)
        load.markerKind = [&rules = run.rules](std::string_view name) { return markerByRules(rules, name); };
    std::shared_ptr<std::atomic<bool>> previewsOn;
    if (load.preview && load.previewDue && !run.part) { // off until the estimate says they fit
        previewsOn = std::make_shared<std::atomic<bool>>(false);
        load.previewDue = [previewsOn, due = std::move(load.previewDue)](
                              std::size_t read, std::size_t total) { return previewsOn->load() && due(read, total); };
    } else {
        load.preview = nullptr;
        load.previewDue = nullptr;
    }
    const auto reader = input.kind->open(*trace, input, load);
    stage(RunStage::Estimate);
    stageTiming("estimate");
    checkEstimate(*reader, path, load, previewsOn);
    stage(RunStage::Import);
    stageTiming("import");
    reader->read();
    stage(RunStage::Consistency);
    stageTiming("consistency");
    const ConsistencyReport lanes = checkLaneConsistency(*trace, run.laneWarningsPerRank, load.threads);
    if (!run.part) { // both need every rank of the run, and its spans on the recorded clocks
        checkRankAlignment(*trace, &lanes.rankSpans);
        checkJobs(*trace, &lanes.rankSpans);
    }
    return trace;
}

// Stage "align": cross-host clock alignment (analysis/clockalign.h). Shifts each rank's times onto the reference
// rank's clock by the collective matching and analyses again where an offset is significant; the view index and the
// collective matching after it then see the aligned trace. A part of a run (exposure-mpi) has not every member of
// its collectives: it keeps its recorded clocks.
std::shared_ptr<const CollectiveMatch> alignStage(OpenedRun& run, const RunOptions& options)
{
    if (options.part)
        return nullptr;
    AlignedRun aligned = alignClocks(*run.trace, run.analysis, options.clock);
    run.analysis = std::move(aligned.analysis);
    if (run.trace->clocks.applied) {
        // The consistency stage's "overlaps no other rank" warnings were about the recorded clocks: checked again.
        Trace& trace = *run.trace;
        for (const Rank& rank : trace.ranks) {
            const std::string stale
                = unalignedRankWarning(rank.archivePath.empty() ? trace.sourcePath : rank.archivePath, rank.label);
            trace.warnings.erase(
                std::remove(trace.warnings.begin(), trace.warnings.end(), stale), trace.warnings.end());
        }
        checkRankAlignment(trace);
    }
    return std::move(aligned.collectives);
}

// The stages after reading, in the calling thread (under the limits the process had).
void analyseStages(OpenedRun& run, const RunOptions& options)
{
    auto stage = [&](RunStage s) {
        throwIfCancelled(options.load);
        if (options.stageStarted)
            options.stageStarted(s);
    };
    if (!options.analyse)
        return;
    stage(RunStage::Analyse);
    stageTiming("analyse");
    run.analysis = analyze(*run.trace, options.rules);
    stage(RunStage::Align);
    stageTiming("align");
    auto matched = alignStage(run, options);
    if (options.viewIndex) {
        stage(RunStage::ViewIndex);
        stageTiming("view index");
        run.viewIndex = ViewIndex::build(*run.trace, run.analysis.get(), options.load.threads);
    }
    if (options.collectives) {
        stage(RunStage::Collectives);
        stageTiming("collectives");
        run.collectives = matched
            ? std::move(matched)
            : std::make_shared<const CollectiveMatch>(matchCollectives(*run.trace, *run.analysis));
    }
    throwIfCancelled(options.load);
}

} // namespace

OpenedRun openRun(const std::string& path, const RunOptions& options)
{
    WatchOptions watch;
    watch.stallSeconds = options.stallSeconds;
    watch.capAddressSpace = options.capAddressSpace;
    watch.stageStarted = options.stageStarted;
    OpenedRun run;
    run.trace = readWatched(path, options.load, watch,
        // By value: a reader left behind by the watchdog outlives this call.
        [path, options](const LoadOptions& load, const std::function<void(RunStage)>& stage) {
            if (options.read) {
                auto trace = options.read(path, load);
                if (!trace)
                    throw LoadError(path, "the loader returned no trace");
                return trace;
            }
            return readStages(path, options, load, stage);
        });
    throwIfCancelled(options.load);
    try {
        analyseStages(run, options);
    } catch (const LoadCancelled&) {
        throw;
    } catch (const LoadError&) {
        throw;
    } catch (const std::exception& e) {
        throw LoadError(path, e.what());
    }
    stageTiming("after the run (report)");
    return run;
}

std::optional<OpenedRun> openRunOrError(
    const std::string& path, const RunOptions& options, std::string& error, bool* stalled)
{
    if (stalled)
        *stalled = false;
    try {
        return openRun(path, options);
    } catch (const LoadStalled& e) {
        error = e.what();
        if (stalled)
            *stalled = true;
    } catch (const LoadError& e) {
        error = e.what();
    } catch (const LoadCancelled& e) {
        error = path + ": " + e.what();
    }
    return std::nullopt;
}

std::shared_ptr<Trace> loadTrace(const std::string& path, const LoadOptions& options)
{
    RunOptions run;
    run.load = options;
    run.analyse = false;
    run.stallSeconds = 0;
    run.capAddressSpace = false;
    return openRun(path, run).trace;
}

std::vector<int> selectableRanks(const std::string& path)
{
    try {
        const RunInput input = detectInput(path);
        if (input.kind->ranksByFolder)
            return rankNumbers(input.archives);
    } catch (const LoadError&) { }
    return {};
}

} // namespace exposure
