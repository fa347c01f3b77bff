// SPDX-License-Identifier: GPL-3.0-or-later
#include "synth/archivewriter.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <otf2/otf2.h>
#include <tuple>
#include <unordered_map>

namespace exposure::synth {

namespace {

__extension__ typedef unsigned __int128 U128; // GCC/Clang extension: exact 128-bit tick arithmetic

void check(OTF2_ErrorCode rc, const char* what)
{
    if (rc != OTF2_SUCCESS)
        throw FixtureError(std::string("OTF2 writer: ") + what + ": " + OTF2_Error_GetDescription(rc));
}

OTF2_FlushType preFlush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool)
{
    return OTF2_FLUSH;
}

OTF2_TimeStamp postFlush(void*, OTF2_FileType, OTF2_LocationRef)
{
    return 0;
}

OTF2_FlushCallbacks g_flushCallbacks = { preFlush, postFlush };

struct RegionKey
{
    std::string name;
    std::string canonical;
    OTF2_RegionRole role;
    OTF2_Paradigm paradigm;
    std::string file;
    bool operator<(const RegionKey& o) const
    {
        return std::tie(name, canonical, role, paradigm, file)
            < std::tie(o.name, o.canonical, o.role, o.paradigm, o.file);
    }
};

// Collects definitions while events are written; writes them all at the end (strings first).
class Defs
{
public:
    OTF2_StringRef str(const std::string& s) { return intern(m_strings, m_stringList, s).first; }
    OTF2_RegionRef region(const RegionKey& key)
    {
        const auto [ref, fresh] = intern(m_regions, m_regionList, key);
        if (fresh) {
            str(key.name);
            str(key.canonical);
            str(key.file);
        }
        return ref;
    }
    const std::vector<std::string>& strings() const { return m_stringList; }
    const std::vector<RegionKey>& regions() const { return m_regionList; }

private:
    // The reference of `key` (the next one when it is new) and whether it is new.
    template <typename Map, typename Key>
    static std::pair<typename Map::mapped_type, bool> intern(Map& map, std::vector<Key>& list, const Key& key)
    {
        const auto [it, fresh] = map.try_emplace(key, typename Map::mapped_type(list.size()));
        if (fresh)
            list.push_back(key);
        return { it->second, fresh };
    }

    std::unordered_map<std::string, OTF2_StringRef> m_strings;
    std::vector<std::string> m_stringList;
    std::map<RegionKey, OTF2_RegionRef> m_regions;
    std::vector<RegionKey> m_regionList;
};

OTF2_RegionRole toRole(RegionRole r)
{
    switch (r) {
    case RegionRole::Function:
        return OTF2_REGION_ROLE_FUNCTION;
    case RegionRole::Wrapper:
        return OTF2_REGION_ROLE_WRAPPER;
    case RegionRole::Artificial:
        return OTF2_REGION_ROLE_ARTIFICIAL;
    case RegionRole::ImplicitBarrier:
        return OTF2_REGION_ROLE_IMPLICIT_BARRIER;
    case RegionRole::User:
        return OTF2_REGION_ROLE_FUNCTION;
    }
    return OTF2_REGION_ROLE_FUNCTION;
}

constexpr const char* kParamNames[7] = { "blocks per grid", "threads per block", "threads per kernel",
    "static shared memory", "dynamic shared memory", "total local memory", "registers per thread" };

struct LocationDef
{
    OTF2_LocationRef id = 0;
    std::string name;
    OTF2_LocationType type = OTF2_LOCATION_TYPE_CPU_THREAD;
    OTF2_LocationGroupRef group = 0;
    std::uint64_t events = 0;
    bool nullStream = false;
};

struct GroupDef
{
    OTF2_LocationGroupRef id = 0;
    std::string name;
    OTF2_LocationGroupType type = OTF2_LOCATION_GROUP_TYPE_PROCESS;
    OTF2_SystemTreeNodeRef parent = 0;
    OTF2_LocationGroupRef creator = OTF2_UNDEFINED_LOCATION_GROUP;
};

struct NodeDef
{
    std::string name;
    std::string cls;
    OTF2_SystemTreeNodeRef parent = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
    OTF2_SystemTreeDomain domain = OTF2_SYSTEM_TREE_DOMAIN_MACHINE;
};

class ArchiveWriter
{
public:
    ArchiveWriter(const std::string& dir, const ArchiveSpec& spec, std::vector<const RankSpec*> ranks)
        : m_dir(dir)
        , m_spec(spec)
        , m_ranks(std::move(ranks))
    { }

