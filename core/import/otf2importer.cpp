// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/otf2importer.h"

#include "import/otf2reader.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <filesystem>
#include <limits>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace fs = std::filesystem;

namespace exposure {

namespace {

__extension__ typedef unsigned __int128 U128; // exact ticks * 1e9 (GCC/Clang extension)

constexpr std::uint32_t kNone = 0xFFFFFFFFu;
constexpr OTF2_RegionRole kRoleKernel = OTF2_RegionRole(40); // OTF2 3.1 OTF2_REGION_ROLE_KERNEL
constexpr std::uint64_t kEventChunk = 1u << 16;              // events per ReadLocalEvents call (progress/cancel)
constexpr std::uint32_t kMaxDefRef = 1u << 26;               // sanity bound for dense definition ids

std::int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

bool endsWith(const std::string& s, const char* suffix)
{
    const std::size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::string demangle(const std::string& mangled)
{
    int status = 0;
    char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
    std::string result = status == 0 && out ? std::string(out) : std::string();
    std::free(out);
    return result;
}

// "CUDA[3:17]" -> device 3, stream 17; "CUDA[?:5]" -> device -1, stream 5.
void parseStreamName(const std::string& name, int& device, int& stream)
{
    device = -1;
    stream = -1;
    const auto open = name.rfind('[');
    const auto colon = name.find(':', open == std::string::npos ? 0 : open);
    const auto close = name.find(']', colon == std::string::npos ? 0 : colon);
    if (open == std::string::npos || colon == std::string::npos || close == std::string::npos)
        return;
    auto number = [&](std::size_t b, std::size_t e) {
        if (b >= e || e - b > 9)
            return -1;
        int v = 0;
        for (std::size_t i = b; i < e; ++i) {
            if (name[i] < '0' || name[i] > '9')
                return -1;
            v = v * 10 + (name[i] - '0');
        }
        return v;
    };
    device = number(open + 1, colon);
    stream = number(colon + 1, close);
}

struct LaunchParamsHash
{
    std::size_t operator()(const KernelLaunchParams& p) const
    {
        std::size_t h = 1469598103934665603ull;
        for (std::uint64_t v : {p.blocksPerGrid, p.threadsPerBlock, p.staticSharedMemory, p.dynamicSharedMemory,
                                p.localMemory, p.registersPerThread})
            h = (h ^ std::hash<std::uint64_t>()(v)) * 1099511628211ull;
        return h;
    }
};

struct RegionInfo
{
    StringId name = kInvalidString;
    RegionKind cpuKind = RegionKind::HostRegion;
    RegionKind gpuKind = RegionKind::Kernel;
};

struct LocationDef
{
    OTF2_LocationRef id = 0;
    std::string name;
    OTF2_LocationType type = OTF2_LOCATION_TYPE_UNKNOWN;
    std::uint64_t events = 0;
    OTF2_LocationGroupRef group = OTF2_UNDEFINED_LOCATION_GROUP;
    bool nullStream = false;
};

struct GroupDef
{
    std::string name;
    OTF2_LocationGroupType type = OTF2_LOCATION_GROUP_TYPE_UNKNOWN;
    OTF2_SystemTreeNodeRef parent = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
    OTF2_LocationGroupRef creator = OTF2_UNDEFINED_LOCATION_GROUP;
    int rankIndex = -1; // index in Trace::ranks (process groups)
    bool defined = false;
};

struct NodeDef
{
    std::string name;
    std::string cls;
    OTF2_SystemTreeNodeRef parent = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
};

struct CommGroupDef
{
    OTF2_GroupType type = OTF2_GROUP_TYPE_UNKNOWN;
    OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
    std::vector<std::uint64_t> members;
};

struct OutgoingLaunch
{
    TimeNs time;
    std::uint32_t targetLane; // lane index within the rank
    std::uint32_t interval;   // the launch interval on this (CPU) lane
};

struct PendingCopy
{
    std::uint64_t matchingId;
    std::uint32_t interval;
    std::uint64_t bytes;
};

struct Frame
{
    std::uint32_t interval; // appended at Enter (so tables are filled in start order), closed at Leave
    std::uint32_t region;
};

} // namespace

struct LaneState;

struct Otf2ArchiveState
{
    ArchiveRef ref;
    std::string dir;     // folder of the anchor
    std::string stem;    // archive name ("traces")
    std::string defPath; // traces.def
    std::unique_ptr<otf2::Reader> reader;

    std::uint64_t resolution = 0;
    std::uint64_t globalOffset = 0;
    bool haveClock = false;

    std::vector<std::string> strings;
    std::vector<RegionInfo> regions;
    std::vector<std::uint8_t> regionDefined;
    std::vector<LocationDef> locations;
    std::unordered_map<OTF2_LocationRef, std::uint32_t> locationIndex;
    std::unordered_map<OTF2_LocationGroupRef, GroupDef> groups;
    std::vector<OTF2_LocationGroupRef> groupOrder;
    std::unordered_map<OTF2_SystemTreeNodeRef, NodeDef> nodes;
    std::vector<std::pair<OTF2_LocationRef, std::pair<OTF2_StringRef, std::pair<OTF2_Type, OTF2_AttributeValue>>>> locProps;
    std::vector<std::int8_t> paramField; // by parameter ref: 0..5 field of KernelLaunchParams, -1 other
    bool haveKernelCounters = false;
    std::unordered_map<std::uint32_t, CommGroupDef> commGroups;
    std::unordered_map<std::uint32_t, std::uint32_t> commToGroup;
    std::unordered_map<std::uint32_t, std::uint32_t> winToComm;
    // Per RMA window: remote index -> location id (for telling DtoD from HtoD).
    std::unordered_map<std::uint32_t, std::vector<std::uint64_t>> winMembers;
    OTF2_AttributeRef streamRefAttr = OTF2_UNDEFINED_ATTRIBUTE;
    bool haveStreamRefAttr = false;

