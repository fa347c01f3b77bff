// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/chromeimporter.h"

#include "import/archivefinder.h"
#include "import/jsonstream.h"
#include "model/lanemapping.h"
#include "model/tracefinalize.h"

#include <QRegularExpression>
#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

namespace fs = std::filesystem;

namespace exposure {

namespace {

// ---- detection: the first MiB of the file ----

const std::set<std::string_view>& kinetoCategories()
{
    static const std::set<std::string_view> cats = { "kernel", "gpu_memcpy", "gpu_memset", "cpu_op", "user_annotation",
        "gpu_user_annotation", "cuda_runtime", "cuda_driver", "python_function", "ac2g", "Kernel", "Memcpy", "Memset",
        "Operator", "Runtime", "Driver", "Python" };
    return cats;
}

// Reads a prefix of a trace object: stops (returns false) at the first field of torch.profiler's.
class SniffHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, SniffHandler>
{
public:
    bool kineto = false;
    bool sawEvents = false;
    bool sawWorkEvent = false; // a complete X, B, E, i or I event

    bool Default() { return true; }
    bool RawNumber(const char*, rapidjson::SizeType, bool) { return true; }
    bool String(const char* s, rapidjson::SizeType n, bool)
    {
        const std::string_view v(s, n);
        if (m_depth == 3 && m_events && m_lastKey == "cat" && kinetoCategories().count(v))
            kineto = true;
        if (m_depth == 3 && m_events && m_lastKey == "ph")
            m_work = v == "X" || v == "B" || v == "E" || v == "i" || v == "I";
        return !kineto;
    }
    bool Key(const char* s, rapidjson::SizeType n, bool)
    {
        m_lastKey.assign(s, n);
        if (m_depth == 1
            && (m_lastKey == "schemaVersion" || m_lastKey == "deviceProperties" || m_lastKey == "distributedInfo"
                || m_lastKey == "baseTimeNanoseconds"))
            kineto = true;
        if (m_depth == 1)
            m_topKey = m_lastKey;
        return !kineto;
    }
    bool StartObject()
    {
        if (m_depth == 2 && m_events)
            m_work = false;
        return ++m_depth < 64;
    }
    bool EndObject(rapidjson::SizeType)
    {
        if (--m_depth == 2 && m_events && m_work)
            sawWorkEvent = true;
        return true;
    }
    bool StartArray()
    {
        if (m_depth == 1 && m_topKey == "traceEvents")
            m_events = sawEvents = true;
        return ++m_depth < 64;
    }
    bool EndArray(rapidjson::SizeType)
    {
        if (--m_depth == 1)
            m_events = false;
        return true;
    }

private:
    int m_depth = 0;
    bool m_events = false;
    bool m_work = false;
    std::string m_lastKey, m_topKey;
};

// ---- reading ----

enum class JsonKey : std::uint8_t { Other, TraceEvents, Ph, Name, Pid, Tid, Ts, Dur, Args, Step };

constexpr std::int64_t kNoStep = std::numeric_limits<std::int64_t>::min();

struct PendingInterval
{
    TimeNs start, end;
    StringId name; // in the file's own pool (the names are re-interned with their lane's kind)
    std::int64_t step; // kNoStep if none
    std::uint8_t stepKey; // index into the step keys the mapping names
};

struct PendingLane
{
    std::string pid, tid;
    std::vector<PendingInterval> intervals;
    std::vector<PendingInterval> open; // B events not yet ended, innermost last
};

struct FileData
{
    StringPool names;
    std::vector<PendingLane> lanes;
    std::unordered_map<std::string, std::size_t> laneByKey; // "pid\x1ftid"
    std::map<std::string, std::string> processNames; // pid -> process_name
    std::map<std::string, std::string> threadNames; // "pid\x1ftid" -> thread_name
    bool array = false, sawEvents = false;
    TimeNs lastTime = std::numeric_limits<TimeNs>::min();
    std::uint64_t events = 0, badTimes = 0, negativeDurations = 0, unmatchedEnds = 0, unclosedBegins = 0;
};

// SAX handler over the whole file: numbers arrive as text, so timestamps are converted exactly.
class Handler : public JsonTraceHandler<Handler, JsonKey, 8>
{
public:
    Handler(FileData& data, const std::vector<std::string>& stepKeys)
        : m_data(data)
        , m_stepKeys(stepKeys)
    { }

private:
    friend class JsonTraceHandler<Handler, JsonKey, 8>;
    static constexpr int kTracked = 8;

