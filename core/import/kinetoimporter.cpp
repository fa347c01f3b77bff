// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/kinetoimporter.h"

#include "import/archivefinder.h"
#include "import/jsonstream.h"
#include "import/kinetofile_p.h"
#include "import/parallelread.h"
#include "model/parallelfor.h"
#include "model/stagetimings.h"
#include "model/tracefinalize.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace fs = std::filesystem;

namespace exposure {

using namespace kineto; // FileData, readFile and what they hold

namespace {

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

struct KinetoPart::State
{
    struct Loaded
    {
        std::string path;
        FileData data;
    };
    Trace& trace;
    std::vector<std::string> files;
    const LoadOptions& options;
    std::vector<Loaded> loaded;
    std::vector<FileIds> ids;
};

KinetoPart::KinetoPart(Trace& trace, std::vector<std::string> files, const LoadOptions& options)
    : m(std::make_unique<State>(State { trace, std::move(files), options, {}, {} }))
{ }

KinetoPart::~KinetoPart() = default;

void KinetoPart::read()
{
    const std::vector<std::string>& files = m->files;
    const LoadOptions& options = m->options;
    auto& loaded = m->loaded;
    loaded.resize(files.size());
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
        preview.emplace(m->trace.sourcePath, options, files.size());
    PageBufferPool buffers;
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
        std::unique_ptr<PageBuffer> buffer = buffers.take();
        loaded[f].data = readFile(names[f], files[f], own, fileProgress, buffer.get());
        buffers.give(std::move(buffer)); // (after an exception, no file is read any more: the buffer goes)
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
    m->ids.resize(files.size());
    for (std::size_t f = 0; f < files.size(); ++f) {
        m->ids[f] = mergeFileNames(m->trace, names[f]);
        names[f] = Trace();
    }
    if (options.progress)
        options.progress(progress);
}

std::vector<KinetoFileRank> KinetoPart::fileRanks() const
{
    std::vector<KinetoFileRank> out;
    for (const auto& l : m->loaded)
        out.push_back({ l.data.rank, l.data.worldSize, rankFromFileName(l.path) });
    return out;
}

void KinetoPart::build(const std::vector<int>& numbers, std::vector<std::size_t>* warningsPerRank)
{
    Trace& trace = m->trace;
    auto& loaded = m->loaded;
    std::vector<std::size_t> order(loaded.size()); // files in rank order
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return numbers[a] < numbers[b]; });
    // The ranks on all cores (serial, this was a tenth of the run at 1 024 files), added in rank order.
    stageTiming("import: build ranks");
    std::vector<Rank> ranks(order.size());
    std::vector<std::vector<std::string>> warnings(order.size());
    parallelFor(order.size(), std::size_t(fileReadThreads(m->options, order.size())), [&](std::size_t k) {
        auto& l = loaded[order[k]];
        renumberFile(l.data, m->ids[order[k]]);
        ranks[k] = buildRank(trace, l.data, l.path, numbers[order[k]], warnings[k]);
        l.data.lanes = {}; // the maps and names it still holds: freed here, on many threads
        l.data.laneByKey = {};
    });
    if (warningsPerRank)
        warningsPerRank->clear();
    for (std::size_t k = 0; k < order.size(); ++k) {
        trace.warnings.insert(trace.warnings.end(), warnings[k].begin(), warnings[k].end());
        if (warningsPerRank)
            warningsPerRank->push_back(warnings[k].size());
        trace.eventCount += loaded[order[k]].data.events;
        trace.ranks.push_back(std::move(ranks[k]));
    }
    trace.regionKinds.resize(trace.strings.size(), RegionKind::Unknown);
    stageTiming("import: finalize");
    finalizeTrace(trace, true, m->options.threads);
}

std::vector<int> kinetoRankNumbers(const std::vector<std::string>& files, const std::vector<KinetoFileRank>& meta,
    const std::string& sourcePath, std::string& warning)
{
    // Ranks: distributedInfo, else the file name, else the natural order of the files.
    std::vector<int> rank(meta.size());
    for (std::size_t i = 0; i < meta.size(); ++i)
        rank[i] = meta[i].declared >= 0 ? int(meta[i].declared) : meta[i].named;
    const bool allNamed = std::all_of(rank.begin(), rank.end(), [](int r) { return r >= 0; });
    // Files of different world sizes are different jobs: read all the same (run/jobcheck.h says so and names them),
    // their ranks numbered in the order of the files, since their own numbers repeat.
    bool worldSizesDiffer = false;
    for (std::size_t i = 0; i < meta.size(); ++i)
        worldSizesDiffer = worldSizesDiffer
            || (meta[i].worldSize >= 0 && meta.front().worldSize >= 0 && meta[i].worldSize != meta.front().worldSize);
    if (!allNamed || worldSizesDiffer)
        std::iota(rank.begin(), rank.end(), 0);
    warning.clear();
    if (worldSizesDiffer)
        warning = sourcePath
            + ": rank numbers follow the natural order of the files (the files declare different world sizes)";
    // Two files of one rank: the first file (in the run's order) whose number an earlier one has.
    std::unordered_map<int, std::size_t> firstOf;
    std::size_t bad = meta.size(), badEarlier = 0;
    for (std::size_t i = 0; i < meta.size() && bad == meta.size(); ++i)
        if (const auto [it, fresh] = firstOf.try_emplace(rank[i], i); !fresh) {
            bad = i;
            badEarlier = it->second;
        }
    if (bad < meta.size())
        throw LoadError(files[bad],
            "rank " + std::to_string(rank[bad]) + " also comes from " + files[badEarlier]
                + " (two files of the same rank)");
    return rank;
}

void importKineto(Trace& trace, const std::vector<std::string>& files, const LoadOptions& options)
{
    KinetoPart part(trace, files, options);
    part.read();
    std::string warning;
    const std::vector<int> numbers = kinetoRankNumbers(files, part.fileRanks(), trace.sourcePath, warning);
    if (!warning.empty())
        trace.warnings.push_back(warning);
    part.build(numbers);
}

} // namespace exposure
