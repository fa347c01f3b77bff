// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Generated one-rank traces for the what-if tests (core replay, the What If dock), with known step times.
#include "model/trace.h"

#include <memory>
#include <string>

namespace exposure::testing {

inline constexpr TimeNs kUs = 1000;
inline constexpr const char* kWhatIfGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n";

// One rank with a master thread and stream 7, three steps of `stepNs` ("ProfilerStep#k" at depth 0);
// `work(b, cpu, gpu, start)` adds a step's work.
template <class Work> std::shared_ptr<Trace> threeSteps(TimeNs stepNs, const Work& work)
{
    TraceBuilder b;
    b.addRank("Rank 0");
    const int cpu = b.addLane(0, "Master thread", LaneKind::CpuThread);
    const int gpu = b.addLane(0, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
    for (int k = 0; k < 3; ++k) {
        const TimeNs start = k * stepNs;
        b.addInterval(0, cpu, start, start + stepNs, "ProfilerStep#" + std::to_string(k), RegionKind::HostRegion, 0);
        work(b, cpu, gpu, start);
    }
    return b.finish();
}

// Launch-bound: per 1000 µs step a 400 µs "inject" region, two 50 µs launches of 40 µs kernels, 500 µs of the step's
// own host time. The GPU idles most of the step.
inline std::shared_ptr<Trace> launchBoundSteps()
{
    return threeSteps(1000 * kUs, [](TraceBuilder& b, int cpu, int gpu, TimeNs B) {
        b.addInterval(0, cpu, B, B + 400 * kUs, "inject", RegionKind::HostRegion, 1);
        const auto l1 = b.addInterval(0, cpu, B + 400 * kUs, B + 450 * kUs, "cudaLaunchKernel", RegionKind::HostApi, 1);
        const auto l2 = b.addInterval(0, cpu, B + 450 * kUs, B + 500 * kUs, "cudaLaunchKernel", RegionKind::HostApi, 1);
        b.addInterval(0, gpu, B + 460 * kUs, B + 500 * kUs, kWhatIfGemm, RegionKind::Kernel);
        b.addInterval(0, gpu, B + 510 * kUs, B + 550 * kUs, kWhatIfGemm, RegionKind::Kernel);
        b.addLaunch(0, gpu, cpu, l1);
        b.addLaunch(0, gpu, cpu, l2);
    });
}

// GPU-bound: per 1050 µs step a launch of a 900 µs kernel (100 µs launch latency), 600 µs of "inject" while it runs,
// then a device synchronize that returns 50 µs after the kernel ends.
inline std::shared_ptr<Trace> gpuBoundSteps()
{
    return threeSteps(1050 * kUs, [](TraceBuilder& b, int cpu, int gpu, TimeNs B) {
        const auto l = b.addInterval(0, cpu, B, B + 50 * kUs, "cudaLaunchKernel", RegionKind::HostApi, 1);
        b.addInterval(0, cpu, B + 50 * kUs, B + 650 * kUs, "inject", RegionKind::HostRegion, 1);
        b.addInterval(0, cpu, B + 650 * kUs, B + 1050 * kUs, "cudaDeviceSynchronize", RegionKind::HostApi, 1);
        b.addInterval(0, gpu, B + 100 * kUs, B + 1000 * kUs, kWhatIfGemm, RegionKind::Kernel);
        b.addLaunch(0, gpu, cpu, l);
    });
}

} // namespace exposure::testing