    JsonKey keyOf(std::string_view k)
    {
        if (m_inEvents && m_depth == m_eventsDepth + 2 && m_key[m_eventsDepth + 1] == JsonKey::Args) {
            if (k == "name")
                return JsonKey::Name;
            for (std::size_t i = 0; i < m_stepKeys.size(); ++i)
                if (k == m_stepKeys[i]) {
                    m_stepKeyIndex = std::uint8_t(i);
                    return JsonKey::Step;
                }
            return JsonKey::Other;
        }
        static const std::pair<std::string_view, JsonKey> keys[] = { { "ph", JsonKey::Ph }, { "name", JsonKey::Name },
            { "pid", JsonKey::Pid }, { "tid", JsonKey::Tid }, { "ts", JsonKey::Ts }, { "dur", JsonKey::Dur },
            { "args", JsonKey::Args }, { "traceEvents", JsonKey::TraceEvents } };
        for (const auto& [text, key] : keys)
            if (text == k)
                return key;
        return JsonKey::Other;
    }

    void open(bool object)
    {
        if (m_depth == 0 && !object) {
            m_data.array = m_data.sawEvents = m_inEvents = true;
            m_eventsDepth = 1;
        } else if (m_depth == 1 && !object && !m_data.array && m_key[1] == JsonKey::TraceEvents) {
            m_data.sawEvents = m_inEvents = true;
            m_eventsDepth = 2;
        }
        if (m_inEvents && m_depth == m_eventsDepth && object) {
            m_event = Event {};
            m_eventOpen = true;
        }
    }

    void close()
    {
        if (m_inEvents && m_depth == m_eventsDepth && m_eventOpen) {
            m_eventOpen = false;
            finishEvent();
        }
        if (m_inEvents && m_depth == m_eventsDepth - 1)
            m_inEvents = false;
    }

    bool value(const char* s, std::size_t n, bool number)
    {
        if (!m_inEvents || !m_eventOpen || m_depth >= kTracked)
            return true;
        const JsonKey key = m_key[m_depth];
        if (m_depth == m_eventsDepth + 1) {
            takeEventField(m_event, key, s, n, number, NsRounding::Nearest);
        } else if (m_depth == m_eventsDepth + 2 && m_key[m_eventsDepth + 1] == JsonKey::Args) {
            std::uint64_t v = 0;
            if (key == JsonKey::Name && !number)
                m_event.argName.assign(s, n);
            else if (key == JsonKey::Step && number && parseU64(s, n, v) && v < (1ull << 62)) {
                m_event.step = std::int64_t(v);
                m_event.stepKey = m_stepKeyIndex;
            }
        }
        return true;
    }

    void finishEvent();
    PendingLane& laneOf(const std::string& pid, const std::string& tid);

    struct Event : TraceEventFields
    {
        std::string argName;
        std::int64_t step = kNoStep;
        std::uint8_t stepKey = 0;
    };