    std::vector<std::unique_ptr<LaneState>> lanes; // selected locations
    std::unordered_map<OTF2_LocationRef, LaneState*> laneByLocation;

    // Shared load state, set by the importer. Read-only while events are read (several threads may read
    // different lanes of one archive); everything written during event reading lives in LaneState.
    Trace* trace = nullptr;
    const std::atomic<bool>* cancel = nullptr;
    bool keepParams = true;
    StringId memcpyNames[3] = {0, 0, 0}; // HtoD, DtoH, DtoD
    std::unordered_map<std::string, std::string>* demangled = nullptr; // mangled -> demangled ("" if not)

    // First error of the definitions phase.
    std::string error;

    const std::string& str(OTF2_StringRef r) const
    {
        static const std::string empty;
        return r < strings.size() ? strings[r] : empty;
    }
    std::string evtPath(OTF2_LocationRef id) const { return dir + "/" + stem + "/" + std::to_string(id) + ".evt"; }
    std::string locDefPath(OTF2_LocationRef id) const { return dir + "/" + stem + "/" + std::to_string(id) + ".def"; }
};

struct LaneState
{
    Otf2ArchiveState* archive = nullptr;
    Lane* lane = nullptr;
    std::uint32_t laneIndex = 0; // within the rank
    int rankIndex = 0;
    bool gpu = false;
    OTF2_LocationRef location = 0;
    std::uint64_t definedEvents = 0;
    std::string evtFile;

    TimeNs lastTime = std::numeric_limits<TimeNs>::min();
    std::vector<Frame> stack;
    std::vector<PendingCopy> copies;
    std::vector<OutgoingLaunch> outgoing; // CPU lanes: launches aimed at streams
    OTF2_LocationRef lastRef = OTF2_UNDEFINED_LOCATION; // cache of the last CUDA_STREAM_REF lookup
    const LaneState* lastTarget = nullptr;
    std::vector<std::uint8_t> usedRegions; // by region ref

    // Launch parameters interned per lane (merged into Trace::launchParams at the end): keeps threads apart.
    KernelLaunchParams params;
    bool haveParams = false;
    std::vector<KernelLaunchParams> localParams;
    std::unordered_map<KernelLaunchParams, std::uint32_t, LaunchParamsHash> localParamIndex;
    std::vector<std::uint32_t> paramByRegion; // by region ref: last local parameter id (GPU lanes)

    std::uint64_t outOfOrder = 0;
    std::uint64_t unmatchedLeave = 0;
    std::uint64_t closedAtEnd = 0;
    std::uint64_t unmatchedCopies = 0;
    std::uint64_t unmatchedCompletions = 0;
    std::uint64_t unknownRegions = 0;

