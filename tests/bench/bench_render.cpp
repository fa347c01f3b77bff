// SPDX-License-Identifier: GPL-3.0-or-later
// Figure rendering of a ~10-million-kernel trace: a 3840×2160 PNG (whole trace and one step window), an SVG and
// a PDF, against a baseline measured in the same run: one linear pass over all intervals (sum of durations).
// The trace is built with TraceBuilder (4 ranks: a compute stream, an NCCL stream and a CPU thread each);
// the view index and the analysis are built once, as after loading, and are timed separately.
// Not run by CTest. Usage: bench_render [kernels] (default 10 000 000)
#include "analysis/analysis.h"
#include "benchutil.h"
#include "figure/figurerenderer.h"
#include "model/trace.h"
#include "view/viewindex.h"

#include <QApplication>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

using namespace exposure;
using Clock = std::chrono::steady_clock;

namespace {

using bench::bestOfMs;

double msSince(Clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

} // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const std::size_t total = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
    const int ranks = 4;
    const std::size_t perRank = total / ranks;

    // DDP-like: per step 200 compute kernels (2–60 µs, short gaps) and 2 AllReduce kernels on the NCCL stream,
    // one hidden behind the backward half of the step, one exposed at its end.
    auto t0 = Clock::now();
    TraceBuilder b;
    const char* names[] = { "ampere_sgemm_128x64_nn", "vectorized_elementwise_kernel", "reduce_kernel",
        "layer_norm_kernel", "softmax_warp_forward", "ampere_sgemm_64x64_tn_backward" };
    std::size_t intervals = 0;
    for (int r = 0; r < ranks; ++r) {
        std::mt19937_64 rng(42 + r);
        std::uniform_int_distribution<int> dur(2'000, 60'000), gap(300, 3'000);
        const int rank = b.addRank("Rank " + std::to_string(r), "node0", r);
        const int compute = b.addLane(rank, "CUDA[" + std::to_string(r) + ":7]", LaneKind::GpuStream, r, 7);
        const int nccl = b.addLane(rank, "CUDA[" + std::to_string(r) + ":17]", LaneKind::GpuStream, r, 17);
        const int cpu = b.addLane(rank, "Master thread", LaneKind::CpuThread);
        TimeNs now = 0;
        std::size_t k = 0;
        int step = 0;
        while (k < perRank) {
            const TimeNs stepStart = now;
            for (int i = 0; i < 200 && k < perRank; ++i, ++k) {
                const TimeNs d = dur(rng);
                b.addInterval(rank, compute, now, now + d, names[(i < 100 ? i % 5 : 5)], RegionKind::Kernel);
                if (i == 140)
                    b.addInterval(
                        rank, nccl, now, now + 400'000, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", RegionKind::Kernel);
                now += d + gap(rng);
            }
            b.addInterval(
                rank, nccl, now, now + 300'000, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", RegionKind::Kernel);
            now += 300'000;
            b.addInterval(rank, cpu, stepStart, now, "ProfilerStep#" + std::to_string(step++), RegionKind::HostRegion);
            intervals += 203;
        }
    }
    std::shared_ptr<const Trace> trace = b.finish();
    const double buildMs = msSince(t0);

    volatile TimeNs sink = 0;
    std::size_t counted = 0;
    const double linearMs = bestOfMs(3, [&] {
        TimeNs s = 0;
        std::size_t c = 0;
        for (const Rank& rank : trace->ranks)
            for (const Lane& lane : rank.lanes) {
                const IntervalTable& t = lane.intervals;
                for (std::size_t i = 0; i < t.size(); ++i)
                    s += t.duration(i);
                c += t.size();
            }
        sink = s;
        counted = c;
    });

    t0 = Clock::now();
    std::shared_ptr<const Analysis> analysis = analyze(*trace, Rules::defaults());
    const double analysisMs = msSince(t0);
    t0 = Clock::now();
    std::shared_ptr<const ViewIndex> index = ViewIndex::build(*trace, analysis.get());
    const double indexMs = msSince(t0);
    t0 = Clock::now();
    FigureRenderer renderer(trace, analysis, index);
    const double setupMs = msSince(t0);

    std::printf("intervals: %zu (%zu kernels requested), span %.3f s; built in %.0f ms, analysis %.0f ms, "
                "view index %.0f ms, renderer setup %.0f ms\n",
        counted, total, double(trace->extent.duration()) / 1e9, buildMs, analysisMs, indexMs, setupMs);
    std::printf("%-52s %10s %10s %10s\n", "case", "ms", "bytes", "vs linear");
    std::printf("%-52s %10.1f %10s %10.2f\n", "baseline: one linear pass over all intervals", linearMs, "-", 1.0);

    auto row = [&](const char* name, FigureSpec spec) {
        QByteArray out;
        const double ms = bestOfMs(3, [&] { out = renderer.render(spec); });
        std::printf("%-52s %10.1f %10lld %10.2f\n", name, ms, static_cast<long long>(out.size()), ms / linearMs);
    };
    FigureSpec png;
    png.widthPx = 3840;
    png.heightPx = 2160;
    png.title = QStringLiteral("10 M kernels");
    row("PNG 3840x2160, whole trace (render + encode)", png);
    FigureSpec image = png;
    {
        const double ms = bestOfMs(3, [&] { (void)renderer.renderImage(image); });
        std::printf("%-52s %10.1f %10s %10.2f\n", "PNG 3840x2160, whole trace (render only)", ms, "-", ms / linearMs);
    }
    FigureSpec step = png;
    step.rangeKind = FigureSpec::RangeKind::Step;
    step.step = analysis->ranks[0].steps.size() > 10 ? analysis->ranks[0].steps[10].index : 0;
    if (!analysis->ranks[0].steps.empty())
        row("PNG 3840x2160, one step", step);
    FigureSpec svg = png;
    svg.format = FigureSpec::Format::Svg;
    svg.widthPx = 1600;
    svg.heightPx = 900;
    row("SVG 1600x900, whole trace", svg);
    FigureSpec pdf = svg;
    pdf.format = FigureSpec::Format::Pdf;
    row("PDF 1600x900 px @96 dpi, whole trace", pdf);
    (void)sink;
    return 0;
}