    FileData& m_data;
    const std::vector<std::string>& m_stepKeys;
    int m_eventsDepth = -1;
    bool m_inEvents = false;
    bool m_eventOpen = false;
    std::uint8_t m_stepKeyIndex = 0;
    Event m_event;
};

PendingLane& Handler::laneOf(const std::string& pid, const std::string& tid)
{
    std::string key = pid + '\x1f' + tid;
    auto it = m_data.laneByKey.find(key);
    if (it == m_data.laneByKey.end()) {
        it = m_data.laneByKey.emplace(std::move(key), m_data.lanes.size()).first;
        m_data.lanes.push_back({ pid, tid, {}, {} });
    }
    return m_data.lanes[it->second];
}

void Handler::finishEvent()
{
    ++m_data.events;
    const Event& e = m_event;
    if (e.ph == "M") {
        if (e.name == "process_name")
            m_data.processNames[e.pid] = e.argName;
        else if (e.name == "thread_name")
            m_data.threadNames[e.pid + '\x1f' + e.tid] = e.argName;
        return;
    }
    const bool complete = e.ph == "X", begin = e.ph == "B", end = e.ph == "E", instant = e.ph == "i" || e.ph == "I";
    if (!complete && !begin && !end && !instant)
        return; // counters, flows, async and object events carry no interval of a lane
    if (!e.tsOk || (complete && !e.durOk)) {
        ++m_data.badTimes;
        return;
    }
    if (complete && e.dur < 0) {
        ++m_data.negativeDurations;
        return;
    }
    PendingLane& lane = laneOf(e.pid, e.tid);
    const TimeNs stop = complete ? e.ts + e.dur : e.ts;
    m_data.lastTime = std::max(m_data.lastTime, stop);
    if (end) {
        if (lane.open.empty()) {
            ++m_data.unmatchedEnds;
            return;
        }
        PendingInterval iv = lane.open.back();
        lane.open.pop_back();
        if (e.ts < iv.start) {
            ++m_data.negativeDurations;
            return;
        }
        iv.end = e.ts;
        lane.intervals.push_back(iv);
        return;
    }
    const PendingInterval iv { e.ts, stop, m_data.names.intern(e.name), e.step, e.stepKey };
    (begin ? lane.open : lane.intervals).push_back(iv);
}

// Reads the whole file; B events never ended are closed at the last timestamp of the file.
FileData readChrome(const std::string& path, const LoadOptions& options, const std::vector<std::string>& stepKeys)
{
    FileData data;
    Handler handler(data, stepKeys);
    LoadProgress progress;
    std::error_code ec;
    progress.bytesTotal = std::uint64_t(fs::file_size(path, ec));
    progress.currentFile = path;
    parseJsonFile(path, options, &progress, handler, "not a Chrome trace");
    if (!data.sawEvents)
        throw LoadError(path, "not a Chrome trace: neither a JSON array of events nor an object with \"traceEvents\"");
    for (PendingLane& lane : data.lanes) {
        for (PendingInterval& iv : lane.open) {
            iv.end = std::max(iv.start, data.lastTime);
            lane.intervals.push_back(iv);
            ++data.unclosedBegins;
        }
        lane.open.clear();
    }
    if (std::all_of(data.lanes.begin(), data.lanes.end(), [](const PendingLane& l) { return l.intervals.empty(); }))
        throw LoadError(path, "no events (X, B/E or instant) in the Chrome trace");
    return data;
}

// ---- mapping threads to workers and lanes ----

// The layout of the published Megatron-LM timelines (StragglerAnalysis' timeline-*.json.gz).
ChromeMappingRule megatronMapping()
{
    ChromeMappingRule r;
    r.id = "megatron-timeline";
    r.thread = R"(^PP rank (?<pp>\d+), TP rank (?<tp>\d+), (?<role>compute|pp-comm|dp-comm|tp-comm|misc)$)";
    r.pid = "dp";
    r.roles = { { "compute", "compute" }, { "pp-comm", "pp-comm" }, { "dp-comm", "dp-comm" }, { "tp-comm", "tp-comm" },
        { "misc", "host" } };
    r.step = "step";
    return r;
}

struct CompiledRule
{
    ChromeMappingRule rule;
    QRegularExpression process, thread;
};

// What the mapping decided for one thread.
struct LaneMap
{
    ParallelCoords coords;
    ChromeLaneRole role;
    int stepKey = -1; // index into the step keys, -1 none
    bool unknownRole = false;
};

class Mapper
{
public:
    explicit Mapper(const std::vector<ChromeMappingRule>& user)
    {
        std::vector<ChromeMappingRule> all = user;
        all.push_back(megatronMapping());
        for (ChromeMappingRule& r : all) {
            if (!r.step.empty() && std::find(m_stepKeys.begin(), m_stepKeys.end(), r.step) == m_stepKeys.end()
                && m_stepKeys.size() < 255)
                m_stepKeys.push_back(r.step);
            const auto opts = QRegularExpression::CaseInsensitiveOption;
            CompiledRule c { r, QRegularExpression(QString::fromStdString(r.process), opts),
                QRegularExpression(QString::fromStdString(r.thread), opts) };
            if (c.process.isValid() && c.thread.isValid()) // rules.cpp refuses invalid ones before this
                m_rules.push_back(std::move(c));
        }
    }
    const std::vector<std::string>& stepKeys() const { return m_stepKeys; }