    std::string error; // first error inside a callback (callbacks must not throw through OTF2's C frames)
};

namespace {

// ---- time conversion -------------------------------------------------------------------------------------

// floor(ticks * 1e9 / resolution), exact, false if it does not fit in TimeNs.
inline bool toNs(const Otf2ArchiveState& a, OTF2_TimeStamp ticks, TimeNs& out)
{
    const std::uint64_t res = a.resolution;
    if (res == 1'000'000'000u) {
        if (ticks > std::uint64_t(std::numeric_limits<TimeNs>::max()))
            return false;
        out = TimeNs(ticks);
        return true;
    }
    const U128 product = U128(ticks) * 1'000'000'000u;
    const auto hi = std::uint64_t(product >> 64);
    const auto lo = std::uint64_t(product);
    if (hi >= res)
        return false; // the quotient needs more than 64 bits
    std::uint64_t q;
#if defined(__x86_64__)
    // One 128/64 division instruction; libgcc's __udivti3 costs several times more per event.
    std::uint64_t r;
    __asm__("divq %[d]" : "=a"(q), "=d"(r) : "a"(lo), "d"(hi), [d] "rm"(res));
    (void)r;
#else
    q = std::uint64_t(product / res);
#endif
    if (q > std::uint64_t(std::numeric_limits<TimeNs>::max()))
        return false;
    out = TimeNs(q);
    return true;
}

OTF2_CallbackCode timeError(LaneState& s, OTF2_TimeStamp ticks)
{
    if (s.error.empty())
        s.error = "timestamp " + std::to_string(ticks) + " ticks at " + std::to_string(s.archive->resolution)
            + " ticks/s does not fit in 64-bit nanoseconds (corrupt or near the 64-bit limit)";
    return OTF2_CALLBACK_INTERRUPT;
}

inline bool cancelled(const Otf2ArchiveState& a)
{
    return a.cancel && a.cancel->load(std::memory_order_relaxed);
}

// Common prologue: converts the time and drops events that go back in time. Returns false to skip the event.
inline bool accept(LaneState& s, OTF2_TimeStamp ticks, TimeNs& t, OTF2_CallbackCode& rc)
{
    rc = OTF2_CALLBACK_SUCCESS;
    if (!toNs(*s.archive, ticks, t)) {
        rc = timeError(s, ticks);
        return false;
    }
    if (t < s.lastTime) {
        ++s.outOfOrder;
        return false;
    }
    s.lastTime = t;
    return true;
}

// ---- interval emission -----------------------------------------------------------------------------------

// Appends an open interval [t, t) and its launch-parameter slot; the end is set when it closes.
inline std::uint32_t openInterval(LaneState& s, TimeNs t, StringId name, std::size_t depth)
{
    const auto index = s.lane->intervals.appendOpen(t, name, std::uint8_t(std::min<std::size_t>(depth, 255)));
    if (s.gpu && s.archive->keepParams)
        s.lane->launchParamIds.push_back(kNoLaunchParams);
    return index;
}

void closeFrame(LaneState& s, const Frame& f, TimeNs end)
{
    s.lane->intervals.setEnd(f.interval, end);
    if (s.gpu && s.haveParams) {
        s.haveParams = false;
        if (s.archive->keepParams) {
            // A kernel usually keeps its launch configuration: try the last one seen for this region first and
            // skip the hash lookup when it matches.
            std::uint32_t& cached = s.paramByRegion[f.region];
            if (cached == kNone || !(s.localParams[cached] == s.params)) {
                auto [it, inserted] = s.localParamIndex.try_emplace(s.params, std::uint32_t(s.localParams.size()));
                if (inserted)
                    s.localParams.push_back(s.params);
                cached = it->second;
            }
            s.lane->launchParamIds[f.interval] = cached;
        }
    }
}

// ---- event callbacks -------------------------------------------------------------------------------------

OTF2_CallbackCode onEnter(OTF2_LocationRef, OTF2_TimeStamp ticks, uint64_t, void* user, OTF2_AttributeList* attrs,
                          OTF2_RegionRef region)
{
    auto& s = *static_cast<LaneState*>(user);
    auto& a = *s.archive;
    if (cancelled(a))
        return OTF2_CALLBACK_INTERRUPT;
    TimeNs t;
    OTF2_CallbackCode rc;
    if (!accept(s, ticks, t, rc))
        return rc;
    if (region >= a.regions.size() || !a.regionDefined[region]) {
        ++s.unknownRegions;
        return OTF2_CALLBACK_SUCCESS;
    }
    s.usedRegions[region] = 1;
    const auto index = openInterval(s, t, a.regions[region].name, s.stack.size());
    s.stack.push_back({index, std::uint32_t(region)});
    if (s.gpu) {
        s.haveParams = false;
        s.params = {};
    } else if (attrs && a.haveStreamRefAttr && OTF2_AttributeList_GetNumberOfElements(attrs) > 0) {
        OTF2_LocationRef ref;
        if (OTF2_AttributeList_GetLocationRef(attrs, a.streamRefAttr, &ref) == OTF2_SUCCESS) {
            // Launches mostly go to the stream of the previous one: skip the hash lookup then.
            if (ref != s.lastRef) {
                auto it = a.laneByLocation.find(ref);
                s.lastRef = ref;
                s.lastTarget = it != a.laneByLocation.end() && it->second->rankIndex == s.rankIndex && it->second->gpu
                    ? it->second
                    : nullptr;
            }
            if (s.lastTarget)
                s.outgoing.push_back({t, s.lastTarget->laneIndex, index});
        }
    }
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onLeave(OTF2_LocationRef, OTF2_TimeStamp ticks, uint64_t, void* user, OTF2_AttributeList*,
                          OTF2_RegionRef region)
{
    auto& s = *static_cast<LaneState*>(user);
    TimeNs t;
    OTF2_CallbackCode rc;
    if (!accept(s, ticks, t, rc))
        return rc;
    if (!s.stack.empty() && s.stack.back().region == region) {
        closeFrame(s, s.stack.back(), t);
        s.stack.pop_back();
        return OTF2_CALLBACK_SUCCESS;
    }
    // Mismatch: close the frames above a matching Enter (they lost their Leave), or drop the Leave.
    for (std::size_t k = s.stack.size(); k-- > 0;) {
        if (s.stack[k].region == region) {
            while (s.stack.size() > k) {
                if (s.stack.size() > k + 1)
                    ++s.closedAtEnd;
                closeFrame(s, s.stack.back(), t);
                s.stack.pop_back();
            }
            return OTF2_CALLBACK_SUCCESS;
        }
    }
    ++s.unmatchedLeave;
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onParameterUnsigned(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* user, OTF2_AttributeList*,
                                      OTF2_ParameterRef parameter, uint64_t value)
{
    auto& s = *static_cast<LaneState*>(user); // a stream: registered for GPU lanes only
    if (s.stack.empty())
        return OTF2_CALLBACK_SUCCESS;
    const auto& fields = s.archive->paramField;
    if (parameter >= fields.size() || fields[parameter] < 0)
        return OTF2_CALLBACK_SUCCESS;
    // A member-pointer table instead of a switch: one indexed store per parameter event.
    static constexpr std::uint64_t KernelLaunchParams::*kMembers[6] = {
        &KernelLaunchParams::blocksPerGrid,       &KernelLaunchParams::threadsPerBlock,
        &KernelLaunchParams::staticSharedMemory,  &KernelLaunchParams::dynamicSharedMemory,
        &KernelLaunchParams::localMemory,         &KernelLaunchParams::registersPerThread};
    s.params.*kMembers[fields[parameter]] = value;
    s.haveParams = true;
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode startCopy(LaneState& s, OTF2_TimeStamp ticks, StringId name, uint64_t bytes, uint64_t matchingId)
{
    TimeNs t;
    OTF2_CallbackCode rc;
    if (!accept(s, ticks, t, rc))
        return rc;
    // Appended at its start like every interval (so the table stays in start order), closed by its completion.
    const auto index = openInterval(s, t, name, s.stack.size());
    s.copies.push_back({matchingId, index, bytes});
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onRmaGet(OTF2_LocationRef location, OTF2_TimeStamp ticks, uint64_t, void* user,
                           OTF2_AttributeList*, OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes,
                           uint64_t matchingId)
{
    auto& s = *static_cast<LaneState*>(user);
    auto& a = *s.archive;
    // Score-P writes device-to-device copies as a Get whose remote end is the stream itself.
    bool dtod = false;
    if (auto it = a.winMembers.find(win); it != a.winMembers.end() && remote < it->second.size())
        dtod = it->second[remote] == location;
    return startCopy(s, ticks, a.memcpyNames[dtod ? 2 : 0], bytes, matchingId);
}

OTF2_CallbackCode onRmaPut(OTF2_LocationRef, OTF2_TimeStamp ticks, uint64_t, void* user, OTF2_AttributeList*,
                           OTF2_RmaWinRef, uint32_t, uint64_t bytes, uint64_t matchingId)
{
    auto& s = *static_cast<LaneState*>(user);
    return startCopy(s, ticks, s.archive->memcpyNames[1], bytes, matchingId);
}

OTF2_CallbackCode onRmaComplete(OTF2_LocationRef, OTF2_TimeStamp ticks, uint64_t, void* user, OTF2_AttributeList*,
                                OTF2_RmaWinRef, uint64_t matchingId)
{
    auto& s = *static_cast<LaneState*>(user);
    TimeNs t;
    OTF2_CallbackCode rc;
    if (!accept(s, ticks, t, rc))
        return rc;
    for (std::size_t k = s.copies.size(); k-- > 0;) {
        if (s.copies[k].matchingId == matchingId) {
            const PendingCopy c = s.copies[k];
            s.copies.erase(s.copies.begin() + std::ptrdiff_t(k));
            s.lane->intervals.setEnd(c.interval, t);
            s.lane->copyBytes.emplace_back(c.interval, c.bytes);
            return OTF2_CALLBACK_SUCCESS;
        }
    }
    ++s.unmatchedCompletions;
    return OTF2_CALLBACK_SUCCESS;
}

// ---- global definition callbacks -------------------------------------------------------------------------

template<typename V>
bool growTo(V& v, std::uint64_t index)
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

OTF2_CallbackCode defNode(void* user, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef cls,
                          OTF2_SystemTreeNodeRef parent)
{
    auto& a = *static_cast<Otf2ArchiveState*>(user);
    a.nodes[self] = {a.str(name), a.str(cls), parent};
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

OTF2_CallbackCode defLocationProperty(void* user, OTF2_LocationRef location, OTF2_StringRef name, OTF2_Type type,
                                      OTF2_AttributeValue value)
{
    auto& a = *static_cast<Otf2ArchiveState*>(user);
    a.locProps.push_back({location, {name, {type, value}}});
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode defRegion(void* user, OTF2_RegionRef self, OTF2_StringRef nameRef, OTF2_StringRef canonicalRef,
                            OTF2_StringRef, OTF2_RegionRole role, OTF2_Paradigm, OTF2_RegionFlag,
                            OTF2_StringRef fileRef, uint32_t, uint32_t)
{
    auto& a = *static_cast<Otf2ArchiveState*>(user);
    if (!growTo(a.regions, self) || !growTo(a.regionDefined, self)) {
        a.error = "region id " + std::to_string(self) + " is out of range (corrupt definitions)";
        return OTF2_CALLBACK_INTERRUPT;
    }
    Trace& trace = *a.trace;
    std::string name = a.str(nameRef);
    const std::string& canonical = canonicalRef == OTF2_UNDEFINED_STRING ? name : a.str(canonicalRef);
    const std::string& file = a.str(fileRef);

    // Demangle once per region definition when the producer left the name mangled.
    StringId canonicalId = kInvalidString;
    if (name == canonical && name.size() > 2 && name[0] == '_' && name[1] == 'Z') {
        // Once per name for the whole load: every rank's archive defines the same kernels again.
        auto cached = a.demangled->find(name);
        if (cached == a.demangled->end())
            cached = a.demangled->emplace(name, demangle(name)).first;
        std::string d = cached->second;
        if (!d.empty()) {
            canonicalId = trace.strings.intern(name);
            name = std::move(d);
        }
    } else if (!canonical.empty() && canonical != name) {
        canonicalId = trace.strings.intern(canonical);
    }
    RegionInfo r;
    r.name = trace.strings.intern(name);
    if (canonicalId != kInvalidString) {
        if (trace.canonicalNames.size() <= r.name)
            trace.canonicalNames.resize(r.name + 1, kInvalidString);
        if (trace.canonicalNames[r.name] == kInvalidString)
            trace.canonicalNames[r.name] = canonicalId;
    }

    const bool idle = name == "COMPUTE IDLE" || name == "GPU IDLE" || endsWith(file, "_IDLE");
    const bool sync = name == "DEVICE SYNCHRONIZE" || name.find("BUFFER FLUSH") != std::string::npos
        || role == OTF2_REGION_ROLE_IMPLICIT_BARRIER || endsWith(file, "_SYNC") || endsWith(file, "_FLUSH");
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

OTF2_CallbackCode defAttribute(void* user, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef,
                               OTF2_Type type)
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
    std::int8_t f = -1;
    if (n == "blocks per grid")
        f = 0;
    else if (n == "threads per block")
        f = 1;
    else if (n == "static shared memory")
        f = 2;
    else if (n == "dynamic shared memory")
        f = 3;
    else if (n == "total local memory")
        f = 4;
    else if (n == "registers per thread")
        f = 5;
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

OTF2_CallbackCode defComm(void* user, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef group, OTF2_CommRef,
                          OTF2_CommFlag)
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

std::string readableProblem(const std::string& path)
{
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
        return ec ? ec.message() : std::string("not a regular file");
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return std::strerror(errno);
    std::fclose(f);
    return {};
}

} // namespace

Otf2Importer::Otf2Importer(Trace& trace, const LoadOptions& options)
    : m_trace(trace), m_options(options)
{
    otf2::silenceErrors();
}

Otf2Importer::~Otf2Importer() = default;

void Otf2Importer::readDefinitions(const ArchiveRef& ref)
{
    auto state = std::make_unique<Otf2ArchiveState>();
    auto& a = *state;
    a.ref = ref;
    const fs::path anchor(ref.anchor);
    a.dir = anchor.parent_path().empty() ? std::string(".") : anchor.parent_path().string();
    a.stem = anchor.stem().string();
    a.defPath = a.dir + "/" + a.stem + ".def";
    a.trace = &m_trace;
    a.cancel = m_options.cancel;
    a.keepParams = m_options.keepLaunchParameters;
    a.demangled = &m_demangled;

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
    otf2::check(OTF2_Reader_RegisterGlobalDefCallbacks(r, defReader, c, &a), a.defPath,
                "cannot register definition callbacks");
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

    a.memcpyNames[0] = m_trace.strings.intern("memcpy HtoD");
    a.memcpyNames[1] = m_trace.strings.intern("memcpy DtoH");
    a.memcpyNames[2] = m_trace.strings.intern("memcpy DtoD");

    // Ranks: one per PROCESS location group (one "Process" per Score-P run, or "MPI Rank r" groups).
    std::vector<OTF2_LocationGroupRef> processGroups;
    for (auto id : a.groupOrder)
        if (a.groups[id].type == OTF2_LOCATION_GROUP_TYPE_PROCESS)
            processGroups.push_back(id);
    auto hostOf = [&](OTF2_SystemTreeNodeRef node) {
        for (int guard = 0; guard < 64 && node != OTF2_UNDEFINED_SYSTEM_TREE_NODE; ++guard) {
            auto it = a.nodes.find(node);
            if (it == a.nodes.end())
                break;
            if (it->second.cls == "node")
                return it->second.name;
            node = it->second.parent;
        }
        return std::string();
    };
    auto rankGroupOf = [&](OTF2_LocationGroupRef g) -> OTF2_LocationGroupRef {
        auto it = a.groups.find(g);
        if (it == a.groups.end())
            return processGroups.empty() ? OTF2_UNDEFINED_LOCATION_GROUP : processGroups.front();
        if (it->second.type == OTF2_LOCATION_GROUP_TYPE_PROCESS)
            return g;
        if (it->second.creator != OTF2_UNDEFINED_LOCATION_GROUP) {
            auto creator = a.groups.find(it->second.creator);
            if (creator != a.groups.end() && creator->second.type == OTF2_LOCATION_GROUP_TYPE_PROCESS)
                return it->second.creator;
        }
        return processGroups.empty() ? OTF2_UNDEFINED_LOCATION_GROUP : processGroups.front();
    };

    const std::size_t firstRank = m_trace.ranks.size();
    auto addRank = [&](const std::string& groupName, OTF2_SystemTreeNodeRef parent) {
        Rank rank;
        int number = mpiRankOf(groupName);
        if (number < 0 && processGroups.size() <= 1)
            number = ref.rankNumber;
        if (number < 0)
            number = int(m_trace.ranks.size());
        rank.rank = number;
        rank.label = "Rank " + std::to_string(number);
        rank.host = hostOf(parent);
        rank.archivePath = ref.anchor;
        rank.timerResolution = a.resolution;
        m_trace.ranks.push_back(std::move(rank));
        return int(m_trace.ranks.size()) - 1;
    };
    for (auto g : processGroups)
        a.groups[g].rankIndex = addRank(a.groups[g].name, a.groups[g].parent);
    if (processGroups.empty())
        addRank(std::string(), OTF2_UNDEFINED_SYSTEM_TREE_NODE);

    // Lanes: CPU threads first (definition order), then GPU streams by (device, stream).
    struct Pending
    {
        std::uint32_t loc;
        int rankIndex;
        bool gpu;
        int device;
        int stream;
    };
    std::vector<Pending> pending;
    for (std::uint32_t i = 0; i < a.locations.size(); ++i) {
        const auto& l = a.locations[i];
        const bool cpu = l.type == OTF2_LOCATION_TYPE_CPU_THREAD;
        const bool gpu = l.type == OTF2_LOCATION_TYPE_ACCELERATOR_STREAM;
        if (!cpu && !gpu)
            continue; // METRIC and unknown locations are never read
        const auto rg = rankGroupOf(l.group);
        int rankIndex = int(firstRank);
        if (rg != OTF2_UNDEFINED_LOCATION_GROUP && a.groups[rg].rankIndex >= 0)
            rankIndex = a.groups[rg].rankIndex;
        int device = -1, stream = -1;
        if (gpu) {
            parseStreamName(l.name, device, stream);
            if (device < 0) {
                // "CUDA[?:s]": the device is the system-tree parent of the stream's context group.
                auto g = a.groups.find(l.group);
                if (g != a.groups.end()) {
                    auto devNode = a.nodes.find(g->second.parent);
                    if (devNode != a.nodes.end() && devNode->second.cls.find("Device") != std::string::npos) {
                        char* end = nullptr;
                        const long v = std::strtol(devNode->second.name.c_str(), &end, 10);
                        if (end && *end == '\0' && !devNode->second.name.empty())
                            device = int(v);
                    }
                }
            }
        }
        pending.push_back({i, rankIndex, gpu, device, stream});
    }
    std::stable_sort(pending.begin(), pending.end(), [](const Pending& x, const Pending& y) {
        if (x.rankIndex != y.rankIndex)
            return x.rankIndex < y.rankIndex;
        if (x.gpu != y.gpu)
            return !x.gpu;
        if (!x.gpu)
            return false;
        return std::make_pair(x.device, x.stream) < std::make_pair(y.device, y.stream);
    });
    // Create all lanes first (Lane pointers must stay stable while events are read).
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
        m_trace.ranks[std::size_t(p.rankIndex)].lanes.push_back(std::move(lane));
        auto& rank = m_trace.ranks[std::size_t(p.rankIndex)];
        if (p.gpu && p.device >= 0 && std::find(rank.devices.begin(), rank.devices.end(), p.device) == rank.devices.end())
            rank.devices.push_back(p.device);
    }
    for (std::size_t ri = firstRank; ri < m_trace.ranks.size(); ++ri)
        std::sort(m_trace.ranks[ri].devices.begin(), m_trace.ranks[ri].devices.end());
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
    m_archives.push_back(std::move(state));
}

void Otf2Importer::reportProgress(const std::string& file, bool force)
{
    if (!m_options.progress)
        return;
    std::lock_guard<std::mutex> lock(m_progressMutex);
    const auto now = nowNs();
    if (!force && now - m_lastProgressNs < 20'000'000)
        return;
    m_lastProgressNs = now;
    LoadProgress p;
    p.eventsRead = m_eventsRead.load(std::memory_order_relaxed);
    p.eventsTotal = m_totalEvents;
    p.currentFile = file;
    m_options.progress(p);
}

namespace {

// Reads the global definitions again without callbacks: a second OTF2_Reader on the same archive needs them
// before it can read local events.
void prepareSecondaryReader(Otf2ArchiveState& a, OTF2_Reader* r)
{
    OTF2_GlobalDefReader* gd = OTF2_Reader_GetGlobalDefReader(r);
    if (!gd)
        otf2::fail(OTF2_ERROR_FILE_CAN_NOT_OPEN, a.defPath, "cannot open the global definitions");
    uint64_t n = 0;
    const auto rc = OTF2_Reader_ReadAllGlobalDefinitions(r, gd, &n);
    OTF2_Reader_CloseGlobalDefReader(r, gd);
    if (rc != OTF2_SUCCESS)
        otf2::fail(rc, a.defPath, "truncated or corrupt global definitions");
}

} // namespace

void Otf2Importer::readLanes(Otf2ArchiveState& a, OTF2_Reader* r, const std::vector<LaneState*>& lanes)
{
    for (LaneState* s : lanes)
        otf2::check(OTF2_Reader_SelectLocation(r, s->location), a.ref.anchor, "cannot select a location");

    // Local definitions (mapping tables, clock offsets) are optional in OTF2.
    const bool defFiles = OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS;
    otf2::takeLastError();
    otf2::check(OTF2_Reader_OpenEvtFiles(r), a.ref.anchor, "cannot open the event files");
    std::vector<OTF2_EvtReader*> evtReaders;
    evtReaders.reserve(lanes.size());
    for (LaneState* s : lanes) {
        if (defFiles) {
            std::error_code ec;
            if (fs::exists(a.locDefPath(s->location), ec)) {
                if (OTF2_DefReader* dr = OTF2_Reader_GetDefReader(r, s->location)) {
                    uint64_t n = 0;
                    const auto rc = OTF2_Reader_ReadAllLocalDefinitions(r, dr, &n);
                    OTF2_Reader_CloseDefReader(r, dr);
                    if (rc != OTF2_SUCCESS)
                        otf2::fail(rc, a.locDefPath(s->location), "truncated or corrupt local definitions");
                }
            }
        }
        OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(r, s->location);
        if (!er)
            otf2::fail(OTF2_ERROR_FILE_CAN_NOT_OPEN, s->evtFile, "cannot open the event file");
        evtReaders.push_back(er);
    }
    if (defFiles)
        OTF2_Reader_CloseDefFiles(r);

    // Two callback sets: launch parameters only matter on streams (and only when kept); without a registered
    // callback OTF2 skips those events after decoding them.
    otf2::Callbacks<OTF2_EvtReaderCallbacks, OTF2_EvtReaderCallbacks_Delete> cpuCbs(OTF2_EvtReaderCallbacks_New());
    otf2::Callbacks<OTF2_EvtReaderCallbacks, OTF2_EvtReaderCallbacks_Delete> gpuCbs(OTF2_EvtReaderCallbacks_New());
    for (auto* c : {cpuCbs.get(), gpuCbs.get()}) {
        OTF2_EvtReaderCallbacks_SetEnterCallback(c, onEnter);
        OTF2_EvtReaderCallbacks_SetLeaveCallback(c, onLeave);
        OTF2_EvtReaderCallbacks_SetRmaGetCallback(c, onRmaGet);
        OTF2_EvtReaderCallbacks_SetRmaPutCallback(c, onRmaPut);
        OTF2_EvtReaderCallbacks_SetRmaOpCompleteBlockingCallback(c, onRmaComplete);
    }
    if (a.keepParams)
        OTF2_EvtReaderCallbacks_SetParameterUnsignedIntCallback(gpuCbs.get(), onParameterUnsigned);

    for (std::size_t i = 0; i < lanes.size(); ++i) {
        LaneState& s = *lanes[i];
        OTF2_EvtReader* er = evtReaders[i];
        otf2::check(OTF2_Reader_RegisterEvtCallbacks(r, er, s.gpu ? gpuCbs.get() : cpuCbs.get(), &s), s.evtFile,
                    "cannot register event callbacks");
        for (;;) {
            if (cancelled(a) || m_abort.load(std::memory_order_relaxed))
                throw LoadCancelled();
            uint64_t got = 0;
            const auto rc = OTF2_Reader_ReadLocalEvents(r, er, kEventChunk, &got);
            s.lane->eventCount += got;
            m_eventsRead.fetch_add(got, std::memory_order_relaxed);
            if (cancelled(a))
                throw LoadCancelled();
            if (!s.error.empty())
                throw LoadError(s.evtFile, s.error);
            if (rc != OTF2_SUCCESS)
                otf2::fail(rc, s.evtFile, "truncated or corrupt event data");
            reportProgress(a.ref.anchor, false);
            if (got < kEventChunk)
                break;
        }
        // Enter events without Leave, copies without completion: close at the lane's last timestamp.
        while (!s.stack.empty()) {
            ++s.closedAtEnd;
            closeFrame(s, s.stack.back(), s.lastTime);
            s.stack.pop_back();
        }
        for (const auto& cp : s.copies) {
            ++s.unmatchedCopies;
            s.lane->intervals.setEnd(cp.interval, s.lastTime);
            s.lane->copyBytes.emplace_back(cp.interval, cp.bytes);
        }
        s.copies.clear();
        s.copies.shrink_to_fit();
        std::sort(s.lane->copyBytes.begin(), s.lane->copyBytes.end());
        OTF2_Reader_CloseEvtReader(r, er);
        otf2::takeLastError();
    }
    OTF2_Reader_CloseEvtFiles(r);
    otf2::takeLastError();
}

void Otf2Importer::readEvents()
{
    // Check every selected location's event file first (a missing one would otherwise read as "no events").
    std::vector<std::pair<Otf2ArchiveState*, LaneState*>> all;
    for (auto& a : m_archives) {
        for (auto& s : a->lanes) {
            std::error_code ec;
            if (!fs::exists(s->evtFile, ec))
                throw LoadError(s->evtFile, "missing event file of location '" + s->lane->name + "'");
            if (auto p = readableProblem(s->evtFile); !p.empty())
                throw LoadError(s->evtFile, "cannot read the event file: " + p);
            all.emplace_back(a.get(), s.get());
        }
    }

    int threads = m_options.threads > 0 ? m_options.threads : int(std::thread::hardware_concurrency());
    threads = std::clamp(threads, 1, 8);
    threads = std::min<int>(threads, int(std::max<std::size_t>(1, all.size())));

    if (threads == 1) {
        for (auto& a : m_archives) {
            std::vector<LaneState*> lanes;
            for (auto& s : a->lanes)
                lanes.push_back(s.get());
            if (!lanes.empty())
                readLanes(*a, a->reader->get(), lanes);
            a->reader.reset(); // release the file handles as soon as possible
        }
        reportProgress(std::string(), true);
        return;
    }

    // Parallel: disjoint sets of locations, balanced by their event counts (largest first), one OTF2_Reader per
    // worker and archive (independent readers may run concurrently, OTF2_Callbacks.h).
    for (auto& a : m_archives)
        a->reader.reset();
    std::stable_sort(all.begin(), all.end(),
                     [](const auto& x, const auto& y) { return x.second->definedEvents > y.second->definedEvents; });
    const auto binCount = static_cast<std::size_t>(threads);
    std::vector<std::vector<std::pair<Otf2ArchiveState*, LaneState*>>> bins(binCount);
    std::vector<std::uint64_t> load(std::size_t(threads), 0);
    for (const auto& e : all) {
        const auto k = std::size_t(std::min_element(load.begin(), load.end()) - load.begin());
        bins[k].push_back(e);
        load[k] += std::max<std::uint64_t>(1, e.second->definedEvents);
    }
    std::vector<std::exception_ptr> errors(bins.size());
    auto work = [&](std::size_t w) {
        try {
            for (auto& a : m_archives) {
                std::vector<LaneState*> lanes;
                for (const auto& e : bins[w])
                    if (e.first == a.get())
                        lanes.push_back(e.second);
                if (lanes.empty())
                    continue;
                otf2::silenceErrors();
                otf2::Reader reader(a->ref.anchor);
                prepareSecondaryReader(*a, reader.get());
                readLanes(*a, reader.get(), lanes);
            }
        } catch (...) {
            errors[w] = std::current_exception();
            m_abort = true;
        }
    };
    std::vector<std::thread> pool;
    for (std::size_t w = 1; w < bins.size(); ++w)
        pool.emplace_back(work, w);
    work(0);
    for (auto& t : pool)
        t.join();
    // A real error wins over the LoadCancelled that it caused in the other workers.
    std::exception_ptr cancelledError;
    for (auto& e : errors) {
        if (!e)
            continue;
        try {
            std::rethrow_exception(e);
        } catch (const LoadCancelled&) {
            cancelledError = e;
        } catch (...) {
            throw;
        }
    }
    if (cancelledError)
        std::rethrow_exception(cancelledError);
    reportProgress(std::string(), true);
}

void Otf2Importer::finish()
{
    // Region kinds per name: what the region was used as (a stream makes it a kernel/idle/sync region).
    m_trace.regionKinds.resize(m_trace.strings.size(), RegionKind::Unknown);
    for (const auto& a : m_archives) {
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
            auto& k = m_trace.regionKinds[r.name];
            if (usedGpu[i] && (k == RegionKind::Unknown || k == RegionKind::HostRegion))
                k = r.gpuKind;
            else if (k == RegionKind::Unknown)
                k = r.cpuKind;
        }
        for (int m = 0; m < 3; ++m)
            m_trace.regionKinds[a->memcpyNames[m]] = RegionKind::Memcpy;
    }
    // Canonical names: identity where the importer recorded none.
    m_trace.canonicalNames.resize(m_trace.strings.size(), kInvalidString);
    for (std::size_t i = 0; i < m_trace.canonicalNames.size(); ++i)
        if (m_trace.canonicalNames[i] == kInvalidString)
            m_trace.canonicalNames[i] = StringId(i);

    // Launch parameters: merge the per-lane tables into Trace::launchParams.
    std::unordered_map<KernelLaunchParams, std::uint32_t, LaunchParamsHash> paramIndex;
    for (std::uint32_t i = 0; i < m_trace.launchParams.size(); ++i)
        paramIndex.emplace(m_trace.launchParams[i], i);
    for (const auto& a : m_archives) {
        for (const auto& s : a->lanes) {
            if (s->localParams.empty())
                continue;
            std::vector<std::uint32_t> remap(s->localParams.size());
            for (std::size_t i = 0; i < remap.size(); ++i) {
                auto [it, inserted] = paramIndex.try_emplace(s->localParams[i], std::uint32_t(m_trace.launchParams.size()));
                if (inserted)
                    m_trace.launchParams.push_back(s->localParams[i]);
                remap[i] = it->second;
            }
            for (auto& id : s->lane->launchParamIds)
                if (id != kNoLaunchParams)
                    id = remap[id];
        }
    }

    // Launches in launch (Enter time) order across the threads of a rank. Each CPU lane's list is already in
    // time order: a stream fed by one thread takes it as is; otherwise the lists are merged by a stable sort
    // (ties: lower lane first). finalize() remaps the interval indices if a CPU table had to be sorted.
    for (const auto& a : m_archives) {
        std::unordered_map<std::uint64_t, std::vector<const LaneState*>> sources; // (rank, lane) -> CPU lanes
        std::unordered_map<std::uint64_t, std::size_t> counts;
        for (const auto& s : a->lanes) {
            if (s->outgoing.empty())
                continue;
            // Count per target lane with a dense vector (no hash lookup per launch).
            std::vector<std::size_t> perTarget(m_trace.ranks[std::size_t(s->rankIndex)].lanes.size(), 0);
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
            auto& lane = m_trace.ranks[std::size_t(key >> 32)].lanes[target];
            auto& out = lane.launches;
            out.reserve(counts[key]);
            if (from.size() == 1) {
                for (const auto& l : from.front()->outgoing)
                    if (l.targetLane == target)
                        out.push_back({from.front()->laneIndex, l.interval});
                continue;
            }
            std::vector<OutgoingLaunch> merged; // targetLane holds the source CPU lane here
            merged.reserve(counts[key]);
            for (const LaneState* src : from)
                for (const auto& l : src->outgoing)
                    if (l.targetLane == target)
                        merged.push_back({l.time, src->laneIndex, l.interval});
            std::stable_sort(merged.begin(), merged.end(), [](const OutgoingLaunch& x, const OutgoingLaunch& y) {
                return x.time != y.time ? x.time < y.time : x.targetLane < y.targetLane;
            });
            for (const auto& l : merged)
                out.push_back({l.targetLane, l.interval});
        }
        for (const auto& s : a->lanes) {
            s->outgoing.clear();
            s->outgoing.shrink_to_fit();
        }
    }

    std::uint64_t total = 0;
    for (const auto& a : m_archives) {
        for (const auto& s : a->lanes) {
            total += s->lane->eventCount;
            auto& table = s->lane->intervals;
            if (table.capacity() > table.size() + table.size() / 8 + 16)
                table.shrinkToFit();
            auto& ids = s->lane->launchParamIds;
            if (ids.capacity() > ids.size() + ids.size() / 8 + 16)
                ids.shrink_to_fit();
            const std::string where = a->ref.anchor + ": " + s->lane->name + ": ";
            if (s->outOfOrder)
                m_trace.warnings.push_back(where + std::to_string(s->outOfOrder)
                                           + " events with a timestamp earlier than the previous one were dropped");
            if (s->closedAtEnd)
                m_trace.warnings.push_back(where + std::to_string(s->closedAtEnd)
                                           + " Enter events without a matching Leave were closed at the lane's last "
                                             "timestamp");
            if (s->unmatchedLeave)
                m_trace.warnings.push_back(where + std::to_string(s->unmatchedLeave)
                                           + " Leave events without a matching Enter were dropped");
            if (s->unmatchedCopies)
                m_trace.warnings.push_back(where + std::to_string(s->unmatchedCopies)
                                           + " memory copies without a completion event were closed at the lane's "
                                             "last timestamp");
            if (s->unmatchedCompletions)
                m_trace.warnings.push_back(where + std::to_string(s->unmatchedCompletions)
                                           + " copy completion events without a matching start were dropped");
            if (s->unknownRegions)
                m_trace.warnings.push_back(where + std::to_string(s->unknownRegions)
                                           + " events referring to undefined regions were dropped");
        }
    }
    m_trace.eventCount = total;
    m_archives.clear();
    m_trace.finalize(true);
}

} // namespace exposure
