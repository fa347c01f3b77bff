// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-cli compare: one row per run, to see how compute, exposed communication and waiting scale with GPUs.
#include "analysis/compare.h"

#include "commands.h"
#include "import/loadoptions.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <cstdio>

namespace exposure::cli {

int runCompare(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    setUpCommand(parser, "compare",
        QStringLiteral(
            "Compares runs of the same training (for example 1, 4 and 8 GPUs): per-step means over all ranks of the\n"
            "step time, compute, communication busy time, hidden and exposed communication, the NCCL time spent\n"
            "waiting for the last peer versus transferring (collectives matched across ranks), and the weak-scaling\n"
            "efficiency against the baseline (its step time divided by each run's step time).\n"
            "\n"
            "Runs are listed by GPU count (runs with equal counts in the order given); the first is the baseline.\n"
            "Efficiency needs different GPU counts and the same per-GPU workload: a run with the baseline's GPU count\n"
            "has none. Steps: a rank's first step is start-up and left out of the means when it lasts more than 3x\n"
            "the median of its later steps (then the next, and so on; the rule of 'exposure-cli stats'); the output\n"
            "says which steps each mean covers.\n"
            "\n"
            "Each RUN is a trace as for 'exposure-cli stats', every one loaded with the same load options (--rules,\n"
            "--clock, --ranks ...). Exit status: 0 on success, 2 on bad input."));
    const QCommandLineOption json(QStringLiteral("json"), QStringLiteral("Print JSON instead of a table."));
    const QCommandLineOption skip(QStringLiteral("skip-steps"),
        QStringLiteral("Leave out exactly each rank's first N steps instead of its start-up "
                       "steps (as long as one step remains)."),
        QStringLiteral("N"));
    parser.addOption(json);
    parser.addOption(skip);
    const LoadArgs loadArgs; // the same for every run
    loadArgs.addTo(parser);
    parser.addPositionalArgument(
        QStringLiteral("RUN"), QStringLiteral("Two or more traces (ordered by GPU count)."), QStringLiteral("RUN..."));
    if (!parser.parse(QCoreApplication::arguments()))
        return fail("compare: " + parser.errorText().toStdString());
    if (printedHelpOrVersion(parser, "compare"))
        return 0;
    const auto paths = parser.positionalArguments();
    if (paths.size() < 2)
        return fail("compare: expected at least two RUN arguments (see 'exposure-cli compare --help')");
    bool ok = true;
    CompareOptions options;
    if (parser.isSet(skip))
        options.skipSteps = parser.value(skip).toInt(&ok);
    if (!ok || (parser.isSet(skip) && options.skipSteps < 0))
        return fail("compare: --skip-steps '" + parser.value(skip).toStdString() + "': not a whole number >= 0");

    RunOptions runOptions;
    if (const std::string problem = loadArgs.apply(parser, runOptions); !problem.empty())
        return fail(problem);

    std::vector<RunSummary> runs;
    for (const auto& p : paths) {
        const auto run = openRunOrFail(p.toStdString(), runOptions);
        if (!run)
            return 2;
        runs.push_back(summarizeRun(*run->trace, *run->analysis, options));
    }
    orderByGpuCount(runs);
    const std::string out = parser.isSet(json) ? compareJson(runs) : compareTable(runs);
    std::fputs(out.c_str(), stdout);
    return 0;
}

} // namespace exposure::cli
