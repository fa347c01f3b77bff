// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-mpi stats: the report of exposure-cli stats, computed by K processes that each read and analyse only
// their share of the archives (or of the torch.profiler files).
//
//  1. Process 0 finds the archives or files and deals them out by size (plan.h); the plan is broadcast.
//  2. Each process reads its archives (openRun with RunOptions::part) or files (KinetoPart; process 0 numbers the
//     run's ranks from what every file declares) and agrees with the others on the trace's time origin (the earliest
//     event of any archive) and extent; a load error anywhere makes every process exit with status 2 after process 0
//     has printed the failing process's one-line message.
//  3. Each process analyses its ranks; where the run has several clock domains, process 0 estimates the offsets from
//     every rank's collectives and each process shifts and re-analyses its ranks (alignPartClocks).
//  4. The per-name kernel sums are merged along a binomial tree into process 0, which also gathers the rank reports
//     and the communication kernel instances (32 bytes each), matches collectives, sends each process the wait parts
//     of its ranks, gets back their exposed waiting, and prints the report.
// Everything that crosses processes refers to kernels by name and to ranks by their index in the whole run.
#include "analysis/clockalign.h"
#include "analysis/grouplayout.h"
#include "analysis/statsparts.h"
#include "cli/commands.h"
#include "import/consistency.h"
#include "import/kinetoimporter.h"
#include "import/loadoptions.h"
#include "mpi/wire.h"
#include "mpiutil.h"
#include "plan.h"
#include "run.h"
#include "run/jobcheck.h"

#include <QCoreApplication>
#include <cstdio>
#include <limits>
#include <map>
#include <sched.h>
#include <set>
#include <sys/resource.h>
#include <thread>

