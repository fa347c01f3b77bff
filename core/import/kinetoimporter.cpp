// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/kinetoimporter.h"

#include "import/archivefinder.h"
#include "import/jsonstream.h"
#include "import/parallelread.h"
#include "model/parallelfor.h"
#include "model/stagetimings.h"
#include "model/tracefinalize.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace fs = std::filesystem;

namespace exposure {

namespace {

// The stream of a GPU event without args.stream from its tid: "7", or "stream 7" in the 2021 schema; 0 otherwise.
int streamOfTid(const std::string& tid)
{
    const auto digit = tid.find_first_of("0123456789");
    if (digit == std::string::npos)
        return 0;
    long v = 0;
    for (std::size_t i = digit; i < tid.size() && std::isdigit(static_cast<unsigned char>(tid[i])) && v < (1L << 30);
         ++i)
        v = v * 10 + (tid[i] - '0');
    return int(v);
}

enum class EventCat : std::uint8_t { Other, Kernel, Memcpy, Memset, CpuOp, Annotation, Runtime, Driver, Python };

EventCat catOf(const std::string& c)
{
    static const std::unordered_map<std::string, EventCat> cats = { { "kernel", EventCat::Kernel },
        { "gpu_memcpy", EventCat::Memcpy }, { "gpu_memset", EventCat::Memset }, { "cpu_op", EventCat::CpuOp },
        { "user_annotation", EventCat::Annotation }, { "cuda_runtime", EventCat::Runtime },
        { "cuda_driver", EventCat::Driver }, { "python_function", EventCat::Python },
        // The schema of PyTorch 1.8 to 1.12 (2021): capitalised categories, CPU ops as "Operator".
        { "Kernel", EventCat::Kernel }, { "Memcpy", EventCat::Memcpy }, { "Memset", EventCat::Memset },
        { "Operator", EventCat::CpuOp }, { "Runtime", EventCat::Runtime }, { "Driver", EventCat::Driver },
        { "Python", EventCat::Python } };
    const auto it = cats.find(c);
    return it == cats.end() ? EventCat::Other : it->second;
}

bool isGpuCat(EventCat c)
{
    return c == EventCat::Kernel || c == EventCat::Memcpy || c == EventCat::Memset;
}

constexpr std::uint64_t kNoCorrelation = ~0ull;

// The keys the reader looks at, recognised once per key (every other key is JsonKey::Other).
enum class JsonKey : std::uint8_t {
    Other,
    TraceEvents,
    DistributedInfo,
    Rank,
    WorldSize,
    Ph,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Args,
    Correlation,
    Device,
    Stream,
    Bytes,
    CollectiveName,
    InElems,
    OutElems,
    GroupSize,
    Dtype,
    PgName,
    PgDesc,
    PgRanks,
    Seq,
    SrcRank,
    DstRank,
    PgConfig,
    PgConfigName,
    PgConfigDesc,
    PgConfigRanks,
    Grid,
    Block,
    Registers,
    SharedMemory,
    Occupancy
};

JsonKey keyOfText(std::string_view key)
{
    struct Entry
    {
        std::string_view text;
        JsonKey key;
    };
    static const Entry entries[] = { { "ph", JsonKey::Ph }, { "cat", JsonKey::Cat }, { "name", JsonKey::Name },
        { "pid", JsonKey::Pid }, { "tid", JsonKey::Tid }, { "ts", JsonKey::Ts }, { "dur", JsonKey::Dur },
        { "args", JsonKey::Args }, { "correlation", JsonKey::Correlation }, { "device", JsonKey::Device },
        { "stream", JsonKey::Stream }, { "bytes", JsonKey::Bytes }, { "traceEvents", JsonKey::TraceEvents },
        { "distributedInfo", JsonKey::DistributedInfo }, { "rank", JsonKey::Rank },
        { "world_size", JsonKey::WorldSize }, { "Collective name", JsonKey::CollectiveName },
        { "In msg nelems", JsonKey::InElems }, { "Out msg nelems", JsonKey::OutElems },
        { "Group size", JsonKey::GroupSize }, { "dtype", JsonKey::Dtype }, { "Process Group Name", JsonKey::PgName },
        { "Process Group Description", JsonKey::PgDesc }, { "Process Group Ranks", JsonKey::PgRanks },
        { "Seq", JsonKey::Seq }, { "Src Rank", JsonKey::SrcRank }, { "Dst Rank", JsonKey::DstRank },
        { "pg_config", JsonKey::PgConfig }, { "pg_name", JsonKey::PgConfigName }, { "pg_desc", JsonKey::PgConfigDesc },
        { "ranks", JsonKey::PgConfigRanks }, { "grid", JsonKey::Grid }, { "block", JsonKey::Block },
        { "registers per thread", JsonKey::Registers }, { "shared memory", JsonKey::SharedMemory },
        { "est. achieved occupancy %", JsonKey::Occupancy } };
    // Millions of keys per file: look among the names of the key's length and first byte only (one name, mostly),
    // comparing the rest byte by byte (short names: cheaper than a call to memcmp).
    constexpr std::size_t kLongest = 32;
    struct Index
    {
        std::array<std::vector<Entry>, kLongest * 4> slot;
        static std::size_t of(std::size_t n, char first) { return n * 4 + (unsigned char)(first) % 4; }
        Index()
        {
            for (const Entry& e : entries)
                slot[of(e.text.size(), e.text[0])].push_back(e);
        }
    };
    static const Index index;
    const char* s = key.data();
    const std::size_t n = key.size();
    if (n == 0 || n >= kLongest)
        return JsonKey::Other;
    for (const Entry& e : index.slot[Index::of(n, s[0])]) {
        std::size_t i = 0;
        while (i < n && e.text[i] == s[i])
            ++i;
        if (i == n)
            return e.key;
    }
    return JsonKey::Other;
}

struct PendingInterval
{
    TimeNs start;
    TimeNs end;
    StringId name;
    std::uint64_t correlation; // kNoCorrelation if none
    std::uint64_t bytes; // copies and memsets
    EventCat cat;
    std::uint32_t collective; // index into Trace::collectiveArgs, kNoCollective if none
    std::uint64_t seq; // the collective's "Seq" number, kNoSeq if none
    std::uint32_t params; // kernels: index into the file's Trace::launchParams, kNoLaunchParams if none
};

constexpr std::uint64_t kNoSeq = ~0ull;

constexpr std::uint32_t kNoCollective = 0xFFFFFFFFu;

struct PendingLane
{
    std::string key; // "pid/tid" (CPU) or "device/stream" (GPU)
    bool gpu = false;
    int device = -1;
    int stream = -1;
    std::string pid, tid;
    std::vector<PendingInterval> intervals;
};

// One file's events, collected by the SAX handler.
struct FileData
{
    bool sawTraceEvents = false;
    std::int64_t rank = -1;
    std::int64_t worldSize = -1;
    std::vector<PendingLane> lanes;
    std::unordered_map<std::string, std::size_t> laneByKey;
    std::map<std::string, std::string> threadNames; // "pid/tid" -> name from thread_name metadata
    std::uint64_t events = 0;
    std::uint64_t badTimes = 0; // events whose ts/dur could not be read exactly
    std::uint64_t negativeDurations = 0; // events that end before they start (skipped: no sane reading)
    std::uint64_t badCorrelations = 0; // correlation ids that are not 64-bit integers
    // distributedInfo.pg_config: process group name -> (description, "[r0, r1, ...]").
    struct PgConfig
    {
        std::string name, desc, ranks;
    };
    std::vector<PgConfig> pgConfig;
    bool hip = false; // ROCm: the runtime calls are hip* (GPU streams are named HIP[d:s], not CUDA[d:s])
};

// SAX handler: numbers arrive as text (kParseNumbersAsStringsFlag) so that timestamps and ids are read exactly. A
// torch.profiler trace nests 5 levels: top object, traceEvents, event, args, a list in args.
class Handler : public JsonTraceHandler<Handler, JsonKey, 6>
{
public:
    Handler(Trace& trace, FileData& data)
        : m_trace(trace)
        , m_data(data)
    { }

private:
    friend class JsonTraceHandler<Handler, JsonKey, 6>;
    static constexpr int kTracked = 6;

