// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/clockalign.h"
#include "analysis/rules.h"
#include "import/loadoptions.h"
#include "report/statsreport.h"
#include "run/openrun.h"

#include <QCommandLineOption>
#include <memory>
#include <optional>
#include <string>
#include <vector>

class QCommandLineParser;

namespace exposure::cli {

// Each sub-command gets argv with argv[0] == its own name ("info", "stats", "render"),
// creates the Q*Application it needs, and returns the process exit code:
// 0 success, 2 bad input or bad arguments (one line on stderr naming the file and the problem).
int runInfo(int argc, char** argv);
int runStats(int argc, char** argv);
int runRender(int argc, char** argv);
int runCompare(int argc, char** argv);
int runWhatIf(int argc, char** argv);
// exposure-cli's `render`: replaces the process with exposure-cli-render (same arguments); returns only on failure.
int execRenderer(int argc, char** argv);
// Replaces the process with the program `name` (beside this one, or in ../libexec/exposure), same arguments; returns
// only on failure, with the reason ("NAME is not installed (looked in ...)", "PATH: cannot run it (...)").
std::string execHelperProgram(const std::string& name, int argc, char** argv);

// After a successful parse: prints the help (as "Usage: exposure-cli <command> ...") or the version when asked for.
// Returns true when one of them was printed and the command is done (exit status 0).
bool printedHelpOrVersion(const QCommandLineParser& parser, const char* command);

// Names the application "exposure-cli <command>" (with the version) and gives `parser` the description, --help and
// --version.
void setUpCommand(QCommandLineParser& parser, const char* command, const QString& description);
// The TRACE argument of info and stats: every input kind openRun reads.
void addTraceArgument(QCommandLineParser& parser);
// The start of a command that reads one TRACE (stats, whatif), once its own options and LoadArgs are on `parser`:
// adds TRACE, parses the arguments, answers --help and --version. nullopt to go on, with the trace in `path`; else
// the exit status (0 after help or version; 2 after a one-line message "COMMAND: …").
std::optional<int> parseTraceCommand(QCommandLineParser& parser, const char* command, std::string& path);

// The load options of every command that loads a trace (info, stats, render, compare, whatif, and exposure-mpi's):
// --rules FILE / --extend-rules FILE, --clock aligned|recorded, --ranks LIST and --memory-limit SIZE, parsed into
// the one RunOptions the command loads with.
struct LoadArgs
{
    QCommandLineOption rules { QStringLiteral("rules"),
        QStringLiteral("Classify with the rules in FILE instead of the built-in ones."), QStringLiteral("FILE") };
    QCommandLineOption extendRules { QStringLiteral("extend-rules"),
        QStringLiteral("Try the rules in FILE before the built-in ones."), QStringLiteral("FILE") };
    QCommandLineOption clock { QStringLiteral("clock"),
        QStringLiteral("aligned (default): ranks on different hosts are put on one clock from "
                       "the transfer starts of matched collectives (their end times where a "
                       "rank's own transfer time is unknown), where the offset is significant; "
                       "ranks of one host are never shifted; recorded: times as recorded."),
        QStringLiteral("MODE") };
    QCommandLineOption ranks { QStringLiteral("ranks"),
        QStringLiteral("Load only these ranks of a folder of per-rank OTF2 archives, e.g. 0,2,4-7 "
                       "(the rank numbers 'info' lists)."),
        QStringLiteral("LIST") };
    QCommandLineOption memoryLimit { QStringLiteral("memory-limit"),
        QStringLiteral("Refuse a trace whose estimated memory exceeds SIZE (e.g. 512M, 8G); "
                       "a trace is always refused when it would not fit in the available "
                       "memory."),
        QStringLiteral("SIZE") };
    void addTo(QCommandLineParser& parser) const;
    // Fills `options` (rules, clock, ranks, memory limit; reads the rules file); returns the problem with an argument
    // or the rules file ("<file>: <problem>"), or "".
    std::string apply(const QCommandLineParser& parser, RunOptions& options) const;
};

// openRun for a command, with the command line's one mapping of its errors: a LoadError is printed (fail()) and
// nullopt returned (the command exits with status 2); a stalled load (libotf2 3.0 loops forever on some damaged
// event files) is printed and ends the process with status 2 at once, as its reading thread cannot be stopped.
std::optional<OpenedRun> openRunOrFail(const std::string& path, const RunOptions& options);

// Prints "exposure-cli: <message>" on stderr and returns 2.
int fail(const std::string& message);
// The program named in fail() messages, help and version ("exposure-cli" unless set, e.g. "exposure-mpi").
void setProgramName(const char* name);
// Quiet: fail() and printedHelpOrVersion() print nothing (the processes of exposure-mpi other than process 0).
void setQuiet(bool quiet);
// The trace warnings that say its files look like several jobs, on stderr (unless quiet): openRunOrFail does it.
void warnJobs(const std::vector<std::string>& warnings);

// `stats` in parts, shared with exposure-mpi.
struct StatsRequest
{
    enum class Format { Table, Json, Csv };
    std::string path;
    Format format = Format::Table;
    std::optional<TimeNs> from, to;
    StatsReportOptions options;
    RunOptions run; // LoadArgs: --rules, --extend-rules, --clock, --ranks, --memory-limit
};
// Parses the stats command line (a Q*Application must exist). Returns -1 to go on, else the exit status (help,
// version: 0; bad arguments or rules file: 2, with the message printed).
int parseStatsRequest(StatsRequest& request);
// Sets request.options.window from --from/--to and the whole-trace window (activityRange(): the recorded activity);
// returns an error message or "".
std::string resolveStatsWindow(StatsRequest& request, TimeRange whole);

} // namespace exposure::cli
