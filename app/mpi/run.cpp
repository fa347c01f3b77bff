// SPDX-License-Identifier: GPL-3.0-or-later
#include "run.h"

#include "cli/commands.h"
#include "import/loadoptions.h"
#include "plan.h"
#include "run/inputkinds.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <stdexcept>

namespace exposure::mpi {

using cli::fail;

std::string encode(const Plan& plan)
{
    Bytes b;
    b.i64(std::int64_t(plan.mode));
    b.i64(std::int64_t(plan.archives.size()));
    for (std::size_t i = 0; i < plan.archives.size(); ++i) {
        b.str(plan.archives[i].anchor);
        b.str(plan.archives[i].label);
        b.i64(plan.archives[i].rankNumber);
        b.i64(plan.owner[i]);
    }
    return std::move(b.out());
}

Plan decode(const std::string& bytes)
{
    Cursor c(bytes);
    Plan plan;
    plan.mode = Mode(c.i64());
    const auto n = c.i64();
    for (std::int64_t i = 0; i < n; ++i) {
        ArchiveRef a;
        a.anchor = c.str();
        a.label = c.str();
        a.rankNumber = int(c.i64());
        plan.archives.push_back(std::move(a));
        plan.owner.push_back(int(c.i64()));
    }
    return plan;
}

namespace {

// The owner of each archive or file: by size (assignBySize) to processes firstProcess .. processes - 1.
std::vector<int> dealOut(const std::vector<std::uint64_t>& bytes, int processes, int firstProcess)
{
    const int first = std::clamp(firstProcess, 0, processes - 1);
    std::vector<int> owner = assignBySize(bytes, processes - first);
    for (int& o : owner)
        o += first;
    return owner;
}

// A folder of torch.profiler files, dealt out by size like archives; anything else (a single file, --ranks, which
// the serial loader refuses for such a folder, or an error) is read by process 0 alone, as exposure-cli reads it.
Plan kinetoPlan(const std::string& path, const std::vector<int>& ranks, int processes, int firstProcess)
{
    Plan plan;
    plan.mode = Mode::Single;
    std::error_code ec;
    if (!ranks.empty() || processes < 2 || !std::filesystem::is_directory(path, ec))
        return plan;
    RunInput input;
    try {
        input = detectInput(path);
    } catch (const LoadError&) {
        return plan;
    }
    if (std::string(input.kind->name) != "torch.profiler" || input.files.size() < 2)
        return plan;
    std::vector<std::uint64_t> bytes;
    for (const std::string& file : input.files) {
        ArchiveRef a;
        a.anchor = file;
        plan.archives.push_back(std::move(a));
        std::error_code sizeError;
        const auto n = std::filesystem::file_size(file, sizeError);
        bytes.push_back(sizeError ? 0 : std::uint64_t(n));
    }
    plan.owner = dealOut(bytes, processes, firstProcess);
    plan.mode = Mode::Files;
    return plan;
}

} // namespace

Plan makePlan(const std::string& path, const std::vector<int>& ranks, int processes, int firstProcess)
{
    Plan plan;
    try {
        // --ranks chooses archives as the serial loader does (by the rank numbers `info` lists).
        plan.archives = selectRanks(path, findArchives(path), ranks);
    } catch (const LoadError&) {
        return kinetoPlan(path, ranks, processes, firstProcess);
    }
    plan.mode = Mode::Distributed;
    // An archive without a rank number in its folder name gets the number the serial loader gives it.
    const std::vector<int> numbers = rankNumbers(plan.archives);
    std::vector<std::uint64_t> bytes;
    for (std::size_t i = 0; i < plan.archives.size(); ++i) {
        plan.archives[i].rankNumber = numbers[i];
        bytes.push_back(archiveBytes(plan.archives[i]));
    }
    plan.owner = dealOut(bytes, processes, firstProcess);
    return plan;
}

// Process 0 prints the message of the lowest process that has one; every process gets the status 2 if any has.
bool agreeOnError(const World& world, const std::string& error)
{
    const std::int64_t first = allMin(error.empty() ? std::numeric_limits<std::int64_t>::max() : world.rank);
    if (first == std::numeric_limits<std::int64_t>::max())
        return false;
    std::string message = world.rank == first ? error : std::string();
    if (first != 0) {
        if (world.rank == first)
            send(message, 0, 1);
        else if (world.root())
            message = receive(int(first), 1);
    }
    if (world.root())
        fail(message);
    return true;
}

void joinTimes(Trace& trace)
{
    // The run's time origin is its earliest event: rebase this part onto it.
    bool any = false;
    for (const Rank& r : trace.ranks)
        for (const Lane& l : r.lanes)
            any = any || !l.intervals.empty();
    const TimeNs origin = allMin(any ? trace.originAbsNs : std::numeric_limits<TimeNs>::max());
    const TimeNs delta = any ? trace.originAbsNs - origin : 0;
    for (Rank& r : trace.ranks)
        for (Lane& l : r.lanes)
            l.intervals.shift(delta);
    trace.originAbsNs = origin == std::numeric_limits<TimeNs>::max() ? 0 : origin;
    const TimeRange extent { 0, allMax(trace.extent.end + delta) };
    trace.extent = extent;
    // The run's recorded activity (Trace::activity) spans every part's.
    const TimeNs activityStart = allMin(any ? trace.activity.start + delta : std::numeric_limits<TimeNs>::max());
    const TimeNs activityEnd = allMax(any ? trace.activity.end + delta : std::numeric_limits<TimeNs>::min());
    trace.activity = activityStart < activityEnd ? TimeRange { activityStart, activityEnd } : TimeRange {};
}

std::vector<int> joinRun(Trace& trace, const Plan& plan, const std::vector<ArchiveRef>& mine,
    const std::vector<std::size_t>& mineIndex, std::size_t& totalRanks)
{
    joinTimes(trace);
    // Global rank indexes: ranks of archive i come after those of archives 0..i-1.
    std::vector<std::int64_t> ranksPerArchive(plan.archives.size(), 0);
    std::vector<std::size_t> archiveOfRank;
    for (const Rank& r : trace.ranks) {
        std::size_t k = 0;
        while (k < mine.size() && mine[k].anchor != r.archivePath)
            ++k;
        if (k == mine.size())
            throw std::runtime_error(r.archivePath + ": rank from an archive this process was not given");
        ++ranksPerArchive[mineIndex[k]];
        archiveOfRank.push_back(mineIndex[k]);
    }
    allSum(ranksPerArchive);
    std::vector<std::int64_t> firstRankOf(plan.archives.size() + 1, 0);
    for (std::size_t i = 0; i < plan.archives.size(); ++i)
        firstRankOf[i + 1] = firstRankOf[i] + ranksPerArchive[i];
    totalRanks = std::size_t(firstRankOf.back());
    std::vector<int> globalIndex;
    std::vector<std::int64_t> seen(plan.archives.size(), 0);
    for (const std::size_t a : archiveOfRank)
        globalIndex.push_back(int(firstRankOf[a] + seen[a]++));

    return globalIndex;
}

} // namespace exposure::mpi
