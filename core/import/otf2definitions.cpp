// SPDX-License-Identifier: GPL-3.0-or-later
// The OTF2 importer's definition stage: global definition callbacks and readDefinitions (clock, strings,
// regions, system tree, location groups and locations -> ranks and lanes).
#include "import/otf2importer_p.h"
#include "import/parallelread.h"

#include <algorithm>
#include <iterator>
#include <string_view>

namespace fs = std::filesystem;

namespace exposure {

namespace {

// ---- global definition callbacks -------------------------------------------------------------------------

template <typename V> bool growTo(V& v, std::uint64_t index)
{
    if (index >= kMaxDefRef)
        return false;
    if (v.size() <= index)
        v.resize(std::size_t(index) + 1);
    return true;
}

OTF2_CallbackCode defClock(void* user, uint64_t resolution, uint64_t offset, uint64_t, uint64_t)
{
    auto& a = *static_cast<Otf2ArchiveState*>(user);
    a.resolution = resolution;
    a.globalOffset = offset;
    a.haveClock = true;
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode defString(void* user, OTF2_StringRef self, const char* s)
{
    auto& a = *static_cast<Otf2ArchiveState*>(user);
    if (!growTo(a.strings, self)) {
        a.error = "string id " + std::to_string(self) + " is out of range (corrupt definitions)";
        return OTF2_CALLBACK_INTERRUPT;
    }
    a.strings[self] = s ? s : "";
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode defNode(
    void* user, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef cls, OTF2_SystemTreeNodeRef parent)
{
    auto& a = *static_cast<Otf2ArchiveState*>(user);
    a.nodes[self] = { a.str(name), a.str(cls), parent };
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode defGroup(void* user, OTF2_LocationGroupRef self, OTF2_StringRef name, OTF2_LocationGroupType type,
    OTF2_SystemTreeNodeRef parent, OTF2_LocationGroupRef creator)
{
    auto& a = *static_cast<Otf2ArchiveState*>(user);
    auto& g = a.groups[self];
    g.name = a.str(name);
    g.type = type;
    g.parent = parent;
    g.creator = creator;
    g.defined = true;
    a.groupOrder.push_back(self);
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode defLocation(void* user, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type,
    uint64_t events, OTF2_LocationGroupRef group)
{
    auto& a = *static_cast<Otf2ArchiveState*>(user);
    // A location defined twice would be read twice, and OTF2 3.0 crashes (NULL location record in
    // otf2_archive_get_location) on the second event reader of one location (found by fuzzing).
    if (a.locationIndex.count(self)) {
        a.error = "location " + std::to_string(self) + " is defined twice (corrupt definitions)";
        return OTF2_CALLBACK_INTERRUPT;
    }
    LocationDef l;
    l.id = self;
    l.name = a.str(name);
    l.type = type;
    l.events = events;
    l.group = group;
    a.locationIndex[self] = std::uint32_t(a.locations.size());
    a.locations.push_back(std::move(l));
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode defLocationProperty(
    void* user, OTF2_LocationRef location, OTF2_StringRef name, OTF2_Type type, OTF2_AttributeValue value)
{
    auto& a = *static_cast<Otf2ArchiveState*>(user);
    a.locProps.push_back({ location, { name, { type, value } } });
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode defRegion(void* user, OTF2_RegionRef self, OTF2_StringRef nameRef, OTF2_StringRef canonicalRef,
    OTF2_StringRef, OTF2_RegionRole role, OTF2_Paradigm, OTF2_RegionFlag, OTF2_StringRef fileRef, uint32_t, uint32_t)
{
    auto& a = *static_cast<Otf2ArchiveState*>(user);
    if (!growTo(a.regions, self) || !growTo(a.regionDefined, self)) {
        a.error = "region id " + std::to_string(self) + " is out of range (corrupt definitions)";
        return OTF2_CALLBACK_INTERRUPT;
    }
    const std::string& name = a.str(nameRef);
    const std::string& file = a.str(fileRef);
    a.regionNames.push_back({ self, name, canonicalRef == OTF2_UNDEFINED_STRING ? name : a.str(canonicalRef) });
    RegionInfo r; // its name: internRegionNames

    // What the archive says of the region; its name is asked of LoadOptions::markerKind (the rules) per name, once
    // the import knows every name (setRegionKinds in otf2finish.cpp).
    const bool idle = endsWith(file, "_IDLE");
    const bool sync = role == OTF2_REGION_ROLE_IMPLICIT_BARRIER || endsWith(file, "_SYNC") || endsWith(file, "_FLUSH");
    const bool kernelFile = endsWith(file, "_KERNEL");
    if (idle) {
        r.cpuKind = r.gpuKind = RegionKind::Idle;
    } else if (sync) {
        r.cpuKind = r.gpuKind = RegionKind::Sync;
    } else {
        r.gpuKind = RegionKind::Kernel; // role FUNCTION / KERNEL / 40 / anything Score-P puts on a stream
        if (role == kRoleKernel || kernelFile)
            r.cpuKind = RegionKind::Kernel;
        else if (role == OTF2_REGION_ROLE_WRAPPER || role == OTF2_REGION_ROLE_ALLOCATE
            || role == OTF2_REGION_ROLE_DEALLOCATE || role == OTF2_REGION_ROLE_REALLOCATE
            || role == OTF2_REGION_ROLE_DATA_TRANSFER)
            r.cpuKind = RegionKind::HostApi;
        else
            r.cpuKind = RegionKind::HostRegion;
    }
    a.regions[self] = r;
    a.regionDefined[self] = 1;
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode defAttribute(void* user, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_Type type)
{
    auto& a = *static_cast<Otf2ArchiveState*>(user);
    if (type == OTF2_TYPE_LOCATION && endsWith(a.str(name), "_STREAM_REF") && !a.haveStreamRefAttr) {
        a.streamRefAttr = self;
        a.haveStreamRefAttr = true;
    }
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode defParameter(void* user, OTF2_ParameterRef self, OTF2_StringRef nameRef, OTF2_ParameterType)
{
    auto& a = *static_cast<Otf2ArchiveState*>(user);
    if (self >= kMaxDefRef)
        return OTF2_CALLBACK_SUCCESS;
    if (a.paramField.size() <= self)
        a.paramField.resize(std::size_t(self) + 1, std::int8_t(-1)); // undefined refs: not a launch parameter
    const std::string& n = a.str(nameRef);
    // Score-P's names of the launch parameters; a name's index is its paramField (onParameterUnsigned's kMembers).
    static constexpr std::string_view fields[] = { "blocks per grid", "threads per block", "static shared memory",
        "dynamic shared memory", "total local memory", "registers per thread" };
    const auto it = std::find(std::begin(fields), std::end(fields), n);
    const std::int8_t f = it == std::end(fields) ? std::int8_t(-1) : std::int8_t(it - std::begin(fields));
    a.paramField[self] = f;
    a.haveKernelCounters = a.haveKernelCounters || f >= 0;
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode defCommGroup(void* user, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type,
    OTF2_Paradigm paradigm, OTF2_GroupFlag, uint32_t n, const uint64_t* members)
{
    auto& a = *static_cast<Otf2ArchiveState*>(user);
    if (type != OTF2_GROUP_TYPE_COMM_LOCATIONS && type != OTF2_GROUP_TYPE_COMM_GROUP)
        return OTF2_CALLBACK_SUCCESS;
    auto& g = a.commGroups[self];
    g.type = type;
    g.paradigm = paradigm;
    g.members.assign(members, members + n);
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode defComm(
    void* user, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef group, OTF2_CommRef, OTF2_CommFlag)
{
    auto& a = *static_cast<Otf2ArchiveState*>(user);
    a.commToGroup[self] = group;
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode defRmaWin(void* user, OTF2_RmaWinRef self, OTF2_StringRef, OTF2_CommRef comm, OTF2_RmaWinFlag)
{
    auto& a = *static_cast<Otf2ArchiveState*>(user);
    a.winToComm[self] = comm;
    return OTF2_CALLBACK_SUCCESS;
}

// The rank number of a process group: "MPI Rank 3" -> 3, else -1.
int mpiRankOf(const std::string& name)
{
    static const char prefix[] = "MPI Rank ";
    if (name.compare(0, sizeof prefix - 1, prefix) != 0)
        return -1;
    const char* p = name.c_str() + sizeof prefix - 1;
    char* end = nullptr;
    const long v = std::strtol(p, &end, 10);
    return end != p && v >= 0 && v < (1 << 30) ? int(v) : -1;
}

} // namespace

void Otf2Importer::readDefinitions(const std::vector<ArchiveRef>& archives)
{
    // The global definitions of the archives on all reading threads (each archive to its own state); then, in archive
    // order, their names into the trace and their ranks and lanes: the trace is the same for any thread count, and a
    // run's error names the first bad archive.
    std::vector<std::unique_ptr<Otf2ArchiveState>> read(archives.size());
    readFilesInParallel(archives.size(), fileReadThreads(m_options, archives.size()), [&](std::size_t i) {
        if (m_options.cancel && m_options.cancel->load(std::memory_order_relaxed))
            throw LoadCancelled();
        read[i] = readGlobalDefinitions(archives[i]);
    });
    for (auto& state : read) {
        internRegionNames(*state);
        createRanksAndLanes(*state);
        m_archives.push_back(std::move(state));
    }
}

// Checks the archive's files, opens its reader and reads its global definitions through the callbacks above;
// then resolves RMA windows to locations and the NULL-stream property.
std::unique_ptr<Otf2ArchiveState> Otf2Importer::readGlobalDefinitions(const ArchiveRef& ref)
{
    auto state = std::make_unique<Otf2ArchiveState>();
    auto& a = *state;
    a.ref = ref;
    const fs::path anchor(ref.anchor);
    a.dir = anchor.parent_path().empty() ? std::string(".") : anchor.parent_path().string();
    a.stem = anchor.stem().string();
    a.defPath = a.dir + "/" + a.stem + ".def";
    a.cancel = m_options.cancel;
    a.keepParams = m_options.keepLaunchParameters;

    // Check the files ourselves first: OTF2's own messages do not always say which file is wrong.
    if (auto p = readableProblem(ref.anchor); !p.empty())
        throw LoadError(ref.anchor, "cannot read the OTF2 anchor file: " + p);
    std::error_code ec;
    if (fs::file_size(ref.anchor, ec) == 0 && !ec)
        throw LoadError(ref.anchor, "the OTF2 anchor file is empty");
    if (!fs::exists(a.defPath, ec))
        throw LoadError(a.defPath, "missing global definitions file of the archive");
    if (auto p = readableProblem(a.defPath); !p.empty())
        throw LoadError(a.defPath, "cannot read the global definitions: " + p);
    if (fs::file_size(a.defPath, ec) == 0 && !ec)
        throw LoadError(a.defPath, "the global definitions file is empty");
    if (!endsLikeOtf2File(a.defPath)) // OTF2 would wait forever for the rest of a file cut short
        throw LoadError(a.defPath,
            "truncated global definitions (the file does not end with OTF2's end-of-file "
            "record)");

    a.reader = std::make_unique<otf2::Reader>(ref.anchor);
    OTF2_Reader* r = a.reader->get();

    OTF2_GlobalDefReader* defReader = OTF2_Reader_GetGlobalDefReader(r);
    if (!defReader)
        otf2::fail(OTF2_ERROR_FILE_CAN_NOT_OPEN, a.defPath, "cannot open the global definitions");
    otf2::Callbacks<OTF2_GlobalDefReaderCallbacks, OTF2_GlobalDefReaderCallbacks_Delete> cbs(
        OTF2_GlobalDefReaderCallbacks_New());
    auto* c = cbs.get();
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(c, defClock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(c, defString);
    OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(c, defNode);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(c, defGroup);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(c, defLocation);
    OTF2_GlobalDefReaderCallbacks_SetLocationPropertyCallback(c, defLocationProperty);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(c, defRegion);
    OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(c, defAttribute);
    OTF2_GlobalDefReaderCallbacks_SetParameterCallback(c, defParameter);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(c, defCommGroup);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(c, defComm);
    OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(c, defRmaWin);
    otf2::check(
        OTF2_Reader_RegisterGlobalDefCallbacks(r, defReader, c, &a), a.defPath, "cannot register definition callbacks");
    uint64_t n = 0;
    const auto rc = OTF2_Reader_ReadAllGlobalDefinitions(r, defReader, &n);
    if (!a.error.empty())
        throw LoadError(a.defPath, a.error);
    if (rc != OTF2_SUCCESS)
        otf2::fail(rc, a.defPath, "truncated or corrupt global definitions");
    OTF2_Reader_CloseGlobalDefReader(r, defReader);
    if (!a.haveClock || a.resolution == 0)
        throw LoadError(a.defPath, "no usable ClockProperties definition (timer resolution 0)");

    // Remote index -> location id for each RMA window (comm -> COMM_GROUP -> COMM_LOCATIONS of that paradigm).
    for (const auto& [win, comm] : a.winToComm) {
        auto g = a.commToGroup.find(comm);
        if (g == a.commToGroup.end())
            continue;
        auto cg = a.commGroups.find(g->second);
        if (cg == a.commGroups.end())
            continue;
        const CommGroupDef* locs = nullptr;
        for (const auto& [id, def] : a.commGroups)
            if (def.type == OTF2_GROUP_TYPE_COMM_LOCATIONS && def.paradigm == cg->second.paradigm)
                locs = &def;
        auto& out = a.winMembers[win];
        for (auto m : cg->second.members)
            out.push_back(locs && m < locs->members.size() ? locs->members[m] : ~0ull);
    }

    // Location properties: the NULL stream flag.
    for (const auto& [loc, prop] : a.locProps) {
        const std::string& pname = a.str(prop.first);
        if (!endsWith(pname, "NULL_STREAM") && pname != "hipNullStream")
            continue;
        bool yes = false;
        if (prop.second.first == OTF2_TYPE_STRING) {
            const std::string& v = a.str(prop.second.second.stringRef);
            yes = v == "yes" || v == "1" || v == "true";
        } else if (prop.second.first == OTF2_TYPE_UINT8 || prop.second.first == OTF2_TYPE_UINT32
            || prop.second.first == OTF2_TYPE_UINT64) {
            yes = prop.second.second.uint64 != 0;
        }
        if (auto it = a.locationIndex.find(loc); it != a.locationIndex.end())
            a.locations[it->second].nullStream = yes;
    }

    return state;
}

// The archive's region names into the trace, in the order they were defined (so that names get the ids an archive
// read alone gives them), and its copy names.
void Otf2Importer::internRegionNames(Otf2ArchiveState& a)
{
    Trace& trace = m_trace;
    for (Otf2ArchiveState::RegionName& def : a.regionNames) {
        std::string name = std::move(def.name);
        const std::string& canonical = def.canonical;
        // Demangle once per region definition when the producer left the name mangled.
        StringId canonicalId = kInvalidString;
        if (name == canonical && name.size() > 2 && name[0] == '_' && name[1] == 'Z') {
            // Once per name for the whole load: every rank's archive defines the same kernels again.
            auto cached = m_demangled.find(name);
            if (cached == m_demangled.end())
                cached = m_demangled.emplace(name, demangle(name)).first;
            std::string d = cached->second;
            if (d != name) {
                canonicalId = trace.strings.intern(name);
                name = std::move(d);
            }
        } else if (!canonical.empty() && canonical != name) {
            canonicalId = trace.strings.intern(canonical);
        }
        const StringId id = trace.strings.intern(name);
        a.regions[def.region].name = id;
        if (canonicalId != kInvalidString) {
            if (trace.canonicalNames.size() <= id)
                trace.canonicalNames.resize(id + 1, kInvalidString);
            if (trace.canonicalNames[id] == kInvalidString)
                trace.canonicalNames[id] = canonicalId;
        }
    }
    std::vector<Otf2ArchiveState::RegionName>().swap(a.regionNames);
    a.memcpyNames[0] = trace.strings.intern("memcpy HtoD");
    a.memcpyNames[1] = trace.strings.intern("memcpy DtoH");
    a.memcpyNames[2] = trace.strings.intern("memcpy DtoD");
    a.memcpyNames[3] = trace.strings.intern("memcpy PtoP");
}

namespace {

// The host name of a system-tree node: the nearest ancestor of class "node".
std::string hostOf(const Otf2ArchiveState& a, OTF2_SystemTreeNodeRef node)
{
    for (int guard = 0; guard < 64 && node != OTF2_UNDEFINED_SYSTEM_TREE_NODE; ++guard) {
        auto it = a.nodes.find(node);
        if (it == a.nodes.end())
            break;
        if (it->second.cls == "node")
            return it->second.name;
        node = it->second.parent;
    }
    return std::string();
}

// The PROCESS group a location group belongs to: itself, its creator, else the first process group.
OTF2_LocationGroupRef rankGroupOf(
    const Otf2ArchiveState& a, const std::vector<OTF2_LocationGroupRef>& processGroups, OTF2_LocationGroupRef g)
{
    const OTF2_LocationGroupRef fallback
        = processGroups.empty() ? OTF2_UNDEFINED_LOCATION_GROUP : processGroups.front();
    auto it = a.groups.find(g);
    if (it == a.groups.end())
        return fallback;
    if (it->second.type == OTF2_LOCATION_GROUP_TYPE_PROCESS)
        return g;
    if (it->second.creator != OTF2_UNDEFINED_LOCATION_GROUP) {
        auto creator = a.groups.find(it->second.creator);
        if (creator != a.groups.end() && creator->second.type == OTF2_LOCATION_GROUP_TYPE_PROCESS)
            return it->second.creator;
    }
    return fallback;
}

// "CUDA[?:s]": the device is the system-tree parent of the stream's context group; -1 when it is not a device node.
int deviceOfContext(const Otf2ArchiveState& a, const LocationDef& l)
{
    auto g = a.groups.find(l.group);
    if (g == a.groups.end())
        return -1;
    auto devNode = a.nodes.find(g->second.parent);
    if (devNode == a.nodes.end() || devNode->second.cls.find("Device") == std::string::npos)
        return -1;
    char* end = nullptr;
    const long v = std::strtol(devNode->second.name.c_str(), &end, 10);
    return end && *end == '\0' && !devNode->second.name.empty() ? int(v) : -1;
}

// A location that becomes a lane.
struct PendingLane
{
    std::uint32_t loc;
    int rankIndex;
    bool gpu;
    int device;
    int stream;
};

// Ranks: one per PROCESS location group (one "Process" per Score-P run, or "MPI Rank r" groups), appended to the
// trace. Returns the process groups.
std::vector<OTF2_LocationGroupRef> createRanks(Trace& trace, Otf2ArchiveState& a)
{
    const ArchiveRef& ref = a.ref;
    std::vector<OTF2_LocationGroupRef> processGroups;
    for (auto id : a.groupOrder)
        if (a.groups[id].type == OTF2_LOCATION_GROUP_TYPE_PROCESS)
            processGroups.push_back(id);
    auto addRank = [&](const std::string& groupName, OTF2_SystemTreeNodeRef parent) {
        Rank rank;
        int number = mpiRankOf(groupName);
        if (number < 0 && processGroups.size() <= 1)
            number = ref.rankNumber;
        if (number < 0)
            number = int(trace.ranks.size());
        rank.rank = number;
        rank.label = "Rank " + std::to_string(number);
        rank.host = hostOf(a, parent);
        rank.archivePath = ref.anchor;
        rank.timerResolution = a.resolution;
        trace.ranks.push_back(std::move(rank));
        return int(trace.ranks.size()) - 1;
    };
    for (auto g : processGroups)
        a.groups[g].rankIndex = addRank(a.groups[g].name, a.groups[g].parent);
    if (processGroups.empty())
        addRank(std::string(), OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    return processGroups;
}

// The locations that become lanes, in lane order: by rank, CPU threads first (definition order), then GPU streams
// by (device, stream).
std::vector<PendingLane> pendingLanes(
    Otf2ArchiveState& a, const std::vector<OTF2_LocationGroupRef>& processGroups, std::size_t firstRank)
{
    std::vector<PendingLane> pending;
    for (std::uint32_t i = 0; i < a.locations.size(); ++i) {
        const auto& l = a.locations[i];
        const bool cpu = l.type == OTF2_LOCATION_TYPE_CPU_THREAD;
        const bool gpu = l.type == OTF2_LOCATION_TYPE_ACCELERATOR_STREAM;
        if (!cpu && !gpu)
            continue; // METRIC and unknown locations are never read
        const auto rg = rankGroupOf(a, processGroups, l.group);
        int rankIndex = int(firstRank);
        if (rg != OTF2_UNDEFINED_LOCATION_GROUP && a.groups[rg].rankIndex >= 0)
            rankIndex = a.groups[rg].rankIndex;
        int device = -1, stream = -1;
        if (gpu) {
            parseStreamName(l.name, device, stream);
            if (device < 0)
                device = deviceOfContext(a, l);
        }
        pending.push_back({ i, rankIndex, gpu, device, stream });
    }
    std::stable_sort(pending.begin(), pending.end(), [](const PendingLane& x, const PendingLane& y) {
        if (x.rankIndex != y.rankIndex)
            return x.rankIndex < y.rankIndex;
        if (x.gpu != y.gpu)
            return !x.gpu;
        if (!x.gpu)
            return false;
        return std::make_pair(x.device, x.stream) < std::make_pair(y.device, y.stream);
    });
    // The event count of a location comes from the definitions: a damaged file can claim 2^60. Nothing is reserved
    // from it beyond what its event file can hold (every event takes at least one byte there).
    for (const auto& p : pending) {
        auto& l = a.locations[p.loc];
        std::error_code ec;
        const auto size = fs::file_size(a.evtPath(l.id), ec);
        l.evtBytes = ec ? 0 : std::uint64_t(size);
        l.events = std::min(l.events, l.evtBytes);
    }
    return pending;
}

// The lanes of `pending`, all created before any LaneState points at one (Lane pointers must stay stable while
// events are read).
void createLanes(
    Trace& trace, const Otf2ArchiveState& a, const std::vector<PendingLane>& pending, std::size_t firstRank)
{
    for (const auto& p : pending) {
        const auto& l = a.locations[p.loc];
        Lane lane;
        lane.name = l.name;
        lane.kind = p.gpu ? LaneKind::GpuStream : LaneKind::CpuThread;
        lane.device = p.device;
        lane.stream = p.stream;
        lane.nullStream = l.nullStream;
        lane.locationId = l.id;
        // Reserve from the event count: an interval costs 2 events, plus 7 kernel_counter parameters on streams.
        // (5 for streams: a kernel's 9 events usually come with a 2-event "COMPUTE IDLE" gap; finish() gives back
        // what a lane without idle gaps did not use.)
        const std::uint64_t perInterval = p.gpu && a.haveKernelCounters ? 5 : 2;
        lane.intervals.reserve(std::size_t(std::min<std::uint64_t>(l.events / perInterval + 1, 1u << 24)));
        trace.ranks[std::size_t(p.rankIndex)].lanes.push_back(std::move(lane));
        auto& rank = trace.ranks[std::size_t(p.rankIndex)];
        if (p.gpu && p.device >= 0
            && std::find(rank.devices.begin(), rank.devices.end(), p.device) == rank.devices.end())
            rank.devices.push_back(p.device);
    }
    for (std::size_t ri = firstRank; ri < trace.ranks.size(); ++ri)
        std::sort(trace.ranks[ri].devices.begin(), trace.ranks[ri].devices.end());
}

} // namespace

// Ranks from PROCESS location groups, then lanes: CPU threads in definition order, GPU streams by (device,
// stream); every selected location gets its LaneState.
void Otf2Importer::createRanksAndLanes(Otf2ArchiveState& a)
{
    const std::size_t firstRank = m_trace.ranks.size();
    const auto processGroups = createRanks(m_trace, a);
    a.firstRank = firstRank;
    a.rankCount = m_trace.ranks.size() - firstRank;
    const std::vector<PendingLane> pending = pendingLanes(a, processGroups, firstRank);
    createLanes(m_trace, a, pending, firstRank);
    std::vector<std::uint32_t> nextLane(m_trace.ranks.size(), 0);
    for (const auto& p : pending) {
        const auto& l = a.locations[p.loc];
        auto s = std::make_unique<LaneState>();
        s->archive = &a;
        s->rankIndex = p.rankIndex;
        s->laneIndex = nextLane[std::size_t(p.rankIndex)]++;
        s->lane = &m_trace.ranks[std::size_t(p.rankIndex)].lanes[s->laneIndex];
        s->gpu = p.gpu;
        s->location = l.id;
        s->evtFile = a.evtPath(l.id);
        s->stack.reserve(64);
        s->definedEvents = l.events;
        s->evtBytes = l.evtBytes;
        if (!p.gpu && a.haveStreamRefAttr)
            s->outgoing.reserve(std::size_t(std::min<std::uint64_t>(l.events / 8, 1u << 22)));
        s->usedRegions.assign(a.regions.size(), 0);
        if (p.gpu && a.keepParams) {
            s->paramByRegion.assign(a.regions.size(), kNone);
            s->lane->launchParamIds.reserve(s->lane->intervals.capacity());
        }
        a.laneByLocation[l.id] = s.get();
        m_totalEvents += l.events;
        a.lanes.push_back(std::move(s));
    }
}

} // namespace exposure
