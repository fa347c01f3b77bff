// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The serial tool and exposure-mpi under mpiexec, run to completion, for the tests that compare their outputs.
// The including test is compiled with EXPOSURE_CLI, EXPOSURE_MPI, MPIEXEC and MPIEXEC_NUMPROC_FLAG defined.
#include "support/processrun.h"

namespace exposure::testing {

// One command (stats, render) of both tools, with the time each run may take.
struct MpiCommand
{
    QString command;
    int serialTimeoutMs = 60'000;
    int parallelTimeoutMs = 120'000;

    // `exposure-cli COMMAND ARGS…`
    synth::ProcessResult serial(const QStringList& args) const
    {
        return synth::runProcess(QStringLiteral(EXPOSURE_CLI), QStringList { command } + args, serialTimeoutMs);
    }

    // `mpiexec -n PROCESSES exposure-mpi COMMAND ARGS…`. Root needs OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM), set by CTest;
    // --oversubscribe: more processes than cores.
    synth::ProcessResult parallel(int processes, const QStringList& args) const
    {
        const QStringList mpi { QStringLiteral(MPIEXEC_NUMPROC_FLAG), QString::number(processes),
            QStringLiteral("--oversubscribe"), QStringLiteral(EXPOSURE_MPI), command };
        return synth::runProcess(QStringLiteral(MPIEXEC), mpi + args, parallelTimeoutMs);
    }
};

} // namespace exposure::testing
