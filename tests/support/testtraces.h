// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "model/trace.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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
                b.addInterval(rank, compute, t + k * L::kMs, t + k * L::kMs + 800'000, "ampere_sgemm_128x64_nn",
                    RegionKind::Kernel);
            for (int k = 0; k < 4; ++k)
                b.addInterval(rank, compute, t + 4 * L::kMs + k * L::kMs, t + 4 * L::kMs + k * L::kMs + 800'000,
                    "ampere_sgemm_64x64_tn_backward", RegionKind::Kernel);
            b.addInterval(rank, nccl, t + 5'500'000, t + 6'500'000,
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", RegionKind::Kernel);
            b.addInterval(rank, nccl, t + 8'200'000, t + 9'200'000,
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", RegionKind::Kernel);
        }
    }
    return b.finish();
}

// Two ranks of which rank 0 waits for rank 1 in every step's AllReduce (no process-group information: matched by
// time). Steps are "ProfilerStep#N" with N = 4, 5, ... (their numbers are not their indexes); a step lasts 10 ms
// (the first `firstStepNs` if given: a start-up step). In a step starting at t (µs after t):
//   rank 0: GEMM [0, 2000) and [2000, 3000) on "CUDA[0:7]"; AllReduce [2000, 7000) on "CUDA[0:17]", which waits
//           for rank 1 until 6000: waiting hidden [2000, 3000), waiting exposed [3000, 6000), exposed [6000, 7000)
//   rank 1: GEMM [0, 6000); AllReduce [6000, 7000) (no waiting): compute only [0, 6000), exposed [6000, 7000)
//   both: "ProfilerStep#N" [0, 9000) on "Master thread" with `cpuDepth` nested regions inside it (CPU rows).
struct WaitingPairLayout
{
    static constexpr TimeNs kStep = 10'000'000;
    static constexpr TimeNs kUs = 1'000;
    static constexpr int kFirstNumber = 4;
};

