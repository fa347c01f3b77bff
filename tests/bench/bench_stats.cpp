// SPDX-License-Identifier: GPL-3.0-or-later
// bench_stats: how long the analysis takes next to building / loading the trace it analyses.
//   1. A ~10 M-interval trace built in memory with TraceBuilder (4 ranks; per rank a CPU thread with step,
//      backward and optimizer regions and one cuLaunchKernel per kernel, a compute stream, an NCCL stream).
//   2. The demo DDP trace written as OTF2 archives (fixtures) and read back with loadTrace().
// For each: the time to build/load, analyze(), computeStats for every rank, computeStepStats for every rank
// and kernelTable, with ratios against the build/load time measured in the same run. Not run by CTest.
//   bench_stats [--intervals N] [--demo-scale S]
#include "analysis/analysis.h"
#include "run/openrun.h"
#include "synth/archivewriter.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace exposure;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Row
{
    std::string what;
    double seconds;
};

void printTable(const std::string& title, const std::vector<Row>& rows)
{
    std::printf("\n%s\n", title.c_str());
    std::printf("%-44s %10s %12s\n", "step", "seconds", "vs baseline");
    const double base = rows.front().seconds;
    for (const auto& r : rows)
        std::printf("%-44s %10.3f %11.3fx\n", r.what.c_str(), r.seconds, base > 0 ? r.seconds / base : 0.0);
}

void measureAnalysis(const Trace& trace, std::vector<Row>& rows)
{
    auto t0 = Clock::now();
    const auto a = analyze(trace, Rules::defaults());
    rows.push_back({ "analyze() (classify, phases, steps, ICL map)", secondsSince(t0) });

    t0 = Clock::now();
    TimeNs check = 0;
    for (std::size_t r = 0; r < trace.ranks.size(); ++r)
        check += computeStats(trace, *a, int(r), trace.extent).exposedNs;
    rows.push_back({ "computeStats, every rank, whole trace", secondsSince(t0) });

    t0 = Clock::now();
    const TimeRange mid { trace.extent.start + trace.extent.duration() / 3,
        trace.extent.start + trace.extent.duration() / 3 + trace.extent.duration() / 100 };
    for (std::size_t r = 0; r < trace.ranks.size(); ++r)
        check += computeStats(trace, *a, int(r), mid).exposedNs;
    rows.push_back({ "computeStats, every rank, 1 % window", secondsSince(t0) });

    t0 = Clock::now();
    std::size_t steps = 0;
    for (std::size_t r = 0; r < trace.ranks.size(); ++r)
        steps += computeStepStats(trace, *a, int(r)).size();
    rows.push_back({ "computeStepStats, every rank", secondsSince(t0) });

    t0 = Clock::now();
    const auto table = kernelTable(trace, *a, trace.extent);
    rows.push_back({ "kernelTable, all ranks", secondsSince(t0) });
    std::printf("  (exposed sum %lld ns, %zu steps, %zu kernel names, %zu overlap segments on rank 0)\n",
        static_cast<long long>(check), steps, table.size(), a->ranks.empty() ? 0 : a->ranks[0].overlap.size());
}