    LaneMap map(const std::string& processName, const std::string& threadName, const std::string& pid) const
    {
        LaneMap out;
        for (const CompiledRule& c : m_rules) {
            const auto pm = c.process.match(QString::fromStdString(processName));
            const auto tm = c.thread.match(QString::fromStdString(threadName));
            if (!pm.hasMatch() || !tm.hasMatch())
                continue;
            auto group = [&](const char* name) {
                const QString t = tm.captured(QLatin1String(name));
                return (t.isEmpty() ? pm.captured(QLatin1String(name)) : t).toStdString();
            };
            for (const char* coord : { "dp", "pp", "tp", "ep", "cp" })
                if (const std::string v = group(coord); !v.empty() && v.size() < 9
                    && std::all_of(v.begin(), v.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
                    *coordinateNamed(out.coords, coord) = std::stoi(v);
            if (int* c2 = coordinateNamed(out.coords, c.rule.pid); c2 && *c2 < 0 && !pid.empty() && pid.size() < 9
                && std::all_of(pid.begin(), pid.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
                *c2 = std::stoi(pid);
            std::string roleName = c.rule.role.empty() ? group("role") : c.rule.role;
            for (const auto& [text, role] : c.rule.roles)
                if (c.rule.role.empty() && text == roleName) {
                    roleName = role;
                    break;
                }
            const auto role = roleName.empty() ? ChromeLaneRole {} : laneRoleNamed(roleName); // none: a GPU lane
            out.role = role.value_or(ChromeLaneRole {});
            out.unknownRole = !role.has_value();
            const auto k = std::find(m_stepKeys.begin(), m_stepKeys.end(), c.rule.step);
            out.stepKey = c.rule.step.empty() || k == m_stepKeys.end() ? -1 : int(k - m_stepKeys.begin());
            return out;
        }
        return out; // no rule: a GPU lane of the process's rank, classified by name
    }

private:
    std::vector<CompiledRule> m_rules;
    std::vector<std::string> m_stepKeys;
};

// ---- building the ranks ----

struct Worker
{
    ParallelCoords coords;
    std::string pid; // workers without coordinates: their process
    std::vector<std::size_t> lanes; // indexes into FileData::lanes
    int number = -1;
};

RegionKind kindOf(ChromeLaneRole role)
{
    switch (role.work) {
    case ChromeLaneRole::Work::Compute:
        return RegionKind::ComputeOp;
    case ChromeLaneRole::Work::Communication:
        return RegionKind::CommOp;
    case ChromeLaneRole::Work::Host:
        return RegionKind::HostRegion;
    case ChromeLaneRole::Work::Device:
        break;
    }
    return RegionKind::DeviceOp;
}

// The name's id in the trace, with the kind its lane gives. A name that lanes of different roles share is kept
// apart by the role: the second role's intervals are named "NAME [ROLE]".
StringId internWithKind(Trace& trace, const std::string& name, RegionKind kind)
{
    StringId id = trace.strings.intern(name);
    if (trace.regionKinds.size() <= id)
        trace.regionKinds.resize(std::size_t(id) + 1, RegionKind::Unknown);
    if (trace.regionKinds[id] != RegionKind::Unknown && trace.regionKinds[id] != kind)
        return internWithKind(trace, name + " [" + regionKindName(kind) + "]", kind);
    trace.regionKinds[id] = kind;
    return id;
}

// One lane: intervals by start (the longer first), nested by time. Host lanes clip an interval that outlasts its
// parent (counted); GPU lanes keep every interval as recorded (overlaps are the work that ran).
Lane buildLane(Trace& trace, const FileData& data, PendingLane& p, const LaneMap& map, std::uint64_t& clipped)
{
    Lane lane;
    const auto named = data.threadNames.find(p.pid + '\x1f' + p.tid);
    lane.name = named != data.threadNames.end() ? named->second : "thread " + p.tid;
    const bool host = map.role.work == ChromeLaneRole::Work::Host;
    lane.kind = host ? LaneKind::CpuThread : LaneKind::GpuStream;
    lane.commRole = map.role.comm;
    const RegionKind kind = kindOf(map.role);
    auto& v = p.intervals;
    std::stable_sort(v.begin(), v.end(), [](const PendingInterval& a, const PendingInterval& b) {
        return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::unordered_map<StringId, StringId> ids;
    std::vector<TimeNs> open;
    lane.intervals.reserve(v.size());
    for (PendingInterval& iv : v) {
        while (!open.empty() && open.back() <= iv.start)
            open.pop_back();
        if (host && !open.empty() && iv.end > open.back()) {
            iv.end = open.back();
            ++clipped;
        }
        auto id = ids.find(iv.name);
        if (id == ids.end())
            id = ids.emplace(iv.name, internWithKind(trace, data.names.str(iv.name), kind)).first;
        lane.intervals.append(iv.start, iv.end, id->second, std::uint8_t(std::min<std::size_t>(open.size(), 255)));
        open.push_back(iv.end);
    }
    lane.eventCount = v.size();
    return lane;
}

// The "steps" lane of a rank: per step, from the first start to the last end of the rank's events of that step.
void addStepLane(Trace& trace, Rank& rank, const std::map<std::int64_t, TimeRange>& steps)
{
    if (steps.empty())
        return;
    Lane lane;
    lane.name = "steps";
    lane.kind = LaneKind::CpuThread;
    for (const auto& [step, range] : steps)
        lane.intervals.append(
            range.start, range.end, internWithKind(trace, "step " + std::to_string(step), RegionKind::HostRegion));
    rank.lanes.insert(rank.lanes.begin(), std::move(lane));
}

std::string rankLabel(int number, const ParallelCoords& c)
{
    std::string coords;
    for (const auto& [name, v] :
        { std::pair<const char*, int> { "dp", c.dp }, { "pp", c.pp }, { "tp", c.tp }, { "ep", c.ep }, { "cp", c.cp } })
        if (v >= 0)
            coords += (coords.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(v);
    return "Rank " + std::to_string(number) + (coords.empty() ? "" : " (" + coords + ")");
}

// Numbers the workers: Megatron-LM's global rank where coordinates are known (tp fastest, then cp, ep, dp, pp;
// sizes from the largest coordinate seen), then the workers without coordinates in the natural order of their pids.
void numberWorkers(std::vector<Worker>& workers)
{
    ParallelCoords size { 1, 1, 1, 1, 1 };
    for (const Worker& w : workers)
        for (auto [s, v] : { std::pair { &size.dp, w.coords.dp }, { &size.pp, w.coords.pp }, { &size.tp, w.coords.tp },
                 { &size.ep, w.coords.ep }, { &size.cp, w.coords.cp } })
            *s = std::max(*s, v + 1);
    int next = 0;
    for (Worker& w : workers) {
        if (!w.coords.known())
            continue;
        auto at = [](int v) { return std::max(v, 0); };
        w.number = at(w.coords.tp)
            + size.tp
                * (at(w.coords.cp)
                    + size.cp * (at(w.coords.ep) + size.ep * (at(w.coords.dp) + size.dp * at(w.coords.pp))));
        next = std::max(next, w.number + 1);
    }
    std::vector<Worker*> rest;
    for (Worker& w : workers)
        if (!w.coords.known())
            rest.push_back(&w);
    std::stable_sort(
        rest.begin(), rest.end(), [](const Worker* a, const Worker* b) { return naturalLess(a->pid, b->pid); });
    for (Worker* w : rest)
        w->number = next++;
    std::sort(workers.begin(), workers.end(), [](const Worker& a, const Worker& b) { return a.number < b.number; });
}

struct Counts
{
    std::uint64_t clipped = 0, unknownRoles = 0;
};

// The rank of one worker: the steps lane, host lanes, then GPU lanes, each group in the natural order of the threads.
void addRank(Trace& trace, FileData& data, const Worker& w, const std::vector<LaneMap>& maps, const std::string& path,
    Counts& counts)
{
    Rank rank;
    rank.rank = w.number;
    rank.coords = w.coords;
    rank.label = rankLabel(w.number, w.coords);
    rank.archivePath = path;
    rank.timerResolution = 1'000'000'000;
    std::vector<std::size_t> order = w.lanes;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
        const bool hx = maps[x].role.work == ChromeLaneRole::Work::Host,
                   hy = maps[y].role.work == ChromeLaneRole::Work::Host;
        if (hx != hy)
            return hx;
        const PendingLane &a = data.lanes[x], &b = data.lanes[y];
        return a.pid != b.pid ? naturalLess(a.pid, b.pid) : naturalLess(a.tid, b.tid);
    });
    std::map<std::int64_t, TimeRange> steps;
    int stream = 0;
    for (const std::size_t k : order) {
        PendingLane& p = data.lanes[k];
        for (const PendingInterval& iv : p.intervals)
            if (iv.step != kNoStep && maps[k].stepKey == int(iv.stepKey)) {
                auto [it, added] = steps.emplace(iv.step, TimeRange { iv.start, iv.end });
                it->second = { std::min(it->second.start, iv.start), std::max(it->second.end, iv.end) };
            }
        Lane lane = buildLane(trace, data, p, maps[k], counts.clipped);
        if (lane.isGpu()) {
            lane.device = 0;
            lane.stream = stream++;
        }
        counts.unknownRoles += maps[k].unknownRole ? 1 : 0;
        rank.lanes.push_back(std::move(lane));
    }
    if (stream > 0)
        rank.devices = { 0 };
    addStepLane(trace, rank, steps);
    trace.ranks.push_back(std::move(rank));
}

void addWarnings(Trace& trace, const FileData& data, const Counts& counts, const std::string& path)
{
    const std::string file = fs::path(path).filename().string() + ": ";
    auto warn = [&](std::uint64_t n, const char* what) {
        if (n > 0)
            trace.warnings.push_back(file + std::to_string(n) + what);
    };
    warn(data.badTimes, " events without a readable \"ts\" or \"dur\" were skipped");
    warn(data.negativeDurations, " events end before they start and were skipped");
    warn(data.unmatchedEnds, " E events without an open B event on their thread were skipped");
    warn(data.unclosedBegins, " B events were never ended; each was closed at the last timestamp of the file");
    warn(counts.clipped, " host events outlast their parent event; each was clipped to its parent's end");
    warn(counts.unknownRoles, " threads got a lane role the mapping rules do not define; they are GPU lanes");
}

} // namespace

bool isChromeTraceFile(const std::string& path)
{
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
        return false;
    gzFile file = gzopen(path.c_str(), "rb");
    if (!file)
        return false;
    std::string head(1 << 20, '\0');
    const int n = gzread(file, head.data(), unsigned(head.size()));
    gzclose(file);
    if (n <= 0)
        return false;
    head.resize(std::size_t(n));
    std::size_t i = head.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    auto skipSpace = [&] {
        while (i < head.size() && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
            ++i;
    };
    skipSpace();
    if (i < head.size() && head[i] == '[') {
        ++i;
        skipSpace();
        return i < head.size() && (head[i] == '{' || head[i] == ']');
    }
    if (i >= head.size() || head[i] != '{')
        return false;
    SniffHandler sniff;
    padForSimdParse(head);
    rapidjson::StringStream stream(head.c_str() + i);
    rapidjson::Reader reader;
    reader.Parse<rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseStopWhenDoneFlag>(stream, sniff);
    return !sniff.kineto && sniff.sawEvents && sniff.sawWorkEvent;
}

void importChrome(Trace& trace, const std::string& file, const LoadOptions& options)
{
    const Mapper mapper(options.chromeMapping);
    FileData data = readChrome(file, options, mapper.stepKeys());
    std::vector<LaneMap> maps(data.lanes.size());
    std::vector<Worker> workers;
    std::map<std::string, std::size_t> workerByKey;
    for (std::size_t k = 0; k < data.lanes.size(); ++k) {
        const PendingLane& p = data.lanes[k];
        if (p.intervals.empty())
            continue;
        const auto process = data.processNames.find(p.pid);
        const auto thread = data.threadNames.find(p.pid + '\x1f' + p.tid);
        maps[k] = mapper.map(process != data.processNames.end() ? process->second : "",
            thread != data.threadNames.end() ? thread->second : "thread " + p.tid, p.pid);
        const ParallelCoords& c = maps[k].coords;
        const std::string key = c.known() ? "c" + std::to_string(c.dp) + "/" + std::to_string(c.pp) + "/"
                + std::to_string(c.tp) + "/" + std::to_string(c.ep) + "/" + std::to_string(c.cp)
                                          : "p" + p.pid;
        auto [it, added] = workerByKey.emplace(key, workers.size());
        if (added)
            workers.push_back({ c, p.pid, {}, -1 });
        workers[it->second].lanes.push_back(k);
    }
    numberWorkers(workers);
    Counts counts;
    for (const Worker& w : workers)
        addRank(trace, data, w, maps, file, counts);
    addWarnings(trace, data, counts, file);
    trace.eventCount += data.events;
    trace.regionKinds.resize(trace.strings.size(), RegionKind::Unknown);
    finalizeTrace(trace, true, options.threads);
}

} // namespace exposure