    std::uint64_t write();

private:
    std::uint64_t ticks(Ns ns) const
    {
        if (ns < 0)
            throw FixtureError("negative time " + std::to_string(ns));
        // A rank on a host whose clock reads later: every tick it writes (and so its ClockProperties) moves with it.
        ns += m_ranks.size() == 1 ? m_ranks.front()->clockOffsetNs : 0;
        const U128 scaled = U128(ns) * m_spec.timerResolution;
        if (scaled % 1'000'000'000u != 0)
            throw FixtureError("time " + std::to_string(ns) + " ns is not a whole number of ticks at "
                + std::to_string(m_spec.timerResolution) + " ticks/s");
        const U128 t = scaled / 1'000'000'000u + m_spec.globalOffsetTicks;
        if (t >= U128(OTF2_UNDEFINED_TIMESTAMP))
            throw FixtureError("time overflows 64-bit ticks");
        m_maxTicks = std::max<std::uint64_t>(m_maxTicks, std::uint64_t(t));
        return std::uint64_t(t);
    }

    bool hip() const { return m_spec.paradigm == "HIP"; }
    OTF2_Paradigm paradigm() const { return hip() ? OTF2_PARADIGM_HIP : OTF2_PARADIGM_CUDA; }

    void writeCpu(
        OTF2_EvtWriter* w, LocationDef& loc, const CpuThreadSpec& t, const std::vector<OTF2_LocationRef>& streamLocs);
    void writeStream(OTF2_EvtWriter* w, LocationDef& loc, const RankSpec& r, const StreamSpec& s,
        std::uint32_t commIndex, const std::vector<std::uint32_t>& streamCommIndex);
    void writeMetrics(OTF2_EvtWriter* w, LocationDef& loc, const RankSpec& r);
    OTF2_RegionRef cpuRegion(const std::string& name, RegionRole role);

    // The stages of write().
    struct RankLocs
    {
        std::vector<OTF2_LocationRef> threads;
        std::vector<OTF2_LocationRef> streams;
        std::vector<std::size_t> streamLocIndex;
        std::vector<std::size_t> threadLocIndex;
        std::size_t metricLocIndex = ~std::size_t(0);
    };
    std::vector<RankLocs> defineLocations();
    void defineRankLocations(const RankSpec& r, RankLocs& rl);
    OTF2_LocationGroupRef streamGroup(const RankSpec& r, const StreamSpec& s, OTF2_SystemTreeNodeRef host,
        OTF2_LocationGroupRef processGroup, std::map<int, OTF2_LocationGroupRef>& contexts);
    void writeEvents(OTF2_Archive* archive, const std::vector<RankLocs>& rankLocs);
    void writeLocalDefinitions(OTF2_Archive* archive);
    void writeGlobalDefinitions(OTF2_Archive* archive);
    void internDefinitionStrings();
    void writeGroupsAndMetrics(OTF2_GlobalDefWriter* g);
    OTF2_LocationRef refOf(OTF2_LocationRef id) const;
    std::map<std::string, OTF2_SystemTreeNodeRef> m_hostNodes;
    std::map<std::pair<std::string, int>, OTF2_SystemTreeNodeRef> m_deviceNodes;

    std::string m_dir;
    const ArchiveSpec& m_spec;
    std::vector<const RankSpec*> m_ranks;
    Defs m_defs;
    std::vector<LocationDef> m_locations;
    std::vector<GroupDef> m_groups;
    std::vector<NodeDef> m_nodes;
    std::vector<OTF2_LocationRef> m_commMembers; // CUDA comm group: host threads first, then streams
    mutable std::uint64_t m_maxTicks = 0;
    std::uint64_t m_minTicks = ~0ull;
    std::uint64_t m_total = 0;
};

OTF2_RegionRef ArchiveWriter::cpuRegion(const std::string& name, RegionRole role)
{
    std::string file;
    OTF2_Paradigm par = OTF2_PARADIGM_USER;
    if (role == RegionRole::Wrapper) {
        file = hip() ? "HIP" : "CUDRV";
        par = paradigm();
    } else if (role == RegionRole::ImplicitBarrier) {
        file = hip() ? "HIP_SYNC" : "CUDA_SYNC";
        par = paradigm();
    } else if (role == RegionRole::Artificial) {
        par = OTF2_PARADIGM_MEASUREMENT_SYSTEM;
    } else if (role == RegionRole::Function) {
        par = OTF2_PARADIGM_COMPILER;
        file = "train.py";
    }
    return m_defs.region({ name, name, toRole(role), par, file });
}

void ArchiveWriter::writeCpu(
    OTF2_EvtWriter* w, LocationDef& loc, const CpuThreadSpec& t, const std::vector<OTF2_LocationRef>& streamLocs)
{
    if (!t.raw.empty()) {
        for (const auto& e : t.raw) {
            const auto ref = cpuRegion(e.region, RegionRole::Function);
            const std::uint64_t ts = e.rawTicks ? e.rawTicks : ticks(e.time);
            m_minTicks = std::min(m_minTicks, ts);
            m_maxTicks = std::max(m_maxTicks, ts);
            if (e.type == RawEvent::Enter)
                check(OTF2_EvtWriter_Enter(w, nullptr, ts, ref), "Enter");
            else
                check(OTF2_EvtWriter_Leave(w, nullptr, ts, ref), "Leave");
            ++loc.events;
        }
        return;
    }
    std::vector<const CpuRegion*> order;
    order.reserve(t.regions.size());
    for (const auto& r : t.regions) {
        if (r.end < r.start)
            throw FixtureError("region " + r.name + " ends before it starts");
        order.push_back(&r);
    }
    std::stable_sort(order.begin(), order.end(), [](const CpuRegion* a, const CpuRegion* b) {
        return a->start != b->start ? a->start < b->start : a->end > b->end;
    });
    OTF2_AttributeList* attrs = OTF2_AttributeList_New();
    std::vector<std::pair<const CpuRegion*, OTF2_RegionRef>> stack;
    auto leaveUntil = [&](Ns t0) {
        while (!stack.empty() && stack.back().first->end <= t0) {
            const auto ts = ticks(stack.back().first->end);
            check(OTF2_EvtWriter_Leave(w, nullptr, ts, stack.back().second), "Leave");
            ++loc.events;
            stack.pop_back();
        }
    };
    for (const CpuRegion* r : order) {
        leaveUntil(r->start);
        if (!stack.empty() && stack.back().first->end < r->end)
            throw FixtureError("region " + r->name + " is not nested inside " + stack.back().first->name);
        const auto ref = cpuRegion(r->name, r->role);
        OTF2_AttributeList* a = nullptr;
        if (r->launchStream >= 0) {
            if (std::size_t(r->launchStream) >= streamLocs.size())
                throw FixtureError("launchStream out of range in " + r->name);
            check(OTF2_AttributeList_AddLocationRef(attrs, 0, refOf(streamLocs[r->launchStream])), "attribute");
            a = attrs;
        }
        const auto ts = ticks(r->start);
        m_minTicks = std::min(m_minTicks, ts);
        check(OTF2_EvtWriter_Enter(w, a, ts, ref), "Enter");
        ++loc.events;
        stack.emplace_back(r, ref);
    }
    leaveUntil(std::numeric_limits<Ns>::max());
    OTF2_AttributeList_Delete(attrs);
}

void ArchiveWriter::writeStream(OTF2_EvtWriter* w, LocationDef& loc, const RankSpec& r, const StreamSpec& s,
    std::uint32_t commIndex, const std::vector<std::uint32_t>& streamCommIndex)
{
    // One item per kernel, copy or idle gap; events sorted by (time, phase) so that back-to-back items and
    // zero-length items come out in a valid order.
    struct Ev
    {
        Ns time;
        int phase; // 0 = end of an item that started earlier, 1 = start
        int kind; // 0 kernel, 1 copy, 2 idle; +3: a zero-length item (start and end written together)
        std::size_t index;
    };
    std::vector<Ev> evs;
    evs.reserve(2 * (s.kernels.size() + s.copies.size() + s.idle.size()));
    auto add = [&](Ns a, Ns b, int kind, std::size_t i, const char* what) {
        if (b < a)
            throw FixtureError(std::string(what) + " ends before it starts");
        // A zero-length item is written as one start event that also writes its end (phase 3), so nothing can
        // come between its Enter and Leave.
        if (b == a) {
            evs.push_back({ a, 1, kind + 3, i });
        } else {
            evs.push_back({ a, 1, kind, i });
            evs.push_back({ b, 0, kind, i });
        }
    };
    for (std::size_t i = 0; i < s.kernels.size(); ++i)
        add(s.kernels[i].start, s.kernels[i].end, 0, i, "kernel");
    for (std::size_t i = 0; i < s.copies.size(); ++i)
        add(s.copies[i].start, s.copies[i].end, 1, i, "copy");
    for (std::size_t i = 0; i < s.idle.size(); ++i)
        add(s.idle[i].start, s.idle[i].end, 2, i, "idle");
    std::stable_sort(evs.begin(), evs.end(),
        [](const Ev& a, const Ev& b) { return a.time != b.time ? a.time < b.time : a.phase < b.phase; });

    const OTF2_RegionRef idleRegion = m_defs.region(
        { "COMPUTE IDLE", "COMPUTE IDLE", OTF2_REGION_ROLE_ARTIFICIAL, paradigm(), hip() ? "HIP_IDLE" : "CUDA_IDLE" });
    const OTF2_RegionRole kernelRole
        = m_spec.kernelRole == KernelRole::Raw40 ? OTF2_RegionRole(40) : OTF2_RegionRole(OTF2_REGION_ROLE_FUNCTION);
    const std::string kernelFile = hip() ? "HIP_KERNEL" : "CUDA_KERNEL";
    std::uint64_t matching = 0;
    for (const Ev& zero : evs) {
        // Expand a zero-length item into its start and end.
        const int n = zero.kind >= 3 ? 2 : 1;
        for (int part = 0; part < n; ++part) {
            const Ev e = zero.kind >= 3 ? Ev { zero.time, part == 0 ? 1 : 0, zero.kind - 3, zero.index } : zero;
            const auto ts = ticks(e.time);
            m_minTicks = std::min(m_minTicks, ts);
            if (e.kind == 0) {
                const KernelSpec& k = s.kernels[e.index];
                const auto ref = m_defs.region(
                    { k.name, k.mangled.empty() ? k.name : k.mangled, kernelRole, paradigm(), kernelFile });
                if (e.phase == 1) {
                    check(OTF2_EvtWriter_Enter(w, nullptr, ts, ref), "kernel Enter");
                    ++loc.events;
                    if (r.kernelCounters) {
                        const std::uint64_t values[7] = { k.blocksPerGrid, k.threadsPerBlock,
                            k.blocksPerGrid * k.threadsPerBlock, 0, 0, 0, k.registersPerThread };
                        for (std::uint32_t p = 0; p < 7; ++p) {
                            check(OTF2_EvtWriter_ParameterUnsignedInt(w, nullptr, ts, p, values[p]), "parameter");
                            ++loc.events;
                        }
                    }
                } else {
                    check(OTF2_EvtWriter_Leave(w, nullptr, ts, ref), "kernel Leave");
                    ++loc.events;
                }
            } else if (e.kind == 1) {
                const CopySpec& c = s.copies[e.index];
                // Copies on one stream never overlap, so a per-stream counter is a valid matching id.
                if (e.phase == 1) {
                    ++matching;
                    if (c.kind == CopyKind::DtoH)
                        check(OTF2_EvtWriter_RmaPut(w, nullptr, ts, 0, 0, c.bytes, matching), "RmaPut");
                    else
                        check(OTF2_EvtWriter_RmaGet(w, nullptr, ts, 0,
                                  c.kind != CopyKind::DtoD ? 0
                                      : c.peerStream >= 0 && std::size_t(c.peerStream) < streamCommIndex.size()
                                      ? streamCommIndex[std::size_t(c.peerStream)]
                                      : commIndex,
                                  c.bytes, matching),
                            "RmaGet");
                } else {
                    check(OTF2_EvtWriter_RmaOpCompleteBlocking(w, nullptr, ts, 0, matching), "RmaOpCompleteBlocking");
                }
                ++loc.events;
            } else {
                if (e.phase == 1)
                    check(OTF2_EvtWriter_Enter(w, nullptr, ts, idleRegion), "idle Enter");
                else
                    check(OTF2_EvtWriter_Leave(w, nullptr, ts, idleRegion), "idle Leave");
                ++loc.events;
            }
        }
    }
}

void ArchiveWriter::writeMetrics(OTF2_EvtWriter* w, LocationDef& loc, const RankSpec& r)
{
    const OTF2_Type type = OTF2_TYPE_UINT64;
    for (int i = 0; i < r.metricEvents; ++i) {
        OTF2_MetricValue v;
        v.unsigned_int = std::uint64_t(i) * 1024u * 1024u;
        // Whole ticks from the clock origin, so that any timer resolution works.
        const std::uint64_t ts = m_spec.globalOffsetTicks + std::uint64_t(i) * 1000u;
        m_maxTicks = std::max(m_maxTicks, ts);
        check(OTF2_EvtWriter_Metric(w, nullptr, ts, 0, 1, &type, &v), "Metric");
        ++loc.events;
    }
}

// Stage 1: system tree, groups and location ids (streams need their location ids for CUDA_STREAM_REF).
std::vector<ArchiveWriter::RankLocs> ArchiveWriter::defineLocations()
{
    m_nodes.push_back({ "Linux", "machine", OTF2_UNDEFINED_SYSTEM_TREE_NODE, OTF2_SYSTEM_TREE_DOMAIN_MACHINE });
    std::vector<RankLocs> rankLocs(m_ranks.size());
    for (std::size_t ri = 0; ri < m_ranks.size(); ++ri)
        defineRankLocations(*m_ranks[ri], rankLocs[ri]);
    for (const auto& rl : rankLocs)
        for (auto id : rl.streams)
            m_commMembers.push_back(id);
    return rankLocs;
}

// The accelerator context group of a stream (Score-P 8 layout: one per device, under a device node), else the
// process group.
OTF2_LocationGroupRef ArchiveWriter::streamGroup(const RankSpec& r, const StreamSpec& s, OTF2_SystemTreeNodeRef host,
    OTF2_LocationGroupRef processGroup, std::map<int, OTF2_LocationGroupRef>& contexts)
{
    if (m_spec.layout != Layout::ScoreP8)
        return processGroup;
    const std::string deviceClass = hip() ? "ROCm Device" : "CUDA Device";
    const std::string contextName = hip() ? "HIP Context " : "CUDA Context ";
    auto dn = m_deviceNodes.find({ r.host, s.device });
    if (dn == m_deviceNodes.end()) {
        m_nodes.push_back({ std::to_string(s.device), deviceClass, host, OTF2_SYSTEM_TREE_DOMAIN_ACCELERATOR_DEVICE });
        dn = m_deviceNodes.emplace(std::make_pair(r.host, s.device), OTF2_SystemTreeNodeRef(m_nodes.size() - 1)).first;
    }
    auto c = contexts.find(s.device);
    if (c == contexts.end()) {
        const auto gid = OTF2_LocationGroupRef(m_groups.size());
        m_groups.push_back({ gid, contextName + std::to_string(contexts.size() + 1),
            OTF2_LOCATION_GROUP_TYPE_ACCELERATOR, dn->second, processGroup });
        c = contexts.emplace(s.device, gid).first;
    }
    return c->second;
}

void ArchiveWriter::defineRankLocations(const RankSpec& r, RankLocs& rl)
{
    const std::uint64_t mpiRank = m_spec.mpi ? std::uint64_t(r.rank) : 0;
    auto hn = m_hostNodes.find(r.host);
    if (hn == m_hostNodes.end()) {
        m_nodes.push_back({ r.host, "node", 0, OTF2_SYSTEM_TREE_DOMAIN_SHARED_MEMORY });
        hn = m_hostNodes.emplace(r.host, OTF2_SystemTreeNodeRef(m_nodes.size() - 1)).first;
    }
    const auto processGroup = OTF2_LocationGroupRef(m_groups.size());
    m_groups.push_back({ processGroup, m_spec.mpi ? "MPI Rank " + std::to_string(r.rank) : "Process",
        OTF2_LOCATION_GROUP_TYPE_PROCESS, hn->second, OTF2_UNDEFINED_LOCATION_GROUP });
    std::uint64_t local = 0;
    auto newLoc = [&](std::string name, OTF2_LocationType type, OTF2_LocationGroupRef g) {
        LocationDef l;
        l.id = (local++ << 32) | mpiRank;
        l.name = std::move(name);
        l.type = type;
        l.group = g;
        m_locations.push_back(l);
        return m_locations.size() - 1;
    };
    for (std::size_t ti = 0; ti < r.threads.size(); ++ti) {
        rl.threadLocIndex.push_back(newLoc(r.threads[ti].name, OTF2_LOCATION_TYPE_CPU_THREAD, processGroup));
        if (ti == 0 && r.metricEvents > 0)
            rl.metricLocIndex = newLoc("Per process metrics", OTF2_LOCATION_TYPE_METRIC, processGroup);
    }
    std::map<int, OTF2_LocationGroupRef> contexts;
    for (const auto& s : r.streams) {
        const OTF2_LocationGroupRef g = streamGroup(r, s, hn->second, processGroup, contexts);
        const std::string name = m_spec.paradigm + "[" + (s.unknownDevice ? std::string("?") : std::to_string(s.device))
            + ":" + std::to_string(s.stream) + "]";
        const auto li = newLoc(name, OTF2_LOCATION_TYPE_ACCELERATOR_STREAM, g);
        m_locations[li].nullStream = s.nullStream;
        rl.streamLocIndex.push_back(li);
    }
    for (auto i : rl.threadLocIndex)
        rl.threads.push_back(m_locations[i].id);
    for (auto i : rl.streamLocIndex)
        rl.streams.push_back(m_locations[i].id);
    if (!rl.threads.empty())
        m_commMembers.push_back(rl.threads[0]);
}

// Stage 2: the event files, location by location.
void ArchiveWriter::writeEvents(OTF2_Archive* archive, const std::vector<RankLocs>& rankLocs)
{
    check(OTF2_Archive_OpenEvtFiles(archive), "open event files");
    for (std::size_t ri = 0; ri < m_ranks.size(); ++ri) {
        const RankSpec& r = *m_ranks[ri];
        const auto& rl = rankLocs[ri];
        for (std::size_t ti = 0; ti < r.threads.size(); ++ti) {
            auto& loc = m_locations[rl.threadLocIndex[ti]];
            OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, loc.id);
            if (!w)
                throw FixtureError("no event writer");
            writeCpu(w, loc, r.threads[ti], rl.streams);
            check(OTF2_Archive_CloseEvtWriter(archive, w), "close event writer");
        }
        std::vector<std::uint32_t> streamCommIndex;
        for (std::size_t si = 0; si < r.streams.size(); ++si) {
            const auto id = m_locations[rl.streamLocIndex[si]].id;
            streamCommIndex.push_back(
                std::uint32_t(std::find(m_commMembers.begin(), m_commMembers.end(), id) - m_commMembers.begin()));
        }
        for (std::size_t si = 0; si < r.streams.size(); ++si) {
            auto& loc = m_locations[rl.streamLocIndex[si]];
            OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, loc.id);
            writeStream(w, loc, r, r.streams[si], streamCommIndex[si], streamCommIndex);
            check(OTF2_Archive_CloseEvtWriter(archive, w), "close event writer");
        }
        if (rl.metricLocIndex != ~std::size_t(0)) {
            auto& loc = m_locations[rl.metricLocIndex];
            OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, loc.id);
            writeMetrics(w, loc, r);
            check(OTF2_Archive_CloseEvtWriter(archive, w), "close event writer");
        }
    }
    check(OTF2_Archive_CloseEvtFiles(archive), "close event files");
}

