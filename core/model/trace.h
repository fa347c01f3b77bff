// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "model/launchlist.h"
#include "model/startcolumn.h"
#include "model/stringpool.h"
#include "model/timerange.h"

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace exposure {

// What the importer knows about a region from the trace itself (role, paradigm, source file),
// before any name rule runs. Indexed by StringId in Trace::regionKinds.
enum class RegionKind : std::uint8_t {
    Unknown = 0,
    Kernel, // GPU kernel (role FUNCTION/KERNEL/40 on a stream location, file CUDA_KERNEL/HIP_KERNEL)
    Memcpy, // GPU copy rebuilt from RMA events ("memcpy HtoD", "memcpy DtoH", "memcpy DtoD")
    Idle, // "COMPUTE IDLE", "GPU IDLE" (artificial)
    Sync, // "DEVICE SYNCHRONIZE" and other implicit barriers / flushes
    HostApi, // CPU-side CUDA/HIP driver or runtime API call (role WRAPPER)
    HostRegion, // any other CPU region (user, NVTX, python, pthread ...)
    // GPU work whose category the trace's layout gives, whatever its name (Chrome traces: the role of its lane)
    CommOp, // communication (an op on a "dp-comm" lane of a Megatron timeline)
    ComputeOp, // compute (an op on a "compute" lane, "gc" and "optimizer" included)
    DeviceOp, // GPU work classified by name like a kernel, on a lane that is no serial stream (never clipped)
};

const char* regionKindName(RegionKind k);

// Per-lane interval storage: sorted by start (then depth), columnar, 12 bytes per interval.
//   start     int64  ns relative to trace start, stored as a 32-bit offset from a base per 1024 intervals
//             (StartColumn; a block spanning more than 4.29 s keeps its starts in full)
//   duration  uint32 ns; kLongDuration marks a duration >= 2^32-1 ns kept in a small side table
//   nameDepth uint32 low 24 bits StringId, high 8 bits nesting depth
// Complexity: append O(1) amortised, finalize O(n log n) once, lookups O(1) / O(log n).
class IntervalTable
{
public:
    static constexpr std::uint32_t kLongDuration = 0xFFFFFFFFu;
    static constexpr std::uint32_t kMaxNameId = 0x00FFFFFFu;

    std::size_t size() const { return m_start.size(); }
    bool empty() const { return m_start.empty(); }
    TimeNs start(std::size_t i) const { return m_start[i]; }
    TimeNs duration(std::size_t i) const
    {
        const auto d = m_duration[i];
        return d == kLongDuration ? longDuration(i) : TimeNs(d);
    }
    TimeNs end(std::size_t i) const { return start(i) + duration(i); }
    StringId name(std::size_t i) const { return m_nameDepth[i] & kMaxNameId; }
    std::uint8_t depth(std::size_t i) const { return std::uint8_t(m_nameDepth[i] >> 24); }

    // end >= start is required (zero-length intervals are allowed).
    void append(TimeNs start, TimeNs end, StringId name, std::uint8_t depth = 0);
    void reserve(std::size_t n);
    // Appends [start, start) inline (importers append at Enter and set the end at Leave); returns its index.
    std::uint32_t appendOpen(TimeNs start, StringId name, std::uint8_t depth)
    {
        if (name > kMaxNameId)
            throw std::length_error("more than 16 million distinct region names");
        const auto index = static_cast<std::uint32_t>(m_start.size());
        noteOrder(start, depth);
        m_start.push_back(start);
        m_duration.push_back(0);
        m_nameDepth.push_back(name | (std::uint32_t(depth) << 24));
        return index;
    }
    // Changes the end of interval i (importers append at Enter, in start order, and close at Leave).
    void setEnd(std::size_t i, TimeNs end)
    {
        // Inline fast path: a short interval that was short before (the per-event case of importers).
        const TimeNs d = end - m_start[i];
        if (d >= 0 && d < TimeNs(kLongDuration) && m_duration[i] != kLongDuration) {
            m_duration[i] = std::uint32_t(d);
            if (d > m_maxDuration)
                m_maxDuration = d;
            return;
        }
        setEndSlow(i, end);
    }
    // Releases spare capacity (after loading, when the reserve was an overestimate).
    void shrinkToFit();
    std::size_t capacity() const { return m_start.capacity(); }
    // Adds a constant to every start (used to rebase absolute times to trace-relative).
    void shift(TimeNs delta);

    // Stable sort by (start, depth). Returns order with order[new] = old (empty if already sorted).
    std::vector<std::uint32_t> sortByStart();

    // Index of the first interval whose start >= t (size() if none).
    std::size_t lowerBoundStart(TimeNs t) const;
    // Largest duration in the table (bounds the binary search for intervals that overlap t).
    TimeNs maxDuration() const { return m_maxDuration; }
    // Every start, decoded (tests compare tables with it).
    std::vector<TimeNs> starts() const { return m_start.decoded(); }

    std::size_t residentBytes() const;

private:
    TimeNs longDuration(std::size_t i) const;
    void setEndSlow(std::size_t i, TimeNs end);
    // Keeps track of whether the appends came in (start, depth) order, so that sortByStart need not look.
    void noteOrder(TimeNs start, std::uint8_t depth)
    {
        if (m_start.empty())
            return;
        const TimeNs last = m_start[m_start.size() - 1];
        if (start < last || (start == last && depth < this->depth(m_start.size() - 1)))
            m_outOfOrder = true;
    }

    StartColumn m_start;
    std::vector<std::uint32_t> m_duration;
    std::vector<std::uint32_t> m_nameDepth;
    std::vector<std::pair<std::uint32_t, TimeNs>> m_long; // sorted by index; rare
    TimeNs m_maxDuration = 0;
    bool m_outOfOrder = false; // an append came before its predecessor in (start, depth) order
};

enum class LaneKind : std::uint8_t { CpuThread, GpuStream };

// One interval of a trace: Trace::ranks[rank].lanes[lane].intervals, entry `interval`.
struct IntervalRef
{
    int rank = -1;
    int lane = -1;
    std::uint32_t interval = 0;
    bool operator==(const IntervalRef&) const = default;
};

// Lane::launches[k] is the k-th launch aimed at a stream, in launch order (LaunchRef, LaunchList: model/launchlist.h).
// An entry with cpuLane == kUnknownLaunch stands for a kernel whose launch is not in the trace (it keeps the order of
// the others: a launch record per kernel, in kernel order).

// A kernel's launch parameters as the trace recorded them, interned in Trace::launchParams. Score-P's kernel_counter
// parameters give the products ("blocks per grid", ...); torch.profiler and Nsight Systems give the grid and block
// shapes. 0 (occupancy: -1) means "not recorded".
struct KernelLaunchParams
{
    std::uint64_t blocksPerGrid = 0;
    std::uint64_t threadsPerBlock = 0;
    std::uint64_t staticSharedMemory = 0;
    std::uint64_t dynamicSharedMemory = 0;
    std::uint64_t localMemory = 0; // Score-P's "total local memory"
    std::uint64_t registersPerThread = 0;
    std::array<std::uint32_t, 3> grid {}; // x, y, z
    std::array<std::uint32_t, 3> block {};
    std::uint64_t sharedMemory = 0; // static + dynamic, where only the sum is recorded (torch.profiler)
    std::int32_t occupancyPercent = -1; // torch.profiler's "est. achieved occupancy %"
    bool operator==(const KernelLaunchParams&) const = default;
    // blocksPerGrid and threadsPerBlock from the grid and block shapes (a shape's x of 0: not recorded, count 0).
    void countFromShapes();
};

struct KernelLaunchParamsHash
{
    std::size_t operator()(const KernelLaunchParams& p) const;
};
inline constexpr std::uint32_t kNoLaunchParams = 0xFFFFFFFFu;

// What torch.profiler records about one NCCL kernel (its `args`): the collective, message sizes and process group.
struct CollectiveArgs
{
    std::string collective; // "allreduce", "broadcast", "allgather", ...
    std::uint64_t inElements = 0; // "In msg nelems"
    std::uint64_t outElements = 0; // "Out msg nelems"
    std::string dtype; // "Float", "BFloat16", "Long", ...
    int groupSize = 0; // ranks in the process group
    std::string processGroup; // name and description ("0 (default_pg)")
    std::string groupRanks; // "[0, 1]"
    std::string groupName; // "Process Group Name" alone ("0"); empty if not recorded
    int peer = -1; // send / recv: the peer's global rank ("Dst Rank" / "Src Rank"); -1 if not recorded
    bool operator==(const CollectiveArgs&) const = default;
};

// Bytes of one element of a torch dtype name ("Float" 4, "BFloat16" 2, ...); 0 if unknown.
int dtypeBytes(const std::string& dtype);

// NCCL-tests' bus bandwidth of a collective moving `bytes` (the message size S) among n ranks in `seconds`:
// S / t times 2(n-1)/n (all-reduce), (n-1)/n (all-gather, reduce-scatter, all-to-all), 1 (broadcast, reduce,
// send/recv). 0 when it cannot be told.
double busBandwidth(const CollectiveArgs& args, double seconds);
// The message size S of a collective in bytes (the larger of the in and out messages), 0 if the dtype is unknown.
std::uint64_t collectiveBytes(const CollectiveArgs& args);

// The parallelism a communication lane serves (Chrome traces: the lane's role in the mapping rules).
enum class CommRole : std::uint8_t { None, DP, TP, PP, EP, CP, Other };
const char* commRoleName(CommRole r); // "dp", "tp", "pp", "ep", "cp", "other", "" for None

// A worker's coordinates in the data / pipeline / tensor / expert / context parallel grid; -1 where not known.
struct ParallelCoords
{
    int dp = -1, pp = -1, tp = -1, ep = -1, cp = -1;
    bool known() const { return dp >= 0 || pp >= 0 || tp >= 0 || ep >= 0 || cp >= 0; }
    bool operator==(const ParallelCoords&) const = default;
};

struct Lane
{
    std::string name; // "Master thread", "CUDA[0:7]", "HIP[1:0]"
    LaneKind kind = LaneKind::CpuThread;
    int device = -1; // GPU lanes: device index from the name or the system tree
    int stream = -1; // GPU lanes: stream id from the name
    bool nullStream = false;
    std::uint64_t locationId = 0; // OTF2 location id
    std::uint64_t eventCount = 0; // OTF2 events read for this location
    IntervalTable intervals;
    // GPU lanes: launches aimed at this stream, in launch order (may be empty). Traces without correlation ids
    // (Score-P CUDA_STREAM_REF); the analysis pairs them with the stream's kernels in order.
    LaunchList launches;
    // GPU lanes of traces with correlation ids (torch.profiler): per interval, the CPU call with the same id (one call
    // may launch many intervals: a CUDA graph launch, a library call), cpuLane == kUnknownLaunch when the trace holds
    // no call with that id; empty when the trace carries no ids.
    LaunchList launchByInterval;
    // GPU lanes: per interval an index into Trace::launchParams or kNoLaunchParams; empty if none recorded.
    std::vector<std::uint32_t> launchParamIds;
    // GPU lanes: bytes moved by memcpy intervals, sorted by interval index.
    std::vector<std::pair<std::uint32_t, std::uint64_t>> copyBytes;
    // GPU lanes: the other device of peer-to-peer copies, sorted by interval index.
    std::vector<std::pair<std::uint32_t, int>> copyPeers;
    // GPU lanes: collective arguments of communication kernels (index into Trace::collectiveArgs), by interval.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> collectiveArgs;
    // GPU lanes: the process group's sequence number of a collective ("Seq" in torch.profiler), by interval.
    std::vector<std::pair<std::uint32_t, std::uint64_t>> collectiveSeq;
    // GPU lanes that carry one kind of communication (Chrome traces: a "pp-comm" lane); None elsewhere.
    CommRole commRole = CommRole::None;

    bool isGpu() const { return kind == LaneKind::GpuStream; }
};

struct Rank
{
    int rank = 0; // the DDP/MPI rank number (from the folder name, MPI group, or discovery order)
    std::string label; // "Rank 0"
    std::string host; // system-tree node of class "node"
    std::vector<int> devices;
    std::string archivePath; // the anchor file this rank came from
    std::uint64_t timerResolution = 0; // ticks per second of the archive's clock
    std::vector<Lane> lanes;
    ParallelCoords coords; // where the trace gives them (Chrome traces: the mapping rules)
};

// Calls fn(laneIndex, lane, i) for every interval i of every GPU lane of `rank`, lanes in order; with a window, for
// the intervals that start in [window.start, window.end).
template <typename Fn> void forEachGpuInterval(const Rank& rank, Fn&& fn)
{
    for (std::size_t li = 0; li < rank.lanes.size(); ++li) {
        const Lane& lane = rank.lanes[li];
        if (lane.isGpu())
            for (std::size_t i = 0; i < lane.intervals.size(); ++i)
                fn(li, lane, i);
    }
}
template <typename Fn> void forEachGpuInterval(const Rank& rank, TimeRange window, Fn&& fn)
{
    for (std::size_t li = 0; li < rank.lanes.size(); ++li) {
        const Lane& lane = rank.lanes[li];
        if (!lane.isGpu())
            continue;
        const std::size_t end = lane.intervals.lowerBoundStart(window.end);
        for (std::size_t i = lane.intervals.lowerBoundStart(window.start); i < end; ++i)
            fn(li, lane, i);
    }
}

// How the ranks' clocks were put on one time base (core/analysis/clockalign.h estimates and applies it).
enum class ClockMethod : std::uint8_t {
    Recorded, // times as recorded (--clock recorded, or nothing to estimate from)
    SingleHost, // every rank on one known host: one clock, nothing to align
    CollectiveEnds, // offsets estimated from the end times of matched collectives
};
const char* clockMethodName(ClockMethod m);

struct RankClock
{
    int rank = 0; // index into Trace::ranks
    std::string host;
    TimeNs offsetNs = 0; // subtracted from the rank's recorded times (0: left as recorded)
    TimeNs estimateNs = 0; // the estimated offset against the reference rank, applied or not
    TimeNs uncertaintyNs = 0; // standard error of the estimate
    std::uint64_t collectivesUsed = 0;
    // The estimate came from transfer starts (the members' own transfer times are known), so the systematic end skew
    // of the members is not in it; false: from end times alone, skew and offset cannot be told apart.
    bool skewSeparated = false;
    int alignedTo = 0; // the rank whose clock this one is put on: the reference, unless no collective
                       // ties them (then the first rank of its own connected set, or itself)
};

struct ClockAlignment
{
    ClockMethod method = ClockMethod::Recorded;
    int referenceRank = 0; // index into Trace::ranks
    std::vector<RankClock> ranks; // by rank index; empty when nothing was estimated
    int hosts = 1; // clock domains (hosts, or ranks where hosts are not recorded)
    bool applied = false; // some rank's times were shifted
    TimeNs maxUncertaintyNs = 0; // over the shifted ranks
    bool hostsKnown = false; // every rank names its host (else each rank is its own clock domain)
    TimeNs thresholdNs = 0; // an estimate is applied only beyond this (and 3 uncertainties)
};

// The whole trace folder. Immutable once built; shared between threads as shared_ptr<const Trace>.
struct Trace
{
    std::string sourcePath;
    StringPool strings;
    std::vector<RegionKind> regionKinds; // by StringId (RegionKind::Unknown when absent)
    std::vector<StringId> canonicalNames; // by StringId: mangled/full name, or the same id
    std::vector<KernelLaunchParams> launchParams;
    std::vector<CollectiveArgs> collectiveArgs; // interned; see Lane::collectiveArgs
    std::vector<Rank> ranks;
    TimeNs originAbsNs = 0; // absolute time of t = 0 (ns since the clocks' epoch)
    TimeRange extent; // relative; [0, last event]
    // The recorded activity, what "whole trace" means (stats, figures, Zoom to Fit, panels, Compare Runs): from the
    // first interval of a GPU stream or of a CPU thread that launches GPU work (all CPU threads when no launch is
    // known) to the end of the last GPU work. A tail in which only a NCCL watchdog polls or the program tears down
    // is not part of it; without GPU work it ends with those threads' last interval. The extent if nothing is known.
    TimeRange activity;
    std::vector<std::string> warnings;
    std::uint64_t eventCount = 0;
    ClockAlignment clocks; // set by alignClocks() (core/analysis/clockalign.h)

    RegionKind regionKind(StringId id) const { return id < regionKinds.size() ? regionKinds[id] : RegionKind::Unknown; }
    const std::string& name(StringId id) const { return strings.str(id); }
    std::size_t intervalCount() const;
    std::size_t residentBytes() const;

    // Sorts every lane, remaps launch references to the sorted order, sizes the per-name tables,
    // rebases all times so that the earliest interval starts at 0 (adding that to originAbsNs),
    // and computes the extent. Called once by importers and TraceBuilder.
    void finalize(bool rebaseToZero = true);
};

// The window that "whole trace" means everywhere (stats, figures, Zoom to Fit, the panels, Compare Runs):
// Trace::activity, set by Trace::finalize().
inline TimeRange activityRange(const Trace& trace)
{
    return trace.activity.isEmpty() ? trace.extent : trace.activity;
}

// Convenience builder for tests, benchmarks and the demo trace generator.
class TraceBuilder
{
public:
    TraceBuilder();
    int addRank(std::string label, std::string host = "node0", int device = 0, int rankNumber = -1);
    int addLane(int rank, std::string name, LaneKind kind, int device = -1, int stream = -1);
    // Returns the interval's index in insertion order on that lane.
    std::uint32_t addInterval(
        int rank, int lane, TimeNs start, TimeNs end, std::string_view name, RegionKind kind, std::uint8_t depth = 0);
    // Records that cpu interval `cpuInterval` (insertion index) on `cpuLane` launched the next kernel on `gpuLane`.
    void addLaunch(int rank, int gpuLane, int cpuLane, std::uint32_t cpuInterval);
    // Records by identity (a correlation id) that cpu interval `cpuInterval` on `cpuLane` launched interval
    // `gpuInterval` on `gpuLane` (insertion indexes); cpuLane < 0 records a GPU interval without a launch call.
    void setLaunchOf(int rank, int gpuLane, std::uint32_t gpuInterval, int cpuLane, std::uint32_t cpuInterval);
    Trace& trace() { return *m_trace; }
    // Finalizes without rebasing times (builder times are taken as already relative).
    std::shared_ptr<Trace> finish();

private:
    std::shared_ptr<Trace> m_trace;
};

} // namespace exposure