inline std::shared_ptr<Trace> makeWaitingPairTrace(int steps = 3, TimeNs firstStepNs = 0, int cpuDepth = 0)
{
    using L = WaitingPairLayout;
    TraceBuilder b;
    const std::string allReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
    for (int r = 0; r < 2; ++r) {
        const int rank = b.addRank("Rank " + std::to_string(r), "node0", r);
        const int compute = b.addLane(rank, "CUDA[" + std::to_string(r) + ":7]", LaneKind::GpuStream, r, 7);
        const int nccl = b.addLane(rank, "CUDA[" + std::to_string(r) + ":17]", LaneKind::GpuStream, r, 17);
        const int cpu = b.addLane(rank, "Master thread", LaneKind::CpuThread);
        TimeNs t = 0;
        for (int s = 0; s < steps; ++s) {
            const TimeNs length = s == 0 && firstStepNs > 0 ? firstStepNs : L::kStep;
            const TimeNs g = t + length - L::kStep; // the step's GPU work sits in its last 10 ms
            b.addInterval(rank, cpu, t, g + 9'000 * L::kUs, "ProfilerStep#" + std::to_string(L::kFirstNumber + s),
                RegionKind::HostRegion);
            for (int d = 1; d <= cpuDepth; ++d)
                b.addInterval(rank, cpu, g + d * L::kUs, g + (8'000 - d) * L::kUs, "region " + std::to_string(d),
                    RegionKind::HostRegion, std::uint8_t(d));
            if (r == 0) {
                b.addInterval(rank, compute, g, g + 2'000 * L::kUs, "ampere_sgemm_128x64_nn", RegionKind::Kernel);
                b.addInterval(rank, compute, g + 2'000 * L::kUs, g + 3'000 * L::kUs, "ampere_sgemm_128x64_nn",
                    RegionKind::Kernel);
                b.addInterval(rank, nccl, g + 2'000 * L::kUs, g + 7'000 * L::kUs, allReduce, RegionKind::Kernel);
            } else {
                b.addInterval(rank, compute, g, g + 6'000 * L::kUs, "ampere_sgemm_128x64_nn", RegionKind::Kernel);
                b.addInterval(rank, nccl, g + 6'000 * L::kUs, g + 7'000 * L::kUs, allReduce, RegionKind::Kernel);
            }
            t += length;
        }
    }
    return b.finish();
}

// Deterministic pseudo-random numbers (a 64-bit LCG: the same sequence on every platform and library).
class TraceRng
{
public:
    explicit TraceRng(std::uint64_t seed)
        : m_state(seed * 2862933555777941757ull + 3037000493ull)
    { }
    // Uniform integer in [lo, hi].
    TimeNs between(TimeNs lo, TimeNs hi)
    {
        m_state = m_state * 6364136223846793005ull + 1442695040888963407ull;
        return lo + TimeNs((m_state >> 33) % std::uint64_t(hi - lo + 1));
    }

private:
    std::uint64_t m_state;
};

inline constexpr const char* kNcclAllReduce
    = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";

// Launch-bound (CPU-bound) ranks, as in small-batch DDP: bursts of 5-50 us kernels separated by gaps of
// similar length, then host gaps of 0.6-1.4 ms, so the GPU is busy about a fifth of the time; sparse NCCL
// kernels of 20-80 us every ~3 ms on a second stream, some inside a burst (mostly hidden), some not. Each rank
// has its own seed. Lanes per rank: 0 compute stream, 1 NCCL stream, 2 CPU thread. About 100 ms per rank.
inline std::shared_ptr<Trace> makeLaunchBoundTrace(int ranks = 2, TimeNs duration = 100'000'000)
{
    TraceBuilder b;
    for (int r = 0; r < ranks; ++r) {
        TraceRng rng(std::uint64_t(17 + r));
        const int rank = b.addRank("Rank " + std::to_string(r), "node0", r);
        const int compute = b.addLane(rank, "CUDA[" + std::to_string(r) + ":7]", LaneKind::GpuStream, r, 7);
        const int nccl = b.addLane(rank, "CUDA[" + std::to_string(r) + ":17]", LaneKind::GpuStream, r, 17);
        const int cpu = b.addLane(rank, "Master thread", LaneKind::CpuThread);
        TimeNs t = rng.between(50'000, 100'000);
        int k = 0;
        while (t < duration) {
            const int burst = int(rng.between(5, 15));
            for (int i = 0; i < burst && t < duration; ++i, ++k) {
                const TimeNs d = rng.between(5'000, 50'000);
                b.addInterval(rank, cpu, t - 4'000, t - 1'000, "cudaLaunchKernel", RegionKind::HostApi);
                b.addInterval(rank, compute, t, t + d,
                    k % 3 ? "vectorized_elementwise_kernel" : "ampere_sgemm_128x64_nn", RegionKind::Kernel);
                t += d + rng.between(5'000, 50'000);
            }
            t += rng.between(600'000, 1'400'000);
        }
        for (TimeNs n = rng.between(500'000, 2'000'000); n < duration; n += rng.between(2'500'000, 3'500'000))
            b.addInterval(rank, nccl, n, n + rng.between(20'000, 80'000), kNcclAllReduce, RegionKind::Kernel);
    }
    return b.finish();
}

// GPU-bound DDP steps (10 ms): back-to-back compute kernels of 20-200 us with 1-3 us gaps for 9 ms, then 1 ms
// without compute; four AllReduce buckets of 0.5-1.6 ms per step on the NCCL stream, the first three during
// compute (hidden), the last one straddling the end of compute (mostly exposed). Every rank runs the same
// work (one seed), rank r shifted by r * 37 us, so their rows must look alike although their pixel columns cut
// the work at different places. Lanes: 0 compute, 1 NCCL.
inline std::shared_ptr<Trace> makeGpuBoundTrace(int ranks = 2, int steps = 10)
{
    constexpr TimeNs kStep = 10'000'000;
    TraceBuilder b;
    for (int r = 0; r < ranks; ++r) {
        TraceRng rng(99);
        const int rank = b.addRank("Rank " + std::to_string(r), "node0", r);
        const int compute = b.addLane(rank, "CUDA[" + std::to_string(r) + ":7]", LaneKind::GpuStream, r, 7);
        const int nccl = b.addLane(rank, "CUDA[" + std::to_string(r) + ":17]", LaneKind::GpuStream, r, 17);
        for (int s = 0; s < steps; ++s) {
            const TimeNs t0 = s * kStep + r * 37'000;
            int k = 0;
            for (TimeNs t = t0; t < t0 + 9'000'000; ++k) {
                const TimeNs d = std::min(rng.between(20'000, 200'000), t0 + 9'000'000 - t);
                const char* name = k % 4 == 0 ? "ampere_sgemm_128x64_nn"
                    : k % 4 == 1              ? "fmha_cutlassF_f32_aligned_64x64_rf_sm80"
                    : k % 4 == 2              ? "vectorized_elementwise_kernel"
                                              : "layer_norm_kernel";
                b.addInterval(rank, compute, t, t + d, name, RegionKind::Kernel);
                t += d + rng.between(1'000, 3'000);
            }
            TimeNs n = t0 + 3'000'000;
            for (int bucket = 0; bucket < 4; ++bucket) {
                const TimeNs d = rng.between(500'000, 1'600'000);
                if (bucket == 3)
                    n = t0 + 8'700'000;
                b.addInterval(rank, nccl, n, n + d, kNcclAllReduce, RegionKind::Kernel);
                n += d + rng.between(50'000, 300'000);
            }
        }
    }
    return b.finish();
}

// One process, two GPUs: a peer-to-peer copy on GPU 0 at [40, 45) us (an arrow to GPU 1's row) between kernels.
inline std::shared_ptr<Trace> makePeerCopyTrace()
{
    TraceBuilder b;
    const int rank = b.addRank("Rank 0");
    const int g0 = b.addLane(rank, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
    const int g1 = b.addLane(rank, "CUDA[1:13]", LaneKind::GpuStream, 1, 13);
    b.addInterval(rank, g0, 0, 30'000, "ampere_sgemm_128x64_nn", RegionKind::Kernel);
    const auto copy = b.addInterval(rank, g0, 40'000, 45'000, "memcpy PtoP", RegionKind::Memcpy);
    b.trace().ranks[std::size_t(rank)].lanes[std::size_t(g0)].copyPeers.emplace_back(copy, 1);
    b.addInterval(rank, g1, 0, 100'000, "ampere_sgemm_128x64_nn", RegionKind::Kernel);
    return b.finish();
}

// A rank's lane names in lane order, and a trace's rank numbers and hosts in rank order: what an importer's lane and
// rank order is checked against in one comparison.
inline std::vector<std::string> laneNames(const Rank& rank)
{
    std::vector<std::string> out;
    for (const Lane& lane : rank.lanes)
        out.push_back(lane.name);
    return out;
}

inline std::vector<int> rankNumbers(const Trace& trace)
{
    std::vector<int> out;
    for (const Rank& rank : trace.ranks)
        out.push_back(rank.rank);
    return out;
}

inline std::vector<std::string> rankHosts(const Trace& trace)
{
    std::vector<std::string> out;
    for (const Rank& rank : trace.ranks)
        out.push_back(rank.host);
    return out;
}

} // namespace exposure::testing
