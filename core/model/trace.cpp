// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/trace.h"

#include "model/enumnames.h"
#include "model/parallelfor.h"
#include "model/tracefinalize.h"
#include "model/utf8.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace exposure {

const char* regionKindName(RegionKind k)
{
    static constexpr EnumName<RegionKind> names[]
        = { { RegionKind::Kernel, "kernel" }, { RegionKind::Memcpy, "memcpy" }, { RegionKind::Idle, "idle" },
              { RegionKind::Sync, "sync" }, { RegionKind::HostApi, "host-api" },
              { RegionKind::HostRegion, "host-region" }, { RegionKind::CommOp, "comm-op" },
              { RegionKind::ComputeOp, "compute-op" }, { RegionKind::DeviceOp, "device-op" } };
    return nameIn(names, k, "unknown");
}

const char* commRoleName(CommRole r)
{
    static constexpr EnumName<CommRole> names[] = { { CommRole::DP, "dp" }, { CommRole::TP, "tp" },
        { CommRole::PP, "pp" }, { CommRole::EP, "ep" }, { CommRole::CP, "cp" }, { CommRole::Other, "other" } };
    return nameIn(names, r, "");
}

const char* clockMethodName(ClockMethod m)
{
    static constexpr EnumName<ClockMethod> names[]
        = { { ClockMethod::SingleHost, "single_host" }, { ClockMethod::CollectiveEnds, "collective_ends" } };
    return nameIn(names, m, "recorded");
}

void IntervalTable::append(TimeNs start, TimeNs end, StringId name, std::uint8_t depth)
{
    if (name > kMaxNameId)
        throw std::length_error("more than 16 million distinct region names");
    const TimeNs d = end > start ? end - start : 0;
    const auto index = static_cast<std::uint32_t>(m_start.size());
    noteOrder(start, depth);
    m_start.push_back(start);
    if (d >= TimeNs(kLongDuration)) {
        m_duration.push_back(kLongDuration);
        m_long.emplace_back(index, d);
    } else {
        m_duration.push_back(std::uint32_t(d));
    }
    m_nameDepth.push_back(name | (std::uint32_t(depth) << 24));
    m_maxDuration = std::max(m_maxDuration, d);
}

void IntervalTable::reserve(std::size_t n)
{
    m_start.reserve(n);
    m_duration.reserve(n);
    m_nameDepth.reserve(n);
}

void IntervalTable::setEndSlow(std::size_t i, TimeNs end)
{
    const TimeNs d = end > m_start[i] ? end - m_start[i] : 0;
    const auto index = std::uint32_t(i);
    auto it = std::lower_bound(
        m_long.begin(), m_long.end(), index, [](const auto& p, std::uint32_t idx) { return p.first < idx; });
    const bool wasLong = m_duration[i] == kLongDuration && it != m_long.end() && it->first == index;
    if (d >= TimeNs(kLongDuration)) {
        m_duration[i] = kLongDuration;
        if (wasLong)
            it->second = d;
        else
            m_long.insert(it, { index, d }); // rare: keeps m_long sorted by index
    } else {
        if (wasLong)
            m_long.erase(it);
        m_duration[i] = std::uint32_t(d);
    }
    m_maxDuration = std::max(m_maxDuration, d);
}

void IntervalTable::shrinkToFit()
{
    m_start.shrinkToFit();
    m_duration.shrink_to_fit();
    m_nameDepth.shrink_to_fit();
    m_long.shrink_to_fit();
}

void IntervalTable::shift(TimeNs delta)
{
    if (delta == 0)
        return;
    m_start.shift(delta);
}

TimeNs IntervalTable::longDuration(std::size_t i) const
{
    auto it = std::lower_bound(
        m_long.begin(), m_long.end(), std::uint32_t(i), [](const auto& p, std::uint32_t idx) { return p.first < idx; });
    return it != m_long.end() && it->first == i ? it->second : TimeNs(kLongDuration);
}