// How an event refers to location `id`: its global id, or its local one where the spec asks for local ids.
OTF2_LocationRef ArchiveWriter::refOf(OTF2_LocationRef id) const
{
    if (!m_spec.localLocationIds)
        return id;
    for (std::size_t i = 0; i < m_locations.size(); ++i)
        if (m_locations[i].id == id)
            return OTF2_LocationRef(i);
    throw FixtureError("no location " + std::to_string(id));
}

// Stage 3: local definition files, one per location as Score-P writes them; empty unless the spec asks for local
// location ids or clock offsets.
void ArchiveWriter::writeLocalDefinitions(OTF2_Archive* archive)
{
    check(OTF2_Archive_OpenDefFiles(archive), "open definition files");
    std::vector<uint64_t> globalIds;
    for (const auto& loc : m_locations)
        globalIds.push_back(loc.id);
    for (const auto& loc : m_locations) {
        OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(archive, loc.id);
        if (!dw)
            throw FixtureError("no definition writer");
        if (m_spec.localLocationIds) {
            OTF2_IdMap* map = OTF2_IdMap_CreateFromUint64Array(globalIds.size(), globalIds.data(), false);
            if (!map)
                throw FixtureError("cannot create a mapping table");
            const auto rc = OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_LOCATION, map);
            OTF2_IdMap_Free(map);
            check(rc, "MappingTable");
        }
        if (m_spec.clockOffsetRecords && m_minTicks <= m_maxTicks) {
            check(OTF2_DefWriter_WriteClockOffset(dw, m_minTicks, m_spec.clockOffsetTicks, 0.0), "ClockOffset");
            check(OTF2_DefWriter_WriteClockOffset(dw, m_maxTicks, m_spec.clockOffsetTicks, 0.0), "ClockOffset");
        }
        check(OTF2_Archive_CloseDefWriter(archive, dw), "close definition writer");
    }
    check(OTF2_Archive_CloseDefFiles(archive), "close definition files");
}

