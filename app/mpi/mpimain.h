// SPDX-License-Identifier: GPL-3.0-or-later
// The frame of exposure-mpi's programs (exposure-mpi: stats; exposure-mpi-render: render, which links the drawing
// libraries that stats does not need).
#pragma once

#include "mpiutil.h"

#include <functional>

namespace exposure::mpi {

// Runs `command` on every process of the MPI job and returns the exit status: under Open MPI the ob1 transport
// unless OMPI_MCA_pml is set, MPI_Init, messages from process 0 only, an exception on any process ends the whole job
// (MPI_Abort, status 2), MPI_Finalize.
int runJob(int argc, char** argv, const std::function<int(const World&)>& command);

} // namespace exposure::mpi
