// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-cli whatif: what an edit of the trace's work would change in the step time (trace-driven replay).
#include "whatif/whatif.h"

#include "analysis/analysis.h"
#include "commands.h"
#include "run/openrun.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <cstdio>

namespace exposure::cli {

namespace {

const char* kDescription
    = "What would a change gain? Replays the trace through its dependency graph (host threads in program\n"
      "order, launch -> GPU work, stream order, synchronising calls waiting for the GPU, collectives waiting for\n"
      "their last member) with the work edited, and prints per rank the measured, replayed and predicted mean\n"
      "step time and the critical path of a step by part. Edits combine:\n"
      "  --remove-region REGEX     host regions whose name matches (and all inside them) take no time\n"
      "  --scale-region REGEX=F    ... take F times their time\n"
      "  --scale-kernels PATTERN=F GPU work of a category (compute, communication, memcpy), a sub-group (gemm,\n"
      "                            attention, ...) or whose name matches PATTERN takes F times its time\n"
      "  --comm hidden|xF|no-wait  communication takes no time / is F times faster / no member waits for a\n"
      "                            peer that arrives after the median member\n"
      "  --no-sync                 synchronising calls (synchronize, blocking copies, .item()) removed\n"
      "  --launch xF               kernel-launch calls F times faster\n"
      "Regular expressions are case-insensitive and searched in the name. The README's 'What if' section\n"
      "describes the model, its assumptions and its limits.\n"
      "\n"
      "Exit status: 0 on success, 2 on a bad argument, rules file or trace (one line on stderr).";

double factorOf(const std::string& text)
{
    std::string num = text;
    if (!num.empty() && (num[0] == 'x' || num[0] == 'X'))
        num = num.substr(1);
    char* end = nullptr;
    const double f = std::strtod(num.c_str(), &end);
    return !num.empty() && end == num.c_str() + num.size() && f > 0 ? f : -1.0;
}

struct WhatIfOptions
{
    QCommandLineOption remove { QStringLiteral("remove-region"),
        QStringLiteral("Host regions matching REGEX (and all inside them) take no time."), QStringLiteral("REGEX") };
    QCommandLineOption scaleRegion { QStringLiteral("scale-region"),
        QStringLiteral("Host regions matching REGEX take F times their time."), QStringLiteral("REGEX=F") };
    QCommandLineOption scaleKernels { QStringLiteral("scale-kernels"),
        QStringLiteral("GPU work of a category, sub-group or name pattern takes F times its time."),
        QStringLiteral("PATTERN=F") };
    QCommandLineOption comm { QStringLiteral("comm"),
        QStringLiteral("Communication: hidden, xF (F times faster) or no-wait."), QStringLiteral("MODE") };
    QCommandLineOption noSync { QStringLiteral("no-sync"), QStringLiteral("Remove the synchronising calls.") };
    QCommandLineOption launch { QStringLiteral("launch"), QStringLiteral("Kernel-launch calls F times faster (xF)."),
        QStringLiteral("xF") };
    QCommandLineOption json { QStringLiteral("json"), QStringLiteral("Print JSON (stable shape, exact integers).") };
    QCommandLineOption even { QStringLiteral("even"),
        QStringLiteral("Straggler what-if: every operation at its typical duration; the slowdown this job suffers and "
                       "which rank, stage and operation type cause it.") };
};

// Reads the edits from the parsed command line; returns the problem or "".
std::string readEdits(const QCommandLineParser& p, const WhatIfOptions& o, whatif::Edits& edits)
{
    for (const QString& v : p.values(o.remove))
        edits.regions.push_back({ v.toStdString(), 0.0 });
    for (const QString& v : p.values(o.scaleRegion)) {
        whatif::Edits::Scale s;
        if (!whatif::parseScale(v.toStdString(), s))
            return "--scale-region '" + v.toStdString() + "': expected REGEX=F with F >= 0";
        edits.regions.push_back(s);
    }
    for (const QString& v : p.values(o.scaleKernels)) {
        whatif::Edits::Scale s;
        if (!whatif::parseScale(v.toStdString(), s))
            return "--scale-kernels '" + v.toStdString() + "': expected PATTERN=F with F >= 0";
        edits.gpu.push_back(s);
    }
    if (p.isSet(o.comm) && !whatif::parseComm(p.value(o.comm).toStdString(), edits))
        return "--comm '" + p.value(o.comm).toStdString() + "': expected hidden, no-wait or xF with F > 0";
    edits.noSync = p.isSet(o.noSync);
    if (p.isSet(o.launch)) {
        edits.launchFactor = factorOf(p.value(o.launch).toStdString());
        if (edits.launchFactor <= 0)
            return "--launch '" + p.value(o.launch).toStdString() + "': expected xF with F > 0";
    }
    return {};
}

} // namespace

int runWhatIf(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    setUpCommand(parser, "whatif", QString::fromUtf8(kDescription));
    const WhatIfOptions o;
    for (const auto* opt :
        { &o.remove, &o.scaleRegion, &o.scaleKernels, &o.comm, &o.noSync, &o.launch, &o.json, &o.even })
        parser.addOption(*opt);
    const LoadArgs loadArgs;
    loadArgs.addTo(parser);
    std::string path;
    if (const auto status = parseTraceCommand(parser, "whatif", path))
        return *status;
    whatif::Edits edits;
    if (const std::string problem = readEdits(parser, o, edits); !problem.empty())
        return fail(problem);
    RunOptions runOptions;
    if (const std::string problem = loadArgs.apply(parser, runOptions); !problem.empty())
        return fail(problem);
    runOptions.collectives = true; // the cross-rank matching the graph's collective groups come from

    // The one place this command loads (openRun: the stages every front end shares).
    const auto run = openRunOrFail(path, runOptions);
    if (!run)
        return 2;
    std::string out;
    try {
        const whatif::WhatIfModel model(run->trace, run->analysis, run->collectives);
        if (parser.isSet(o.even)) {
            const whatif::EvenResult result = model.even();
            out = parser.isSet(o.json) ? whatif::evenJson(result) : whatif::evenTable(result);
        } else {
            const whatif::WhatIfResult result = model.evaluate(edits);
            out = parser.isSet(o.json) ? whatif::whatIfJson(result, edits) : whatif::whatIfTable(result, edits);
        }
    } catch (const std::invalid_argument& e) {
        return fail(std::string("whatif: ") + e.what());
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}

} // namespace exposure::cli