std::vector<std::uint32_t> IntervalTable::sortByStart()
{
    const std::size_t n = size();
    if (!m_outOfOrder) // every append came in order (the usual case: importers append at Enter)
        return {};

    const std::vector<TimeNs> oldStart = m_start.decoded();
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        if (oldStart[a] != oldStart[b])
            return oldStart[a] < oldStart[b];
        return depth(a) < depth(b);
    });

    std::vector<std::uint32_t> duration(n), nameDepth(n);
    std::vector<std::uint32_t> newIndexOf(m_long.empty() ? 0 : n);
    m_start.clear();
    for (std::size_t k = 0; k < n; ++k) {
        m_start.push_back(oldStart[order[k]]);
        duration[k] = m_duration[order[k]];
        nameDepth[k] = m_nameDepth[order[k]];
        if (!m_long.empty())
            newIndexOf[order[k]] = std::uint32_t(k);
    }
    for (auto& p : m_long)
        p.first = newIndexOf[p.first];
    std::sort(m_long.begin(), m_long.end());
    m_duration = std::move(duration);
    m_nameDepth = std::move(nameDepth);
    m_outOfOrder = false;
    return order;
}

std::size_t IntervalTable::lowerBoundStart(TimeNs t) const
{
    std::size_t lo = 0;
    std::size_t count = size();
    while (count > 0) {
        const std::size_t half = count / 2;
        if (m_start[lo + half] < t) {
            lo += half + 1;
            count -= half + 1;
        } else {
            count = half;
        }
    }
    return lo;
}

std::size_t IntervalTable::residentBytes() const
{
    return m_start.capacityBytes() + m_duration.capacity() * sizeof(std::uint32_t)
        + m_nameDepth.capacity() * sizeof(std::uint32_t) + m_long.capacity() * sizeof(m_long[0]);
}

std::size_t Trace::intervalCount() const
{
    std::size_t n = 0;
    for (const auto& r : ranks)
        for (const auto& l : r.lanes)
            n += l.intervals.size();
    return n;
}

std::size_t Trace::residentBytes() const
{
    std::size_t n = 0;
    for (const auto& r : ranks)
        for (const auto& l : r.lanes)
            n += l.intervals.residentBytes() + l.launches.capacityBytes() + l.launchByInterval.capacityBytes()
                + l.launchParamIds.capacity() * sizeof(std::uint32_t) + l.copyBytes.capacity() * sizeof(l.copyBytes[0]);
    return n;
}

namespace {

// A lane's side table of (interval index, value) pairs after its intervals were sorted: each index through `inv`
// (old index -> new), then sorted by it again.
template <class Pairs> void renumberSideTable(Pairs& pairs, const std::vector<std::uint32_t>& inv)
{
    for (auto& p : pairs)
        p.first = inv[p.first];
    std::sort(pairs.begin(), pairs.end());
}

// One lane's extent for the recorded activity: first start and last end of all its intervals, and of its work (on
// a GPU stream: not the artificial idle and synchronisation regions, which Score-P writes up to the end of the run).
struct LaneSpan
{
    TimeNs start = std::numeric_limits<TimeNs>::max(), end = std::numeric_limits<TimeNs>::min();
    TimeNs workStart = std::numeric_limits<TimeNs>::max(), workEnd = std::numeric_limits<TimeNs>::min();
};

// The recorded activity (see Trace::activity) from each lane's span (spans[rank][lane]).
TimeRange activityOf(const Trace& trace, const std::vector<std::vector<LaneSpan>>& spans)
{
    TimeNs lo = std::numeric_limits<TimeNs>::max(), hi = std::numeric_limits<TimeNs>::min();
    TimeNs gpuEnd = std::numeric_limits<TimeNs>::min();
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const Rank& rank = trace.ranks[r];
        std::vector<char> launching(rank.lanes.size(), 0);
        bool anyLaunch = false;
        // Launches in launch order (Score-P) and per interval by correlation id (torch.profiler, Nsight Systems).
        auto mark = [&](const LaunchList& list) {
            for (std::size_t k = 0; k < list.runCount(); ++k)
                if (const std::uint32_t l = list.runLane(k); l != kUnknownLaunch && l < launching.size()) {
                    launching[l] = 1;
                    anyLaunch = true;
                }
        };
        for (const Lane& lane : rank.lanes) {
            mark(lane.launches);
            mark(lane.launchByInterval);
        }
        for (std::size_t l = 0; l < rank.lanes.size(); ++l) {
            const Lane& lane = rank.lanes[l];
            const LaneSpan& span = spans[r][l];
            if (lane.isGpu()) {
                lo = std::min(lo, span.workStart);
                gpuEnd = std::max(gpuEnd, span.workEnd);
            } else if (!anyLaunch || launching[l]) {
                lo = std::min(lo, span.start);
                hi = std::max(hi, span.end);
            }
        }
    }
    if (gpuEnd != std::numeric_limits<TimeNs>::min())
        hi = gpuEnd;
    if (lo >= hi)
        return trace.extent;
    return { std::max(lo, trace.extent.start), std::min(hi, trace.extent.end) };
}

