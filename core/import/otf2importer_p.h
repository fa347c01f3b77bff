// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Private to the OTF2 importer: what its definition, event and finishing stages share (per-archive and per-location
// state, helpers). Not part of the import API (see import/loadoptions.h).
#include "import/otf2importer.h"
#include "import/otf2reader.h"
#include "model/demangle.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace exposure {

__extension__ typedef unsigned __int128 U128; // exact ticks * 1e9 (GCC/Clang extension)

constexpr std::uint32_t kNone = 0xFFFFFFFFu;
constexpr OTF2_RegionRole kRoleKernel = OTF2_RegionRole(40); // OTF2 3.1 OTF2_REGION_ROLE_KERNEL
constexpr std::uint64_t kEventChunk = 1u << 16; // events per ReadLocalEvents call (progress/cancel)
constexpr std::uint32_t kMaxDefRef = 1u << 26; // sanity bound for dense definition ids

inline std::int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

inline bool endsWith(const std::string& s, const char* suffix)
{
    const std::size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// "CUDA[3:17]" -> device 3, stream 17; "CUDA[?:5]" -> device -1, stream 5.
inline void parseStreamName(const std::string& name, int& device, int& stream)
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

// Why a file cannot be read ("" if it can): not a regular file, or the open error.
inline std::string readableProblem(const std::string& path)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        return ec ? ec.message() : std::string("not a regular file");
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return std::strerror(errno);
    std::fclose(f);
    return {};
}

// Whether a file ends the way every complete OTF2 buffer file does: an end-of-chunk record (0x02) followed by the
// end-of-file record (0x01). A file cut short ends elsewhere; OTF2 3.0 would wait forever for the rest of its last
// chunk (read() at the end of the file, again and again), so such files are refused before OTF2 opens them.
inline bool endsLikeOtf2File(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return false;
    unsigned char tail[2] = { 0, 0 };
    const bool ok = std::fseek(f, -2, SEEK_END) == 0 && std::fread(tail, 1, 2, f) == 2;
    std::fclose(f);
    return ok && tail[0] == 0x02 && tail[1] == 0x01;
}

using LaunchParamsHash = KernelLaunchParamsHash;

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
    std::uint64_t evtBytes = 0; // size of its event file (set when lanes are created; 0 if missing)
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

// 8 bytes per launch while reading; its time is the launch interval's start (merging needs it).
struct OutgoingLaunch
{
    std::uint32_t targetLane; // lane index within the rank
    std::uint32_t interval; // the launch interval on this (CPU) lane
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

struct LaneState;

struct Otf2ArchiveState
{
    ArchiveRef ref;
    std::string dir; // folder of the anchor
    std::string stem; // archive name ("traces")
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
    std::vector<std::pair<OTF2_LocationRef, std::pair<OTF2_StringRef, std::pair<OTF2_Type, OTF2_AttributeValue>>>>
        locProps;
    std::vector<std::int8_t> paramField; // by parameter ref: 0..5 field of KernelLaunchParams, -1 other
    bool haveKernelCounters = false;
    std::unordered_map<std::uint32_t, CommGroupDef> commGroups;
    std::unordered_map<std::uint32_t, std::uint32_t> commToGroup;
    std::unordered_map<std::uint32_t, std::uint32_t> winToComm;
    // Per RMA window: remote index -> location id (for telling DtoD from HtoD).
    std::unordered_map<std::uint32_t, std::vector<std::uint64_t>> winMembers;
    OTF2_AttributeRef streamRefAttr = OTF2_UNDEFINED_ATTRIBUTE;
    bool haveStreamRefAttr = false;

    std::size_t firstRank = 0, rankCount = 0; // its ranks in Trace::ranks
    std::vector<std::unique_ptr<LaneState>> lanes; // selected locations
    std::unordered_map<OTF2_LocationRef, LaneState*> laneByLocation;

    // Shared load state, set by the importer. Read-only while events are read (several threads may read
    // different lanes of one archive); everything written during event reading lives in LaneState.
    const std::atomic<bool>* cancel = nullptr;
    bool keepParams = true;
    StringId memcpyNames[4] = { 0, 0, 0, 0 }; // HtoD, DtoH, DtoD, PtoP
    // The region definitions' names, in definition order, interned once the definitions of every archive are read
    // (internRegionNames): the archives are read in parallel, the trace's string pool is one.
    struct RegionName
    {
        OTF2_RegionRef region;
        std::string name, canonical; // canonical: the name where the definition gives none
    };
    std::vector<RegionName> regionNames;

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
    std::uint64_t evtBytes = 0; // size of the event file (no file holds more events than bytes)
    std::string evtFile;

    TimeNs lastTime = std::numeric_limits<TimeNs>::min();
    std::vector<Frame> stack;
    std::vector<PendingCopy> copies;
    std::vector<OutgoingLaunch> outgoing; // CPU lanes: launches aimed at streams
    OTF2_LocationRef lastRef = OTF2_UNDEFINED_LOCATION; // cache of the last CUDA_STREAM_REF lookup
    // What the location's local definitions hold (read before its events):
    std::uint32_t mappedTypes = 0; // a bit per OTF2_MappingType with a mapping table
    bool clockOffsets = false; // a ClockOffset with a non-zero offset
    // The LOCATION mapping table (local id -> global id, sorted), applied by onEnter itself to CUDA_STREAM_REF
    // values where the library's own mapping is switched off; empty when the library maps or there is none.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> localLocations;
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

} // namespace exposure
