// SPDX-License-Identifier: GPL-3.0-or-later
// What every command of exposure-mpi does first: process 0 deals the archives out, each process reads its own, and
// the parts agree on errors, the run's time origin and extent, and the global rank indexes.
#pragma once

#include "import/archivefinder.h"
#include "model/trace.h"
#include "mpiutil.h"
#include "run/openrun.h"

#include <optional>
#include <string>
#include <vector>

namespace exposure::mpi {

// What process 0 decided after looking at TRACE.
enum class Mode : std::int64_t {
    Distributed = 1, // OTF2 archives, spread over the processes
    Single = 2, // read by process 0 alone (a single file, an error the serial loader reports, --ranks)
    Files = 3, // a folder of torch.profiler files, spread over the processes (ArchiveRef::anchor: the file)
};

struct Plan
{
    Mode mode = Mode::Single;
    std::vector<ArchiveRef> archives;
    std::vector<int> owner;

    // The archives `process` reads, in the run's order, and their indexes in `archives`.
    std::vector<ArchiveRef> archivesOf(int process, std::vector<std::size_t>& indexes) const
    {
        std::vector<ArchiveRef> out;
        indexes.clear();
        for (std::size_t i = 0; i < archives.size(); ++i)
            if (owner[i] == process) {
                out.push_back(archives[i]);
                indexes.push_back(i);
            }
        return out;
    }
};

std::string encode(const Plan& plan);
Plan decode(const std::string& bytes);
// The archives of `path` (the ranks chosen, as the serial loader chooses them) dealt out by size to processes
// firstProcess .. processes - 1 (firstProcess 1: process 0 reads nothing; ignored with a single process).
Plan makePlan(const std::string& path, const std::vector<int>& ranks, int processes, int firstProcess = 0);

// Process 0 prints the message of the lowest process that has one; every process gets the status 2 if any has.
bool agreeOnError(const World& world, const std::string& error);

// After each process has loaded its archives (mine, their indexes in plan.archives): rebases `trace` onto the run's
// time origin (its earliest event) and sets the run's extent; returns the run's index of each rank of `trace`
// (ranks of archive i come after those of archives 0..i-1) and the run's rank count. Collective.
std::vector<int> joinRun(Trace& trace, const Plan& plan, const std::vector<ArchiveRef>& mine,
    const std::vector<std::size_t>& mineIndex, std::size_t& totalRanks);
// The time part of joinRun: rebases `trace` onto the run's time origin and sets the run's extent and activity.
void joinTimes(Trace& trace);

} // namespace exposure::mpi