// Every text of the trace outside its StringPool (which decodes as it interns) as valid UTF-8: host, thread and
// rank names, paths, collective arguments and warnings, whatever bytes the importer found.
void decodeTexts(Trace& t)
{
    makeValidUtf8(t.sourcePath);
    for (auto& w : t.warnings)
        makeValidUtf8(w);
    for (auto& r : t.ranks) {
        makeValidUtf8(r.label);
        makeValidUtf8(r.host);
        makeValidUtf8(r.archivePath);
        for (auto& lane : r.lanes)
            makeValidUtf8(lane.name);
    }
    for (auto& a : t.collectiveArgs)
        for (std::string* s : { &a.collective, &a.dtype, &a.processGroup, &a.groupRanks, &a.groupName })
            makeValidUtf8(*s);
}

} // namespace

namespace {

// finalize()'s first pass over one rank: every lane sorted by start, the launch references and side tables renumbered
// with it. Returns the rank's earliest start (max() if it has no interval).
TimeNs sortRankLanes(Rank& r)
{
    TimeNs first = std::numeric_limits<TimeNs>::max();
    // Sort every lane; remember the permutation of CPU lanes to remap launch references.
    std::vector<std::vector<std::uint32_t>> newIndex(r.lanes.size());
    for (std::size_t li = 0; li < r.lanes.size(); ++li) {
        auto& lane = r.lanes[li];
        if (!lane.launchByInterval.empty())
            lane.launchByInterval.resize(lane.intervals.size(), LaunchRef { kUnknownLaunch, 0 });
        auto order = lane.intervals.sortByStart();
        if (!order.empty()) {
            auto& inv = newIndex[li];
            inv.resize(order.size());
            for (std::size_t k = 0; k < order.size(); ++k)
                inv[order[k]] = std::uint32_t(k);
            if (!lane.launchByInterval.empty()) {
                LaunchList by;
                by.reserve(order.size());
                for (std::size_t k = 0; k < order.size(); ++k)
                    by.push_back(order[k] < lane.launchByInterval.size() ? lane.launchByInterval[order[k]]
                                                                         : LaunchRef { kUnknownLaunch, 0 });
                lane.launchByInterval = std::move(by);
            }
            if (!lane.launchParamIds.empty()) {
                std::vector<std::uint32_t> ids(order.size());
                for (std::size_t k = 0; k < order.size(); ++k)
                    ids[k] = lane.launchParamIds[order[k]];
                lane.launchParamIds = std::move(ids);
            }
            renumberSideTable(lane.copyBytes, inv);
            renumberSideTable(lane.copyPeers, inv);
            renumberSideTable(lane.collectiveArgs, inv);
            renumberSideTable(lane.collectiveSeq, inv);
        }
        if (!lane.intervals.empty())
            first = std::min(first, lane.intervals.start(0));
    }
    for (auto& lane : r.lanes) {
        const auto renumbered = [&](LaunchRef l) {
            return l.cpuLane < newIndex.size() && !newIndex[l.cpuLane].empty() ? newIndex[l.cpuLane][l.interval]
                                                                               : l.interval;
        };
        lane.launches.remapIntervals(renumbered);
        lane.launchByInterval.remapIntervals(renumbered);
    }
    return first;
}

// finalize()'s second pass over one rank: its lanes shifted by `delta`, and their spans (all events, GPU work).
std::vector<LaneSpan> shiftRankLanes(Rank& rank, TimeNs delta, const std::vector<RegionKind>& regionKinds)
{
    std::vector<LaneSpan> spans(rank.lanes.size());
    for (std::size_t l = 0; l < rank.lanes.size(); ++l) {
        IntervalTable& t = rank.lanes[l].intervals;
        t.shift(delta);
        LaneSpan& span = spans[l];
        const bool gpu = rank.lanes[l].isGpu();
        for (std::size_t i = 0; i < t.size(); ++i) {
            const TimeNs s = t.start(i), e = t.end(i);
            span.start = std::min(span.start, s);
            span.end = std::max(span.end, e);
            const StringId name = t.name(i);
            const RegionKind k = name < regionKinds.size() ? regionKinds[name] : RegionKind::Unknown;
            if (gpu && k != RegionKind::Idle && k != RegionKind::Sync) {
                span.workStart = std::min(span.workStart, s);
                span.workEnd = std::max(span.workEnd, e);
            }
        }
    }
    return spans;
}

} // namespace

