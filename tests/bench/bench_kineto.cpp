// SPDX-License-Identifier: GPL-3.0-or-later
// bench_kineto [--size MB] [--rank-size MB] [--repeat N]: torch.profiler (Kineto) JSON import speed and memory, each
// against a baseline measured in the same run. Not run by CTest.
//
//  1. The real 2-rank .json.gz pair of ../shared/traces/kineto-ddp-bert (when present): `gzip -dc` of both files
//     (baseline) against `exposure-cli stats` on the folder (load + analysis + report).
//  2. A generated single-rank trace of --size MB of JSON (default 600), written once to $TMPDIR/exposure-bench-kineto:
//     reading the file's bytes (baseline) against loadTrace, as MB/s and events/s; peak memory of a child process
//     that only loads it, against the file size.
//  3. A generated 8-rank run of --rank-size MB per rank (default 100), written once: the files read one after
//     another (LoadOptions::threads = 1, the baseline) against the files read in parallel (the default).
#include "run/openrun.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace exposure;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU time (user + system) of this process so far.
double cpuSeconds()
{
    rusage u {};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// User + system CPU time of the waited-for children of this process (the shell of std::system and what it ran).
double childrenCpuSeconds()
{
    rusage u {};
    getrusage(RUSAGE_CHILDREN, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Wall time of a shell command, output discarded; its CPU time (every process of it) goes to `cpu` if given.
double runSeconds(const std::string& cmd, double* cpu = nullptr)
{
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = childrenCpuSeconds();
    if (std::system((cmd + " > /dev/null").c_str()) != 0) {
        std::fprintf(stderr, "bench_kineto: failed: %s\n", cmd.c_str());
        std::exit(1);
    }
    if (cpu)
        *cpu = childrenCpuSeconds() - c0;
    return secondsSince(t0);
}

// A DDP-like rank: per step, CPU ops with nested launches, and compute kernels and an NCCL kernel, until the file has
// `bytes` of JSON. Returns the number of events written.
std::uint64_t writeTrace(const std::string& path, std::uint64_t bytes, int rank = 0, int worldSize = 1)
{
    std::ofstream out(path, std::ios::binary);
    out << "{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " << rank
        << ", \"world_size\": " << worldSize
        << "},\n"
           "  \"traceEvents\": [\n";
    std::uint64_t events = 0, written = 0, corr = 1;
    double ts = 1'000'000.0;
    char buf[1024];
    bool first = true;
    auto emit = [&](int n) {
        out.write(buf, n);
        written += std::uint64_t(n);
        ++events;
        first = false;
    };
    while (written < bytes) {
        const double step = ts;
        int n = std::snprintf(buf, sizeof buf,
            "%s  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%llu\", \"pid\": 1, "
            "\"tid\": 1, \"ts\": %.3f, \"dur\": %.3f}",
            first ? "" : ",\n", static_cast<unsigned long long>(events), step, 5000.0);
        emit(n);
        for (int k = 0; k < 200 && written < bytes; ++k) {
            const double t = step + 1.0 + k * 24.0;
            n = std::snprintf(buf, sizeof buf,
                ",\n  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 1, \"tid\": 1, "
                "\"ts\": %.3f, \"dur\": 20.0, \"args\": {\"External id\": %llu, \"Record function id\": 0}}",
                t, static_cast<unsigned long long>(corr));
            emit(n);
            n = std::snprintf(buf, sizeof buf,
                ",\n  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
                "\"tid\": 1, \"ts\": %.3f, \"dur\": 4.5, \"args\": {\"External id\": %llu, \"cbid\": 211, "
                "\"correlation\": %llu}}",
                t + 2.0, static_cast<unsigned long long>(corr), static_cast<unsigned long long>(corr));
            emit(n);
            n = std::snprintf(buf, sizeof buf,
                ",\n  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ampere_sgemm_128x64_nn\", \"pid\": 0, "
                "\"tid\": 7, \"ts\": %.3f, \"dur\": 18.125, \"args\": {\"queued\": 0, \"device\": 0, "
                "\"context\": 1, \"stream\": 7, \"correlation\": %llu, \"registers per thread\": 128, "
                "\"grid\": [132, 1, 1], \"block\": [256, 1, 1]}}",
                t + 6.0, static_cast<unsigned long long>(corr));
            emit(n);
            ++corr;
        }
        ts += 5000.0;
    }
    out << "\n  ]\n}\n";
    return events;
}

long peakRssKbOfChildLoad(const std::string& self, const std::string& path)
{
    const pid_t pid = fork();
    if (pid == 0) {
        execl(self.c_str(), self.c_str(), "--child-load", path.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    int status = 0;
    rusage u {};
    wait4(pid, &status, 0, &u);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? u.ru_maxrss : -1;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc == 3 && std::strcmp(argv[1], "--child-load") == 0) {
        const auto trace = loadTrace(argv[2], {});
        return trace->intervalCount() > 0 ? 0 : 1;
    }
    std::uint64_t sizeMb = 600, rankSizeMb = 100;
    int repeat = 3;
    bool runOnly = false; // only the 8-rank run (section 3)
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--size") && i + 1 < argc)
            sizeMb = std::strtoull(argv[++i], nullptr, 10);
        else if (!std::strcmp(argv[i], "--run-only"))
            runOnly = true;
        else if (!std::strcmp(argv[i], "--rank-size") && i + 1 < argc)
            rankSizeMb = std::strtoull(argv[++i], nullptr, 10);
        else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = std::max(1, std::atoi(argv[++i]));
        else {
            std::puts("Usage: bench_kineto [--size MB] [--rank-size MB] [--repeat N] [--run-only]");
            return 0;
        }
    }
    const std::string self = fs::canonical("/proc/self/exe").string();

    std::printf("| %-58s | %9s | %10s | %10s |\n", "what", "wall [s]", "ratio", "MB/s");
    std::printf("|%s|%s|%s|%s|\n", std::string(60, '-').c_str(), std::string(11, '-').c_str(),
        std::string(12, '-').c_str(), std::string(12, '-').c_str());

    // 1. The real pair, against gzip -dc.
    const std::string shared = EXPOSURE_SHARED_TRACES "/kineto-ddp-bert";
    if (!runOnly && fs::exists(shared + "/ddp_bert_ws2_rank0.json.gz")) {
        const fs::path dir = fs::temp_directory_path() / "exposure-bench-kineto-pair";
        fs::create_directories(dir);
        std::uint64_t json = 0;
        for (int r = 0; r < 2; ++r) {
            const std::string name = "ddp_bert_ws2_rank" + std::to_string(r) + ".json.gz";
            fs::copy_file(shared + "/" + name, dir / name, fs::copy_options::overwrite_existing);
        }
        const std::string gz = "gzip -dc '" + (dir / "ddp_bert_ws2_rank0.json.gz").string() + "' '"
            + (dir / "ddp_bert_ws2_rank1.json.gz").string() + "'";
        {
            FILE* p = popen((gz + " | wc -c").c_str(), "r");
            if (p && std::fscanf(p, "%llu", reinterpret_cast<unsigned long long*>(&json)) != 1)
                json = 0;
            if (p)
                pclose(p);
        }
        // Interleaved, best of each: wall and the CPU time of all the command's processes.
        double gzBest = 1e30, cliBest = 1e30, gzCpu = 1e30, cliCpu = 1e30;
        for (int k = 0; k < repeat; ++k) {
            double cpu = 0;
            gzBest = std::min(gzBest, runSeconds(gz, &cpu));
            gzCpu = std::min(gzCpu, cpu);
            cliBest = std::min(cliBest, runSeconds("'" EXPOSURE_CLI "' stats '" + dir.string() + "'", &cpu));
            cliCpu = std::min(cliCpu, cpu);
        }
        std::printf("| %-58s | %9.3f | %10.2f | %10.1f |\n", "2-rank .json.gz pair: gzip -dc (baseline)", gzBest, 1.0,
            double(json) / 1e6 / gzBest);
        std::printf("| %-58s | %9.3f | %10.2f | %10.1f |\n", "2-rank .json.gz pair: exposure-cli stats", cliBest,
            cliBest / gzBest, double(json) / 1e6 / cliBest);
        std::printf(
            "| %-58s | %9.3f | %10.2f | %10s |\n", "2-rank pair, CPU time: gzip -dc (baseline)", gzCpu, 1.0, "");
        std::printf("| %-58s | %9.3f | %10.2f | %10s |\n", "2-rank pair, CPU time: exposure-cli stats", cliCpu,
            cliCpu / gzCpu, "");
    }

    if (!runOnly) {
        // 2. A generated trace of sizeMb MB.
        const fs::path big
            = fs::temp_directory_path() / ("exposure-bench-kineto-" + std::to_string(sizeMb) + "MB.json");
        if (!fs::exists(big)) {
            const auto t0 = std::chrono::steady_clock::now();
            const auto events = writeTrace(big.string(), sizeMb * 1'000'000);
            std::fprintf(stderr, "bench_kineto: wrote %s (%llu events) in %.1f s\n", big.c_str(),
                static_cast<unsigned long long>(events), secondsSince(t0));
        }
        const double mb = double(fs::file_size(big)) / 1e6;
        double readBest = 1e30, loadBest = 1e30;
        std::uint64_t events = 0;
        for (int k = 0; k < repeat; ++k) {
            readBest = std::min(readBest, runSeconds("cat '" + big.string() + "'"));
            const auto t0 = std::chrono::steady_clock::now();
            const auto trace = loadTrace(big.string(), {});
            loadBest = std::min(loadBest, secondsSince(t0));
            events = trace->eventCount;
        }
        const long rssKb = peakRssKbOfChildLoad(self, big.string());
        std::printf(
            "| %-58s | %9.3f | %10.2f | %10.1f |\n", "generated JSON: cat (baseline)", readBest, 1.0, mb / readBest);
        std::printf("| %-58s | %9.3f | %10.2f | %10.1f |\n", "generated JSON: loadTrace", loadBest, loadBest / readBest,
            mb / loadBest);
        std::printf(
            "\ngenerated trace: %.0f MB of JSON, %llu events, %.3g events/s; peak RSS of a process that loads it: "
            "%.0f MB (%.2fx the file size)\n",
            mb, static_cast<unsigned long long>(events), double(events) / loadBest, double(rssKb) / 1024.0,
            double(rssKb) * 1024.0 / (mb * 1e6));
    }

    // 3. An 8-rank run: files one after another (baseline) against files in parallel.
    const fs::path run = fs::temp_directory_path() / ("exposure-bench-kineto-8x" + std::to_string(rankSizeMb) + "MB");
    if (!fs::exists(run / "rank7.json")) {
        fs::create_directories(run);
        for (int r = 0; r < 8; ++r)
            writeTrace((run / ("rank" + std::to_string(r) + ".json")).string(), rankSizeMb * 1'000'000, r, 8);
    }
    double runMb = 0;
    for (int r = 0; r < 8; ++r)
        runMb += double(fs::file_size(run / ("rank" + std::to_string(r) + ".json"))) / 1e6;
    double serialBest = 1e30, parallelBest = 1e30, serialCpu = 0, parallelCpu = 0;
    for (int k = 0; k < repeat; ++k) {
        LoadOptions serial;
        serial.threads = 1;
        auto t0 = std::chrono::steady_clock::now();
        double c0 = cpuSeconds();
        (void)loadTrace(run.string(), serial);
        if (secondsSince(t0) < serialBest) {
            serialBest = secondsSince(t0);
            serialCpu = cpuSeconds() - c0;
        }
        t0 = std::chrono::steady_clock::now();
        c0 = cpuSeconds();
        (void)loadTrace(run.string(), {});
        if (secondsSince(t0) < parallelBest) {
            parallelBest = secondsSince(t0);
            parallelCpu = cpuSeconds() - c0;
        }
    }
    std::printf("| %-58s | %9.3f | %10.2f | %10.1f |\n", "8-rank run: files one after another (baseline)", serialBest,
        1.0, runMb / serialBest);
    std::printf("| %-58s | %9.3f | %10.2f | %10.1f |\n", "8-rank run: files in parallel", parallelBest,
        parallelBest / serialBest, runMb / parallelBest);
    std::printf("8-rank run: %.0f MB of JSON, %u hardware threads, speed-up of parallel reading %.2fx (CPU time %.2f s "
                "one after another, %.2f s in parallel: %.2f and %.2f cores busy on average; a ratio below the cores "
                "the parallel run could use means other programs had the CPUs)\n",
        runMb, std::thread::hardware_concurrency(), serialBest / parallelBest, serialCpu, parallelCpu,
        serialCpu / serialBest, parallelCpu / parallelBest);
    return 0;
}
