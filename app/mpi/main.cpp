// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-mpi: exposure-cli's statistics of a trace with many ranks, computed by the processes of an MPI job.
//   mpirun -n K exposure-mpi stats [exposure-cli stats options] TRACE
#include "cli/commands.h"
#include "mpimain.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace exposure::mpi {
int runStats(const World& world, int argc, char** argv);
} // namespace exposure::mpi

namespace {

const char* kUsage
    = "Usage: mpirun -n K exposure-mpi stats [options] TRACE\n"
      "       mpirun -n K exposure-mpi render [options] TRACE -o FILE\n"
      "\n"
      "The report of 'exposure-cli stats' and the figure of 'exposure-cli render' (same options, same\n"
      "bytes), computed by the K processes of an MPI job: the OTF2 archives of TRACE are spread over the\n"
      "processes by size, each process reads and analyses its own, and process 0 prints the report or\n"
      "draws the figure from per-row summaries (no intervals are sent). torch.profiler traces are read\n"
      "by process 0 alone. See 'exposure-mpi stats --help' and 'exposure-mpi render --help'.\n"
      "\n"
      "Exit status: 0 on success, 2 on a bad argument, rules file or trace (one line on stderr, from\n"
      "process 0); every process exits with the same status.\n"
      "\n"
      "Under Open MPI, exposure-mpi uses the ob1 transport (shared memory, TCP) unless OMPI_MCA_pml is set:\n"
      "it sends only summaries, and UCX's start-up costs more than it could save.\n";

} // namespace

int main(int argc, char** argv)
{
    // render draws, so it runs in exposure-mpi-render, the one of the two programs that links Qt Widgets and
    // QCustomPlot: the process is replaced before MPI starts. Returns only when that program cannot be run.
    std::string renderError;
    if (argc >= 2 && std::strcmp(argv[1], "render") == 0)
        renderError = exposure::cli::execHelperProgram("exposure-mpi-render", argc, argv);

    return exposure::mpi::runJob(argc, argv, [&](const exposure::mpi::World& world) {
        const std::string command = argc >= 2 ? argv[1] : "";
        if (command == "stats")
            return exposure::mpi::runStats(world, argc - 1, argv + 1);
        if (command == "--help" || command == "-h" || command == "help") {
            if (world.root())
                std::fputs(kUsage, stdout);
            return 0;
        }
        if (command == "--version") {
            if (world.root())
                std::printf("exposure-mpi %s\n", EXPOSURE_VERSION);
            return 0;
        }
        if (command == "render")
            return exposure::cli::fail("render: " + renderError);
        if (command.empty())
            return exposure::cli::fail("expected a command: stats or render (see 'exposure-mpi --help')");
        return exposure::cli::fail("unknown command '" + command + "' (see 'exposure-mpi --help')");
    });
}
