// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/memorybudget.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <sys/resource.h>

namespace exposure {

namespace {

// A "Key:   123 kB" line of /proc/meminfo or /proc/self/status, in bytes; 0 if absent.
std::uint64_t procField(const char* file, const std::string& key)
{
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key + ":", 0) != 0)
            continue;
        std::istringstream fields(line.substr(key.size() + 1));
        std::uint64_t value = 0;
        std::string unit;
        fields >> value >> unit;
        return unit == "kB" ? value * 1024 : value;
    }
    return 0;
}

// A number in a cgroup file ("max" or a missing file: no limit).
std::uint64_t cgroupValue(const std::string& file)
{
    std::ifstream in(file);
    std::string text;
    if (!(in >> text) || text == "max")
        return std::numeric_limits<std::uint64_t>::max();
    try {
        return std::stoull(text);
    } catch (...) {
        return std::numeric_limits<std::uint64_t>::max();
    }
}

} // namespace

std::string formatBytes(std::uint64_t bytes)
{
    char buf[32];
    if (bytes >= (1ull << 30))
        std::snprintf(buf, sizeof buf, "%.1f GiB", double(bytes) / double(1ull << 30));
    else
        std::snprintf(buf, sizeof buf, "%llu MiB", static_cast<unsigned long long>((bytes + (1ull << 19)) >> 20));
    return buf;
}

MemoryBudget availableMemory(std::uint64_t userLimit)
{
    MemoryBudget b { std::numeric_limits<std::uint64_t>::max(), "no limit found" };
    auto consider = [&b](std::uint64_t bytes, const char* source) {
        if (bytes < b.bytes) {
            b.bytes = bytes;
            b.source = source;
        }
    };
    if (const auto avail = procField("/proc/meminfo", "MemAvailable"))
        consider(avail, "the system's available memory");
    const std::uint64_t cgMax = cgroupValue("/sys/fs/cgroup/memory.max");
    if (cgMax != std::numeric_limits<std::uint64_t>::max()) {
        const std::uint64_t used = cgroupValue("/sys/fs/cgroup/memory.current");
        consider(used < cgMax ? cgMax - used : 0, "the cgroup's memory.max");
    }
    const std::uint64_t vmSize = procField("/proc/self/status", "VmSize");
    const std::uint64_t vmData = procField("/proc/self/status", "VmData");
    rlimit lim {};
    if (getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
        consider(lim.rlim_cur > vmSize ? lim.rlim_cur - vmSize : 0, "the address-space limit (ulimit -v)");
    if (getrlimit(RLIMIT_DATA, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
        consider(lim.rlim_cur > vmData ? lim.rlim_cur - vmData : 0, "the data-size limit (ulimit -d)");
    if (userLimit)
        consider(userLimit, "the given memory limit");
    return b;
}

void checkMemory(const std::string& path, std::uint64_t needed, const std::string& what, const LoadOptions& options)
{
    const MemoryBudget budget = availableMemory(options.memoryLimit);
    if (needed <= budget.bytes)
        return;
    throw TraceTooLarge(path,
        "needs about " + formatBytes(needed) + " of memory to load (" + what + "), more than the "
            + formatBytes(budget.bytes) + " allowed by " + budget.source
            + "; open fewer ranks (--ranks in the CLI, or the ranks offered in the GUI) or free memory",
        needed, budget.bytes);
}

} // namespace exposure
