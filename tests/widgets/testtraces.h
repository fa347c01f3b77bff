// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "trace.h"

#include <memory>

namespace exposure::testing {

// A small DDP-like trace: per rank a compute stream "CUDA[r:7]", an NCCL stream "CUDA[r:17]" and a
// CPU thread "Master thread". Each step (10 ms) has 4 forward GEMMs, 4 backward GEMMs and two
// AllReduce kernels on the NCCL stream: the first overlaps the backward kernels (hidden), the second
// runs after the last backward kernel (exposed).
//   step s starts at s * 10 ms; forward k: [s*10ms + k*1ms, +0.8ms); backward k: [+4ms + k*1ms, +0.8ms)
//   AllReduce A: [+5.5ms, +6.5ms) (hidden behind backward 1/2), AllReduce B: [+8.2ms, +9.2ms) (exposed)
struct DdpTraceLayout
{
    static constexpr TimeNs kStep = 10'000'000;
    static constexpr TimeNs kMs = 1'000'000;
    static constexpr int kCompute = 0, kNccl = 1, kCpu = 2; // lane indexes
};

inline std::shared_ptr<Trace> makeDdpTrace(int ranks = 2, int steps = 3)
{
    using L = DdpTraceLayout;
    TraceBuilder b;
    for (int r = 0; r < ranks; ++r) {
        const int rank = b.addRank("Rank " + std::to_string(r), "node0", r);
        const int compute = b.addLane(rank, "CUDA[" + std::to_string(r) + ":7]", LaneKind::GpuStream, r, 7);
        const int nccl = b.addLane(rank, "CUDA[" + std::to_string(r) + ":17]", LaneKind::GpuStream, r, 17);
        const int cpu = b.addLane(rank, "Master thread", LaneKind::CpuThread);
        for (int s = 0; s < steps; ++s) {
            const TimeNs t = s * L::kStep;
            b.addInterval(rank, cpu, t, t + 9 * L::kMs, "ProfilerStep#" + std::to_string(s), RegionKind::HostRegion);
            for (int k = 0; k < 4; ++k)
                b.addInterval(rank, compute, t + k * L::kMs, t + k * L::kMs + 800'000,
                              "ampere_sgemm_128x64_nn", RegionKind::Kernel);
            for (int k = 0; k < 4; ++k)
                b.addInterval(rank, compute, t + 4 * L::kMs + k * L::kMs, t + 4 * L::kMs + k * L::kMs + 800'000,
                              "ampere_sgemm_64x64_tn_backward", RegionKind::Kernel);
            b.addInterval(rank, nccl, t + 5'500'000, t + 6'500'000,
                          "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                          RegionKind::Kernel);
            b.addInterval(rank, nccl, t + 8'200'000, t + 9'200'000,
                          "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                          RegionKind::Kernel);
        }
    }
    return b.finish();
}

} // namespace exposure::testing
