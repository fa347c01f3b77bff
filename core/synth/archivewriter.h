// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Writes Score-P-like OTF2 archives with the OTF2 *writer* API, for tests, the demo trace and the benchmark.
//
// Usage (all times are integer nanoseconds on a common clock, 0 = the clock origin of the spec):
//
//     using namespace exposure::synth;
//     ArchiveSpec spec;
//     RankSpec& r = spec.addRank(0);                                  // folder "rank0", host "node0", device 0
//     CpuThreadSpec& cpu = r.threads[0];                              // "Master thread"
//     cpu.regions.push_back({"ProfilerStep#1", 0, 10'000});
//     cpu.regions.push_back({"cuLaunchKernel", 100, 200, RegionRole::Wrapper, /*launchStream=*/0});
//     StreamSpec& s = r.addStream(0, 7);                             // "CUDA[0:7]" (the first one is the NULL stream)
//     s.kernels.push_back({"gemm", 300, 1'300});
//     s.copies.push_back({CopyKind::HtoD, 1'500, 1'700, 4096});
//     s.idle.push_back({1'300, 1'500});
//     writeArchive("/tmp/x", spec);                                   // /tmp/x/rank0/traces.otf2 ...
//
// Exactness: event times are written as ticks = globalOffsetTicks + ns * timerResolution / 1e9. With the
// default 3.7 GHz timer, every time must be a multiple of 10 ns (writeArchive throws otherwise), and the
// default offset is a multiple of 37 ticks, so the loader's floor(ticks * 1e9 / resolution) gives back exactly
// offsetNs + ns. Use timerResolution = 1'000'000'000 for arbitrary nanoseconds.
//
// What gets written for each rank (Score-P 8/9 layout, see shared/reference/scorep-otf2-layout.md):
//   system tree machine "Linux" -> node <host> -> "CUDA Device" <d> for every device used by a stream;
//   location group "Process" (PROCESS), one "CUDA Context <n>" ACCELERATOR group per device (Score-P >= 8) or the
//   streams inside "Process" (layout ScoreP7); CPU locations (CPU_THREAD), stream locations "CUDA[d:s]"
//   (ACCELERATOR_STREAM, property CUDA_NULL_STREAM=yes on the null stream), one "Per process metrics" METRIC
//   location with `metricEvents` metric events; regions with Score-P's roles and files; kernels with file
//   "CUDA_KERNEL", demangled name + mangled canonical name, role FUNCTION or the raw value 40; 7 kernel_counter
//   ParameterUnsignedInt events at each kernel start; "COMPUTE IDLE" regions (file CUDA_IDLE, ARTIFICIAL);
//   copies as RmaGet (HtoD, DtoD) / RmaPut (DtoH) ... RmaOpCompleteBlocking on window "CUDA_WINDOW" (DtoD uses the
//   stream's own index in the CUDA comm group as `remote`); launch regions with a `launchStream` carry the attribute
//   CUDA_STREAM_REF (type LOCATION) naming that stream's location.
// Location ids follow Score-P: (local index << 32) | mpiRank (mpiRank = 0 for per-rank archives).

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace exposure::synth {

using Ns = std::int64_t;

enum class RegionRole { Function, Wrapper, Artificial, ImplicitBarrier, User };

struct CpuRegion
{
    std::string name;
    Ns start = 0;
    Ns end = 0;
    RegionRole role = RegionRole::Function;
    // >= 0: this region's Enter carries CUDA_STREAM_REF = the location of rank.streams[launchStream].
    int launchStream = -1;
};

// Verbatim events for robustness tests (unmatched or out-of-order events). If a thread has raw events, they
// are written in the given order *instead of* its regions.
struct RawEvent
{
    enum Type { Enter, Leave } type = Enter;
    Ns time = 0;
    std::string region;
    // Ticks written as-is (ignoring `time`) when non-zero: for timestamps near the 64-bit limit.
    std::uint64_t rawTicks = 0;
};

struct CpuThreadSpec
{
    std::string name = "Master thread";
    // Properly nested regions in any order; the writer sorts them by (start, longer first).
    std::vector<CpuRegion> regions;
    std::vector<RawEvent> raw;
};

struct KernelSpec
{
    std::string name; // demangled name, e.g. "at::native::vectorized_elementwise_kernel<4, ...>"
    Ns start = 0;
    Ns end = 0;
    std::string mangled = {}; // canonical name; empty = same as name (extern "C" kernels such as NCCL's)
    std::uint64_t blocksPerGrid = 80;
    std::uint64_t threadsPerBlock = 256;
    std::uint64_t registersPerThread = 32;
};

enum class CopyKind { HtoD, DtoH, DtoD };

struct CopySpec
{
    CopyKind kind = CopyKind::HtoD;
    Ns start = 0;
    Ns end = 0;
    std::uint64_t bytes = 0;
    // DtoD only: >= 0 makes it a peer-to-peer copy with rank.streams[peerStream] (written as Score-P does, an RmaGet
    // whose remote end is the other stream).
    int peerStream = -1;
};

struct Span
{
    Ns start = 0;
    Ns end = 0;
};

struct StreamSpec
{
    int device = 0;
    int stream = 7;
    bool nullStream = false;
    bool unknownDevice = false; // write "CUDA[?:s]" (the loader must take the device from the system tree)
    std::vector<KernelSpec> kernels; // in time order, non-overlapping
    std::vector<CopySpec> copies; // in time order, not overlapping kernels
    std::vector<Span> idle; // "COMPUTE IDLE" gaps
};

struct RankSpec
{
    int rank = 0;
    std::string folder; // sub-folder of writeArchive's dir; default "rank<rank>"
    std::string host = "node0";
    std::vector<CpuThreadSpec> threads { CpuThreadSpec {} };
    std::vector<StreamSpec> streams;
    int metricEvents = 4; // events on the "Per process metrics" METRIC location (0: no such location)
    bool kernelCounters = true; // 7 ParameterUnsignedInt events per kernel
    // The rank's host clock reads this much later than the spec's common clock (>= 0; per-rank archives only):
    // added to every timestamp the rank's archive holds, as on a host whose clock is not synchronised.
    Ns clockOffsetNs = 0;

    // Adds a stream "CUDA[device:stream]"; the first stream added to a rank is the NULL stream.
    StreamSpec& addStream(int device, int stream)
    {
        StreamSpec s;
        s.device = device;
        s.stream = stream;
        s.nullStream = streams.empty();
        streams.push_back(std::move(s));
        return streams.back();
    }
};

enum class Layout {
    ScoreP8, // streams in ACCELERATOR groups "CUDA Context N" under "CUDA Device" nodes
    ScoreP7 // streams in the PROCESS group, no device nodes
};

enum class KernelRole { Function, Raw40 };

struct ArchiveSpec
{
    std::vector<RankSpec> ranks;
    std::uint64_t timerResolution = 3'700'000'000ull; // ticks per second (TSC-like)
    std::uint64_t globalOffsetTicks = 37ull * 165'000'000'000'000ull; // ~6.1e15 like a real TSC; multiple of 37
    Layout layout = Layout::ScoreP8;
    KernelRole kernelRole = KernelRole::Raw40;
    std::string paradigm = "CUDA"; // "HIP" writes a custom paradigm and HIP[d:s] streams
    // true: one archive (directly in dir) with one "MPI Rank r" group per rank, like `--mpp=mpi`.
    bool mpi = false;
    // As Score-P writes them: every location's local definitions map the local location ids 0, 1, ... (the archive's
    // locations in definition order) to the global ids, and CUDA_STREAM_REF values hold the local ids.
    bool localLocationIds = false;
    // Two ClockOffset records in every location's local definitions, at the archive's first and last timestamp, with
    // this offset in ticks (Score-P writes them with offset 0 on one host); OTF2 adds it to every timestamp.
    bool clockOffsetRecords = false;
    std::int64_t clockOffsetTicks = 0;

    RankSpec& addRank(int rank, std::string host = "node0")
    {
        RankSpec r;
        r.rank = rank;
        r.host = std::move(host);
        ranks.push_back(std::move(r));
        return ranks.back();
    }
};

class FixtureError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

// Writes every rank of `spec` into dir/<rank.folder>/ (traces.otf2, traces.def, traces/) or, with spec.mpi,
// one archive into dir. Returns the number of events written. Throws FixtureError.
std::uint64_t writeArchive(const std::string& dir, const ArchiveSpec& spec);

// Writes spec.ranks[rankIndex] as one archive directly into dir (dir/traces.otf2).
std::uint64_t writeRankArchive(const std::string& dir, const ArchiveSpec& spec, std::size_t rankIndex);

// The tick value writeArchive writes for time `ns` (for tests that patch or craft raw timestamps).
std::uint64_t toTicks(const ArchiveSpec& spec, Ns ns);

// Replaces every 8-byte little-endian occurrence of `oldTicks` in an .evt file by `newTicks` and returns how many
// were replaced. OTF2 stores event timestamps uncompressed, and its writer refuses out-of-order times, so this
// is how tests make an archive with out-of-order timestamps.
int patchTimestamp(const std::string& evtFile, std::uint64_t oldTicks, std::uint64_t newTicks);

// The realistic DDP demo (BERT-like training steps with NCCL all-reduce buckets overlapping backward).
struct DemoOptions
{
    int ranks = 2;
    int steps = 6;
    // Multiplies the number of layers (and so kernels) per step; large values make the benchmark archive.
    int scale = 1;
    // A small-batch, launch-bound run: kernels a quarter as long, and the CPU needs 40 us per launch (Python and
    // dispatcher overhead), so the GPU idles between kernels most of the time.
    bool launchBound = false;
};
ArchiveSpec makeDemoSpec(const DemoOptions& options);

} // namespace exposure::synth