namespace exposure::mpi {

namespace {

using cli::fail;

// EXPOSURE_MPI_TIMINGS=1: every process prints where its time went and its peak memory (one line on stderr).
class Timings
{
public:
    explicit Timings(int rank)
        : m_rank(rank)
        , m_on(std::getenv("EXPOSURE_MPI_TIMINGS") != nullptr)
    { }
    void lap(const char* what)
    {
        const auto now = std::chrono::steady_clock::now();
        m_text += std::string(m_text.empty() ? "" : ", ") + what + " "
            + std::to_string(std::chrono::duration<double>(now - m_last).count()).substr(0, 5) + " s";
        m_last = now;
    }
    // Bytes of the messages this process received or sent (process 0: from and to all others; not the scalars).
    void exchanged(std::size_t bytes) { m_bytes += bytes; }
    ~Timings()
    {
        if (!m_on)
            return;
        rusage u {};
        getrusage(RUSAGE_SELF, &u);
        const double cpu
            = double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
        std::fprintf(stderr, "exposure-mpi: process %d: %s; exchanged %zu bytes; peak RSS %ld MiB; CPU %.3f s\n",
            m_rank, m_text.c_str(), m_bytes, long(u.ru_maxrss / 1024), cpu);
    }

private:
    int m_rank;
    bool m_on;
    std::string m_text;
    std::size_t m_bytes = 0;
    std::chrono::steady_clock::time_point m_last = std::chrono::steady_clock::now();
};

std::string formatReport(const StatsReport& report, const cli::StatsRequest& request)
{
    switch (request.format) {
    case cli::StatsRequest::Format::Json:
        return statsJson(report, request.options);
    case cli::StatsRequest::Format::Csv:
        return statsCsv(report, request.options);
    case cli::StatsRequest::Format::Table:
        break;
    }
    return statsTable(report, request.options);
}

// Process 0 of a run that is not split reads with every core of its host: mpirun binds each process to one core
// when it starts one or two (Open MPI's default), which kept `mpirun -n 1` on 1 of 16 cores for 218 s against
// exposure-cli's 16 s; the other processes only wait, asleep.
void unbindSingleReader()
{
    cpu_set_t all;
    CPU_ZERO(&all);
    const unsigned cpus = std::thread::hardware_concurrency();
    for (unsigned c = 0; c < cpus && c < CPU_SETSIZE; ++c)
        CPU_SET(c, &all);
    sched_setaffinity(0, sizeof all, &all); // best effort: where it is refused, the binding stays
}

// Process 0 alone, exactly as exposure-cli stats; the others wait for its exit status.
int runSingle(const World& world, cli::StatsRequest& request)
{
    std::int64_t status = 0;
    if (world.root()) {
        unbindSingleReader();
        status = [&]() -> int {
            std::string error;
            const auto run = openRunOrError(request.path, request.run, error);
            if (!run)
                return fail(error);
            cli::warnJobs(run->trace->warnings);
            const Trace* trace = run->trace.get();
            const Analysis* analysis = run->analysis.get();
            if (const std::string windowError = cli::resolveStatsWindow(request, activityRange(*trace));
                !windowError.empty())
                return fail(windowError);
            const std::string out = formatReport(
                buildStatsReport(*trace, *analysis, request.options, request.format == cli::StatsRequest::Format::Json),
                request);
            std::fwrite(out.data(), 1, out.size(), stdout);
            return 0;
        }();
    }
    broadcast(status); // the others wait here without spinning while process 0 works
    return int(status);
}

// The per-name kernel sums of all processes on process 0, merged along a binomial tree (log2 K rounds), so that
// process 0 receives the sums of log2 K processes rather than K. Returns what this process ends up holding.
KernelParts reduceKernelParts(const World& world, KernelParts mine, Timings& timings)
{
    for (int step = 1; step < world.size; step *= 2) {
        if (world.rank % (2 * step) == step) {
            const std::string bytes = serialize(mine);
            timings.exchanged(bytes.size());
            send(bytes, world.rank - step, 3);
            return {};
        }
        if (world.rank + step < world.size) {
            const std::string bytes = receive(world.rank + step, 3);
            timings.exchanged(bytes.size());
            mergeKernelParts(mine, deserializeKernelParts(bytes));
        }
    }
    return mine;
}

bool startsWith(const std::string& s, const std::string& prefix)
{
    return s.compare(0, prefix.size(), prefix) == 0;
}

// The trace warnings of a process's part, for process 0 to put them in the order exposure-cli gives them: the
// importer's, archive by archive in load order (each starts with its archive's anchor); then the lane check's, rank
// by rank; then one per rank whose events overlap no other rank's (needs every rank's time span).
// Torch.profiler files (importWarnings given): the importer's warnings go rank by rank. Each rank's thread-name
// warnings of the job check come with its lane check's.
void appendWarnings(Bytes& out, const Trace& trace, const std::vector<ArchiveRef>& mine,
    const std::vector<std::size_t>& mineIndex, const std::vector<std::size_t>& laneWarnings,
    const std::vector<int>& globalIndex, const std::vector<std::size_t>* importWarnings)
{
    std::size_t laneTotal = 0;
    for (const std::size_t n : laneWarnings)
        laneTotal += n;
    const std::size_t importTotal = trace.warnings.size() - laneTotal;
    std::vector<std::vector<std::string>> byArchive(importWarnings ? 0 : mine.size());
    std::size_t k = 0;
    for (std::size_t i = 0; i < importTotal && !importWarnings; ++i) {
        const std::string& w = trace.warnings[i];
        while (k + 1 < mine.size() && !startsWith(w, mine[k].anchor + ": "))
            ++k;
        byArchive[k].push_back(w);
    }
    out.i64(std::int64_t(byArchive.size()));
    for (std::size_t a = 0; a < byArchive.size(); ++a) {
        out.i64(std::int64_t(mineIndex[a]));
        out.i64(std::int64_t(byArchive[a].size()));
        for (const auto& w : byArchive[a])
            out.str(w);
    }
    out.i64(std::int64_t(trace.ranks.size()));
    std::size_t next = importTotal, nextImport = 0;
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const TimeRange span = rankSpan(trace.ranks[r]);
        out.i64(globalIndex[r]);
        out.i64(span.start);
        out.i64(span.end);
        out.str(trace.ranks[r].archivePath.empty() ? trace.sourcePath : trace.ranks[r].archivePath);
        const std::size_t n = r < laneWarnings.size() ? laneWarnings[r] : 0;
        out.i64(std::int64_t(n));
        for (std::size_t i = 0; i < n; ++i)
            out.str(trace.warnings[next++]);
        const std::size_t own = importWarnings && r < importWarnings->size() ? (*importWarnings)[r] : 0;
        out.i64(std::int64_t(own));
        for (std::size_t i = 0; i < own; ++i)
            out.str(trace.warnings[nextImport++]);
        const std::vector<std::string> threads = threadRankWarnings(trace, trace.ranks[r]);
        out.i64(std::int64_t(threads.size()));
        for (const std::string& w : threads)
            out.str(w);
    }
}

// Process 0: what the loader's cross-rank stages found before the report (alignPartClocks).
struct PartClocks
{
    ClockAlignment clocks;
    std::shared_ptr<Trace> standIn; // every rank's number, label, host, file and time span; the names of the match
    std::string numberingWarning; // the files declare different world sizes
    std::string jobWarning; // the files look like different jobs
};

struct RunWarnings
{
    RunWarnings(std::size_t archives, std::size_t ranks)
        : byArchive(archives)
        , byRank(ranks)
        , importByRank(ranks)
        , threadsByRank(ranks)
        , spans(ranks)
        , files(ranks)
    { }
    std::vector<std::vector<std::string>> byArchive, byRank, importByRank, threadsByRank;
    std::vector<TimeRange> spans;
    std::vector<std::string> files;

