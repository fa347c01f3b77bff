// SPDX-License-Identifier: GPL-3.0-or-later
// `exposure-cli render` runs exposure-cli-render (and `exposure-mpi render` exposure-mpi-render): only those programs
// link Qt Widgets and QCustomPlot, so info, stats and compare start without loading them.
#include "commands.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace exposure::cli {

namespace {

// Folder of this executable (from /proc/self/exe), "" if unknown.
std::string selfDir()
{
    char buf[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return {};
    std::string path(buf, std::size_t(n));
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

} // namespace

std::string execHelperProgram(const std::string& name, int argc, char** argv)
{
    const std::string dir = selfDir();
    // Beside the calling program in a build tree; in <prefix>/libexec/exposure once installed.
    const std::vector<std::string> candidates { dir + "/" + name, dir + "/../libexec/exposure/" + name };
    std::vector<char*> args;
    args.reserve(std::size_t(argc) + 1);
    for (int i = 0; i < argc; ++i)
        args.push_back(argv[i]);
    args.push_back(nullptr);
    for (const auto& path : candidates) {
        if (access(path.c_str(), X_OK) != 0)
            continue;
        args[0] = const_cast<char*>(path.c_str());
        execv(path.c_str(), args.data());
        return path + ": cannot run it (" + std::strerror(errno) + ")";
    }
    return name + " is not installed (looked in " + candidates[0] + " and " + candidates[1] + ")";
}

int execRenderer(int argc, char** argv)
{
    return fail("render: " + execHelperProgram("exposure-cli-render", argc, argv));
}

} // namespace exposure::cli
