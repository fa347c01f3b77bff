// SPDX-License-Identifier: GPL-3.0-or-later
// bench_mpi: `mpirun -n K exposure-mpi stats --json` on a generated 8-rank Score-P-like trace (~10 M events at the
// default scale) for K = 1, 2, ... against K = 1 measured in the same run, and exposure-cli stats --json for
// reference. For each K: the best wall time of the whole mpirun (process start-up included), the best time inside
// the program (process 0's EXPOSURE_MPI_TIMINGS phases: plan and load, analysis, exchange, print), the speed-ups,
// the peak RSS of every process and whether the output is byte-identical to exposure-cli's. Also, for each K, the
// launch alone (`mpirun -n K exposure-mpi --version`: mpirun, program start, MPI_Init and MPI_Finalize, no work) and
// the wall speed-up that K processes could reach at best with that launch: the work of K = 1 split perfectly,
// (launch(1) + work(1)) / (launch(K) + work(1) / K). Not run by CTest.
//   bench_mpi [--scale S] [--processes 1,2,4,8] [--runs N] [--keep DIR]
#include "synth/archivewriter.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string loadAverage()
{
    std::string s = readFile("/proc/loadavg");
    return s.substr(0, s.find(' ', s.find(' ', s.find(' ') + 1) + 1));
}

struct Run
{
    double wallS = 0;
    double programS = 0; // process 0's phases
    std::vector<long> rssMiB; // by process
    double maxCpuS = 0; // the largest CPU time (user + system) of any process
    std::string out;
    int status = -1;
};

// Runs a shell command with stdout and stderr to files.
Run run(const std::string& command, const std::string& dir)
{
    const std::string out = dir + "/out.txt", err = dir + "/err.txt";
    const auto t0 = Clock::now();
    const int rc = std::system((command + " > " + out + " 2> " + err).c_str());
    Run r;
    r.wallS = std::chrono::duration<double>(Clock::now() - t0).count();
    r.status = rc;
    r.out = readFile(out);
    std::istringstream lines(readFile(err));
    for (std::string line; std::getline(lines, line);) {
        // exposure-mpi: process P: plan+load 0.459 s, agree 0.000 s, ...; peak RSS 82 MiB; CPU 0.61 s
        int p = -1;
        if (std::sscanf(line.c_str(), "exposure-mpi: process %d:", &p) != 1 || p < 0)
            continue;
        if (std::size_t(p) >= r.rssMiB.size())
            r.rssMiB.resize(std::size_t(p) + 1, 0);
        const auto rss = line.find("peak RSS ");
        if (rss != std::string::npos)
            r.rssMiB[std::size_t(p)] = std::atol(line.c_str() + rss + 9);
        const auto cpu = line.find("; CPU ");
        if (cpu != std::string::npos)
            r.maxCpuS = std::max(r.maxCpuS, std::atof(line.c_str() + cpu + 6));
        if (p == 0) {
            double sum = 0;
            for (std::size_t at = line.find(": ", line.find(':') + 1); at != std::string::npos && at < rss;) {
                const auto space = line.find(' ', at + 2);
                if (space == std::string::npos || space > rss)
                    break;
                sum += std::atof(line.c_str() + space + 1);
                at = line.find(", ", space);
            }
            r.programS = sum;
        }
    }
    return r;
}

} // namespace