    void appendUnaligned(std::vector<std::string>& out, const std::vector<RankReport>& ranks) const
    {
        for (const std::size_t g : unalignedRanks(spans))
            out.push_back(unalignedRankWarning(files[g], ranks[g].label));
    }
    // As the serial loader orders them: the numbering's (torch.profiler files), the importer's (archive by archive,
    // or rank by rank for files), the lane check's, the ranks that overlap no other (before the clocks are aligned;
    // where an offset was applied they are checked again and come last), the job check's, the thread names', the
    // collective matching's, the clock alignment's.
    std::vector<std::string> inSerialOrder(
        const std::vector<RankReport>& ranks, const PartClocks& clocks, const CollectiveMatch& match) const
    {
        std::vector<std::string> out;
        if (!clocks.numberingWarning.empty())
            out.push_back(clocks.numberingWarning);
        for (const auto& a : byArchive)
            out.insert(out.end(), a.begin(), a.end());
        for (const auto& r : importByRank)
            out.insert(out.end(), r.begin(), r.end());
        for (const auto& r : byRank)
            out.insert(out.end(), r.begin(), r.end());
        if (!clocks.clocks.applied)
            appendUnaligned(out, ranks);
        if (!clocks.jobWarning.empty())
            out.push_back(clocks.jobWarning);
        for (const auto& r : threadsByRank)
            out.insert(out.end(), r.begin(), r.end());
        if (const std::string w = matchWarning(*clocks.standIn, match); !w.empty())
            out.push_back(w);
        if (const std::string w = clockWarning(*clocks.standIn); !w.empty())
            out.push_back(w);
        if (clocks.clocks.applied)
            appendUnaligned(out, ranks);
        return out;
    }
};

void readWarnings(Cursor& c, RunWarnings& into)
{
    const auto archives = c.i64();
    for (std::int64_t a = 0; a < archives; ++a) {
        auto& list = into.byArchive.at(std::size_t(c.i64()));
        const auto n = c.i64();
        for (std::int64_t i = 0; i < n; ++i)
            list.push_back(c.str());
    }
    const auto ranks = c.i64();
    for (std::int64_t r = 0; r < ranks; ++r) {
        const auto g = std::size_t(c.i64());
        into.spans.at(g).start = c.i64();
        into.spans[g].end = c.i64();
        into.files[g] = c.str();
        const auto n = c.i64();
        for (std::int64_t i = 0; i < n; ++i)
            into.byRank[g].push_back(c.str());
        for (auto k = c.i64(); k > 0; --k)
            into.importByRank[g].push_back(c.str());
        for (auto k = c.i64(); k > 0; --k)
            into.threadsByRank[g].push_back(c.str());
    }
}

// This process's share of the run.
struct LocalPart
{
    std::vector<std::size_t> mineIndex;
    std::vector<ArchiveRef> mine;
    std::vector<std::size_t> laneWarnings; // per local rank: its warnings from the lane check (the last ones)
    std::shared_ptr<Trace> trace;
    std::shared_ptr<Analysis> analysis;
    std::vector<int> globalIndex;
    std::size_t totalRanks = 0;
    // Torch.profiler files: per local rank, the importer's warnings (the first ones of the trace's); process 0 also
    // keeps the cross-rank stages' findings.
    bool files = false;
    std::vector<std::size_t> importWarnings;
    PartClocks clocks;
};

// The collective candidates of every process in one list, their names in one table (each process interns its own).
struct CandidateMerge
{
    std::vector<CollectiveCandidate> candidates;
    std::map<std::string, std::uint32_t> names;

