// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The serial tool and exposure-mpi under mpiexec, run to completion, for the tests that compare their outputs.
// The including test is compiled with EXPOSURE_CLI, EXPOSURE_MPI, MPIEXEC and MPIEXEC_NUMPROC_FLAG defined.
#include "support/processrun.h"

namespace exposure::testing {

// `exposure-cli COMMAND ARGS…`
inline synth::ProcessResult runSerial(const QString& command, const QStringList& args, int timeoutMs)
{
    return synth::runProcess(QStringLiteral(EXPOSURE_CLI), QStringList { command } + args, timeoutMs);
}

// `mpiexec -n PROCESSES exposure-mpi COMMAND ARGS…`. Root needs OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM), set by CTest;
// --oversubscribe: more processes than cores.
inline synth::ProcessResult runParallel(const QString& command, int processes, const QStringList& args, int timeoutMs)
{
    const QStringList mpi { QStringLiteral(MPIEXEC_NUMPROC_FLAG), QString::number(processes),
        QStringLiteral("--oversubscribe"), QStringLiteral(EXPOSURE_MPI), command };
    return synth::runProcess(QStringLiteral(MPIEXEC), mpi + args, timeoutMs);
}

} // namespace exposure::testing
