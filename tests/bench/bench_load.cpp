// SPDX-License-Identifier: GPL-3.0-or-later
// bench_load [DIR] [--threads N] [--repeat N] [--only a|b]: Exposure's OTF2 load against the OTF2 library reading
// the same archive with empty callbacks (with its defaults, and lean as loadTrace reads it), in one run.
//
// DIR defaults to $TMPDIR/exposure-bench-10M; the ~10-million-event Score-P-like archive (2 ranks, BERT-like DDP
// steps) is generated there in a child process on first use (so that the generator's memory does not count in
// this process's peak RSS) and reused afterwards. Prints a table: time, events/s, ratio to the baseline, peak RSS
// and resident bytes per interval. Not run by CTest.
#include "import/archivefinder.h"
#include "run/openrun.h"
#include "synth/archivewriter.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <otf2/otf2.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace exposure;

namespace {

double seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b)
{
    return std::chrono::duration<double>(b - a).count();
}

// User + system CPU time of this process: robust against other jobs on a shared machine (single-threaded rows).
double cpuSeconds()
{
    rusage u {};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

long peakRssKb()
{
    rusage u {};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

void die(const char* what)
{
    std::fprintf(stderr, "bench_load: %s\n", what);
    std::exit(2);
}

// ---- (a) the OTF2 library alone: same locations, same callbacks registered, each doing nothing -----------

template <typename... A> OTF2_CallbackCode nothing(A...)
{
    return OTF2_CALLBACK_SUCCESS;
}

struct Locations
{
    std::vector<OTF2_LocationRef> ids;
};

OTF2_CallbackCode collectLocation(
    void* user, OTF2_LocationRef self, OTF2_StringRef, OTF2_LocationType type, uint64_t, OTF2_LocationGroupRef)
{
    if (type == OTF2_LOCATION_TYPE_CPU_THREAD || type == OTF2_LOCATION_TYPE_ACCELERATOR_STREAM)
        static_cast<Locations*>(user)->ids.push_back(self);
    return OTF2_CALLBACK_SUCCESS;
}

// lean: with OTF2's per-event mapping and clock correction switched off, as loadTrace does where the local
// definitions hold no mapping table of an id it reads and no non-zero clock offset (the generated archives).
std::uint64_t readBaseline(const std::string& anchor, bool lean = false)
{
    OTF2_Reader* r = OTF2_Reader_Open(anchor.c_str());
    if (!r)
        die("cannot open the archive");
    OTF2_Reader_SetSerialCollectiveCallbacks(r);
    Locations locs;
    OTF2_GlobalDefReader* gd = OTF2_Reader_GetGlobalDefReader(r);
    OTF2_GlobalDefReaderCallbacks* gcb = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(gcb, collectLocation);
    OTF2_Reader_RegisterGlobalDefCallbacks(r, gd, gcb, &locs);
    uint64_t n = 0;
    OTF2_Reader_ReadAllGlobalDefinitions(r, gd, &n);
    OTF2_GlobalDefReaderCallbacks_Delete(gcb);
    OTF2_Reader_CloseGlobalDefReader(r, gd);
    for (auto id : locs.ids)
        OTF2_Reader_SelectLocation(r, id);
    const bool defs = OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS;
    OTF2_Reader_OpenEvtFiles(r);
    std::vector<OTF2_EvtReader*> readers;
    for (auto id : locs.ids) {
        if (defs) {
            if (OTF2_DefReader* dr = OTF2_Reader_GetDefReader(r, id)) {
                uint64_t k = 0;
                OTF2_Reader_ReadAllLocalDefinitions(r, dr, &k);
                OTF2_Reader_CloseDefReader(r, dr);
            }
        }
        readers.push_back(OTF2_Reader_GetEvtReader(r, id));
    }
    if (defs)
        OTF2_Reader_CloseDefFiles(r);
    OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
    OTF2_EvtReaderCallbacks_SetEnterCallback(
        cb, nothing<OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void*, OTF2_AttributeList*, OTF2_RegionRef>);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(
        cb, nothing<OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void*, OTF2_AttributeList*, OTF2_RegionRef>);
    OTF2_EvtReaderCallbacks_SetParameterUnsignedIntCallback(cb,
        nothing<OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void*, OTF2_AttributeList*, OTF2_ParameterRef, uint64_t>);
    OTF2_EvtReaderCallbacks_SetRmaGetCallback(cb,
        nothing<OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void*, OTF2_AttributeList*, OTF2_RmaWinRef, uint32_t,
            uint64_t, uint64_t>);
    OTF2_EvtReaderCallbacks_SetRmaPutCallback(cb,
        nothing<OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void*, OTF2_AttributeList*, OTF2_RmaWinRef, uint32_t,
            uint64_t, uint64_t>);
    OTF2_EvtReaderCallbacks_SetRmaOpCompleteBlockingCallback(
        cb, nothing<OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void*, OTF2_AttributeList*, OTF2_RmaWinRef, uint64_t>);
    std::uint64_t events = 0;
    for (auto* er : readers) {
        if (lean) {
            OTF2_EvtReader_ApplyMappingTables(er, false);
            OTF2_EvtReader_ApplyClockOffsets(er, false);
        }
        OTF2_Reader_RegisterEvtCallbacks(r, er, cb, nullptr);
        uint64_t got = 0;
        do {
            got = 0;
            if (OTF2_Reader_ReadLocalEvents(r, er, 1u << 16, &got) != OTF2_SUCCESS)
                die("baseline read failed");
            events += got;
        } while (got == (1u << 16));
        OTF2_Reader_CloseEvtReader(r, er);
    }
    OTF2_EvtReaderCallbacks_Delete(cb);
    OTF2_Reader_CloseEvtFiles(r);
    OTF2_Reader_Close(r);
    return events;
}

// The default folder is (re)generated when it is missing or incomplete; a folder named on the command line is only
// read, never replaced (it may be someone's trace), and generated only when it does not exist yet.
void ensureArchive(const std::string& dir, bool named)
{
    if (named && fs::exists(dir)) {
        if (findArchives(dir).empty())
            die(("no OTF2 archive in " + dir).c_str());
        return;
    }
    if (fs::exists(dir + "/rank1/traces.otf2") && fs::exists(dir + "/complete"))
        return;
    std::printf("generating the benchmark archive in %s ...\n", dir.c_str());
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0)
        die("fork failed");
    if (pid == 0) {
        fs::remove_all(dir);
        synth::DemoOptions o;
        o.ranks = 2;
        o.steps = 20;
        o.scale = 185;
        const auto spec = synth::makeDemoSpec(o);
        const auto events = synth::writeArchive(dir, spec);
        std::FILE* f = std::fopen((dir + "/complete").c_str(), "w");
        if (f) {
            std::fprintf(f, "%llu events\n", static_cast<unsigned long long>(events));
            std::fclose(f);
        }
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("generating the archive failed");
}

} // namespace

int main(int argc, char** argv)
{
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/exposure-bench-10M";
    int repeat = 5;
    int threads = 0;
    bool named = false;
    std::string only; // "a" or "b": measure that row alone (for profiling one of them)
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--repeat" && i + 1 < argc)
            repeat = std::max(1, std::atoi(argv[++i]));
        else if (a == "--threads" && i + 1 < argc)
            threads = std::max(0, std::atoi(argv[++i]));
        else if (a == "--only" && i + 1 < argc)
            only = argv[++i];
        else if (a == "-h" || a == "--help") {
            std::puts("Usage: bench_load [DIR] [--repeat N] [--threads N] [--only a|b]");
            return 0;
        } else {
            dir = a;
            named = true;
        }
    }
    ensureArchive(dir, named);
    const auto archives = findArchives(dir);
    std::uint64_t bytes = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file())
            bytes += e.file_size();

    // Warm the page cache once so that every measurement reads from memory.
    std::uint64_t events = 0;
    for (const auto& a : archives)
        events += readBaseline(a.anchor);

    // The rows are measured interleaved (a, b1, b2, a, b1, b2, ...) and the best of each is kept, so that load
    // from other jobs on a shared machine hits all of them alike.
    struct Row
    {
        std::string name;
        int threads = 0; // 0: the OTF2 baseline
        int bareThreads = 0; // > 0: the OTF2 library alone, whole archives spread over this many threads
        bool lean = false; // the OTF2 library alone, mapping and clock correction off
        double s = 1e30;
        double cpu = 1e30;
        long rssKb = 0;
        std::size_t intervals = 0;
        std::size_t resident = 0;
    };
    std::vector<Row> rows;
    rows.push_back({ "(a) OTF2, empty callbacks", 0 });
    rows.push_back({ "(a') OTF2, same, lean", 0, 0, true });
    rows.push_back({ "(b) loadTrace, 1 thread", 1 });
    if (threads > 1) {
        // The floor for any loader built on the OTF2 library: its bare read with the archives spread over the threads.
        rows.push_back({ "(a) OTF2 alone, " + std::to_string(threads) + " threads", 0, threads });
        rows.push_back({ "(b) loadTrace, " + std::to_string(threads) + " threads", threads });
    }
    if (!only.empty())
        std::erase_if(rows, [&](const Row& r) { return (r.threads == 0 ? "a" : "b") != only; });
    if (rows.empty())
        die("--only takes a or b");
    std::size_t tableBytes = 0;
    long rssBaseline = 0;
    for (int k = 0; k < repeat; ++k) {
        for (auto& row : rows) {
            const auto t0 = std::chrono::steady_clock::now();
            const double c0 = cpuSeconds();
            if (row.bareThreads > 0) {
                std::vector<std::uint64_t> counts(std::size_t(row.bareThreads), 0);
                std::vector<std::thread> pool;
                for (int t = 0; t < row.bareThreads; ++t)
                    pool.emplace_back([&, t] {
                        for (std::size_t a = std::size_t(t); a < archives.size(); a += std::size_t(row.bareThreads))
                            counts[std::size_t(t)] += readBaseline(archives[a].anchor);
                    });
                for (auto& th : pool)
                    th.join();
                if (std::accumulate(counts.begin(), counts.end(), std::uint64_t(0)) != events)
                    die("event count changed between runs");
            } else if (row.threads == 0) {
                std::uint64_t n = 0;
                for (const auto& a : archives)
                    n += readBaseline(a.anchor, row.lean);
                if (n != events)
                    die("event count changed between runs");
                if (k == 0 && !row.lean)
                    rssBaseline = peakRssKb();
            } else {
                LoadOptions o;
                o.threads = row.threads;
                auto trace = loadTrace(dir, o);
                if (trace->eventCount != events)
                    die("loadTrace read a different number of events than the baseline");
                row.intervals = trace->intervalCount();
                row.resident = trace->residentBytes();
                tableBytes = 0;
                for (const auto& r : trace->ranks)
                    for (const auto& l : r.lanes)
                        tableBytes += l.intervals.residentBytes();
            }
            row.s = std::min(row.s, seconds(t0, std::chrono::steady_clock::now()));
            row.cpu = std::min(row.cpu, cpuSeconds() - c0);
            row.rssKb = row.threads == 0 && row.bareThreads == 0 ? rssBaseline : peakRssKb();
        }
    }
    const double best = rows[0].s;
    const double bestCpu = rows[0].cpu;

    std::printf("\narchive: %s (%zu ranks, %.1f MB, %llu events read)\n", dir.c_str(), archives.size(),
        double(bytes) / 1e6, static_cast<unsigned long long>(events));
    std::printf("best of %d runs, page cache warm; ratios are against (a) measured in this run\n\n", repeat);
    std::printf("| %-28s | %8s | %8s | %12s | %10s | %9s | %8s | %14s |\n", "what", "wall [s]", "CPU [s]", "events/s",
        "wall ratio", "CPU ratio", "peak RSS", "bytes/interval");
    std::printf("|%s|%s|%s|%s|%s|%s|%s|%s|\n", std::string(30, '-').c_str(), std::string(10, '-').c_str(),
        std::string(10, '-').c_str(), std::string(14, '-').c_str(), std::string(12, '-').c_str(),
        std::string(11, '-').c_str(), std::string(10, '-').c_str(), std::string(16, '-').c_str());
    for (const auto& r : rows) {
        char perInterval[32] = "-";
        if (r.threads > 0)
            std::snprintf(perInterval, sizeof perInterval, "%.2f",
                double(r.resident) / double(std::max<std::size_t>(1, r.intervals)));
        std::printf("| %-28s | %8.3f | %8.3f | %12.3e | %10.2f | %9.2f | %5.0f MB | %14s |\n", r.name.c_str(), r.s,
            r.cpu, double(events) / r.s, r.s / best, r.cpu / bestCpu, double(r.rssKb) / 1024.0, perInterval);
    }
    std::printf("\n(a') switches OTF2's per-event id mapping and clock correction off, as loadTrace does for every\n"
                "location whose local definitions hold neither a mapping table of an id it reads nor a non-zero\n"
                "clock offset: the library's own share of (b). (b) over (a') is what Exposure adds to it.\n");
    std::printf("\nintervals: %zu; resident model: %.1f MB; interval tables alone: %.2f bytes/interval (the rest:\n"
                "launch-parameter ids, launch references and copy sizes)\n",
        rows.back().intervals, double(rows.back().resident) / 1e6,
        double(tableBytes) / double(std::max<std::size_t>(1, rows.back().intervals)));

    if (!only.empty())
        return 0; // profiling one row: nothing else runs

    // Where the time of one load with the most threads goes, stage by stage (openRun's stages; "import" reads the
    // events on the threads and then finishes the lanes on one): the part that does not run in parallel.
    {
        RunOptions run;
        run.load.threads = std::max(1, threads);
        run.analyse = false;
        run.stallSeconds = 0;
        run.capAddressSpace = false;
        std::vector<std::pair<RunStage, std::chrono::steady_clock::time_point>> marks;
        run.stageStarted = [&](RunStage st) { marks.emplace_back(st, std::chrono::steady_clock::now()); };
        const auto t0 = std::chrono::steady_clock::now();
        openRun(dir, run);
        const auto t1 = std::chrono::steady_clock::now();
        static const char* const names[] = { "detect", "ranks", "estimate", "import", "consistency", "align", "analyse",
            "view index", "collectives" };
        std::printf("\nstages of one load with %d thread(s), best of nothing (one run):", run.load.threads);
        for (std::size_t i = 0; i < marks.size(); ++i) {
            const auto end = i + 1 < marks.size() ? marks[i + 1].second : t1;
            std::printf(" %s %.1f ms%s", names[std::size_t(marks[i].first)], seconds(marks[i].second, end) * 1e3,
                i + 1 < marks.size() ? "," : "");
        }
        std::printf(
            " (before the first stage: %.1f ms)\n", marks.empty() ? 0.0 : seconds(t0, marks.front().second) * 1e3);
    }

    // (c) What a user waits for: the GUI process started on the archive until its first timeline is painted
    // (load, analysis, view index, first frame; Qt start-up included), reported by the GUI itself.
    if (fs::exists(EXPOSURE_GUI)) {
        double bestMs = 1e30;
        const std::string shot = (fs::temp_directory_path() / "bench_load_first_view.png").string();
        const std::string cmd = "QT_QPA_PLATFORM=offscreen EXPOSURE_STARTUP_TIMING=1 '" + std::string(EXPOSURE_GUI)
            + "' --screenshot '" + shot + "' '" + dir + "' 2>&1";
        for (int k = 0; k < repeat; ++k) {
            FILE* p = popen(cmd.c_str(), "r");
            if (!p)
                die("cannot start the GUI");
            char line[512];
            while (std::fgets(line, sizeof line, p)) {
                double ms = 0;
                if (std::sscanf(line, "exposure: first timeline painted %lf ms", &ms) == 1)
                    bestMs = std::min(bestMs, ms);
            }
            pclose(p);
        }
        if (bestMs < 1e30)
            std::printf("\n(c) exposure GUI, process start to first timeline painted: %.3f s (%.2fx (a)), best of %d\n",
                bestMs / 1000.0, bestMs / 1000.0 / best, repeat);
    }
    return 0;
}
