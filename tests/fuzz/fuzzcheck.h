// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Checks shared by the fuzz targets: a violated property aborts, which libFuzzer (and the replay driver) report
// as a finding together with the input.
#include "analysis/analysis.h"
#include "fuzzfiles.h"
#include "import/loadoptions.h"
#include "report/statsreport.h"
#include "run/openrun.h"
#include "support/statscheck.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace exposure::fuzz {

[[noreturn]] inline void violated(const char* what, const std::string& detail)
{
    std::fprintf(stderr, "fuzz property violated: %s: %s\n", what, detail.c_str());
    std::abort();
}

// EXPOSURE_FUZZ_VERBOSE=1 prints what became of each input (for looking at seeds and findings).
inline bool verbose()
{
    static const bool v = std::getenv("EXPOSURE_FUZZ_VERBOSE") != nullptr;
    return v;
}

// Bad input must give one line naming the file (the project's error convention).
inline void checkLoadError(const LoadError& e)
{
    const std::string msg = e.what();
    if (verbose())
        std::fprintf(stderr, "rejected: %s\n", msg.c_str());
    if (e.file().empty() || e.problem().empty())
        violated("LoadError without a file or a problem", msg);
    if (msg.find('\n') != std::string::npos)
        violated("LoadError message spans several lines", msg);
}

// A reader's error for the input named `source` must be one line starting with that name; `what` names the reader
// in the message of a violation ("rules", "figure spec").
inline void checkNamedOneLine(const std::string& msg, const std::string& source, const std::string& what)
{
    if (msg.rfind(source, 0) != 0)
        violated((what + " error does not name the file").c_str(), msg);
    if (msg.find('\n') != std::string::npos)
        violated((what + " error spans several lines").c_str(), msg);
}

// What became of the last input: "ranks=N" when it loaded, "rejected" when it gave a LoadError (the
// replay driver compares it with the seeds' expected results, tests/fuzz/expected.txt).
inline std::string& outcome()
{
    static std::string o;
    return o;
}

// A trace the importer accepted must survive the analysis and the statistics report.
inline void analyseAccepted(const Trace& trace)
{
    const auto analysis = analyze(trace, Rules::defaults());
    StatsReportOptions options;
    options.window = trace.extent;
    const std::string json = statsJson(trace, *analysis, options);
    // Strictly valid JSON whose numbers hold together (support/statscheck.h): busy within the span, hidden +
    // exposed = communication busy, steps inside the trace.
    int ranks = 0;
    if (const std::string problem = testing::statsJsonProblem(QByteArray::fromStdString(json), &ranks);
        !problem.empty())
        violated("stats JSON", problem + " in " + json.substr(0, 200));
    outcome() = "ranks=" + std::to_string(ranks);
    if (verbose())
        std::fprintf(stderr, "accepted: %zu ranks, %zu bytes of statistics\n", trace.ranks.size(), json.size());
}

// For the targets whose inputs may hold OTF2 archives: anchors are read in this process, not by exposure-otf2-probe
// (libFuzzer's -timeout stands in for the probe's deadline). Under ASan a spawned probe per input took three quarters
// of fuzz_otf2's time, and five sixths of fuzz_nsys's with the leak scans libFuzzer ran as the cache of probed anchors
// grew.
inline void readOtf2AnchorsInProcess()
{
    static const bool done = ::setenv("EXPOSURE_OTF2_PROBE", "off", 1) == 0;
    (void)done;
}

// The harness of the targets that read trace files: `files` written to the fuzz folder and loaded on one thread;
// what loads must survive the analysis, what does not must fail with a one-line LoadError.
inline void loadAndAnalyse(const std::vector<FuzzFile>& files)
{
    const std::string dir = writeFuzzFolder(files);
    LoadOptions options;
    options.threads = 1;
    outcome() = "none";
    try {
        const auto trace = loadTrace(dir, options);
        analyseAccepted(*trace);
    } catch (const LoadError& e) {
        checkLoadError(e);
        outcome() = "rejected";
    }
}

} // namespace exposure::fuzz

// For the replay driver (replaymain.cpp): the outcome of the last input of a target that loads traces.
extern "C" const char* exposureFuzzOutcome(); // defined once: one translation unit per target includes this header
extern "C" const char* exposureFuzzOutcome()
{
    return exposure::fuzz::outcome().c_str();
}