    void add(const std::string& bytes)
    {
        CollectiveCandidates cc = deserializeCollectiveCandidates(bytes);
        std::vector<std::uint32_t> remap;
        for (const auto& name : cc.names)
            remap.push_back(names.try_emplace(name, std::uint32_t(names.size())).first->second);
        for (CollectiveCandidate& item : cc.items) {
            item.name = remap[item.name];
            item.group = item.group == kNoKey ? kNoKey : remap[item.group];
            item.signature = item.signature == kNoKey ? kNoKey : remap[item.signature];
            item.preset = item.preset == kNoKey ? kNoKey : remap[item.preset];
            item.behind = item.behind == kNoKey ? kNoKey : remap[item.behind];
            candidates.push_back(item);
        }
    }
    CollectiveMatch match(std::size_t ranks, bool multipleHosts)
    {
        std::vector<std::string> keys(names.size());
        for (const auto& [text, index] : names)
            keys[index] = text;
        return matchCandidates(std::move(candidates), ranks, multipleHosts, 200'000, std::move(keys));
    }
};

// The serial loader's "align" stage across processes. Process 0 builds a stand-in of the run (every rank's number,
// label, host, file and time span as recorded); where it has two clock domains or more (hosts, or files without
// hosts), every process sends its collective candidates, and process 0 matches them and estimates the offsets on the
// stand-in; where an offset is applied, each process shifts its ranks and analyses them again. Process 0 keeps what
// the report says of the clocks, and the job check's warning, which needs every file's recorded span.
void alignPartClocks(const World& world, const cli::StatsRequest& request, LocalPart& local)
{
    Trace& trace = *local.trace;
    Bytes mine;
    mine.i64(std::int64_t(trace.ranks.size()));
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const Rank& rank = trace.ranks[r];
        const TimeRange span = rankSpan(rank);
        mine.i64(local.globalIndex[r]);
        mine.i64(rank.rank);
        mine.str(rank.label);
        mine.str(rank.host);
        mine.str(rank.archivePath);
        mine.i64(span.start);
        mine.i64(span.end);
    }
    const std::vector<std::string> parts = gather(mine.out());
    auto standIn = std::make_shared<Trace>();
    std::int64_t domains = 0;
    if (world.root()) {
        standIn->sourcePath = trace.sourcePath;
        standIn->originAbsNs = trace.originAbsNs;
        standIn->ranks.resize(local.totalRanks);
        for (const std::string& part : parts) {
            Cursor c(part);
            for (auto n = c.i64(); n > 0; --n) {
                Rank& rank = standIn->ranks.at(std::size_t(c.i64()));
                rank.rank = int(c.i64());
                rank.label = c.str();
                rank.host = c.str();
                rank.archivePath = c.str();
                const TimeNs start = c.i64();
                const TimeNs end = c.i64();
                if (start <= end) { // its span, as rankSpan finds it on the stand-in
                    rank.lanes.emplace_back();
                    rank.lanes.back().intervals.append(start, end, 0);
                }
            }
        }
        domains = clockDomainCount(*standIn);
    }
    broadcast(domains);
    CollectiveMatch match; // as recorded; only where there are offsets to estimate
    if (domains >= 2) {
        const std::vector<std::string> candidates
            = gather(serialize(collectiveCandidates(trace, *local.analysis, local.globalIndex)));
        if (world.root()) {
            CandidateMerge merge;
            std::set<std::string> hosts;
            for (const Rank& rank : standIn->ranks)
                hosts.insert(rank.host);
            for (const std::string& part : candidates)
                merge.add(part);
            match = merge.match(local.totalRanks, hosts.size() > 1);
            for (const std::string& key : match.keys) // the stand-in's names are the match's (the estimates use them)
                if (standIn->strings.intern(key) != StringId(standIn->strings.size() - 1))
                    throw std::logic_error("the stand-in's names are not the collective match's");
        }
    }
    std::string offsets;
    if (world.root()) {
        local.clocks.clocks = estimateClockOffsets(*standIn, match, request.run.clock);
        local.clocks.jobWarning = splitJobs(request.path, describeFiles(*standIn)).warning;
        standIn->clocks = local.clocks.clocks;
        local.clocks.standIn = standIn;
        Bytes b;
        b.i64(local.clocks.clocks.applied ? 1 : 0);
        std::vector<TimeNs> offset(local.totalRanks, 0);
        for (const RankClock& rc : local.clocks.clocks.ranks)
            if (std::size_t(rc.rank) < offset.size())
                offset[std::size_t(rc.rank)] = rc.offsetNs;
        for (const TimeNs o : offset)
            b.i64(o);
        offsets = std::move(b.out());
    }
    broadcast(offsets);
    Cursor c(offsets);
    if (c.i64() == 0)
        return;
    std::vector<TimeNs> offset(local.totalRanks);
    for (TimeNs& o : offset)
        o = c.i64();
    for (std::size_t r = 0; r < trace.ranks.size(); ++r)
        if (const TimeNs o = offset[std::size_t(local.globalIndex[r])]; o != 0)
            for (Lane& lane : trace.ranks[r].lanes)
                lane.intervals.shift(-o);
    trace.finalize(true); // as applyClockOffsets does; then onto the run's new time origin
    joinTimes(trace);
    local.analysis = analyzeRanks(trace, local.analysis->rules, 1);
}

// After reading, for archives and files alike: analyses this process's ranks, aligns the clocks across processes,
// says on stderr where the files look like several jobs (as exposure-cli does) and resolves the statistics window on
// the run's aligned activity. -1 to go on, else the exit status.
int analysePart(const World& world, cli::StatsRequest& request, LocalPart& local, Timings& timings)
{
    Trace& trace = *local.trace;
    local.analysis = analyzeRanks(trace, std::move(request.run.rules), 1);
    alignPartClocks(world, request, local);
    if (world.root())
        cli::warnJobs({ local.clocks.jobWarning });
    timings.lap("analyse+clocks");
    if (const std::string windowError = cli::resolveStatsWindow(request, activityRange(trace)); !windowError.empty()) {
        if (world.root())
            fail(windowError);
        return 2;
    }
    const bool anyComm = allMax(hasCommunicationKernel(trace, *local.analysis) ? 1 : 0) != 0;
    if (local.totalRanks > 1 && !anyComm)
        warnNoCommunication(*local.analysis, local.totalRanks);
    return -1;
}

// 2.-3. Reads this process's archives (in the run's order, so its ranks come in the run's order too), agrees on the
// run's time origin, extent and global rank indexes, and analyses its ranks. -1 to go on, else the exit status.
int readPart(const World& world, const Plan& plan, cli::StatsRequest& request, LocalPart& local, Timings& timings)
{
    local.mine = plan.archivesOf(world.rank, local.mineIndex);
    RunOptions share;
    share.part = &local.mine;
    share.laneWarningsPerRank = &local.laneWarnings;
    share.analyse = false; // after joinRun
    share.load.threads = 1; // one process per core
    share.load.keepLaunchParameters = false; // the statistics do not use them
    share.load.memoryLimit = request.run.load.memoryLimit; // checked against this process's archives
    std::string error;
    if (auto run = openRunOrError(request.path, share, error))
        local.trace = run->trace;
    timings.lap("plan+load");
    if (agreeOnError(world, error))
        return 2;
    Trace& trace = *local.trace;
    local.globalIndex = joinRun(trace, plan, local.mine, local.mineIndex, local.totalRanks);
    timings.lap("agree");
    return analysePart(world, request, local, timings);
}

// 2.-3. for a folder of torch.profiler files: each process reads its files; process 0 numbers the run's ranks from
// what every file declares, as the serial importer does; each process builds its ranks with those numbers, checks
// their lanes, and the clocks are aligned across processes. -1 to go on, else the exit status.
int readFilesPart(const World& world, const Plan& plan, cli::StatsRequest& request, LocalPart& local, Timings& timings)
{
    local.files = true;
    local.mine = plan.archivesOf(world.rank, local.mineIndex);
    std::vector<std::string> files;
    for (const ArchiveRef& a : local.mine)
        files.push_back(a.anchor);
    local.trace = std::make_shared<Trace>();
    Trace& trace = *local.trace;
    trace.sourcePath = request.path;
    LoadOptions load;
    load.threads = 1; // one process per core
    load.keepLaunchParameters = false; // the statistics do not use them
    KinetoPart reader(trace, files, load);
    std::string error;
    try {
        reader.read();
    } catch (const LoadError& e) {
        error = e.what();
    } catch (const std::exception& e) {
        error = request.path + ": " + e.what();
    }
    timings.lap("read");
    if (agreeOnError(world, error))
        return 2;
    // What each file declares, to process 0, which numbers the ranks (or finds two files of one rank).
    Bytes declared;
    const std::vector<KinetoFileRank> own = reader.fileRanks();
    declared.i64(std::int64_t(own.size()));
    for (std::size_t k = 0; k < own.size(); ++k) {
        declared.i64(std::int64_t(local.mineIndex[k]));
        declared.i64(own[k].declared);
        declared.i64(own[k].worldSize);
        declared.i64(own[k].named);
    }
    const std::vector<std::string> all = gather(declared.out());
    std::string numbering;
    if (world.root()) {
        std::vector<KinetoFileRank> meta(plan.archives.size());
        std::vector<std::string> paths;
        for (const ArchiveRef& a : plan.archives)
            paths.push_back(a.anchor);
        for (const std::string& part : all) {
            Cursor c(part);
            for (auto n = c.i64(); n > 0; --n) {
                KinetoFileRank& f = meta.at(std::size_t(c.i64()));
                f.declared = c.i64();
                f.worldSize = c.i64();
                f.named = int(c.i64());
            }
        }
        try {
            const std::vector<int> numbers
                = kinetoRankNumbers(paths, meta, request.path, local.clocks.numberingWarning);
            Bytes b;
            for (const int n : numbers)
                b.i64(n);
            numbering = std::move(b.out());
        } catch (const LoadError& e) {
            error = e.what();
        }
    }
    if (agreeOnError(world, error))
        return 2;
    broadcast(numbering);
    Cursor c(numbering);
    std::vector<int> numbers(plan.archives.size());
    for (int& n : numbers)
        n = int(c.i64());
    std::vector<int> mine;
    for (const std::size_t i : local.mineIndex)
        mine.push_back(numbers[i]);
    reader.build(mine, &local.importWarnings);
    checkLaneConsistency(trace, &local.laneWarnings, 1);
    // Global rank indexes: the run's ranks in number order, as the serial importer orders them.
    std::vector<int> sorted = numbers;
    std::sort(sorted.begin(), sorted.end());
    for (const Rank& r : trace.ranks)
        local.globalIndex.push_back(int(std::lower_bound(sorted.begin(), sorted.end(), r.rank) - sorted.begin()));
    local.totalRanks = numbers.size();
    joinTimes(trace);
    timings.lap("build");
    return analysePart(world, request, local, timings);
}

// What a process sends process 0: its rank reports, collective candidates and warnings.
std::string partMessage(const LocalPart& local, const cli::StatsRequest& request)
{
    const Trace& trace = *local.trace;
    const bool stepIdle = request.format == cli::StatsRequest::Format::Json;
    Bytes part;
    part.i64(std::int64_t(trace.ranks.size()));
    const SharedGroupLayout layout(trace);
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        part.i64(local.globalIndex[r]);
        part.str(serialize(rankReport(trace, *local.analysis, int(r), request.options, stepIdle, &layout)));
    }
    part.str(serialize(collectiveCandidates(trace, *local.analysis, local.globalIndex)));
    appendWarnings(part, trace, local.mine, local.mineIndex, local.laneWarnings, local.globalIndex,
        local.files ? &local.importWarnings : nullptr);
    return std::move(part.out());
}

