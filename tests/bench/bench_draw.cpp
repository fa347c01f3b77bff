// SPDX-License-Identifier: GPL-3.0-or-later
// Draw-list build time of a zoomed-out 10-million-kernel lane at 1920 px, against baselines measured
// in the same run: one linear pass over the lane's durations, and the builder without its LOD index.
// Then the whole TimelinePlot (offscreen raster, 1920x1080) replotting a zoomed-out 2-rank trace of
// that many kernels, which is what a user waits for. Last, the first frame of a 512-rank trace with every rank's rows
// (a window of them scrolls) against the same trace with its ranks in collapsed groups (64 group rows, each summing
// the overlap rows of its 8 ranks). Not run by CTest.
// Usage: QT_QPA_PLATFORM=offscreen bench_draw [kernels] (default 10 000 000)
#include "analysis/analysis.h"
#include "benchutil.h"
#include "timeline/timelineplot.h"
#include "timeline/timelineplottable.h"
#include "view/drawlist.h"
#include "view/rankgroups.h"
#include "view/shareindex.h"
#include "view/viewindex.h"

#include <QApplication>
#include <QPixmap>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

using namespace exposure;
using Clock = std::chrono::steady_clock;

namespace {

using bench::bestOfMs;

// 512 ranks, 4 steps of 10 ms: rank r computes 60 kernels of 100 us + r x 5 ns each, then an all-reduce until all
// ranks are done (the later a rank, the less it communicates exposed).
void manyRanks(int ranks)
{
    TraceBuilder b;
    for (int r = 0; r < ranks; ++r) {
        const int rank = b.addRank("Rank " + std::to_string(r), "node" + std::to_string(r / 8), r % 8, r);
        const int compute = b.addLane(rank, "CUDA[0:7]", LaneKind::GpuStream, r % 8, 7);
        const int nccl = b.addLane(rank, "CUDA[0:17]", LaneKind::GpuStream, r % 8, 17);
        for (int s = 0; s < 4; ++s) {
            const TimeNs t0 = s * 10'000'000LL;
            TimeNs t = t0;
            for (int k = 0; k < 60; ++k, t += 100'000 + r * 5 + 1'000)
                b.addInterval(rank, compute, t, t + 100'000 + r * 5, "ampere_sgemm_128x64_nn", RegionKind::Kernel);
            b.addInterval(rank, nccl, t, t0 + 6'060'000 + 60 * 5 * ranks + 1'000'000,
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL", RegionKind::Kernel);
        }
    }
    auto trace = b.finish();
    auto analysis = analyze(*trace, Rules::defaults());
    auto index = ViewIndex::build(*trace, analysis.get());
    auto frame = [&](RankGrouping grouping) {
        TimelinePlot plot;
        TimelineOptions o;
        o.grouping = grouping;
        plot.setOptions(o);
        plot.resize(1920, 1080);
        plot.setTrace(trace, analysis, index);
        plot.setAllGroupsCollapsed(true);
        plot.replot();
        const double ms = bestOfMs(5, [&] {
            plot.plottable()->invalidate();
            (void)plot.toPixmap(1920, 1080);
        });
        return std::make_pair(ms, plot.rows().size());
    };
    const auto [every, everyRows] = frame(RankGrouping::None);
    const auto [grouped, groupRows] = frame(RankGrouping::Blocks);
    // The group columns alone: every group's state time in 1 900 columns.
    const auto groups = groupRanks(*trace, RankGrouping::Blocks);
    ColumnGrid grid;
    grid.nsPerPixel = double(trace->extent.duration()) / 1900;
    grid.width = 1900;
    std::vector<TimeNs> cols;
    const double columnsOnly = bestOfMs(5, [&] {
        for (const RankGroup& g : groups) {
            std::vector<GroupMember> members;
            for (int r : g.ranks)
                members.push_back({ &index->overlap[std::size_t(r)], &index->overlapShares[std::size_t(r)] });
            groupStateColumns(members, grid, trace->extent, cols);
        }
    });
    std::printf("\n%d ranks x 2 GPU streams (%zu intervals), first frame at 1920x1080 offscreen, best of 5:\n", ranks,
        trace->intervalCount());
    std::printf(
        "%-56s %10.2f ms %5zu rows  1.00x\n", "every rank's rows (baseline; the rows in view drawn)", every, everyRows);
    std::printf("%-56s %10.2f ms %5zu rows  %.2fx\n", "collapsed groups of 8 (all 512 ranks summed)", grouped,
        groupRows, grouped / every);
    std::printf("%-56s %10.2f ms %5s       %.2fx\n", "  of which: the group columns (groupStateColumns)", columnsOnly,
        "", columnsOnly / every);
}

struct KernelLane
{
    IntervalTable t;
    TimeNs end = 0; // after the last gap
};

// `n` kernels of 2–400 µs (300 names) with gaps of 0.5–8 µs, and a pause of `pauseNs` after every `burst` kernels.
KernelLane kernelLane(std::size_t n, std::mt19937_64& rng, std::size_t burst, TimeNs pauseNs)
{
    std::uniform_int_distribution<int> dur(2'000, 400'000), gap(500, 8'000);
    KernelLane lane;
    lane.t.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const TimeNs d = dur(rng);
        lane.t.append(lane.end, lane.end + d, StringId(i % 300));
        lane.end += d + (i % burst == burst - 1 ? pauseNs : gap(rng));
    }
    return lane;
}

} // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
    // A DDP-like compute stream: kernels of 2–400 µs with short gaps, and a pause every 500 kernels.
    std::mt19937_64 rng(42);
    KernelLane lane = kernelLane(n, rng, 500, 3'000'000);
    const IntervalTable& t = lane.t;
    const TimeNs now = lane.end;
    const auto lodStart = Clock::now();
    const LodIndex lod(t);
    const double lodBuildMs = std::chrono::duration<double, std::milli>(Clock::now() - lodStart).count();
    // Area-true drawing: the per-class share index (300 names in 3 paint classes, as gemm/attention/elementwise).
    std::vector<std::uint8_t> classOf(300);
    for (std::size_t i = 0; i < classOf.size(); ++i)
        classOf[i] = std::uint8_t(i % 3);
    const auto shareStart = Clock::now();
    const ShareIndex shares(t, &classOf);
    const double shareBuildMs = std::chrono::duration<double, std::milli>(Clock::now() - shareStart).count();

    const int width = 1920;
    std::vector<DrawItem> out;
    volatile TimeNs sink = 0;
    const double linearPass = bestOfMs(3, [&] {
        TimeNs s = 0;
        for (std::size_t i = 0; i < t.size(); ++i)
            s += t.duration(i);
        sink = s;
    });
    std::printf("kernels: %zu, trace span: %.3f s, LOD index: %.1f MB built in %.1f ms\n", n, double(now) / 1e9,
        double(lod.residentBytes()) / 1e6, lodBuildMs);
    std::printf("share index (3 classes): %.2f bytes per interval, built in %.1f ms (%.2fx the linear pass)\n",
        double(shares.residentBytes()) / double(n), shareBuildMs, shareBuildMs / linearPass);
    std::printf("%-48s %10s %8s %10s\n", "case (1920 px)", "ms", "items", "vs linear");
    struct Case
    {
        const char* name;
        TimeNs t0, t1;
    };
    const Case cases[] = {
        { "whole trace", 0, now },
        { "1/10 of the trace", now / 2, now / 2 + now / 10 },
        { "1/1000 of the trace", now / 3, now / 3 + now / 1000 },
        { "20 ms window", now / 4, now / 4 + 20'000'000 },
        { "1/5000 of the trace (~4.5 px per kernel)", now / 5, now / 5 + now / 5000 },
    };
    std::printf("%-48s %10.2f %8s %10.2f\n", "baseline: one linear pass over durations", linearPass, "-", 1.0);
    for (const auto& c : cases) {
        const DrawListParams p { c.t0, c.t1, double(c.t1 - c.t0) / width, 2 };
        const double noLod = bestOfMs(3, [&] { DrawListBuilder::build(t, nullptr, p, out); });
        const std::size_t itemsNoLod = out.size();
        const double withLod = bestOfMs(5, [&] { DrawListBuilder::build(t, &lod, p, out); });
        std::printf("%-48s %10.3f %8zu %10.3f\n", (std::string(c.name) + ", LOD").c_str(), withLod, out.size(),
            withLod / linearPass);
        std::printf("%-48s %10.3f %8zu %10.3f\n", (std::string(c.name) + ", no LOD").c_str(), noLod, itemsNoLod,
            noLod / linearPass);
        std::vector<TimeNs> cols;
        const ColumnGrid grid { c.t0, double(c.t1 - c.t0) / width, width };
        const double columns = bestOfMs(5, [&] { shares.columns(t, grid, cols); });
        std::printf("%-48s %10.3f %8d %10.3f\n", (std::string(c.name) + ", exact shares per column").c_str(), columns,
            width, columns / linearPass);
    }
    // Many separate items at the whole-trace zoom: bursts of 20 000 kernels separated by 10 s pauses
    // (each pause is several pixels wide, so ~500 folds must be found, not one).
    {
        const KernelLane burstLane = kernelLane(n, rng, 20000, 10'000'000'000);
        const IntervalTable& bursts = burstLane.t;
        const TimeNs end = burstLane.end;
        const LodIndex burstLod(bursts);
        const DrawListParams p { 0, end, double(end) / width, 2 };
        const double noLod = bestOfMs(3, [&] { DrawListBuilder::build(bursts, nullptr, p, out); });
        const std::size_t itemsNoLod = out.size();
        const double withLod = bestOfMs(5, [&] { DrawListBuilder::build(bursts, &burstLod, p, out); });
        std::printf(
            "%-48s %10.3f %8zu %10.3f\n", "whole trace, 500 bursts, LOD", withLod, out.size(), withLod / linearPass);
        std::printf(
            "%-48s %10.3f %8zu %10.3f\n", "whole trace, 500 bursts, no LOD", noLod, itemsNoLod, noLod / linearPass);
    }

    // Full timeline: 2 ranks, each a compute stream with n/2 kernels (as kernelLane's) and an NCCL stream.
    {
        std::uniform_int_distribution<int> dur(2'000, 400'000), gap(500, 8'000);
        TraceBuilder b;
        for (int r = 0; r < 2; ++r) {
            const int rank = b.addRank("Rank " + std::to_string(r));
            const int compute = b.addLane(rank, "CUDA[" + std::to_string(r) + ":7]", LaneKind::GpuStream, r, 7);
            const int nccl = b.addLane(rank, "CUDA[" + std::to_string(r) + ":17]", LaneKind::GpuStream, r, 17);
            auto& table = b.trace().ranks[rank].lanes[compute].intervals;
            table.reserve(n / 2);
            const StringId gemm = b.trace().strings.intern("ampere_sgemm_128x64_nn");
            TimeNs now2 = 0;
            for (std::size_t i = 0; i < n / 2; ++i) {
                const TimeNs d = dur(rng);
                table.append(now2, now2 + d, gemm);
                if (i % 500 == 250)
                    b.addInterval(rank, nccl, now2, now2 + 2'000'000, "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                        RegionKind::Kernel);
                now2 += d + (i % 500 == 499 ? 3'000'000 : gap(rng));
            }
            b.trace().regionKinds.resize(b.trace().strings.size(), RegionKind::Kernel);
        }
        auto trace = b.finish();
        auto analysis = analyze(*trace, Rules::defaults()); // overlap rows and two-tone NCCL blocks are drawn too
        const auto idxStart = Clock::now();
        auto index = ViewIndex::build(*trace, analysis.get());
        const double indexMs = std::chrono::duration<double, std::milli>(Clock::now() - idxStart).count();
        TimelinePlot plot;
        plot.resize(1920, 1080);
        plot.setTrace(trace, analysis, index);
        plot.replot();
        // A frame from scratch: draw lists and column shares rebuilt (as after a zoom), every layer drawn.
        const double fullView = bestOfMs(5, [&] {
            plot.plottable()->invalidate();
            (void)plot.toPixmap(1920, 1080);
        });
        const TimeRange ext = trace->extent;
        plot.setVisibleRange(
            { ext.start + ext.duration() / 3, ext.start + ext.duration() / 3 + ext.duration() / 1000 });
        const double zoomed = bestOfMs(5, [&] {
            plot.plottable()->invalidate();
            (void)plot.toPixmap(1920, 1080);
        });
        std::printf("\nTimelinePlot, 2 ranks x %zu kernels + overlap rows, 1920x1080 offscreen (view index built in "
                    "%.1f ms):\n",
            n / 2, indexMs);
        std::printf(
            "%-48s %10.2f %8s %10.3f\n", "render (toPixmap), whole trace", fullView, "-", fullView / linearPass);
        std::printf(
            "%-48s %10.2f %8s %10.3f\n", "render (toPixmap), 1/1000 of the trace", zoomed, "-", zoomed / linearPass);
    }
    manyRanks(512);
    return sink == 42 ? 1 : 0;
}
