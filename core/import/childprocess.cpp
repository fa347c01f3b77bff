// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/childprocess.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>

extern char** environ;

namespace exposure {

namespace {

ChildOutcome notStarted(const std::string& why)
{
    ChildOutcome out;
    out.state = ChildOutcome::NotStarted;
    out.error = why;
    return out;
}

// Polls with a growing pause (100 µs to 10 ms) until the child ends or the deadline passes.
ChildOutcome waitFor(pid_t pid, std::chrono::milliseconds timeout)
{
    ChildOutcome out;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto pause = std::chrono::microseconds(100);
    int status = 0;
    while (true) {
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid)
            break;
        if (done < 0 && errno != EINTR) // reaped by someone else: its outcome is unknown here
            return notStarted(std::string("lost the checking process: ") + std::strerror(errno));
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

bool isExecutable(const std::string& path)
{
    return !path.empty() && ::access(path.c_str(), X_OK) == 0 && !std::filesystem::is_directory(path);
}

} // namespace

namespace {

// Starts argv (stdin, stdout and stderr on /dev/null); the pid, or the reason it could not start.
std::pair<pid_t, std::string> spawn(const std::vector<std::string>& argv)
{
    if (argv.empty())
        return { -1, "no program given" };
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    for (int fd = 0; fd <= 2; ++fd)
        posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0)
        return { -1, "cannot start " + argv[0] + ": " + std::strerror(rc) };
    return { pid, std::string() };
}

} // namespace

ChildOutcome runProgram(const std::vector<std::string>& argv, std::chrono::milliseconds timeout)
{
    const auto [pid, error] = spawn(argv);
    return pid < 0 ? notStarted(error) : waitFor(pid, timeout);
}

std::vector<ChildOutcome> runPrograms(
    const std::vector<std::vector<std::string>>& argvs, std::chrono::milliseconds timeout, std::size_t parallel)
{
    std::vector<ChildOutcome> outcomes(argvs.size());
    parallel = std::max<std::size_t>(1, parallel);
    for (std::size_t first = 0; first < argvs.size(); first += parallel) {
        const std::size_t last = std::min(argvs.size(), first + parallel);
        std::vector<pid_t> pids(last - first, -1);
        for (std::size_t i = first; i < last; ++i) {
            auto [pid, error] = spawn(argvs[i]);
            pids[i - first] = pid;
            if (pid < 0)
                outcomes[i] = notStarted(error);
        }
        // One deadline for the batch: waiting for one child lets the others run on.
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (std::size_t i = first; i < last; ++i) {
            if (pids[i - first] < 0)
                continue;
            const auto left
                = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            outcomes[i] = waitFor(pids[i - first], std::max(left, std::chrono::milliseconds(0)));
        }
    }
    return outcomes;
}

std::string otf2ProbeProgram()
{
    static const std::string found = [] {
        const char* name = "exposure-otf2-probe";
        if (const char* env = std::getenv("EXPOSURE_OTF2_PROBE"); env && *env)
            return std::string(env) == "off" ? std::string() : std::string(env);
        std::error_code ec;
        const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
        std::vector<std::string> candidates;
        if (!ec) {
            candidates.push_back((self.parent_path() / name).string());
            candidates.push_back((self.parent_path().parent_path() / "libexec" / "exposure" / name).string());
        }
#ifdef EXPOSURE_OTF2_PROBE_BUILD
        candidates.push_back(EXPOSURE_OTF2_PROBE_BUILD);
#endif
        for (const auto& c : candidates)
            if (isExecutable(c))
                return c;
        return std::string();
    }();
    return found;
}

} // namespace exposure
