// SPDX-License-Identifier: GPL-3.0-or-later
#include "mpimain.h"

#include "cli/commands.h"
#include "mpiutil.h"
#include "nodelay.h"

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace exposure::mpi {

namespace {

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

int runJob(int argc, char** argv, const std::function<int(const World&)>& command)
{
    preferLightMpiTransport();
    MPI_Init(&argc, &argv);
    setNoDelayOnTcpSockets();
    World world;
    MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world.size);
    cli::setProgramName("exposure-mpi");
    cli::setQuiet(!world.root());

    int status = 2;
    try {
        status = command(world);
    } catch (const std::exception& e) {
        // Anything unexpected on one process (out of memory, a broken message): end the whole job rather than
        // leave the others waiting in a collective.
        std::fprintf(stderr, "exposure-mpi: process %d: %s\n", world.rank, e.what());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    std::fflush(stdout);
    barrier(); // MPI_Finalize's own synchronisation spins while process 0 still prints
    MPI_Finalize();
    return status;
}

} // namespace exposure::mpi