    static JsonKey keyOf(std::string_view key) { return keyOfText(key); }

    void open(bool object)
    {
        // Depth 1: the top object; 2: traceEvents / distributedInfo; 3: one event; 4: its args.
        if (m_depth == 1 && !object && m_key[1] == JsonKey::TraceEvents) {
            m_inEvents = true;
            m_data.sawTraceEvents = true;
        }
        if (m_depth == 2 && object && m_inEvents)
            m_event.reset();
        if (m_depth == 3 && object && m_key[1] == JsonKey::DistributedInfo && m_key[2] == JsonKey::PgConfig)
            m_data.pgConfig.emplace_back();
        if (m_depth < kTracked)
            m_isObject[m_depth + 1] = object;
        if (!object)
            m_element = 0;
    }

    void close()
    {
        if (m_depth == 2 && m_inEvents)
            finishEvent();
        if (m_depth == 1)
            m_inEvents = false;
    }

    bool value(const char* s, std::size_t n, bool number)
    {
        if (m_depth >= 4 && m_depth < kTracked && !m_inEvents && m_key[1] == JsonKey::DistributedInfo
            && m_key[2] == JsonKey::PgConfig && !m_data.pgConfig.empty())
            return pgConfigValue(s, n, number);
        if (m_depth == 5 && !m_isObject[5] && m_inEvents && m_key[3] == JsonKey::Args)
            return launchShapeValue(s, n, number);
        if (m_depth >= kTracked || !m_isObject[m_depth])
            return true;
        const JsonKey key = m_key[m_depth];
        if (m_depth == 2 && m_key[1] == JsonKey::DistributedInfo && number) {
            std::uint64_t v = 0;
            if ((key == JsonKey::Rank || key == JsonKey::WorldSize) && parseU64(s, n, v) && v < (1ull << 31))
                (key == JsonKey::Rank ? m_data.rank : m_data.worldSize) = std::int64_t(v);
            return true;
        }
        if (!m_inEvents)
            return true;
        if (m_depth == 3) {
            if (key == JsonKey::Cat)
                m_event.cat.assign(s, n);
            else
                takeEventField(m_event, key, s, n, number, NsRounding::Truncate);
        } else if (m_depth == 4 && m_key[3] == JsonKey::Args) {
            std::uint64_t v = 0;
            if (key == JsonKey::Correlation) {
                if (number && parseU64(s, n, v) && v != kNoCorrelation)
                    m_event.correlation = v;
                else
                    ++m_data.badCorrelations;
            } else if (key == JsonKey::Device && number && parseU64(s, n, v) && v < 4096) {
                m_event.device = int(v);
            } else if (key == JsonKey::Stream && number && parseU64(s, n, v) && v < (1ull << 31)) {
                m_event.stream = int(v);
            } else if (key == JsonKey::Bytes && number && parseU64(s, n, v)) {
                m_event.bytes = v;
            } else if (key == JsonKey::Name && !number) {
                m_event.argName.assign(s, n);
            } else if (key == JsonKey::CollectiveName && !number) {
                m_event.coll.collective.assign(s, n);
            } else if (key == JsonKey::InElems && number && parseU64(s, n, v)) {
                m_event.coll.inElements = v;
            } else if (key == JsonKey::OutElems && number && parseU64(s, n, v)) {
                m_event.coll.outElements = v;
            } else if (key == JsonKey::GroupSize && number && parseU64(s, n, v) && v < (1u << 24)) {
                m_event.coll.groupSize = int(v);
            } else if (key == JsonKey::Dtype && !number) {
                m_event.coll.dtype.assign(s, n);
            } else if (key == JsonKey::PgName && !number) {
                m_event.pgName.assign(s, n);
            } else if (key == JsonKey::PgDesc && !number) {
                m_event.pgDesc.assign(s, n);
            } else if (key == JsonKey::PgRanks && !number) {
                m_event.coll.groupRanks.assign(s, n);
            } else if (key == JsonKey::Seq && number && parseU64(s, n, v) && v != kNoSeq) {
                m_event.seq = v;
            } else if ((key == JsonKey::SrcRank || key == JsonKey::DstRank) && parseU64(s, n, v) && v < (1u << 24)) {
                m_event.coll.peer = int(v); // a send's receiver or a receive's sender (a number, or its text)
            } else if (key == JsonKey::Registers && number && parseU64(s, n, v) && v < (1u << 16)) {
                m_event.params.registersPerThread = v;
                m_event.hasParams = true;
            } else if (key == JsonKey::SharedMemory && number && parseU64(s, n, v)) {
                m_event.params.sharedMemory = v;
                m_event.hasParams = true;
            } else if (key == JsonKey::Occupancy && number) {
                const double pct = std::strtod(std::string(s, n).c_str(), nullptr);
                if (pct >= 0 && pct <= 100) {
                    m_event.params.occupancyPercent = int(std::lround(pct));
                    m_event.hasParams = true;
                }
            }
        }
        return true;
    }

