// SPDX-License-Identifier: GPL-3.0-or-later
// Runs a program (the CLI under test) to completion and keeps what a test asserts on.
#pragma once

#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace exposure::synth {

struct ProcessResult
{
    int exitCode = -1; // -1: did not finish in time, or crashed
    QByteArray out;
    QByteArray err;
};

inline ProcessResult runProcess(const QString& program, const QStringList& args, int timeoutMs = 60'000)
{
    QProcess p;
    p.start(program, args);
    ProcessResult r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(5'000);
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

} // namespace exposure::synth