// Process 0: the run's report from every process's part, and the collective matching over all ranks.
struct Merged
{
    StatsReport report;
    std::vector<std::vector<int>> ranksOf; // process -> global rank indexes
    CollectiveMatch match;
};

Merged mergeParts(
    const std::vector<std::string>& parts, const LocalPart& local, std::size_t archives, KernelParts kernels)
{
    Merged m;
    StatsReport& report = m.report;
    m.ranksOf.resize(parts.size());
    report.tracePath = local.trace->sourcePath;
    report.rulesSource = local.analysis->rules.source();
    RunWarnings warnings(archives, local.totalRanks);
    report.ranks.resize(local.totalRanks);
    CandidateMerge merge;
    std::set<std::string> hosts;
    for (std::size_t p = 0; p < parts.size(); ++p) {
        Cursor c(parts[p]);
        const auto n = c.i64();
        for (std::int64_t k = 0; k < n; ++k) {
            const auto g = std::size_t(c.i64());
            report.ranks.at(g) = deserializeRankReport(c.str());
            hosts.insert(report.ranks[g].host);
            m.ranksOf[p].push_back(int(g));
        }
        merge.add(c.str());
        readWarnings(c, warnings);
    }
    report.kernels = kernelRows(kernels);
    m.match = merge.match(local.totalRanks, hosts.size() > 1);
    addCrossRank(report, m.match, local.analysis->rules);
    report.traceWarnings = warnings.inSerialOrder(report.ranks, local.clocks, m.match);
    report.clocks = local.clocks.clocks;
    report.clockLine = clockSummaryLine(*local.clocks.standIn);
    return m;
}