    // One element of a kernel's "grid" or "block" list ([x, y, z]); the products are the blocks and threads.
    bool launchShapeValue(const char* s, std::size_t n, bool number)
    {
        const JsonKey list = m_key[4];
        std::uint64_t v = 0;
        if ((list != JsonKey::Grid && list != JsonKey::Block) || !number || m_element >= 3 || !parseU64(s, n, v)
            || v > 0xFFFFFFFFu) {
            ++m_element;
            return true;
        }
        (list == JsonKey::Grid ? m_event.params.grid : m_event.params.block)[m_element++] = std::uint32_t(v);
        m_event.hasParams = true;
        return true;
    }

    // One value of a distributedInfo.pg_config entry: its name, description and ranks.
    bool pgConfigValue(const char* s, std::size_t n, bool number)
    {
        FileData::PgConfig& pg = m_data.pgConfig.back();
        if (m_depth == 4 && m_key[4] == JsonKey::PgConfigName)
            pg.name.assign(s, n);
        else if (m_depth == 4 && m_key[4] == JsonKey::PgConfigDesc && !number)
            pg.desc.assign(s, n);
        else if (m_depth == 5 && m_key[4] == JsonKey::PgConfigRanks && number)
            pg.ranks += (pg.ranks.empty() ? "" : ", ") + std::string(s, n);
        return true;
    }