// Every string of the global definitions exists before they are written.
void ArchiveWriter::internDefinitionStrings()
{
    for (const auto& n : m_nodes) {
        m_defs.str(n.name);
        m_defs.str(n.cls);
    }
    for (const auto& gr : m_groups)
        m_defs.str(gr.name);
    for (const auto& l : m_locations)
        m_defs.str(l.name);
    for (const char* s : { "CUDA_STREAM_REF", "Referenced CUDA stream", "yes", "CUDA_WINDOW", "CUDA_GROUP", "CUDA",
             "HIP", "CUDA Memory", "bytes", "", "PCI Bus ID" })
        m_defs.str(s);
    m_defs.str(hip() ? "hipNullStream" : "CUDA_NULL_STREAM");
    for (const char* p : kParamNames)
        m_defs.str(p);
}

// Stage 4: the global definitions.
void ArchiveWriter::writeGlobalDefinitions(OTF2_Archive* archive)
{
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
    if (!g)
        throw FixtureError("no global definition writer");
    internDefinitionStrings();
    const std::string nullProp = hip() ? "hipNullStream" : "CUDA_NULL_STREAM";
    if (m_minTicks == ~0ull)
        m_minTicks = m_spec.globalOffsetTicks;
    const std::uint64_t offset = std::min(m_minTicks, m_spec.globalOffsetTicks);
    check(OTF2_GlobalDefWriter_WriteClockProperties(
              g, m_spec.timerResolution, offset, m_maxTicks - offset, OTF2_UNDEFINED_TIMESTAMP),
        "ClockProperties");
    const auto& strings = m_defs.strings();
    for (std::size_t i = 0; i < strings.size(); ++i)
        check(OTF2_GlobalDefWriter_WriteString(g, OTF2_StringRef(i), strings[i].c_str()), "String");
    check(
        OTF2_GlobalDefWriter_WriteParadigm(g, paradigm(), m_defs.str(m_spec.paradigm), OTF2_PARADIGM_CLASS_ACCELERATOR),
        "Paradigm");
    for (std::size_t i = 0; i < m_nodes.size(); ++i) {
        const auto& n = m_nodes[i];
        check(OTF2_GlobalDefWriter_WriteSystemTreeNode(
                  g, OTF2_SystemTreeNodeRef(i), m_defs.str(n.name), m_defs.str(n.cls), n.parent),
            "SystemTreeNode");
        check(OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(g, OTF2_SystemTreeNodeRef(i), n.domain), "Domain");
    }
    for (const auto& gr : m_groups)
        check(OTF2_GlobalDefWriter_WriteLocationGroup(g, gr.id, m_defs.str(gr.name), gr.type, gr.parent, gr.creator),
            "LocationGroup");
    for (const auto& l : m_locations)
        check(OTF2_GlobalDefWriter_WriteLocation(g, l.id, m_defs.str(l.name), l.type, l.events, l.group), "Location");
    for (const auto& l : m_locations) {
        if (!l.nullStream)
            continue;
        OTF2_AttributeValue v;
        v.stringRef = m_defs.str("yes");
        check(OTF2_GlobalDefWriter_WriteLocationProperty(g, l.id, m_defs.str(nullProp), OTF2_TYPE_STRING, v),
            "LocationProperty");
    }
    const auto& regions = m_defs.regions();
    for (std::size_t i = 0; i < regions.size(); ++i) {
        const auto& r = regions[i];
        check(OTF2_GlobalDefWriter_WriteRegion(g, OTF2_RegionRef(i), m_defs.str(r.name), m_defs.str(r.canonical),
                  m_defs.str(""), r.role, r.paradigm, OTF2_REGION_FLAG_NONE,
                  r.file.empty() ? OTF2_UNDEFINED_STRING : m_defs.str(r.file), 0, 0),
            "Region");
    }
    writeGroupsAndMetrics(g);
    check(OTF2_Archive_CloseGlobalDefWriter(archive, g), "close global definitions");
}

