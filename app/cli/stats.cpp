// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-cli stats: exact exposed-communication statistics per rank, per step and per kernel.
#include "analysis/analysis.h"
#include "commands.h"
#include "import/loadoptions.h"
#include "model/timeformat.h"
#include "report/statsreport.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <cstdio>
#include <optional>

namespace exposure::cli {

namespace {

std::string helpDescription()
{
    std::string d = "Where the GPU time of each rank goes: compute, communication, and how much of the\n"
                    "communication is hidden behind compute. Prints a table by default, or --json / --csv.\n"
                    "\n"
                    "Kernels are classified by ordered regular-expression rules (resources/rules.json, built in;\n"
                    "--rules replaces them, --extend-rules tries a file's rules before them). Times given to\n"
                    "--from/--to are relative to the start of the trace and take units: 120ns, 350us, 1.5ms, 2s\n"
                    "(no unit = ns). The JSON always lists each rank's steps; --per-step adds them to the table\n"
                    "and the CSV.\n"
                    "\n"
                    "Definitions\n";
    d += statisticsDefinitions();
    d += "\nExit status: 0 on success, 2 on a bad argument, rules file or trace (one line on stderr).";
    return d;
}

std::optional<TimeNs> timeOption(const QCommandLineParser& p, const QCommandLineOption& o, std::string& error)
{
    if (!p.isSet(o))
        return std::nullopt;
    const std::string text = p.value(o).toStdString();
    const auto v = parseDuration(text);
    if (!v)
        error = "--" + o.names().front().toStdString() + " '" + text
            + "': not a time (use a number with a unit: 120ns, 350us, 1.5ms, 2s)";
    return v;
}

} // namespace

int parseStatsRequest(StatsRequest& request)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QString::fromStdString(helpDescription()));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption json(QStringLiteral("json"), QStringLiteral("Print JSON (stable shape, exact integers)."));
    const QCommandLineOption csv(QStringLiteral("csv"),
        QStringLiteral("Print CSV: one row per rank, then the total (a null ratio is an empty field)."));
    const QCommandLineOption perStep(
        QStringLiteral("per-step"), QStringLiteral("Also print one row per training step (table and CSV)."));
    const QCommandLineOption from(QStringLiteral("from"),
        QStringLiteral("Start of the time window (default: start of the recorded activity)."), QStringLiteral("T"));
    const QCommandLineOption to(QStringLiteral("to"),
        QStringLiteral("End of the time window (default: end of the last GPU work)."), QStringLiteral("T"));
    const QCommandLineOption summary(QStringLiteral("summary"),
        QStringLiteral("Table: distributions over the ranks (min, p50, p90, max), the ranks and steps that stand "
                       "out, findings and warnings folded across ranks (the default above 16 ranks)."));
    const QCommandLineOption allRanks(
        QStringLiteral("all-ranks"), QStringLiteral("Table: one row per rank, whatever the number of ranks."));
    for (const auto* o : { &json, &csv, &perStep, &from, &to, &summary, &allRanks })
        parser.addOption(*o);
    const LoadArgs loadArgs;
    loadArgs.addTo(parser);
    if (const auto status = parseTraceCommand(parser, "stats", request.path))
        return *status;
    if (parser.isSet(json) && parser.isSet(csv))
        return fail("stats: --json and --csv exclude each other");
    if (parser.isSet(summary) && parser.isSet(allRanks))
        return fail("stats: --summary and --all-ranks exclude each other");
    request.options.rankDetail = parser.isSet(summary) ? StatsReportOptions::RankDetail::Summary
        : parser.isSet(allRanks)                       ? StatsReportOptions::RankDetail::AllRanks
                                                       : StatsReportOptions::RankDetail::Auto;

    // Check everything cheap before the (possibly long) load.
    std::string error;
    request.from = timeOption(parser, from, error);
    if (!error.empty())
        return fail(error);
    request.to = timeOption(parser, to, error);
    if (!error.empty())
        return fail(error);
    if (request.from && request.to && *request.from >= *request.to)
        return fail("--from " + formatDuration(*request.from) + " is not before --to " + formatDuration(*request.to));

    request.format = parser.isSet(json) ? StatsRequest::Format::Json
        : parser.isSet(csv)             ? StatsRequest::Format::Csv
                                        : StatsRequest::Format::Table;
    request.options.perStep = parser.isSet(perStep);
    if (const std::string problem = loadArgs.apply(parser, request.run); !problem.empty())
        return fail(problem);
    return -1;
}

std::string resolveStatsWindow(StatsRequest& request, TimeRange whole)
{
    StatsReportOptions& options = request.options;
    options.window = whole;
    options.windowGiven = request.from || request.to;
    if (request.from)
        options.window.start = *request.from;
    if (request.to)
        options.window.end = *request.to;
    if (options.window.end <= options.window.start)
        return request.path + ": the window " + formatDuration(options.window.start) + " to "
            + formatDuration(options.window.end) + " is empty (the recorded activity spans "
            + formatDuration(whole.start) + " to " + formatDuration(whole.end) + ")";
    return {};
}

int runStats(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("exposure-cli stats"));
    QCoreApplication::setApplicationVersion(QStringLiteral(EXPOSURE_VERSION));
    StatsRequest request;
    if (const int status = parseStatsRequest(request); status >= 0)
        return status;

    const auto run = openRunOrFail(request.path, request.run);
    if (!run)
        return 2;
    const Trace* trace = run->trace.get();
    const Analysis* analysis = run->analysis.get();
    if (const std::string error = resolveStatsWindow(request, activityRange(*trace)); !error.empty())
        return fail(error);
    const StatsReportOptions& options = request.options;
    const std::string out = request.format == StatsRequest::Format::Json ? statsJson(*trace, *analysis, options)
        : request.format == StatsRequest::Format::Csv                    ? statsCsv(*trace, *analysis, options)
                                                                         : statsTable(*trace, *analysis, options);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}

} // namespace exposure::cli