std::shared_ptr<Trace> buildTrace(std::size_t targetIntervals)
{
    const int ranks = 4;
    // Per kernel: the kernel and its launch call, plus per step a few regions.
    const std::size_t kernelsPerRank = targetIntervals / ranks / 2;
    const std::size_t kernelsPerStep = 2000;
    std::vector<std::string> computeNames;
    for (int i = 0; i < 150; ++i)
        computeNames.push_back("at::native::vectorized_elementwise_kernel<" + std::to_string(i) + ", Functor>");
    for (int i = 0; i < 40; ++i)
        computeNames.push_back("nvjet_sm90_tst_" + std::to_string(i) + "_h_bz_NNT");
    for (int i = 0; i < 10; ++i)
        computeNames.push_back("custom_kernel_" + std::to_string(i));
    const std::string nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    const std::string adam = "multi_tensor_apply_kernel<FusedAdamMathFunctor>";

    TraceBuilder b;
    for (int r = 0; r < ranks; ++r) {
        b.addRank("Rank " + std::to_string(r), "node0", r, r);
        const int cpu = b.addLane(r, "Master thread", LaneKind::CpuThread);
        const int s7 = b.addLane(r, "CUDA[" + std::to_string(r) + ":7]", LaneKind::GpuStream, r, 7);
        const int s17 = b.addLane(r, "CUDA[" + std::to_string(r) + ":17]", LaneKind::GpuStream, r, 17);
        b.trace().ranks[std::size_t(r)].lanes[std::size_t(cpu)].intervals.reserve(kernelsPerRank + 64);
        TimeNs cpuT = 0, gpuT = 1000;
        std::size_t k = 0;
        for (int step = 0; k < kernelsPerRank; ++step) {
            const TimeNs stepStart = cpuT;
            const std::size_t n = std::min(kernelsPerStep, kernelsPerRank - k);
            const std::size_t fwd = n * 4 / 10, bwd = n * 9 / 10;
            TimeNs phaseStart = cpuT;
            for (std::size_t i = 0; i < n; ++i, ++k) {
                if (i == fwd || i == bwd)
                    phaseStart = cpuT;
                const auto launch = b.addInterval(r, cpu, cpuT + 1, cpuT + 4, "cuLaunchKernel", RegionKind::HostApi, 2);
                const bool isNccl = i > fwd && i < bwd && i % 20 == 0;
                const int lane = isNccl ? s17 : s7;
                b.addLaunch(r, lane, cpu, launch);
                cpuT += 5;
                gpuT = std::max(gpuT, cpuT + 50);
                if (isNccl) {
                    b.addInterval(r, s17, gpuT, gpuT + 40, nccl, RegionKind::Kernel);
                } else {
                    const std::string& name
                        = i >= bwd ? adam : computeNames[(i * 7 + std::size_t(step)) % computeNames.size()];
                    b.addInterval(r, s7, gpuT, gpuT + 6, name, RegionKind::Kernel);
                    gpuT += 8;
                }
                if (i + 1 == fwd)
                    b.addInterval(r, cpu, phaseStart, cpuT, "nn.Module: Model", RegionKind::HostRegion, 1);
                else if (i + 1 == bwd)
                    b.addInterval(r, cpu, phaseStart, cpuT, "autograd::engine::evaluate_function: AddmmBackward0",
                        RegionKind::HostRegion, 1);
                else if (i + 1 == n)
                    b.addInterval(r, cpu, phaseStart, cpuT, "Optimizer.step#AdamW.step", RegionKind::HostRegion, 1);
            }
            // Added last because its end is only known now; finish() sorts every lane.
            b.addInterval(r, cpu, stepStart, cpuT, "ProfilerStep#" + std::to_string(step), RegionKind::HostRegion, 0);
        }
    }
    return b.finish();
}

} // namespace

int main(int argc, char** argv)
{
    std::size_t intervals = 10'000'000;
    int demoScale = 40;
    for (int i = 1; i + 1 < argc; ++i) {
        if (!std::strcmp(argv[i], "--intervals"))
            intervals = std::size_t(std::atoll(argv[++i]));
        else if (!std::strcmp(argv[i], "--demo-scale"))
            demoScale = std::atoi(argv[++i]);
    }

    {
        std::vector<Row> rows;
        auto t0 = Clock::now();
        const auto trace = buildTrace(intervals);
        rows.push_back({ "baseline: build with TraceBuilder + finish()", secondsSince(t0) });
        measureAnalysis(*trace, rows);
        printTable("In-memory DDP-like trace, " + std::to_string(trace->intervalCount()) + " intervals", rows);
    }

    {
        // Classification runs once per distinct name; this is its cost per name, next to interning the names.
        std::vector<std::string> names;
        for (int i = 0; i < 100'000; ++i)
            names.push_back("void at::native::kernel_" + std::to_string(i) + "<float, 4>(float*, int)");
        std::vector<Row> rows;
        auto t0 = Clock::now();
        StringPool pool;
        for (const auto& n : names)
            pool.intern(n);
        rows.push_back({ "baseline: intern 100k distinct names", secondsSince(t0) });
        const Rules rules = Rules::defaults();
        t0 = Clock::now();
        std::size_t unclassified = 0;
        for (const auto& n : names)
            unclassified += rules.classify(n, RegionKind::Kernel).unclassified ? 1 : 0;
        rows.push_back({ "classify them (all rules tried: worst case)", secondsSince(t0) });
        printTable("Name classification, 100000 names (" + std::to_string(unclassified) + " unclassified)", rows);
    }

    if (demoScale > 0) {
        const auto dir
            = std::filesystem::temp_directory_path() / ("exposure-bench-stats-" + std::to_string(::getpid()));
        synth::DemoOptions o;
        o.ranks = 2;
        o.steps = 6;
        o.scale = demoScale;
        auto t0 = Clock::now();
        synth::writeArchive(dir.string(), synth::makeDemoSpec(o));
        const double writeSeconds = secondsSince(t0);
        std::vector<Row> rows;
        t0 = Clock::now();
        const auto trace = loadTrace(dir.string());
        rows.push_back({ "baseline: loadTrace() of the OTF2 archives", secondsSince(t0) });
        measureAnalysis(*trace, rows);
        printTable("Demo DDP trace, scale " + std::to_string(demoScale) + ", " + std::to_string(trace->eventCount)
                + " OTF2 events, " + std::to_string(trace->intervalCount()) + " intervals (written in "
                + std::to_string(writeSeconds).substr(0, 5) + " s)",
            rows);
        std::filesystem::remove_all(dir);
    }
    return 0;
}