    void finishEvent()
    {
        ++m_data.events;
        const Event& e = m_event;
        if (e.ph == "M") {
            if (e.name == "thread_name" && !e.argName.empty())
                m_data.threadNames[e.pid + "/" + e.tid] = e.argName;
            return;
        }
        if (e.ph != "X")
            return;
        const EventCat cat = catOf(e.cat);
        if (cat == EventCat::Other)
            return;
        if (!e.tsOk || !e.durOk) {
            ++m_data.badTimes;
            return;
        }
        if (e.dur < 0) {
            ++m_data.negativeDurations;
            return;
        }
        const bool gpu = isGpuCat(cat);
        const int device = gpu ? (e.device >= 0 ? e.device : std::atoi(e.pid.c_str())) : -1;
        const int stream = gpu ? (e.stream >= 0 ? e.stream : streamOfTid(e.tid)) : -1;
        std::string key = gpu ? "g" + std::to_string(device) + "/" + std::to_string(stream) : "c" + e.pid + "/" + e.tid;
        auto it = m_data.laneByKey.find(key);
        if (it == m_data.laneByKey.end()) {
            PendingLane lane;
            lane.key = key;
            lane.gpu = gpu;
            lane.device = device;
            lane.stream = stream;
            lane.pid = e.pid;
            lane.tid = e.tid;
            it = m_data.laneByKey.emplace(std::move(key), m_data.lanes.size()).first;
            m_data.lanes.push_back(std::move(lane));
        }
        const StringId name = m_trace.strings.intern(e.name);
        RegionKind kind = RegionKind::HostRegion;
        switch (cat) {
        case EventCat::Kernel:
            kind = RegionKind::Kernel;
            break;
        case EventCat::Memcpy:
        case EventCat::Memset:
            kind = RegionKind::Memcpy;
            break;
        case EventCat::Runtime:
        case EventCat::Driver:
            kind = RegionKind::HostApi;
            m_data.hip = m_data.hip || e.name.rfind("hip", 0) == 0;
            break;
        default:
            break;
        }
        if (m_trace.regionKinds.size() <= name)
            m_trace.regionKinds.resize(std::size_t(name) + 1, RegionKind::Unknown);
        m_trace.regionKinds[name] = kind;
        std::uint32_t collective = kNoCollective;
        // NCCL kernels carry the collective's arguments (recent PyTorch); its record_param_comms CPU op always does,
        // and addRank() hands those on to the kernel its launch started.
        const bool paramComms = cat == EventCat::CpuOp && e.name == "record_param_comms";
        if ((cat == EventCat::Kernel || paramComms) && !e.coll.collective.empty()) {
            CollectiveArgs args = e.coll;
            args.processGroup = e.pgDesc.empty() ? e.pgName : e.pgName + " (" + e.pgDesc + ")";
            args.groupName = e.pgName;
            const std::string argsKey = args.collective + '\x1f' + std::to_string(args.inElements) + '\x1f'
                + std::to_string(args.outElements) + '\x1f' + args.dtype + '\x1f' + std::to_string(args.groupSize)
                + '\x1f' + args.processGroup + '\x1f' + args.groupRanks + '\x1f' + std::to_string(args.peer);
            auto [slot, added] = m_collectiveIndex.emplace(argsKey, std::uint32_t(m_trace.collectiveArgs.size()));
            if (added)
                m_trace.collectiveArgs.push_back(std::move(args));
            collective = slot->second;
        }
        m_data.lanes[it->second].intervals.push_back(
            { e.ts, e.ts + e.dur, name, e.correlation, e.bytes, cat, collective, e.seq, launchParams(e, cat) });
    }

    struct Event : TraceEventFields
    {
        std::string cat, argName;
        std::uint64_t correlation = kNoCorrelation;
        std::uint64_t bytes = 0;
        int device = -1, stream = -1;
        CollectiveArgs coll;
        std::string pgName, pgDesc;
        std::uint64_t seq = kNoSeq;
        KernelLaunchParams params;
        bool hasParams = false;

        // Back to a default Event, keeping the strings' buffers (one event after another: no allocation per event).
        void reset()
        {
            for (std::string* t : { &ph, &cat, &name, &pid, &tid, &argName, &pgName, &pgDesc, &coll.collective,
                     &coll.dtype, &coll.processGroup, &coll.groupRanks, &coll.groupName })
                t->clear();
            ts = dur = 0;
            tsOk = durOk = false;
            correlation = kNoCorrelation;
            bytes = 0;
            device = stream = -1;
            coll.inElements = coll.outElements = 0;
            coll.groupSize = 0;
            coll.peer = -1;
            seq = kNoSeq;
            params = KernelLaunchParams {};
            hasParams = false;
        }
    };

    // The kernel's launch parameters interned in the file's Trace (products of the shapes filled in).
    std::uint32_t launchParams(const Event& e, EventCat cat)
    {
        if (!e.hasParams || cat != EventCat::Kernel)
            return kNoLaunchParams;
        KernelLaunchParams p = e.params;
        p.countFromShapes();
        const auto [slot, added] = m_paramIndex.emplace(p, std::uint32_t(m_trace.launchParams.size()));
        if (added)
            m_trace.launchParams.push_back(p);
        return slot->second;
    }

