// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A data-parallel run with one slow rank, for the heat map: every rank has a compute stream (device r, stream 7),
// an NCCL stream (device r, stream 17) and a CPU thread with one "ProfilerStep#s" region per step; no launches, so
// each step's window is its host region.
//   step s starts at t0 = s * 10 ms.
//   A normal rank r: 8 compute kernels [t0 + k ms, t0 + k ms + 0.8 ms), the last one (k = 7) shorter by
//   (r % 3) * 10 us; one all-reduce [t0 + 7.8 ms, t0 + 9.2 ms); its step region [t0, t0 + 9.4 ms).
//   The slow rank: 8 compute kernels [t0 + k * 1.1 ms, +1.0 ms) (the last ends at t0 + 8.7 ms); its all-reduce
//   [t0 + 8.7 ms, t0 + 9.2 ms) (it arrives last: every other rank waits 0.9 ms); its step region [t0, t0 + 9.6 ms).
// Rank r lives on host "node<r % hosts>".
#include "model/trace.h"

#include <memory>
#include <string>

namespace exposure::testing {

struct StragglerLayout
{
    static constexpr TimeNs kUs = 1'000, kMs = 1'000'000;
    static constexpr TimeNs kStep = 10 * kMs;
    static constexpr TimeNs kNormalStep = 9'400 * kUs, kSlowStep = 9'600 * kUs;
    static constexpr TimeNs kNcclEnd = 9'200 * kUs;
    static constexpr TimeNs kNormalNcclStart = 7'800 * kUs, kSlowNcclStart = 8'700 * kUs;
    static TimeNs jitter(int rank) { return (rank % 3) * 10 * kUs; }
};

inline std::shared_ptr<Trace> makeStragglerTrace(int ranks, int steps, int slowRank, int hosts = 1)
{
    using L = StragglerLayout;
    TraceBuilder b;
    const std::string nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
    for (int r = 0; r < ranks; ++r) {
        const int rank = b.addRank("Rank " + std::to_string(r), "node" + std::to_string(r % hosts), r);
        const int compute = b.addLane(rank, "CUDA[" + std::to_string(r) + ":7]", LaneKind::GpuStream, r, 7);
        const int comm = b.addLane(rank, "CUDA[" + std::to_string(r) + ":17]", LaneKind::GpuStream, r, 17);
        const int cpu = b.addLane(rank, "Master thread", LaneKind::CpuThread);
        const bool slow = r == slowRank;
        for (int s = 0; s < steps; ++s) {
            const TimeNs t = s * L::kStep;
            b.addInterval(rank, cpu, t, t + (slow ? L::kSlowStep : L::kNormalStep), "ProfilerStep#" + std::to_string(s),
                RegionKind::HostRegion);
            for (int k = 0; k < 8; ++k) {
                const TimeNs start = t + k * (slow ? 1'100 * L::kUs : L::kMs);
                const TimeNs length = slow ? L::kMs : 800 * L::kUs - (k == 7 ? L::jitter(r) : 0);
                b.addInterval(rank, compute, start, start + length, "ampere_sgemm_128x64_nn", RegionKind::Kernel);
            }
            b.addInterval(rank, comm, t + (slow ? L::kSlowNcclStart : L::kNormalNcclStart), t + L::kNcclEnd, nccl,
                RegionKind::Kernel);
        }
    }
    return b.finish();
}

} // namespace exposure::testing
