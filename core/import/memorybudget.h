// SPDX-License-Identifier: GPL-3.0-or-later
// Memory a load may use, and the check that refuses a trace that would not fit before anything is allocated:
// the process must say "too large" itself rather than be killed by the operating system halfway through.
#pragma once

#include "import/loadoptions.h"

#include <cstdint>
#include <string>

namespace exposure {

// What loading and analysing costs, measured (bench_load, `exposure-cli stats` peak RSS): about 8.5 bytes per OTF2
// event on the 10 M-event benchmark trace; the estimate takes twice that (nesting, launch parameters, the GUI's
// view index) plus a fixed base.
inline constexpr std::uint64_t kBytesPerOtf2Event = 16;
// torch.profiler JSON: peak memory was 0.36x the uncompressed JSON (bench_kineto); the estimate takes 0.5x.
inline constexpr double kBytesPerJsonByte = 0.5;
// Nsight Systems SQLite exports: per row of the tables read. Measured: about 80 bytes per row at the peak of `info`,
// 120 with the analysis (`stats`), on 4 M rows (2 M kernels, 2 M launch calls); the estimate takes twice the first.
inline constexpr std::uint64_t kBytesPerNsysRow = 160;
inline constexpr std::uint64_t kBaseBytes = 64ull << 20;

struct MemoryBudget
{
    std::uint64_t bytes = 0; // what this process may still allocate
    std::string source; // where that figure comes from ("MemAvailable", "cgroup memory.max", "--memory-limit"...)
};

// The smallest of: the system's MemAvailable, the cgroup (v2) limit minus usage, RLIMIT_AS and RLIMIT_DATA minus
// what the process already has, and `userLimit` (if not 0).
MemoryBudget availableMemory(std::uint64_t userLimit = 0);

// A trace that would need more memory than is available. what() is one line naming the trace.
class TraceTooLarge : public LoadError
{
public:
    TraceTooLarge(const std::string& file, const std::string& problem, std::uint64_t needed, std::uint64_t available)
        : LoadError(file, problem)
        , m_needed(needed)
        , m_available(available)
    { }
    std::uint64_t needed() const { return m_needed; }
    std::uint64_t available() const { return m_available; }

private:
    std::uint64_t m_needed;
    std::uint64_t m_available;
};

// Throws TraceTooLarge when `needed` bytes (for `what`, e.g. "12.5 M events") exceed the budget of `options`.
void checkMemory(const std::string& path, std::uint64_t needed, const std::string& what, const LoadOptions& options);

// "1.5 GiB", "340 MiB".
std::string formatBytes(std::uint64_t bytes);

} // namespace exposure