    Trace& m_trace;
    std::unordered_map<std::string, std::uint32_t> m_collectiveIndex;
    std::unordered_map<KernelLaunchParams, std::uint32_t, KernelLaunchParamsHash> m_paramIndex;
    int m_element = 0; // index of the next element in the list being read
    FileData& m_data;
    bool m_inEvents = false;
    std::array<bool, kTracked + 1> m_isObject {};
    Event m_event;
};

FileData readFile(Trace& trace, const std::string& path, const LoadOptions& options, LoadProgress& progress)
{
    FileData data;
    Handler handler(trace, data);
    parseJsonFile(path, options, &progress, handler, "not a torch.profiler trace");
    if (!data.sawTraceEvents)
        throw LoadError(path, "not a torch.profiler (Kineto) trace: no \"traceEvents\" array");
    if (std::none_of(
            data.lanes.begin(), data.lanes.end(), [](const PendingLane& l) { return l.gpu && !l.intervals.empty(); }))
        throw LoadError(
            path, "no GPU events (kernel, gpu_memcpy or gpu_memset): was the profiler run with CUDA activities?");
    return data;
}

// Moves what one file's reading put into its own Trace (names, region kinds, collective arguments) into the run's
// trace; renumberFile() then renumbers the file's intervals with what this returns. Merged in file order, this gives
// the trace that reading the files one after another into one Trace gives. Whatever else the Handler writes into its
// Trace must be moved here too.
struct FileIds
{
    std::vector<StringId> global; // the file's name ids -> the run's
    std::uint32_t collectiveBase = 0, paramBase = 0;
};

FileIds mergeFileNames(Trace& trace, const Trace& local)
{
    FileIds ids;
    std::vector<StringId>& global = ids.global;
    global.resize(local.strings.size());
    for (StringId i = 0; i < global.size(); ++i) {
        global[i] = trace.strings.internFrom(local.strings, i);
        if (trace.regionKinds.size() <= global[i])
            trace.regionKinds.resize(std::size_t(global[i]) + 1, RegionKind::Unknown);
        if (i < local.regionKinds.size())
            trace.regionKinds[global[i]] = local.regionKinds[i];
    }
    ids.collectiveBase = std::uint32_t(trace.collectiveArgs.size());
    trace.collectiveArgs.insert(trace.collectiveArgs.end(), local.collectiveArgs.begin(), local.collectiveArgs.end());
    ids.paramBase = std::uint32_t(trace.launchParams.size());
    trace.launchParams.insert(trace.launchParams.end(), local.launchParams.begin(), local.launchParams.end());
    return ids;
}

// The file's intervals with the run's ids (files in parallel: each touches its own data only).
void renumberFile(FileData& data, const FileIds& ids)
{
    for (PendingLane& lane : data.lanes)
        for (PendingInterval& iv : lane.intervals) {
            iv.name = ids.global[iv.name];
            if (iv.collective != kNoCollective)
                iv.collective += ids.collectiveBase;
            if (iv.params != kNoLaunchParams)
                iv.params += ids.paramBase;
        }
}

// The collective's process group completed from distributedInfo.pg_config where the event's arguments lack the
// description or the ranks (the file's collective arguments are its own: their index is per file).
std::uint32_t completeGroup(Trace& trace, const FileData& data, std::uint32_t collective)
{
    CollectiveArgs& args = trace.collectiveArgs[collective];
    if (!args.groupRanks.empty() && args.processGroup != args.groupName)
        return collective;
    for (const FileData::PgConfig& pg : data.pgConfig) {
        if (pg.name != args.groupName || args.groupName.empty())
            continue;
        if (args.groupRanks.empty() && !pg.ranks.empty())
            args.groupRanks = "[" + pg.ranks + "]";
        if (args.processGroup == args.groupName && !pg.desc.empty())
            args.processGroup = args.groupName + " (" + pg.desc + ")";
    }
    return collective;
}

// What the CPU lanes of a rank tell its GPU lanes: the launch call of each correlation id, and the
// record_param_comms op around a launch (collective, seq).
struct CpuLinks
{
    std::unordered_map<std::uint64_t, LaunchRef> launchOf;
    std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::uint64_t>> commsOf;
    // torch's batch_isend_irecv: the sends and receives (their collective arguments) of the batch whose kernel a call
    // inside "nccl:coalesced" launched, by the call's correlation id.
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> batchOf;
    // The correlation ids of the file's kernels, sorted; gathered only where "nccl:coalesced" occurs (a send inside
    // whose record_param_comms a call launched a kernel is not part of a batch; other calls, such as the event
    // records that order the streams, launch none).
    std::vector<std::uint64_t> kernelCalls;
    std::uint64_t brokenNesting = 0;
};

// One CPU thread's lane: nested by time (parents before their children), intervals that outlast their parent
// clipped to it and counted; its launches and collective ops recorded in `links`.
Lane cpuLane(const Trace& trace, const FileData& data, PendingLane& p, std::uint32_t laneIndex, CpuLinks& links)
{
    Lane lane;
    lane.kind = LaneKind::CpuThread;
    const auto name = data.threadNames.find(p.pid + "/" + p.tid);
    lane.name = name != data.threadNames.end() ? name->second : "thread " + p.tid;
    auto& v = p.intervals;
    // Parents before their children: by start, the longer first.
    std::stable_sort(v.begin(), v.end(), [](const PendingInterval& a, const PendingInterval& b) {
        return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    lane.intervals.reserve(v.size());
    std::vector<TimeNs> open; // ends of the enclosing intervals
    std::vector<std::size_t> comms; // the enclosing record_param_comms ops (indexes into v)
    // torch's batch_isend_irecv: each send and receive is a record_param_comms op that launches nothing (NCCL only
    // queues it); the batch's one kernel is launched afterwards inside "nccl:coalesced". `batch`: the sends and
    // receives (indexes into v) that have launched nothing since the last coalesced region ended.
    const StringId coalesced = trace.strings.find("nccl:coalesced");
    std::vector<std::size_t> batch;
    std::vector<TimeNs> coalescedOpen; // ends of the enclosing nccl:coalesced regions
    for (PendingInterval& iv : v) {
        while (!open.empty() && open.back() <= iv.start)
            open.pop_back();
        while (!comms.empty() && v[comms.back()].end <= iv.start)
            comms.pop_back();
        for (; !coalescedOpen.empty() && coalescedOpen.back() <= iv.start; coalescedOpen.pop_back())
            if (coalescedOpen.size() == 1)
                batch.clear();
        if (!open.empty() && iv.end > open.back()) {
            iv.end = open.back(); // breaks nesting: clipped to its parent, counted
            ++links.brokenNesting;
        }
        const auto depth = std::uint8_t(std::min<std::size_t>(open.size(), 255));
        const std::uint32_t index = std::uint32_t(lane.intervals.size());
        lane.intervals.append(iv.start, iv.end, iv.name, depth);
        open.push_back(iv.end);
        if (iv.correlation != kNoCorrelation)
            links.launchOf.emplace(iv.correlation, LaunchRef { laneIndex, index });
        if (iv.correlation != kNoCorrelation && !comms.empty()) {
            links.commsOf.emplace(iv.correlation, std::make_pair(v[comms.back()].collective, v[comms.back()].seq));
            if (std::binary_search(links.kernelCalls.begin(), links.kernelCalls.end(), iv.correlation))
                batch.erase(std::remove(batch.begin(), batch.end(), comms.back()), batch.end()); // launched its own
        } else if (iv.correlation != kNoCorrelation && !coalescedOpen.empty() && !batch.empty()) {
            std::vector<std::uint32_t>& ops = links.batchOf[iv.correlation];
            for (const std::size_t k : batch)
                ops.push_back(v[k].collective);
        }
        if (iv.name == coalesced)
            coalescedOpen.push_back(iv.end);
        if (iv.collective != kNoCollective) {
            comms.push_back(std::size_t(&iv - v.data()));
            const std::string& op = trace.collectiveArgs[iv.collective].collective;
            if (op == "send" || op == "recv")
                batch.push_back(comms.back());
        }
    }
    lane.eventCount = v.size();
    std::vector<PendingInterval>().swap(v);
    return lane;
}

// One GPU stream's lane: every kernel, copy and memset with the call its correlation id names (a graph launch
// names many), copy sizes, and the collective identity from the kernel's arguments or the op around its launch.
Lane gpuLane(Trace& trace, const FileData& data, PendingLane& p, const CpuLinks& links, std::uint64_t& unlaunched)
{
    Lane lane;
    lane.kind = LaneKind::GpuStream;
    lane.device = p.device;
    lane.stream = p.stream;
    lane.name = (data.hip ? "HIP[" : "CUDA[") + std::to_string(p.device) + ":" + std::to_string(p.stream) + "]";
    auto& v = p.intervals;
    std::stable_sort(
        v.begin(), v.end(), [](const PendingInterval& a, const PendingInterval& b) { return a.start < b.start; });
    lane.intervals.reserve(v.size());
    lane.launchByInterval.reserve(v.size());
    const bool anyParams
        = std::any_of(v.begin(), v.end(), [](const PendingInterval& iv) { return iv.params != kNoLaunchParams; });
    if (anyParams)
        lane.launchParamIds.reserve(v.size());
    for (const PendingInterval& iv : v) {
        const std::uint32_t index = std::uint32_t(lane.intervals.size());
        lane.intervals.append(iv.start, iv.end, iv.name);
        if (anyParams)
            lane.launchParamIds.push_back(iv.params);
        const auto l = iv.correlation == kNoCorrelation ? links.launchOf.end() : links.launchOf.find(iv.correlation);
        lane.launchByInterval.push_back(l != links.launchOf.end() ? l->second : LaunchRef { kUnknownLaunch, 0 });
        if (iv.cat == EventCat::Kernel && l == links.launchOf.end())
            ++unlaunched;
        if (iv.cat != EventCat::Kernel && iv.bytes > 0)
            lane.copyBytes.emplace_back(index, iv.bytes);
        // A batch_isend_irecv kernel: every send and receive of its batch, in the order of their arguments.
        const auto batch = iv.cat == EventCat::Kernel && iv.correlation != kNoCorrelation
            ? links.batchOf.find(iv.correlation)
            : links.batchOf.end();
        if (batch != links.batchOf.end()) {
            std::vector<std::uint32_t> ops = batch->second;
            std::sort(ops.begin(), ops.end());
            for (const std::uint32_t op : ops)
                lane.collectiveArgs.emplace_back(index, completeGroup(trace, data, op));
            continue;
        }
        std::uint32_t collective = iv.collective;
        std::uint64_t seq = iv.seq;
        if (iv.cat == EventCat::Kernel && iv.correlation != kNoCorrelation) {
            const auto c = links.commsOf.find(iv.correlation);
            if (c != links.commsOf.end()) {
                collective = collective == kNoCollective ? c->second.first : collective;
                seq = seq == kNoSeq ? c->second.second : seq;
            }
        }
        if (collective != kNoCollective)
            lane.collectiveArgs.emplace_back(index, completeGroup(trace, data, collective));
        if (collective != kNoCollective && seq != kNoSeq)
            lane.collectiveSeq.emplace_back(index, seq);
    }
    lane.eventCount = v.size();
    std::vector<PendingInterval>().swap(v);
    return lane;
}

// The file's counted problems as trace warnings.
void addFileWarnings(std::vector<std::string>& warnings, const FileData& data, const std::string& path,
    std::uint64_t brokenNesting, std::uint64_t unlaunched)
{
    const std::string file = fs::path(path).filename().string();
    if (brokenNesting > 0)
        warnings.push_back(file + ": " + std::to_string(brokenNesting)
            + " CPU events outlast their parent event; each was clipped to its parent's end");
    if (unlaunched > 0)
        warnings.push_back(
            file + ": " + std::to_string(unlaunched) + " kernels have no launch call with their correlation id");
    if (data.badTimes > 0)
        warnings.push_back(
            file + ": " + std::to_string(data.badTimes) + " events without a readable \"ts\" or \"dur\" were skipped");
    if (data.negativeDurations > 0)
        warnings.push_back(file + ": " + std::to_string(data.negativeDurations)
            + " events end before they start (negative \"dur\") and were skipped");
    if (data.badCorrelations > 0)
        warnings.push_back(file + ": " + std::to_string(data.badCorrelations)
            + " correlation ids are not 64-bit integers and were ignored");
}

// Builds the rank of one file: CPU threads first (by process and thread), then GPU streams by (device, stream); its
// warnings go to `warnings`. Ranks are built in parallel: besides its own data this touches only the file's own
// collective arguments in `trace` (completeGroup).
Rank buildRank(
    Trace& trace, FileData& data, const std::string& path, int rankNumber, std::vector<std::string>& warnings)
{
    Rank rank;
    rank.rank = rankNumber;
    rank.label = "Rank " + std::to_string(rankNumber);
    rank.archivePath = path;
    rank.host = hostFromTraceFileName(path);
    rank.timerResolution = 1'000'000'000;
    std::vector<std::size_t> order(data.lanes.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
        const PendingLane& a = data.lanes[x];
        const PendingLane& b = data.lanes[y];
        if (a.gpu != b.gpu)
            return !a.gpu;
        if (a.gpu)
            return a.device != b.device ? a.device < b.device : a.stream < b.stream;
        return a.pid != b.pid ? naturalLess(a.pid, b.pid) : naturalLess(a.tid, b.tid);
    });
    CpuLinks links;
    if (trace.strings.find("nccl:coalesced") != kInvalidString) {
        for (const PendingLane& p : data.lanes)
            for (const PendingInterval& iv : p.intervals)
                if (p.gpu && iv.cat == EventCat::Kernel && iv.correlation != kNoCorrelation)
                    links.kernelCalls.push_back(iv.correlation);
        std::sort(links.kernelCalls.begin(), links.kernelCalls.end());
    }
    for (const std::size_t k : order)
        if (!data.lanes[k].gpu)
            rank.lanes.push_back(cpuLane(trace, data, data.lanes[k], std::uint32_t(rank.lanes.size()), links));
    std::uint64_t unlaunched = 0;
    for (const std::size_t k : order) {
        PendingLane& p = data.lanes[k];
        if (!p.gpu)
            continue;
        rank.lanes.push_back(gpuLane(trace, data, p, links, unlaunched));
        if (std::find(rank.devices.begin(), rank.devices.end(), p.device) == rank.devices.end())
            rank.devices.push_back(p.device);
    }
    addFileWarnings(warnings, data, path, links.brokenNesting, unlaunched);
    return rank;
}

// A copy of `t`'s names, interned tables and ranks (a StringPool is not copied as it is: its index points into it).
std::shared_ptr<Trace> copyOfRanks(const Trace& t)
{
    auto copy = std::make_shared<Trace>();
    copy->sourcePath = t.sourcePath;
    for (StringId i = 0; i < t.strings.size(); ++i)
        copy->strings.internFrom(t.strings, i);
    copy->regionKinds = t.regionKinds;
    copy->regionKinds.resize(copy->strings.size(), RegionKind::Unknown);
    copy->launchParams = t.launchParams;
    copy->collectiveArgs = t.collectiveArgs;
    copy->ranks = t.ranks;
    copy->eventCount = t.eventCount;
    return copy;
}

// The ranks read so far (LoadOptions::preview): each file's rank built from a copy of its data as the full trace
// builds it, kept in rank order; a finalized copy of them goes to LoadOptions::preview when previewDue asks for one.
class RanksPreview
{
public:
    RanksPreview(const std::string& sourcePath, const LoadOptions& options, std::size_t files)
        : m_options(options)
        , m_files(files)
    {
        m_ranks.sourcePath = sourcePath;
    }
    void add(const Trace& names, const FileData& data, const std::string& path, std::size_t fileIndex)
    {
        FileData copy = data;
        const int named = data.rank >= 0 ? int(data.rank) : rankFromFileName(path);
        std::unique_lock lock(m_mutex);
        renumberFile(copy, mergeFileNames(m_ranks, names));
        std::vector<std::string> warnings; // the full trace reports them
        Rank rank = buildRank(m_ranks, copy, path, named >= 0 ? named : int(fileIndex), warnings);
        const auto at = std::upper_bound(m_ranks.ranks.begin(), m_ranks.ranks.end(), rank.rank,
            [](int r, const Rank& other) { return r < other.rank; });
        m_ranks.ranks.insert(at, std::move(rank));
        m_ranks.eventCount += data.events;
        const std::size_t read = ++m_read;
        if (!m_options.previewDue(read, m_files))
            return;
        std::shared_ptr<Trace> preview = copyOfRanks(m_ranks);
        lock.unlock();
        std::lock_guard handing(m_handing); // one preview at a time
        finalizeTrace(*preview, true, 1);
        m_options.preview(std::move(preview), read, m_files);
    }

private:
    const LoadOptions& m_options;
    std::size_t m_files;
    std::size_t m_read = 0;
    Trace m_ranks;
    std::mutex m_mutex, m_handing;
};

} // namespace

void importKineto(Trace& trace, const std::vector<std::string>& files, const LoadOptions& options)
{
    struct Loaded
    {
        std::string path;
        FileData data;
        int rank = -1;
    };
    std::vector<Loaded> loaded(files.size());
    LoadProgress progress;
    std::vector<std::uint64_t> sizes;
    for (const auto& path : files) {
        std::error_code ec;
        const auto size = fs::file_size(path, ec);
        sizes.push_back(ec ? 0 : std::uint64_t(size));
        progress.bytesTotal += sizes.back();
    }
    // Files are read in parallel, each into its own Trace for names and collective arguments, merged in file order.
    std::vector<Trace> names(files.size());
    std::vector<std::uint64_t> done(files.size(), 0);
    std::mutex progressMutex;
    std::optional<RanksPreview> preview;
    if (options.preview && options.previewDue && files.size() > 1)
        preview.emplace(trace.sourcePath, options, files.size());
    readFilesInParallel(files.size(), fileReadThreads(options, files.size()), [&](std::size_t f) {
        LoadOptions own = options;
        if (options.progress)
            own.progress = [&, f](const LoadProgress& p) {
                std::lock_guard lock(progressMutex);
                done[f] = p.bytesRead;
                progress.bytesRead = std::accumulate(done.begin(), done.end(), std::uint64_t(0));
                progress.currentFile = files[f];
                options.progress(progress);
            };
        LoadProgress fileProgress;
        loaded[f].path = files[f];
        loaded[f].data = readFile(names[f], files[f], own, fileProgress);
        {
            std::lock_guard lock(progressMutex);
            done[f] = sizes[f];
            progress.eventsRead += loaded[f].data.events;
        }
        if (preview)
            preview->add(names[f], loaded[f].data, files[f], f);
    });
    progress.bytesRead = progress.bytesTotal;
    stageTiming("import: merge names");
    std::vector<FileIds> ids(files.size());
    for (std::size_t f = 0; f < files.size(); ++f) {
        ids[f] = mergeFileNames(trace, names[f]);
        names[f] = Trace();
    }
    if (options.progress)
        options.progress(progress);
    // Ranks: distributedInfo, else the file name, else the natural order of the files.
    for (std::size_t i = 0; i < loaded.size(); ++i) {
        Loaded& l = loaded[i];
        l.rank = l.data.rank >= 0 ? int(l.data.rank) : rankFromFileName(l.path);
    }
    const bool allNamed = std::all_of(loaded.begin(), loaded.end(), [](const Loaded& l) { return l.rank >= 0; });
    // Files of different world sizes are different jobs: read all the same (run/jobcheck.h says so and names them),
    // their ranks numbered in the order of the files, since their own numbers repeat.
    bool worldSizesDiffer = false;
    for (std::size_t i = 0; i < loaded.size(); ++i)
        worldSizesDiffer = worldSizesDiffer
            || (loaded[i].data.worldSize >= 0 && loaded.front().data.worldSize >= 0
                && loaded[i].data.worldSize != loaded.front().data.worldSize);
    if (!allNamed || worldSizesDiffer)
        for (std::size_t i = 0; i < loaded.size(); ++i)
            loaded[i].rank = int(i);
    if (worldSizesDiffer)
        trace.warnings.push_back(trace.sourcePath
            + ": rank numbers follow the natural order of the files (the files declare different world sizes)");
    for (std::size_t i = 0; i < loaded.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (loaded[i].rank == loaded[j].rank)
                throw LoadError(loaded[i].path,
                    "rank " + std::to_string(loaded[i].rank) + " also comes from " + loaded[j].path
                        + " (two files of the same rank)");
    std::vector<std::size_t> order(loaded.size()); // files in rank order
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(
        order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return loaded[a].rank < loaded[b].rank; });
    // The ranks on all cores (serial, this was a tenth of the run at 1 024 files), added in rank order.
    stageTiming("import: build ranks");
    std::vector<Rank> ranks(order.size());
    std::vector<std::vector<std::string>> warnings(order.size());
    parallelFor(order.size(), std::size_t(fileReadThreads(options, order.size())), [&](std::size_t k) {
        Loaded& l = loaded[order[k]];
        renumberFile(l.data, ids[order[k]]);
        ranks[k] = buildRank(trace, l.data, l.path, l.rank, warnings[k]);
        l.data.lanes = {}; // the maps and names it still holds: freed here, on many threads
        l.data.laneByKey = {};
    });
    for (std::size_t k = 0; k < order.size(); ++k) {
        trace.warnings.insert(trace.warnings.end(), warnings[k].begin(), warnings[k].end());
        trace.eventCount += loaded[order[k]].data.events;
        trace.ranks.push_back(std::move(ranks[k]));
    }
    trace.regionKinds.resize(trace.strings.size(), RegionKind::Unknown);
    stageTiming("import: finalize");
    finalizeTrace(trace, true, options.threads);
}

} // namespace exposure