void Trace::finalize(bool rebaseToZero)
{
    finalizeTrace(*this, rebaseToZero, 1);
}

void finalizeTrace(Trace& trace, bool rebaseToZero, int threads)
{
    auto& ranks = trace.ranks;
    // Ranks are independent in both passes: on up to `threads` threads (0: one per hardware thread).
    const std::size_t workers = workerCount(ranks.size(), threads);
    std::vector<TimeNs> firsts(ranks.size());
    parallelFor(ranks.size(), workers, [&](std::size_t r) { firsts[r] = sortRankLanes(ranks[r]); });
    TimeNs first = std::numeric_limits<TimeNs>::max();
    for (const TimeNs f : firsts)
        first = std::min(first, f);
    if (first == std::numeric_limits<TimeNs>::max())
        first = 0;
    const TimeNs delta = rebaseToZero ? -first : 0;
    trace.regionKinds.resize(trace.strings.size(), RegionKind::Unknown);
    std::vector<std::vector<LaneSpan>> spans(ranks.size());
    parallelFor(
        ranks.size(), workers, [&](std::size_t r) { spans[r] = shiftRankLanes(ranks[r], delta, trace.regionKinds); });
    TimeNs last = 0;
    for (const auto& rankSpans : spans)
        for (const LaneSpan& span : rankSpans)
            last = std::max(last, span.end);
    if (rebaseToZero)
        trace.originAbsNs += first;
    trace.extent = { rebaseToZero ? 0 : std::min<TimeNs>(0, first), last };
    trace.activity = activityOf(trace, spans);
    const auto oldCanon = trace.canonicalNames.size();
    trace.canonicalNames.resize(trace.strings.size());
    for (std::size_t i = oldCanon; i < trace.canonicalNames.size(); ++i)
        trace.canonicalNames[i] = StringId(i);
    decodeTexts(trace);
}

TraceBuilder::TraceBuilder()
    : m_trace(std::make_shared<Trace>())
{ }

int TraceBuilder::addRank(std::string label, std::string host, int device, int rankNumber)
{
    Rank r;
    r.rank = rankNumber >= 0 ? rankNumber : int(m_trace->ranks.size());
    r.label = std::move(label);
    r.host = std::move(host);
    if (device >= 0)
        r.devices.push_back(device);
    r.timerResolution = 1000000000ull;
    m_trace->ranks.push_back(std::move(r));
    return int(m_trace->ranks.size()) - 1;
}

int TraceBuilder::addLane(int rank, std::string name, LaneKind kind, int device, int stream)
{
    Lane l;
    l.name = std::move(name);
    l.kind = kind;
    l.device = device;
    l.stream = stream;
    auto& lanes = m_trace->ranks.at(rank).lanes;
    l.locationId = lanes.size();
    lanes.push_back(std::move(l));
    return int(lanes.size()) - 1;
}

std::uint32_t TraceBuilder::addInterval(
    int rank, int lane, TimeNs start, TimeNs end, std::string_view name, RegionKind kind, std::uint8_t depth)
{
    auto& t = *m_trace;
    const StringId id = t.strings.intern(name);
    if (t.regionKinds.size() <= id)
        t.regionKinds.resize(id + 1, RegionKind::Unknown);
    if (t.regionKinds[id] == RegionKind::Unknown)
        t.regionKinds[id] = kind;
    auto& table = t.ranks.at(rank).lanes.at(lane).intervals;
    table.append(start, end, id, depth);
    return std::uint32_t(table.size() - 1);
}

