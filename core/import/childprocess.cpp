// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/childprocess.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <signal.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace exposure {

ChildOutcome runInChild(const std::function<int()>& work, std::chrono::milliseconds timeout)
{
    ChildOutcome out;
    const pid_t pid = ::fork();
    if (pid < 0) {
        out.state = ChildOutcome::NotStarted;
        out.error = std::strerror(errno);
        return out;
    }
    if (pid == 0)
        ::_exit(work() & 0xff);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto pause = std::chrono::microseconds(100);
    int status = 0;
    while (true) {
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid)
            break;
        if (done < 0 && errno != EINTR) { // reaped by someone else: its outcome is unknown here
            out.state = ChildOutcome::NotStarted;
            out.error = std::string("lost the checking process: ") + std::strerror(errno);
            return out;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            ::kill(pid, SIGKILL);
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
            out.state = ChildOutcome::TimedOut;
            return out;
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(10'000));
    }
    if (WIFSIGNALED(status)) {
        out.state = ChildOutcome::Crashed;
        out.signal = WTERMSIG(status);
    } else {
        out.exitCode = WEXITSTATUS(status);
    }
    return out;
}

} // namespace exposure
