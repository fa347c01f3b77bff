// SPDX-License-Identifier: GPL-3.0-or-later
// bench_whatif: what `exposure-cli whatif` costs next to `exposure-cli stats` on the same trace.
//   An 8-rank demo DDP trace (scale 160: about 10 M OTF2 events, the size bench_mpi uses) is written once; then, in
//   this process, the work of each command after loading: stats = analyze() + the JSON report; whatif =
//   analyze() + matching, graph, unedited replay, anchors + an edited replay with critical paths. Loading is
//   measured once and added to both (both commands load the same way). Not run by CTest.
//   bench_whatif [--scale S] [--ranks N] [--keep DIR]
//
// With --pipeline DPxPP: `whatif --even` (the straggler what-if with its attribution) next to `stats` on a generated
// Megatron-LM timeline of DP x PP workers (support/pipelinejob.h: 1F1B, --microbatches M, --steps N, one worker 1.5x
// slower, +-5 % jitter), both loaded here the way the commands load (openRun, the collectives matched); and the
// attribution's replays in full (the reference) against the incremental ones in the same run.
//   bench_whatif --pipeline 8x8 [--microbatches M] [--steps N] [--keep DIR]
#include "analysis/analysis.h"
#include "report/statsreport.h"
#include "run/openrun.h"
#include "support/pipelinejob.h"
#include "synth/archivewriter.h"
#include "whatif/whatif.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>

using namespace exposure;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// One timed call: its seconds (the best of `repeat`) and its result.
template <typename Fn> double timed(int repeat, Fn&& fn)
{
    double best = 1e300;
    for (int k = 0; k < repeat; ++k) {
        const auto t0 = Clock::now();
        fn();
        best = std::min(best, secondsSince(t0));
    }
    return best;
}

