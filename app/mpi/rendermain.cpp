// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-mpi-render: `exposure-mpi render` (exposure-mpi execs this program with its own arguments before MPI
// starts, argv[1] == "render"), the one MPI command that draws and so links Qt Widgets and QCustomPlot.
#include "cli/commands.h"
#include "mpimain.h"

namespace exposure::mpi {
int runRender(const World& world, int argc, char** argv);
} // namespace exposure::mpi

int main(int argc, char** argv)
{
    return exposure::mpi::runJob(argc, argv, [&](const exposure::mpi::World& world) {
        if (argc < 2)
            return exposure::cli::fail("exposure-mpi-render is started by `exposure-mpi render`");
        return exposure::mpi::runRender(world, argc - 1, argv + 1);
    });
}