int main(int argc, char** argv)
{
    int scale = 160;
    int runs = 3;
    std::vector<int> processes { 1, 2 };
    std::string keep;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--scale" && i + 1 < argc) {
            scale = std::atoi(argv[++i]);
        } else if (a == "--runs" && i + 1 < argc) {
            runs = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--processes" && i + 1 < argc) {
            processes.clear();
            std::istringstream list(argv[++i]);
            for (std::string k; std::getline(list, k, ',');)
                processes.push_back(std::max(1, std::atoi(k.c_str())));
        } else if (a == "--keep" && i + 1 < argc) {
            keep = argv[++i];
        } else {
            std::fprintf(stderr, "usage: bench_mpi [--scale S] [--processes 1,2,4,8] [--runs N] [--keep DIR]\n");
            return 2;
        }
    }
    if (std::find(processes.begin(), processes.end(), 1) == processes.end())
        processes.insert(processes.begin(), 1);

    const std::string dir
        = keep.empty() ? (fs::temp_directory_path() / ("bench_mpi_" + std::to_string(getpid()))).string() : keep;
    fs::create_directories(dir);
    const std::string trace = dir + "/trace";
    if (!fs::exists(trace)) {
        exposure::synth::DemoOptions o;
        o.ranks = 8;
        o.steps = 6;
        o.scale = scale;
        const auto events = exposure::synth::writeArchive(trace, exposure::synth::makeDemoSpec(o));
        std::printf("trace: 8 ranks, %llu events, scale %d, in %s\n", static_cast<unsigned long long>(events), scale,
            trace.c_str());
    }
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    setenv("EXPOSURE_MPI_TIMINGS", "1", 1);
    std::printf("cores: %ld online; load average before: %s\n", sysconf(_SC_NPROCESSORS_ONLN), loadAverage().c_str());

    Run serial;
    serial.wallS = 1e300;
    for (int i = 0; i < runs; ++i) {
        Run r = run(std::string(EXPOSURE_CLI) + " stats --json " + trace, dir);
        if (r.wallS < serial.wallS)
            serial = r;
    }
    std::printf("exposure-cli stats --json: %.3f s (best of %d; its loader and analysis use all cores)\n\n",
        serial.wallS, runs);

    std::printf("%9s %10s %9s %12s %9s %12s %9s %22s %10s %9s %9s\n", "processes", "wall s", "speed-up", "in-program s",
        "speed-up", "max CPU s", "speed-up", "peak RSS MiB per proc", "identical", "launch s", "ceiling");
    double base = 0, baseProgram = 0, baseCpu = 0, baseLaunch = 0;
    const auto mpirun = [](int k, const std::string& command) {
        return std::string(MPIEXEC) + " -n " + std::to_string(k) + " --oversubscribe " + command;
    };
    bool allSame = true;
    for (const int k : processes) {
        Run best;
        best.wallS = 1e300;
        best.programS = 1e300;
        double bestProgram = 1e300, bestCpu = 1e300;
        for (int i = 0; i < runs; ++i) {
            Run r = run(mpirun(k, "-x EXPOSURE_MPI_TIMINGS " EXPOSURE_MPI " stats --json " + trace), dir);
            bestProgram = std::min(bestProgram, r.programS);
            bestCpu = std::min(bestCpu, r.maxCpuS);
            if (r.wallS < best.wallS)
                best = r;
        }
        double launch = 1e300;
        for (int i = 0; i < runs; ++i)
            launch = std::min(launch, run(mpirun(k, EXPOSURE_MPI " --version"), dir).wallS);
        if (k == 1) {
            base = best.wallS;
            baseProgram = bestProgram;
            baseCpu = bestCpu;
            baseLaunch = launch;
        }
        const double work = base - baseLaunch;
        const double ceiling = base / (launch + work / k);
        const bool same = best.status == 0 && best.out == serial.out;
        allSame = allSame && same;
        std::string rss;
        for (const long m : best.rssMiB)
            rss += (rss.empty() ? "" : " ") + std::to_string(m);
        if (rss.size() > 22)
            rss = std::to_string(*std::max_element(best.rssMiB.begin(), best.rssMiB.end())) + " max, "
                + std::to_string(*std::min_element(best.rssMiB.begin(), best.rssMiB.end())) + " min";
        std::printf("%9d %10.3f %8.2fx %12.3f %8.2fx %12.3f %8.2fx %22s %10s %9.3f %8.2fx\n", k, best.wallS,
            base / best.wallS, bestProgram, baseProgram / bestProgram, bestCpu, baseCpu / bestCpu, rss.c_str(),
            same ? "yes" : "NO", launch, ceiling);
    }
    std::printf("\nload average after: %s\n"
                "max CPU s: the largest user + system time of one process (start-up included): the wall time the job\n"
                "would take with a free core per process; wall and in-program times depend on what else runs.\n"
                "launch s: mpirun -n K exposure-mpi --version (no work); ceiling: the wall speed-up K processes reach\n"
                "when the work of K = 1 (its wall less its launch) is split perfectly and the launch stays.\n",
        loadAverage().c_str());
    if (keep.empty())
        fs::remove_all(dir);
    return allSame ? 0 : 1;
}