// The attribute, parameters, communication groups, RMA window and metric definitions the events refer to.
void ArchiveWriter::writeGroupsAndMetrics(OTF2_GlobalDefWriter* g)
{
    check(OTF2_GlobalDefWriter_WriteAttribute(
              g, 0, m_defs.str("CUDA_STREAM_REF"), m_defs.str("Referenced CUDA stream"), OTF2_TYPE_LOCATION),
        "Attribute");
    for (std::uint32_t p = 0; p < 7; ++p)
        check(OTF2_GlobalDefWriter_WriteParameter(g, p, m_defs.str(kParamNames[p]), OTF2_PARAMETER_TYPE_UINT64),
            "Parameter");
    std::vector<std::uint64_t> ranksIdx(m_commMembers.size());
    for (std::size_t i = 0; i < ranksIdx.size(); ++i)
        ranksIdx[i] = i;
    check(OTF2_GlobalDefWriter_WriteGroup(g, 0, m_defs.str(m_spec.paradigm), OTF2_GROUP_TYPE_COMM_LOCATIONS, paradigm(),
              OTF2_GROUP_FLAG_NONE, std::uint32_t(m_commMembers.size()), m_commMembers.data()),
        "Group");
    check(OTF2_GlobalDefWriter_WriteGroup(g, 1, m_defs.str("CUDA_GROUP"), OTF2_GROUP_TYPE_COMM_GROUP, paradigm(),
              OTF2_GROUP_FLAG_NONE, std::uint32_t(ranksIdx.size()), ranksIdx.data()),
        "Group");
    check(OTF2_GlobalDefWriter_WriteComm(g, 0, m_defs.str(""), 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "Comm");
    check(OTF2_GlobalDefWriter_WriteRmaWin(g, 0, m_defs.str("CUDA_WINDOW"), 0, OTF2_RMA_WIN_FLAG_NONE), "RmaWin");
    check(OTF2_GlobalDefWriter_WriteMetricMember(g, 0, m_defs.str("CUDA Memory"), m_defs.str("CUDA Memory"),
              OTF2_METRIC_TYPE_OTHER, OTF2_METRIC_ABSOLUTE_NEXT, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0,
              m_defs.str("bytes")),
        "MetricMember");
    const OTF2_MetricMemberRef member = 0;
    check(
        OTF2_GlobalDefWriter_WriteMetricClass(g, 0, 1, &member, OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT),
        "MetricClass");
}

std::uint64_t ArchiveWriter::write()
{
    std::error_code ec;
    std::filesystem::create_directories(m_dir, ec);
    if (ec)
        throw FixtureError("cannot create " + m_dir + ": " + ec.message());
    const std::vector<RankLocs> rankLocs = defineLocations();

    OTF2_Archive* archive = OTF2_Archive_Open(m_dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
        4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!archive)
        throw FixtureError("cannot create an OTF2 archive in " + m_dir);
    struct Closer
    {
        OTF2_Archive* a;
        ~Closer() { OTF2_Archive_Close(a); }
    } closer { archive };
    check(OTF2_Archive_SetFlushCallbacks(archive, &g_flushCallbacks, nullptr), "flush callbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "collective callbacks");
    check(OTF2_Archive_SetCreator(archive, "exposure test fixtures (Score-P 9 layout)"), "creator");
    writeEvents(archive, rankLocs);
    writeLocalDefinitions(archive);
    writeGlobalDefinitions(archive);
    for (const auto& l : m_locations)
        m_total += l.events;
    return m_total;
}

} // namespace

std::uint64_t toTicks(const ArchiveSpec& spec, Ns ns)
{
    const U128 scaled = U128(ns) * spec.timerResolution;
    return std::uint64_t(scaled / 1'000'000'000u + spec.globalOffsetTicks);
}

int patchTimestamp(const std::string& evtFile, std::uint64_t oldTicks, std::uint64_t newTicks)
{
    std::FILE* f = std::fopen(evtFile.c_str(), "r+b");
    if (!f)
        throw FixtureError("cannot open " + evtFile);
    std::vector<unsigned char> data;
    unsigned char buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
        data.insert(data.end(), buf, buf + n);
    unsigned char from[8], to[8];
    for (int i = 0; i < 8; ++i) {
        from[i] = static_cast<unsigned char>(oldTicks >> (8 * i));
        to[i] = static_cast<unsigned char>(newTicks >> (8 * i));
    }
    int count = 0;
    for (std::size_t i = 0; i + 8 <= data.size(); ++i) {
        if (std::memcmp(&data[i], from, 8) == 0) {
            std::memcpy(&data[i], to, 8);
            ++count;
            i += 7;
        }
    }
    std::rewind(f);
    std::fwrite(data.data(), 1, data.size(), f);
    std::fclose(f);
    return count;
}

std::uint64_t writeRankArchive(const std::string& dir, const ArchiveSpec& spec, std::size_t rankIndex)
{
    if (rankIndex >= spec.ranks.size())
        throw FixtureError("rank index out of range");
    ArchiveSpec single = spec;
    single.mpi = false;
    ArchiveWriter w(dir, single, { &spec.ranks[rankIndex] });
    return w.write();
}

std::uint64_t writeArchive(const std::string& dir, const ArchiveSpec& spec)
{
    if (spec.mpi) {
        for (const auto& r : spec.ranks)
            if (r.clockOffsetNs != 0)
                throw FixtureError("clockOffsetNs needs per-rank archives (one archive has one clock)");
        std::vector<const RankSpec*> all;
        for (const auto& r : spec.ranks)
            all.push_back(&r);
        ArchiveWriter w(dir, spec, all);
        return w.write();
    }
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < spec.ranks.size(); ++i) {
        const auto& r = spec.ranks[i];
        const std::string folder = r.folder.empty() ? "rank" + std::to_string(r.rank) : r.folder;
        ArchiveWriter w(dir + "/" + folder, spec, { &r });
        n += w.write();
    }
    return n;
}

} // namespace exposure::synth