// Process 0: each process's waiting intervals of its ranks, then the job's step windows (for the bubbles).
std::vector<std::string> waitMessages(const Merged& m)
{
    const auto waits = waitParts(m.match);
    const std::map<int, TimeRange> jobWindows = reportJobWindows(m.report);
    std::vector<std::string> out;
    for (const auto& ranks : m.ranksOf) {
        Bytes w;
        for (const int g : ranks) {
            w.i64(std::int64_t(waits[std::size_t(g)].size()));
            for (const TimeRange& t : waits[std::size_t(g)]) {
                w.i64(t.start);
                w.i64(t.end);
            }
        }
        w.i64(std::int64_t(jobWindows.size()));
        for (const auto& [index, range] : jobWindows) {
            w.i64(index);
            w.i64(range.start);
            w.i64(range.end);
        }
        out.push_back(std::move(w.out()));
    }
    return out;
}

// Exposed waiting and the steps' bubbles need the rank's compute activity: computed where the rank lives. Per rank:
// its exposed waiting, then its steps' bubbles as (step index, bubble) pairs.
std::string exposedMessage(const LocalPart& local, const std::string& myWaits, TimeRange window)
{
    Bytes exposed;
    Cursor c(myWaits);
    std::vector<std::vector<TimeRange>> waits(local.trace->ranks.size());
    for (std::size_t r = 0; r < local.trace->ranks.size(); ++r) {
        waits[r].resize(std::size_t(c.i64()));
        for (auto& w : waits[r]) {
            w.start = c.i64();
            w.end = c.i64();
        }
    }
    std::map<int, TimeRange> jobWindows;
    for (std::int64_t n = c.i64(); n > 0; --n) {
        const auto index = int(c.i64());
        const TimeNs start = c.i64();
        jobWindows[index] = { start, c.i64() };
    }
    for (std::size_t r = 0; r < local.trace->ranks.size(); ++r) {
        exposed.i64(exposedWait(waits[r], local.analysis->ranks[r]));
        RankReport steps; // the steps the report lists for this rank, with their bubbles
        for (const StepWindow& w : local.analysis->ranks[r].steps)
            if (w.range.intersects(window) || w.range.isEmpty()) {
                StepReport s;
                s.index = w.index;
                s.range = w.range;
                steps.steps.push_back(s);
            }
        fillStepBubbles(steps, *local.trace, *local.analysis, int(r), jobWindows, window);
        exposed.i64(std::int64_t(steps.steps.size()));
        for (const StepReport& s : steps.steps) {
            exposed.i64(s.index);
            exposed.i64(s.bubbleNs);
        }
    }
    return std::move(exposed.out());
}

} // namespace

