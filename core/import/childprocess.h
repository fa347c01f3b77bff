// SPDX-License-Identifier: GPL-3.0-or-later
// Runs a piece of work that may never return (a library reading a corrupt file) in a child process, so that it can
// be stopped: the child is killed when it has not finished in time, and nothing of it keeps running in this process.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace exposure {

struct ChildOutcome
{
    enum State { Finished, TimedOut, Crashed, NotStarted } state = Finished;
    int exitCode = 0; // Finished: what the work returned
    int signal = 0; // Crashed: the signal that ended the child
    std::string error; // NotStarted: why (fork failed)
};

// Forks; the child runs `work` and leaves with its return value (through _exit: no exit handlers, no flushing of the
// parent's buffers). The parent waits at most `timeout`, then kills the child (SIGKILL) and reaps it. The work must
// only read (its effects stay in the child) and should not use locks that other threads of the parent may hold at
// the moment of the fork (malloc is safe with glibc).
ChildOutcome runInChild(const std::function<int()>& work, std::chrono::milliseconds timeout);

} // namespace exposure
