// SPDX-License-Identifier: GPL-3.0-or-later
// bench_whatif: what `exposure-cli whatif` costs next to `exposure-cli stats` on the same trace.
//   An 8-rank demo DDP trace (scale 160: about 10 M OTF2 events, the size bench_mpi uses) is written once; then, in
//   this process, the work of each command after loading: stats = analyze() + the JSON report; whatif =
//   analyze() + matching, graph, unedited replay, anchors + an edited replay with critical paths. Loading is
//   measured once and added to both (both commands load the same way). Not run by CTest.
//   bench_whatif [--scale S] [--ranks N] [--keep DIR]
#include "analysis/analysis.h"
#include "report/statsreport.h"
#include "run/openrun.h"
#include "synth/archivewriter.h"
#include "whatif/whatif.h"

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

} // namespace

int main(int argc, char** argv)
{
    int scale = 160, ranks = 8;
    std::string keep;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--scale") && i + 1 < argc)
            scale = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--ranks") && i + 1 < argc)
            ranks = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--keep") && i + 1 < argc)
            keep = argv[++i];
        else {
            std::fprintf(stderr, "usage: bench_whatif [--scale S] [--ranks N] [--keep DIR]\n");
            return 2;
        }
    }
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
