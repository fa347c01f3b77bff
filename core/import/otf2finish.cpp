// SPDX-License-Identifier: GPL-3.0-or-later
// The OTF2 importer's last stage: region kinds and canonical names, launch references in launch order,
// launch parameters, warnings, and Trace::finalize.
#include "import/otf2importer_p.h"
#include "model/parallelfor.h"
#include "model/stagetimings.h"
#include "model/tracefinalize.h"

namespace fs = std::filesystem;

namespace exposure {

using Archives = std::vector<const Otf2ArchiveState*>;

namespace {

// Where the finishing steps write: the trace being read (each LaneState's own lane), or a preview's copy of some of
// its archives' ranks (rankOf: the read trace's rank index -> the copy's).
struct LaneTarget
{
    Trace& trace;
    const std::vector<int>* rankOf = nullptr;

    Lane& lane(const LaneState& s) const
    {
        return rankOf ? trace.ranks[std::size_t((*rankOf)[std::size_t(s.rankIndex)])].lanes[s.laneIndex] : *s.lane;
    }
    Rank& rank(int rankIndex) const
    {
        return trace.ranks[std::size_t(rankOf ? (*rankOf)[std::size_t(rankIndex)] : rankIndex)];
    }
};

Archives listOf(const std::vector<std::unique_ptr<Otf2ArchiveState>>& archives)
{
    Archives out;
    for (const auto& a : archives)
        out.push_back(a.get());
    return out;
}

// The kind of each region name: what the region was used as (a stream makes it a kernel/idle/sync region), where
// the name itself marks idle time or a synchronisation (options.markerKind: the rules), that.
void setRegionKinds(Trace& trace, const Archives& archives, const LoadOptions& options)
{
    trace.regionKinds.resize(trace.strings.size(), RegionKind::Unknown);
    const std::size_t names = options.markerKind ? trace.strings.size() : 0;
    std::vector<RegionKind> marker(names, RegionKind::Unknown);
    std::vector<std::uint8_t> asked(names, 0);
    auto markerOf = [&](StringId name) {
        if (name >= names)
            return RegionKind::Unknown;
        if (!asked[name]) {
            asked[name] = 1;
            marker[name] = options.markerKind(trace.strings.str(name));
        }
        return marker[name];
    };
    for (const Otf2ArchiveState* a : archives) {
        std::vector<std::uint8_t> usedCpu(a->regions.size(), 0), usedGpu(a->regions.size(), 0);
        for (const auto& s : a->lanes) {
            auto& used = s->gpu ? usedGpu : usedCpu;
            for (std::size_t i = 0; i < s->usedRegions.size(); ++i)
                used[i] |= s->usedRegions[i];
        }
        for (std::size_t i = 0; i < a->regions.size(); ++i) {
            if (!a->regionDefined[i])
                continue;
            const auto& r = a->regions[i];
            RegionKind cpuKind = r.cpuKind, gpuKind = r.gpuKind;
            const RegionKind named = markerOf(r.name);
            if (named == RegionKind::Idle || (named == RegionKind::Sync && cpuKind != RegionKind::Idle))
                cpuKind = gpuKind = named; // idle beats synchronisation, as the archive's own marks do
            auto& k = trace.regionKinds[r.name];
            if (usedGpu[i] && (k == RegionKind::Unknown || k == RegionKind::HostRegion))
                k = gpuKind;
            else if (k == RegionKind::Unknown)
                k = cpuKind;
        }
        for (const StringId name : a->memcpyNames)
            trace.regionKinds[name] = RegionKind::Memcpy;
    }
}

void setCanonicalNames(Trace& trace)
{
    // Canonical names: identity where the importer recorded none.
    trace.canonicalNames.resize(trace.strings.size(), kInvalidString);
    for (std::size_t i = 0; i < trace.canonicalNames.size(); ++i)
        if (trace.canonicalNames[i] == kInvalidString)
            trace.canonicalNames[i] = StringId(i);
}

void mergeLaunchParams(const LaneTarget& target, const Archives& archives)
{
    Trace& trace = target.trace;
    // Launch parameters: merge the per-lane tables into Trace::launchParams.
    std::unordered_map<KernelLaunchParams, std::uint32_t, LaunchParamsHash> paramIndex;
    for (std::uint32_t i = 0; i < trace.launchParams.size(); ++i)
        paramIndex.emplace(trace.launchParams[i], i);
    for (const Otf2ArchiveState* a : archives) {
        for (const auto& s : a->lanes) {
            if (s->localParams.empty())
                continue;
            std::vector<std::uint32_t> remap(s->localParams.size());
            for (std::size_t i = 0; i < remap.size(); ++i) {
                auto [it, inserted]
                    = paramIndex.try_emplace(s->localParams[i], std::uint32_t(trace.launchParams.size()));
                if (inserted)
                    trace.launchParams.push_back(s->localParams[i]);
                remap[i] = it->second;
            }
            for (auto& id : target.lane(*s).launchParamIds)
                if (id != kNoLaunchParams)
                    id = remap[id];
        }
    }
}

void orderLaunches(const LaneTarget& into, const Archives& archives, int threads, bool release)
{
    // Launches in launch (Enter time) order across the threads of a rank. Each CPU lane's list is already in
    // time order: a stream fed by one thread takes it as is; otherwise the lists are merged by a stable sort
    // (ties: lower lane first). finalize() remaps the interval indices if a CPU table had to be sorted. An archive
    // touches only its own ranks: archives in parallel.
    parallelFor(archives.size(), workerCount(archives.size(), threads), [&](std::size_t ai) {
        const Otf2ArchiveState* a = archives[ai];
        std::unordered_map<std::uint64_t, std::vector<const LaneState*>> sources; // (rank, lane) -> CPU lanes
        std::unordered_map<std::uint64_t, std::size_t> counts;
        for (const auto& s : a->lanes) {
            if (s->outgoing.empty())
                continue;
            // Count per target lane with a dense vector (no hash lookup per launch).
            std::vector<std::size_t> perTarget(into.rank(s->rankIndex).lanes.size(), 0);
            for (const auto& l : s->outgoing)
                ++perTarget[l.targetLane];
            for (std::uint32_t target = 0; target < perTarget.size(); ++target) {
                if (!perTarget[target])
                    continue;
                const std::uint64_t key = (std::uint64_t(std::uint32_t(s->rankIndex)) << 32) | target;
                counts[key] += perTarget[target];
                sources[key].push_back(s.get());
            }
        }
        for (auto& [key, from] : sources) {
            const auto target = std::uint32_t(key & 0xFFFFFFFFu);
            auto& lane = into.rank(int(key >> 32)).lanes[target];
            auto& out = lane.launches;
            out.reserve(counts[key]);
            if (from.size() == 1) {
                for (const auto& l : from.front()->outgoing)
                    if (l.targetLane == target)
                        out.push_back({ from.front()->laneIndex, l.interval });
                continue;
            }
            struct Timed
            {
                TimeNs time;
                std::uint32_t cpuLane;
                std::uint32_t interval;
            };
            std::vector<Timed> merged;
            merged.reserve(counts[key]);
            for (const LaneState* src : from)
                for (const auto& l : src->outgoing)
                    if (l.targetLane == target)
                        merged.push_back({ src->lane->intervals.start(l.interval), src->laneIndex, l.interval });
            std::stable_sort(merged.begin(), merged.end(), [](const Timed& x, const Timed& y) {
                return x.time != y.time ? x.time < y.time : x.cpuLane < y.cpuLane;
            });
            for (const auto& l : merged)
                out.push_back({ l.cpuLane, l.interval });
        }
        if (release)
            for (const auto& s : a->lanes) {
                s->outgoing.clear();
                s->outgoing.shrink_to_fit();
            }
    });
}

// Gives back unused reserve, and warns of what the reader dropped or closed. Returns the events read.
std::uint64_t finishLanes(Trace& trace, const Archives& archives, int threads)
{
    // Archives in parallel (each its own lanes), their warnings appended in archive order.
    std::vector<std::uint64_t> totals(archives.size(), 0);
    std::vector<std::vector<std::string>> warnings(archives.size());
    parallelFor(archives.size(), workerCount(archives.size(), threads), [&](std::size_t ai) {
        const Otf2ArchiveState* a = archives[ai];
        std::uint64_t& total = totals[ai];
        for (const auto& s : a->lanes) {
            total += s->lane->eventCount;
            auto& table = s->lane->intervals;
            if (table.capacity() > table.size() + table.size() / 8 + 16)
                table.shrinkToFit();
            auto& ids = s->lane->launchParamIds;
            if (ids.capacity() > ids.size() + ids.size() / 8 + 16)
                ids.shrink_to_fit();
            const std::string where = a->ref.anchor + ": " + s->lane->name + ": ";
            const std::pair<std::uint64_t, const char*> findings[] = {
                { s->outOfOrder, " events with a timestamp earlier than the previous one were dropped" },
                { s->closedAtEnd, " Enter events without a matching Leave were closed at the lane's last timestamp" },
                { s->unmatchedLeave, " Leave events without a matching Enter were dropped" },
                { s->unmatchedCopies,
                    " memory copies without a completion event were closed at the lane's last timestamp" },
                { s->unmatchedCompletions, " copy completion events without a matching start were dropped" },
                { s->unknownRegions, " events referring to undefined regions were dropped" },
            };
            for (const auto& [count, what] : findings)
                if (count)
                    warnings[ai].push_back(where + std::to_string(count) + what);
        }
    });
    std::uint64_t total = 0;
    for (std::size_t ai = 0; ai < archives.size(); ++ai) {
        total += totals[ai];
        trace.warnings.insert(trace.warnings.end(), warnings[ai].begin(), warnings[ai].end());
    }
    return total;
}

} // namespace

void Otf2Importer::finish()
{
    stageTiming("import: finish lanes");
    const Archives archives = listOf(m_archives);
    const LaneTarget target { m_trace };
    setRegionKinds(m_trace, archives, m_options);
    setCanonicalNames(m_trace);
    mergeLaunchParams(target, archives);
    orderLaunches(target, archives, m_options.threads, true);
    m_trace.eventCount = finishLanes(m_trace, archives, m_options.threads);
    m_archives.clear();
    stageTiming("import: finalize");
    finalizeTrace(m_trace, true, m_options.threads);
}

// A preview (LoadOptions::preview) of the archives whose events are all read: a copy of their ranks, finished as
// finish() finishes the whole trace (region kinds, canonical names, launch parameters, launches in launch order),
// without the warnings, which the whole trace reports. Called on a reading thread while others go on reading their
// own archives: it reads only the finished archives' state and the names, which no reader writes.
std::shared_ptr<Trace> Otf2Importer::previewOf(std::vector<const Otf2ArchiveState*> done) const
{
    std::sort(done.begin(), done.end(),
        [](const Otf2ArchiveState* x, const Otf2ArchiveState* y) { return x->firstRank < y->firstRank; });
    auto preview = std::make_shared<Trace>();
    preview->sourcePath = m_trace.sourcePath;
    preview->originAbsNs = m_trace.originAbsNs;
    for (StringId i = 0; i < m_trace.strings.size(); ++i)
        preview->strings.internFrom(m_trace.strings, i);
    preview->regionKinds = m_trace.regionKinds;
    preview->canonicalNames = m_trace.canonicalNames;
    preview->collectiveArgs = m_trace.collectiveArgs;
    std::vector<int> rankOf(m_trace.ranks.size(), -1);
    for (const Otf2ArchiveState* a : done)
        for (std::size_t r = a->firstRank; r < a->firstRank + a->rankCount; ++r) {
            rankOf[r] = int(preview->ranks.size());
            preview->ranks.push_back(m_trace.ranks[r]);
        }
    const LaneTarget target { *preview, &rankOf };
    setRegionKinds(*preview, done, m_options);
    setCanonicalNames(*preview);
    mergeLaunchParams(target, done);
    orderLaunches(target, done, 1, false);
    for (const Rank& rank : preview->ranks)
        for (const Lane& lane : rank.lanes)
            preview->eventCount += lane.eventCount;
    finalizeTrace(*preview, true, 1);
    return preview;
}

} // namespace exposure