int runStats(const World& world, int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("exposure-mpi stats"));
    QCoreApplication::setApplicationVersion(QStringLiteral(EXPOSURE_VERSION));
    cli::StatsRequest request;
    // Every process parses the same command line and normally comes to the same result; process 0 prints it. A
    // rules file that only some processes can read must not leave the others waiting in a collective.
    const int status = cli::parseStatsRequest(request);
    const auto agreed = int(allMax(status));
    if (agreed >= 0) {
        if (status < 0 && world.root())
            fail("stats: another process could not read the arguments or the rules file");
        return agreed;
    }

    Timings timings(world.rank);
    std::string planBytes;
    if (world.root())
        planBytes = encode(makePlan(request.path, request.run.load.ranks, world.size));
    broadcast(planBytes);
    timings.exchanged(planBytes.size());
    const Plan plan = decode(planBytes);
    if (plan.mode == Mode::Single)
        return runSingle(world, request);

    LocalPart local;
    if (const int exit = plan.mode == Mode::Files ? readFilesPart(world, plan, request, local, timings)
                                                  : readPart(world, plan, request, local, timings);
        exit >= 0)
        return exit;
    const std::string part = partMessage(local, request);
    timings.lap("analyse+parts");
    KernelParts kernels
        = reduceKernelParts(world, kernelParts(*local.trace, *local.analysis, request.options.window), timings);
    const std::vector<std::string> parts = gather(part);
    for (std::size_t p = 1; p < parts.size(); ++p)
        timings.exchanged(parts[p].size()); // process 0: what it received
    if (!world.root())
        timings.exchanged(part.size());

    Merged merged;
    std::vector<std::string> waits(world.root() ? std::size_t(world.size) : 0);
    if (world.root()) {
        merged = mergeParts(parts, local, plan.archives.size(), std::move(kernels));
        waits = waitMessages(merged);
    }
    const std::string myWaits = scatter(waits);
    if (!world.root())
        timings.exchanged(myWaits.size());
    for (std::size_t p = 1; p < waits.size(); ++p)
        timings.exchanged(waits[p].size());
    const std::vector<std::string> exposedParts = gather(exposedMessage(local, myWaits, request.options.window));
    timings.lap("exchange+match");
    if (!world.root())
        return 0;
    StatsReport& report = merged.report;
    for (std::size_t p = 0; p < merged.ranksOf.size(); ++p) {
        Cursor c(exposedParts[p]);
        for (const int g : merged.ranksOf[p]) {
            report.ranks[std::size_t(g)].collectives = merged.match.ranks[std::size_t(g)];
            report.ranks[std::size_t(g)].collectives.exposedWaitNs = c.i64();
            fillStepCollectives(report.ranks[std::size_t(g)], merged.match, g, request.options.window);
            std::map<int, TimeNs> bubbles;
            for (std::int64_t n = c.i64(); n > 0; --n) {
                const auto index = int(c.i64());
                bubbles[index] = c.i64();
            }
            for (StepReport& s : report.ranks[std::size_t(g)].steps)
                if (const auto it = bubbles.find(s.index); it != bubbles.end())
                    s.bubbleNs = it->second;
        }
    }
    fillPeerWaits(report, merged.match, request.options.window);
    const std::string out = formatReport(report, request);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    timings.lap("print");
    return 0;
}

} // namespace exposure::mpi
