// SPDX-License-Identifier: GPL-3.0-or-later
// Reading one torch.profiler file: the keys the reader tells apart, its SAX handler and readFile (kinetofile_p.h).
#include "import/jsonstream.h"
#include "import/kinetofile_p.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace exposure::kineto {

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
} // namespace

FileData readFile(
    Trace& trace, const std::string& path, const LoadOptions& options, LoadProgress& progress, PageBuffer* scratch)
{
    FileData data;
    Handler handler(trace, data);
    parseJsonFile(path, options, &progress, handler, "not a torch.profiler trace", scratch);
    if (!data.sawTraceEvents)
        throw LoadError(path, "not a torch.profiler (Kineto) trace: no \"traceEvents\" array");
    if (std::none_of(
            data.lanes.begin(), data.lanes.end(), [](const PendingLane& l) { return l.gpu && !l.intervals.empty(); }))
        throw LoadError(
            path, "no GPU events (kernel, gpu_memcpy or gpu_memset): was the profiler run with CUDA activities?");
    return data;
}

} // namespace exposure::kineto
