// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-mpi: exposure-cli's statistics of a trace with many ranks, computed by the processes of an MPI job.
//   mpirun -n K exposure-mpi stats [exposure-cli stats options] TRACE
#include "cli/commands.h"
#include "mpiutil.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

namespace exposure::mpi {
int runStats(const World& world, int argc, char** argv);
int runRender(const World& world, int argc, char** argv);
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

// exposure-mpi sends only summaries (about 2 MB to process 0 for 8 ranks and 10 M events), so the fast networks are
// worth nothing to it, while Open MPI 4.1's default point-to-point layer (UCX) costs about 0.22 s of MPI_Init in every
// process (0.31 s against 0.11 s for an empty MPI program on this machine, 1 or 2 processes). Unless the user or the
// site chose one in the environment, Open MPI is asked for its ob1 layer (shared memory between the processes of a
// host, TCP between hosts). The transports under it are left to Open MPI: excluding only openib made MPI_Init take
// 1.4 s here (it then probes libfabric). Other MPI libraries ignore the variable.
void preferLightMpiTransport()
{
    if (!std::getenv("OMPI_MCA_pml"))
        setenv("OMPI_MCA_pml", "ob1", 0);
}

} // namespace

int main(int argc, char** argv)
{
    preferLightMpiTransport();
    MPI_Init(&argc, &argv);
    exposure::mpi::World world;
    MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world.size);
    exposure::cli::setProgramName("exposure-mpi");
    exposure::cli::setQuiet(!world.root());

    int status = 2;
    try {
        const std::string command = argc >= 2 ? argv[1] : "";
        if (command == "stats") {
            status = exposure::mpi::runStats(world, argc - 1, argv + 1);
        } else if (command == "--help" || command == "-h" || command == "help") {
            if (world.root())
                std::fputs(kUsage, stdout);
            status = 0;
        } else if (command == "--version") {
            if (world.root())
                std::printf("exposure-mpi %s\n", EXPOSURE_VERSION);
            status = 0;
        } else if (command == "render") {
            status = exposure::mpi::runRender(world, argc - 1, argv + 1);
        } else if (command.empty()) {
            status = exposure::cli::fail("expected a command: stats or render (see 'exposure-mpi --help')");
        } else {
            status = exposure::cli::fail("unknown command '" + command + "' (see 'exposure-mpi --help')");
        }
    } catch (const std::exception& e) {
        // Anything unexpected on one process (out of memory, a broken message): end the whole job rather than
        // leave the others waiting in a collective.
        std::fprintf(stderr, "exposure-mpi: process %d: %s\n", world.rank, e.what());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    std::fflush(stdout);
    MPI_Finalize();
    return status;
}
