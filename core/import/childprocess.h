// SPDX-License-Identifier: GPL-3.0-or-later
// Runs a piece of work that may never return (a library reading a corrupt file) in a separate program, so that it can
// be stopped: the program is killed when it has not finished in time, and nothing of it keeps running in this process.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace exposure {

struct ChildOutcome
{
    enum State { Finished, TimedOut, Crashed, NotStarted } state = Finished;
    int exitCode = 0; // Finished: the program's exit status
    int signal = 0; // Crashed: the signal that ended it
    std::string error; // NotStarted: why (no such program, spawn failed)
};

// Starts argv[0] with the arguments argv[1..] (posix_spawn: a new program, so unlike a bare fork it is safe in a
// process whose other threads hold locks), its standard input, output and error on /dev/null. Waits at most `timeout`,
// then kills it (SIGKILL) and reaps it.
ChildOutcome runProgram(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);
// The same for several programs at once: up to `parallel` run at the same time, each batch given `timeout`. Outcomes
// in the order of `argvs`.
std::vector<ChildOutcome> runPrograms(
    const std::vector<std::vector<std::string>>& argvs, std::chrono::milliseconds timeout, std::size_t parallel);

// The program that reads an OTF2 anchor file on Exposure's behalf (exposure-otf2-probe), or "" when it is not
// installed. Looked for in $EXPOSURE_OTF2_PROBE, beside this executable, in ../libexec/exposure/ from it (the
// installed layout), and where the build tree put it. EXPOSURE_OTF2_PROBE=off reads anchors in this process (the
// OTF2 fuzz target: libFuzzer's own timeout stands in for the probe's, at a quarter of the cost per input).
std::string otf2ProbeProgram();

} // namespace exposure
