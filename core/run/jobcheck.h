// SPDX-License-Identifier: GPL-3.0-or-later
// Whether the files of one run belong to one job. A folder may hold the reports of unrelated jobs (two programs, two
// world sizes, recordings hours apart); openRun reads them as one run all the same and says so in one warning that
// names the groups of files, so that the user can open them separately or compare them (the GUI offers both).
// The evidence is conservative: ranks of one job legitimately run on different hosts, so hosts alone never split a
// run; a difference counts only where every file records the thing (the program of Nsight Systems reports, the world
// size of torch.profiler files' distributedInfo, the clock of the recording).
//
// A thread named for a rank ("MPI Rank 0", "rank 3") under a rank of another number is flagged too: the rank numbers
// of the run (or its files) do not agree with what the program called itself.
#pragma once

#include "model/trace.h"

#include <cstddef>
#include <string>
#include <vector>

namespace exposure {

// What one file of a run says about the job that wrote it.
struct FileJob
{
    std::string file; // the path (Rank::archivePath)
    std::string program; // the program's name ("cloverleaf"); empty where the file does not record it
    std::vector<std::string> hosts; // of its ranks, in order, without repeats
    int worldSize = -1; // the world size the file declares (torch.profiler distributedInfo); -1 where none
    std::vector<int> ranks; // the rank numbers the run gives its ranks
    // First start to last end of its events on the clock of the recording (ns since the epoch); start > end where the
    // file's clock has no known epoch.
    TimeRange span { 1, 0 };
};

// Recordings of one job do not lie further apart than this (files more than an hour apart are different jobs).
inline constexpr TimeNs kJobGapNs = 3600LL * 1'000'000'000LL;

// How the files of a run group into jobs.
struct JobSplit
{
    std::vector<std::vector<std::size_t>> groups; // indexes into the files, one group per job, in file order
    std::vector<std::string> reasons; // "different programs", "different world sizes", "recorded 2.0 h apart"
    std::string warning; // empty for one job
};

// The files of the trace's ranks (in rank order, each once) with what they record about their job; reads each file's
// metadata again (an Nsight Systems export's processes and session start, a torch.profiler file's distributedInfo),
// and nothing of a file that cannot be read. Empty for fewer than two files.
// `spans`: each rank's rankSpan, where the caller has them (saves a pass over every interval).
std::vector<FileJob> describeFiles(const Trace& trace, const std::vector<TimeRange>* spans = nullptr);

// The jobs of `files` (`path`: what the user opened, for the warning).
JobSplit splitJobs(const std::string& path, const std::vector<FileJob>& files);

// One warning per thread whose name gives a rank number other than its rank's: "<file>: Rank 1: thread
// "MPI Rank 0" ...".
std::vector<std::string> threadRankWarnings(const Trace& trace);
// Those of one rank of `trace` (a part of a run: exposure-mpi).
std::vector<std::string> threadRankWarnings(const Trace& trace, const Rank& rank);

// The loading stage: appends the split's warning (if any) and the thread warnings to trace.warnings; returns the
// split (one group: one job). `spans` as for describeFiles.
JobSplit checkJobs(Trace& trace, const std::vector<TimeRange>* spans = nullptr);

// Whether a warning of Trace::warnings is the split's (the GUI offers to open the jobs separately only then).
bool isJobWarning(const std::string& warning);

} // namespace exposure
