// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Nsight Systems reports exported to SQLite (`nsys export --type sqlite`), read through the system's SQLite library.
//
// What is read (tables are created lazily by nsys: absent ones are empty):
//   CUPTI_ACTIVITY_KIND_KERNEL / _MEMCPY / _MEMSET   GPU lanes "CUDA[device:stream]" per process
//   CUPTI_ACTIVITY_KIND_RUNTIME (and _DRIVER)         CPU lanes per thread (globalTid); correlation ids pair
//                                                     kernels with their launch calls
//   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION               nested in the call that waited ("Stream synchronize" ...)
//   NVTX_EVENTS (push/pop and start/end ranges)       CPU regions on their thread (steps and phases come from them)
//   StringIds                                         every name
//   TARGET_INFO_GPU, ThreadNames, META_DATA_EXPORT    devices, thread names, the export schema version
// Processes are told apart by globalPid (globalTid without its thread bits): one process with GPU work is one rank.
// Times are the export's integer nanoseconds, kept exactly.

#include "import/loadoptions.h"
#include "model/trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace exposure {

// An Nsight Systems SQLite export by its name: *.sqlite, *.sqlite3 (the export's extension).
bool isNsysSqliteFileName(const std::string& path);
// An Nsight Systems report that still needs exporting: *.nsys-rep, *.qdrep.
bool isNsysReportFileName(const std::string& path);
// A file that starts with the SQLite header ("SQLite format 3\0").
bool hasSqliteHeader(const std::string& path);

// The exports (and reports) of a path: the file itself, or those in a folder and its sub-folders (up to 3 levels),
// in natural order. A report with an export of the same name beside it counts once (the export). Empty if none.
std::vector<std::string> findNsysFiles(const std::string& path);

// The SQLite export of a report: `nsys export --type sqlite` into the cache folder (~/.cache/exposure/nsys, or
// $XDG_CACHE_HOME/exposure/nsys), reused while the report's size and time are unchanged. While nsys runs, progress
// ticks and a cancel ends it (LoadCancelled). Throws LoadError with the command to run when nsys is not on the PATH
// or the export fails.
std::string exportNsysReport(const std::string& report, const LoadOptions& options = {});

// The rows of the tables importNsys reads, over all `files` (for the memory estimate: kBytesPerNsysRow each).
// Throws LoadError as importNsys does for a file that is not a readable export, or that holds a table of 2^31 rows
// or more; reports progress per file.
std::uint64_t countNsysRows(const std::vector<std::string>& files, const LoadOptions& options);

// Reads the exports into `trace` and finalizes it. Files are read in parallel (LoadOptions::threads); the result
// does not depend on it. Ranks: with one process per file, the number in "rank<N>" (or the only number) of the
// file names when all have distinct ones, else the natural order of the files; the processes of one report in the
// order of their process ids. Trace::warnings says which.
//
// Throws LoadError naming the file for: not an SQLite database, a truncated or corrupt database, a locked one,
// another schema (EXPORT_SCHEMA_VERSION major other than 2 or 3, a table without the columns read), a report
// without GPU kernels, copies or memsets, row counts past what a lane can hold. Honours LoadOptions::cancel and
// reports progress by rows read.
void importNsys(Trace& trace, const std::vector<std::string>& files, const LoadOptions& options);

} // namespace exposure
