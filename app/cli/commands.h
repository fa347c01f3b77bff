// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/rules.h"
#include "analysis/statsreport.h"

#include <optional>
#include <string>

class QCommandLineParser;

namespace exposure::cli {

// Each sub-command gets argv with argv[0] == its own name ("info", "stats", "render"),
// creates the Q*Application it needs, and returns the process exit code:
// 0 success, 2 bad input or bad arguments (one line on stderr naming the file and the problem).
int runInfo(int argc, char** argv);
int runStats(int argc, char** argv);
int runRender(int argc, char** argv);
int runCompare(int argc, char** argv);
// exposure-cli's `render`: replaces the process with exposure-cli-render (same arguments); returns only on failure.
int execRenderer(int argc, char** argv);

// After a successful parse: prints the help (as "Usage: exposure-cli <command> ...") or the version when asked for.
// Returns true when one of them was printed and the command is done (exit status 0).
bool printedHelpOrVersion(const QCommandLineParser& parser, const char* command);

// Prints "exposure-cli: <message>" on stderr and returns 2.
int fail(const std::string& message);
// The program named in fail() messages, help and version ("exposure-cli" unless set, e.g. "exposure-mpi").
void setProgramName(const char* name);
// Quiet: fail() and printedHelpOrVersion() print nothing (the processes of exposure-mpi other than process 0).
void setQuiet(bool quiet);

// `stats` in parts, shared with exposure-mpi.
struct StatsRequest
{
    enum class Format { Table, Json, Csv };
    std::string path;
    Format format = Format::Table;
    Rules rules;
    std::optional<TimeNs> from, to;
    StatsReportOptions options;
};
// Parses the stats command line (a Q*Application must exist). Returns -1 to go on, else the exit status (help,
// version: 0; bad arguments or rules file: 2, with the message printed).
int parseStatsRequest(StatsRequest& request);
// Sets request.options.window from --from/--to and the trace's extent; returns an error message or "".
std::string resolveStatsWindow(StatsRequest& request, TimeRange extent);

} // namespace exposure::cli