void TraceBuilder::addLaunch(int rank, int gpuLane, int cpuLane, std::uint32_t cpuInterval)
{
    m_trace->ranks.at(rank).lanes.at(gpuLane).launches.push_back({ std::uint32_t(cpuLane), cpuInterval });
}

void TraceBuilder::setLaunchOf(int rank, int gpuLane, std::uint32_t gpuInterval, int cpuLane, std::uint32_t cpuInterval)
{
    Lane& lane = m_trace->ranks.at(rank).lanes.at(gpuLane);
    if (lane.launchByInterval.size() < lane.intervals.size())
        lane.launchByInterval.resize(lane.intervals.size(), LaunchRef { kUnknownLaunch, 0 });
    lane.launchByInterval.set(
        gpuInterval, cpuLane < 0 ? LaunchRef { kUnknownLaunch, 0 } : LaunchRef { std::uint32_t(cpuLane), cpuInterval });
}

std::shared_ptr<Trace> TraceBuilder::finish()
{
    m_trace->finalize(false);
    return m_trace;
}

int dtypeBytes(const std::string& dtype)
{
    std::string d;
    for (char c : dtype)
        if (c != '_' && c != ' ')
            d += char(std::tolower(static_cast<unsigned char>(c)));
    if (d == "double" || d == "long" || d == "int64" || d == "float64" || d == "complexfloat" || d == "uint64")
        return 8;
    if (d == "float" || d == "int" || d == "int32" || d == "float32" || d == "uint32")
        return 4;
    if (d == "half" || d == "bfloat16" || d == "short" || d == "int16" || d == "float16" || d == "uint16")
        return 2;
    if (d == "byte" || d == "char" || d == "bool" || d == "int8" || d == "uint8" || d.rfind("float8", 0) == 0)
        return 1;
    return 0;
}

std::uint64_t collectiveBytes(const CollectiveArgs& args)
{
    return std::max(args.inElements, args.outElements) * std::uint64_t(dtypeBytes(args.dtype));
}

double busBandwidth(const CollectiveArgs& args, double seconds)
{
    const std::uint64_t bytes = collectiveBytes(args);
    const int n = args.groupSize;
    if (bytes == 0 || !(seconds > 0) || n < 1)
        return 0;
    std::string c;
    for (char ch : args.collective)
        if (ch != '_' && ch != ' ')
            c += char(std::tolower(static_cast<unsigned char>(ch)));
    double factor = 1;
    if (c == "allreduce")
        factor = 2.0 * (n - 1) / n;
    else if (c == "allgather" || c == "allgatherintocoalesced" || c == "reducescatter" || c == "alltoall"
        || c == "alltoallv" || c == "allgatherbase" || c == "reducescatterbase")
        factor = double(n - 1) / n;
    return double(bytes) / seconds * factor;
}

void KernelLaunchParams::countFromShapes()
{
    auto product = [](const std::array<std::uint32_t, 3>& d) {
        return d[0] == 0 ? 0 : std::uint64_t(d[0]) * std::max(1u, d[1]) * std::max(1u, d[2]);
    };
    blocksPerGrid = product(grid);
    threadsPerBlock = product(block);
}

std::size_t KernelLaunchParamsHash::operator()(const KernelLaunchParams& p) const
{
    std::size_t h = 1469598103934665603ull; // FNV-1a over the fields
    auto mix = [&h](std::uint64_t v) { h = (h ^ std::hash<std::uint64_t>()(v)) * 1099511628211ull; };
    for (std::uint64_t v : { p.blocksPerGrid, p.threadsPerBlock, p.staticSharedMemory, p.dynamicSharedMemory,
             p.localMemory, p.registersPerThread, p.sharedMemory })
        mix(v);
    for (std::uint32_t v : p.grid)
        mix(v);
    for (std::uint32_t v : p.block)
        mix(v);
    mix(std::uint64_t(std::int64_t(p.occupancyPercent)));
    return h;
}

} // namespace exposure