int pipelineBench(int dp, int pp, int microbatches, int steps, const std::string& keep)
{
    const auto dir = keep.empty()
        ? std::filesystem::temp_directory_path() / ("exposure-bench-even-" + std::to_string(::getpid()))
        : std::filesystem::path(keep);
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "timeline.json").string();
    if (!std::filesystem::exists(path)) {
        testing::PipelineJob job;
        job.dp = dp;
        job.pp = pp;
        job.microbatches = microbatches;
        job.steps = steps;
        job.oneFOneB = true;
        job.compute = [](int d, int p, int step, int mb, bool backward) {
            const std::uint32_t x = std::uint32_t(d * 7919 + p * 104729 + step * 1299709 + mb * 15485863 + backward);
            const double jitter = 0.95 + double((x * 2654435761u) % 1001) / 10000.0;
            return TimeNs((backward ? 2'000'000 : 1'000'000) * jitter * (d == 1 && p == 2 ? 1.5 : 1.0));
        };
        const QByteArray json = testing::pipelineTimeline(job, testing::simulate(job));
        std::FILE* f = std::fopen(path.c_str(), "wb");
        if (!f || std::fwrite(json.constData(), 1, std::size_t(json.size()), f) != std::size_t(json.size()))
            return std::fprintf(stderr, "cannot write %s\n", path.c_str()), 1;
        std::fclose(f);
    }
    RunOptions options;
    options.collectives = true;
    std::string statsOut, evenOut;
    const double stats = timed(3, [&] {
        const OpenedRun run = openRun(path, options);
        StatsReportOptions o;
        o.window = activityRange(*run.trace);
        statsOut = statsJson(*run.trace, *run.analysis, o);
    });
    whatif::EvenResult result;
    const double even = timed(3, [&] {
        const OpenedRun run = openRun(path, options);
        const whatif::WhatIfModel model(run.trace, run.analysis, run.collectives);
        result = model.even();
        evenOut = whatif::evenJson(result);
    });
    const OpenedRun run = openRun(path, options);
    const whatif::WhatIfModel model(run.trace, run.analysis, run.collectives);
    whatif::EvenOptions o;
    const double incremental = timed(3, [&] { model.even(o); });
    o.incremental = false;
    const double full = timed(3, [&] { model.even(o); });
    o.threads = 1;
    const double full1 = timed(2, [&] { model.even(o); });
    o.incremental = true;
    const double incremental1 = timed(2, [&] { model.even(o); });
    const double one = timed(3, [&] { whatif::replay(model.graph(), whatif::recordedPlan(model.graph())); });

    std::printf("timeline: DP %d x PP %d = %d workers, %d microbatches, %d steps (1F1B); %zu intervals; graph %zu "
                "nodes; %zu replays (%llu of %llu events recomputed incrementally)\n",
        dp, pp, dp * pp, microbatches, steps, run.trace->intervalCount(), model.graph().nodeCount(), result.replays,
        static_cast<unsigned long long>(result.replayedEvents),
        static_cast<unsigned long long>((result.replays - 2) * result.graphEvents));
    std::printf("%-60s %10s\n", "part (best of 2-3, wall clock)", "seconds");
    std::printf("%-60s %10.3f\n", "stats: openRun + JSON report", stats);
    std::printf("%-60s %10.3f\n", "whatif --even: openRun + model + even() + JSON", even);
    std::printf("%-60s %10.3fx\n", "whatif --even / stats", even / stats);
    std::printf("%-60s %10.3f\n", "even(), attribution replays in full, every core", full);
    std::printf("%-60s %10.3f\n", "even(), attribution replays incremental, every core", incremental);
    std::printf("%-60s %10.3f\n", "even(), attribution replays in full, 1 thread", full1);
    std::printf("%-60s %10.3f\n", "even(), attribution replays incremental, 1 thread", incremental1);
    std::printf("%-60s %10.3f\n", "  (alone: one full replay)", one);
    std::printf("(stats %zu bytes, whatif --even %zu bytes)\n", statsOut.size(), evenOut.size());
    if (keep.empty())
        std::filesystem::remove_all(dir);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    int scale = 160, ranks = 8, dp = 0, pp = 0, microbatches = 8, steps = 4;
    std::string keep;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--scale") && i + 1 < argc)
            scale = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--ranks") && i + 1 < argc)
            ranks = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--keep") && i + 1 < argc)
            keep = argv[++i];
        else if (!std::strcmp(argv[i], "--pipeline") && i + 1 < argc && std::sscanf(argv[++i], "%dx%d", &dp, &pp) == 2
            && dp > 0 && pp > 0)
            continue;
        else if (!std::strcmp(argv[i], "--microbatches") && i + 1 < argc)
            microbatches = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr,
                "usage: bench_whatif [--scale S] [--ranks N] [--keep DIR]\n"
                "       bench_whatif --pipeline DPxPP [--microbatches M] [--steps N] [--keep DIR]\n");
            return 2;
        }
    }
    if (dp > 0)
        return pipelineBench(dp, pp, microbatches, steps, keep);
    const auto dir = keep.empty()
        ? std::filesystem::temp_directory_path() / ("exposure-bench-whatif-" + std::to_string(::getpid()))
        : std::filesystem::path(keep);
    if (!std::filesystem::exists(dir / "rank0")) {
        synth::DemoOptions o;
        o.ranks = ranks;
        o.scale = scale;
        synth::writeArchive(dir.string(), synth::makeDemoSpec(o));
    }

    auto t0 = Clock::now();
    const std::shared_ptr<const Trace> trace = loadTrace(dir.string());
    const double load = secondsSince(t0);

    t0 = Clock::now();
    auto analysis = analyze(*trace, Rules::defaults());
    StatsReportOptions options;
    options.window = trace->extent;
    const std::string stats = statsJson(*trace, *analysis, options);
    const double statsWork = secondsSince(t0);

    t0 = Clock::now();
    analysis = analyze(*trace, Rules::defaults());
    const double analyzeSeconds = secondsSince(t0);
    t0 = Clock::now();
    const whatif::WhatIfModel model(trace, analysis);
    const double modelSeconds = secondsSince(t0);
    t0 = Clock::now();
    whatif::Edits edits;
    edits.comm = whatif::Edits::Comm::Hidden;
    const whatif::WhatIfResult result = model.evaluate(edits);
    const std::string out = whatif::whatIfJson(result, edits);
    const double evaluateSeconds = secondsSince(t0);
    const double whatifWork = analyzeSeconds + modelSeconds + evaluateSeconds;

    // The model's parts on their own (not part of the ratios).
    t0 = Clock::now();
    const CollectiveMatch match = matchCollectives(*trace, *analysis);
    const double matchSeconds = secondsSince(t0);
    t0 = Clock::now();
    const whatif::Graph graph = whatif::buildGraph(*trace, *analysis, match);
    const double graphSeconds = secondsSince(t0);
    t0 = Clock::now();
    const whatif::Replay recorded = whatif::replay(graph, whatif::recordedPlan(graph));
    const double replaySeconds = secondsSince(t0);

    std::printf("trace: %d ranks, scale %d, %llu events, %zu intervals; graph %zu nodes, %zu edges, %zu groups\n",
        ranks, scale, static_cast<unsigned long long>(trace->eventCount), trace->intervalCount(), result.nodes,
        result.edges, result.groups);
    std::printf("%-52s %10s\n", "part", "seconds");
    std::printf("%-52s %10.3f\n", "loadTrace (both commands)", load);
    std::printf("%-52s %10.3f\n", "stats: analyze + JSON report", statsWork);
    std::printf("%-52s %10.3f\n", "whatif: analyze", analyzeSeconds);
    std::printf("%-52s %10.3f\n", "whatif: matching, graph, unedited replay", modelSeconds);
    std::printf("%-52s %10.3f\n", "whatif: edited replay, critical paths, JSON", evaluateSeconds);
    std::printf("%-52s %10.3f\n", "  (alone: cross-rank matching)", matchSeconds);
    std::printf("%-52s %10.3f\n", "  (alone: buildGraph)", graphSeconds);
    std::printf("%-52s %10.3f  (%zu events)\n", "  (alone: one replay)", replaySeconds, recorded.time.size());
    std::printf("%-52s %10.3fx\n", "whatif / stats, after loading", whatifWork / statsWork);
    std::printf(
        "%-52s %10.3fx\n", "whatif / stats, whole command (load included)", (load + whatifWork) / (load + statsWork));
    std::printf("(stats %zu bytes, whatif %zu bytes)\n", stats.size(), out.size());
    if (keep.empty())
        std::filesystem::remove_all(dir);
    return 0;
}
