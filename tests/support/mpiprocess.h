// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The serial tool and exposure-mpi under mpiexec, run to completion, for the tests that compare their outputs.
// The including test is compiled with EXPOSURE_CLI, EXPOSURE_MPI, MPIEXEC and MPIEXEC_NUMPROC_FLAG defined.
#include "support/demoarchive.h"
#include "support/processrun.h"

#include <QTemporaryDir>

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

// The demo runs the MPI tests deal out, in `dir`: "two" (2 ranks, 4 steps), "three" (3 ranks, 5 steps) and "five"
// (5 ranks, 3 launch-bound steps).
inline void writeMpiDemoRuns(const QTemporaryDir& dir)
{
    writeDemoRun(dir.filePath(QStringLiteral("two")), 2, 4, false);
    writeDemoRun(dir.filePath(QStringLiteral("three")), 3, 5, false);
    writeDemoRun(dir.filePath(QStringLiteral("five")), 5, 3, true);
}

// The message of a one-line error without the program name ("exposure-cli: " / "exposure-mpi: ").
inline QByteArray messageOf(const QByteArray& err, const QByteArray& program)
{
    for (const QByteArray& line : err.split('\n'))
        if (line.startsWith(QByteArray(program + ": ")))
            return line.mid(program.size() + 2);
    return {};
}

} // namespace exposure::testing
