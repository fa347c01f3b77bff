// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-cli render: a timeline figure (PNG, SVG, PDF) without a display, through the same renderer as
// File ▸ Export Figure… in the GUI.
#include "analysis/analysis.h"
#include "analysis/clockalign.h"
#include "commands.h"
#include "figure/figurerenderer.h"
#include "figure/figurespec.h"
#include "figure/heatmapfigure.h"
#include "import/loadoptions.h"
#include "model/timeformat.h"
#include "renderrequest.h"
#include "view/rankgroups.h"
#include "whatif/whatif.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QHashFunctions>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace exposure::cli {

namespace {

const char* kDescription
    = "Draws the timeline of TRACE as a figure for a paper: PNG, SVG or PDF (vector), headless and\n"
      "deterministic (the same inputs give the same bytes). The drawing is the GUI timeline's.\n"
      "\n"
      "Size: --width/--height in pixels (default 1600x900 at 96 dpi), or --width-mm/--height-mm with --dpi\n"
      "(85 mm is a single column, 178 mm a double column; 300 to 600 dpi). Fonts are in points at --dpi.\n"
      "Range: the whole trace (its recorded activity, as Zoom to Fit), --from/--to (relative to the trace\n"
      "start; 120ns, 350us, 1.5ms, 2s), or --step N (the step numbered N, on all ranks:\n"
      "ProfilerStep#N is step N; the axis then reads time since the step's start, --time-origin trace keeps the "
      "trace's).\n"
      "Rows: auto (the default: every row if all are legible, else GPU streams and overlap rows, else overlap\n"
      "rows only, else for more than 16 ranks a row per group of ranks), all, gpu (GPU streams and overlap rows),\n"
      "overlap (one overlap row per rank), groups (one area-true row per group of ranks: in each pixel column,\n"
      "the share of the group's ranks in each state; --group KIND picks the grouping), or a list such as\n"
      "0,1:2,1:overlap (rank 0, lane 2 of rank 1, the overlap row of rank 1; indexes as 'info' prints them).\n"
      "Legibility: text never overlaps or is cut, fonts are at least 6 pt and rows at least 1.5 mm tall; a figure\n"
      "that cannot be made so is not written: one line says why and proposes a size or rows (exit status 2).\n"
      "--spec FILE reads a figure spec saved by File > Export Figure... in the GUI; options given on the\n"
      "command line override it. --save-spec FILE writes the spec that was used.\n"
      "\n"
      "--heatmap METRIC draws the rank x step heat map instead of the timeline: one cell per rank and step of\n"
      "step (the step's time), compute, exposed (communication no compute hides), waiting (for peers in\n"
      "collectives), idle, bubble (the step's job window less the rank's compute) or slowdown (the straggler\n"
      "attribution of whatif --even: the job's step with only that rank as recorded and every other operation at\n"
      "its typical duration, less the step with all of them evened), in ms on a colour bar; cells more than 3.5\n"
      "robust z-scores from their step's median are outlined. --order number|host|stage|value orders the ranks\n"
      "(value: the largest mean first). --heatmap slowdown --grid dp-pp draws instead one cell per DP rank\n"
      "(rows) and pipeline stage (columns), for a job whose ranks have those coordinates: the job's mean step\n"
      "with only that cell's ranks as recorded and every other operation at its typical duration, less the mean\n"
      "step with all of them evened, in ms.\n"
      "\n"
      "An existing output file is never replaced unless --force is given.\n"
      "Exit status: 0 on success, 2 on a bad argument, spec or trace (one line on stderr).";

struct Options
{
    QCommandLineOption output { { QStringLiteral("o"), QStringLiteral("output") },
        QStringLiteral("Write the figure to FILE."), QStringLiteral("FILE") };
    QCommandLineOption format { QStringLiteral("format"),
        QStringLiteral("png, svg or pdf (default: from the file name, else the spec's, else png)."),
        QStringLiteral("FMT") };
    QCommandLineOption width { QStringLiteral("width"), QStringLiteral("Width in pixels."), QStringLiteral("PX") };
    QCommandLineOption height { QStringLiteral("height"), QStringLiteral("Height in pixels."), QStringLiteral("PX") };
    QCommandLineOption widthMm { QStringLiteral("width-mm"), QStringLiteral("Width in millimetres."),
        QStringLiteral("MM") };
    QCommandLineOption heightMm { QStringLiteral("height-mm"),
        QStringLiteral("Height in millimetres (default: width × 0.4)."), QStringLiteral("MM") };
    QCommandLineOption dpi { QStringLiteral("dpi"),
        QStringLiteral("Dots per inch (default 96 for pixels, 300 for mm)."), QStringLiteral("N") };
    QCommandLineOption from { QStringLiteral("from"), QStringLiteral("Start of the time range."), QStringLiteral("T") };
    QCommandLineOption to { QStringLiteral("to"), QStringLiteral("End of the time range."), QStringLiteral("T") };
    QCommandLineOption step { QStringLiteral("step"),
        QStringLiteral("Draw training step N (ProfilerStep#N: N, as Zoom to Step and stats number it)."),
        QStringLiteral("N") };
    QCommandLineOption timeOrigin { QStringLiteral("time-origin"),
        QStringLiteral("With --step: the time axis reads time since the step's start (step, the default) or since "
                       "the trace's (trace)."),
        QStringLiteral("O") };
    QCommandLineOption rows { QStringLiteral("rows"),
        QStringLiteral("auto, all, gpu, overlap, groups or a LIST (see above)."), QStringLiteral("ROWS") };
    QCommandLineOption group { QStringLiteral("group"),
        QStringLiteral("A row per group of ranks, grouped by auto (the default of --rows groups), host, stage, dp or "
                       "blocks."),
        QStringLiteral("KIND") };
    QCommandLineOption noOverlap { QStringLiteral("no-overlap"), QStringLiteral("Hide the per-rank overlap rows.") };
    QCommandLineOption palette { QStringLiteral("palette"), QStringLiteral("default, colorblind or grayscale."),
        QStringLiteral("P") };
    QCommandLineOption legend { QStringLiteral("legend"), QStringLiteral("Draw the legend (the default).") };
    QCommandLineOption noLegend { QStringLiteral("no-legend"), QStringLiteral("Leave the legend out.") };
    QCommandLineOption legendPos { QStringLiteral("legend-position"), QStringLiteral("top, bottom, right or inside."),
        QStringLiteral("POS") };
    QCommandLineOption title { QStringLiteral("title"), QStringLiteral("Title above the plot."),
        QStringLiteral("TEXT") };
    QCommandLineOption fontFamily { QStringLiteral("font-family"), QStringLiteral("Font family (default DejaVu Sans)."),
        QStringLiteral("F") };
    QCommandLineOption fontSize { QStringLiteral("font-size"), QStringLiteral("Font size in points (default 9)."),
        QStringLiteral("PT") };
    QCommandLineOption axisLabel { QStringLiteral("axis-label"), QStringLiteral("Label of the time axis."),
        QStringLiteral("TEXT") };
    QCommandLineOption timeUnit { QStringLiteral("time-unit"), QStringLiteral("Tick unit: auto, ns, us, ms or s."),
        QStringLiteral("U") };
    QCommandLineOption spec { QStringLiteral("spec"), QStringLiteral("Start from the figure spec in FILE."),
        QStringLiteral("FILE") };
    QCommandLineOption saveSpec { QStringLiteral("save-spec"), QStringLiteral("Also write the figure spec to FILE."),
        QStringLiteral("FILE") };
    QCommandLineOption force { { QStringLiteral("f"), QStringLiteral("force") },
        QStringLiteral("Replace an existing output file.") };
    QCommandLineOption heatmap { QStringLiteral("heatmap"),
        QStringLiteral("Draw the rank x step heat map of step, compute, exposed, waiting, idle, bubble or slowdown."),
        QStringLiteral("METRIC") };
    QCommandLineOption order { QStringLiteral("order"),
        QStringLiteral("Heat map rows by number (default), host, stage or value."), QStringLiteral("ORDER") };
    QCommandLineOption grid { QStringLiteral("grid"),
        QStringLiteral("With --heatmap slowdown: rank-step (default) or dp-pp (DP rank x pipeline stage)."),
        QStringLiteral("GRID") };
    QCommandLineOption even { QStringLiteral("even"),
        QStringLiteral("Draw the straggler what-if's predicted timeline (every operation at its typical duration, "
                       "as whatif --even) instead of the recorded one.") };

    void addTo(QCommandLineParser& p)
    {
        for (auto* o : { &output, &format, &width, &height, &widthMm, &heightMm, &dpi, &from, &to, &step, &timeOrigin,
                 &rows, &group, &noOverlap, &palette, &legend, &noLegend, &legendPos, &title, &fontFamily, &fontSize,
                 &axisLabel, &timeUnit, &spec, &saveSpec, &force, &heatmap, &order, &grid, &even })
            p.addOption(*o);
        load.addTo(p);
    }
    LoadArgs load; // --rules, --extend-rules, --clock (kept in the spec), --ranks, --memory-limit
};

std::string name(const QCommandLineOption& o)
{
    const QString n = o.names().constLast();
    return (n.size() == 1 ? "-" : "--") + n.toStdString();
}

bool intValue(const QCommandLineParser& p, const QCommandLineOption& o, int lo, int hi, int* out, std::string& error)
{
    bool ok = false;
    const int v = p.value(o).toInt(&ok);
    if (!ok || v < lo || v > hi) {
        error = name(o) + " '" + p.value(o).toStdString() + "': expected a whole number from " + std::to_string(lo)
            + " to " + std::to_string(hi);
        return false;
    }
    *out = v;
    return true;
}

bool doubleValue(
    const QCommandLineParser& p, const QCommandLineOption& o, double lo, double hi, double* out, std::string& error)
{
    bool ok = false;
    const double v = p.value(o).toDouble(&ok);
    if (!ok || !(v >= lo && v <= hi)) {
        error = name(o) + " '" + p.value(o).toStdString() + "': expected a number from "
            + QString::number(lo).toStdString() + " to " + QString::number(hi).toStdString();
        return false;
    }
    *out = v;
    return true;
}

bool timeValue(const QCommandLineParser& p, const QCommandLineOption& o, TimeNs* out, std::string& error)
{
    const auto v = parseDuration(p.value(o).toStdString());
    if (!v) {
        error = name(o) + " '" + p.value(o).toStdString() + "': not a time (use 120ns, 350us, 1.5ms, 2s)";
        return false;
    }
    *out = *v;
    return true;
}

// --heatmap METRIC and --order ORDER. Returns an error message or "".
std::string applyHeatMapArguments(const QCommandLineParser& p, const Options& o, FigureSpec& s)
{
    if (p.isSet(o.heatmap)) {
        s.heatmap = heatMetricFromName(p.value(o.heatmap).toStdString());
        if (!s.heatmap)
            return "--heatmap '" + p.value(o.heatmap).toStdString()
                + "': expected step, compute, exposed, waiting, idle, bubble or slowdown";
    }
    if (p.isSet(o.order)) {
        if (!s.heatmap)
            return "--order applies to --heatmap only";
        const auto order = rankOrderFromName(p.value(o.order).toStdString());
        if (!order)
            return "--order '" + p.value(o.order).toStdString() + "': expected number, host, stage or value";
        s.heatmapOrder = *order;
    }
    return {};
}

// Applies the command line on top of `s` (defaults or a loaded spec). Returns an error message or "".
std::string applyArguments(const QCommandLineParser& p, const Options& o, FigureSpec& s)
{
    std::string e;
    if (p.isSet(o.format)) {
        if (!figureFormatFromName(p.value(o.format), &s.format))
            return "--format '" + p.value(o.format).toStdString() + "': expected png, svg or pdf";
    } else {
        // The file name's suffix, else the spec's format (png by default).
        figureFormatFromName(QFileInfo(p.value(o.output)).suffix(), &s.format);
    }

    const bool px = p.isSet(o.width) || p.isSet(o.height);
    const bool mm = p.isSet(o.widthMm) || p.isSet(o.heightMm);
    if (px && mm)
        return "--width/--height (pixels) and --width-mm/--height-mm exclude each other";
    if (px) {
        if (p.isSet(o.width) != p.isSet(o.height))
            return "--width and --height go together";
        s.sizeUnit = FigureSpec::SizeUnit::Pixels;
        if (!intValue(p, o.width, 100, 20000, &s.widthPx, e) || !intValue(p, o.height, 60, 20000, &s.heightPx, e))
            return e;
        if (!p.isSet(o.spec) && !p.isSet(o.dpi))
            s.dpi = 96;
    }
    if (mm) {
        if (!p.isSet(o.widthMm))
            return "--height-mm needs --width-mm";
        s.sizeUnit = FigureSpec::SizeUnit::Millimetres;
        if (!doubleValue(p, o.widthMm, 20, 2000, &s.widthMm, e))
            return e;
        s.heightMm = std::round(s.widthMm * 0.4 * 10) / 10;
        if (p.isSet(o.heightMm) && !doubleValue(p, o.heightMm, 10, 2000, &s.heightMm, e))
            return e;
        if (!p.isSet(o.dpi))
            s.dpi = 300;
    }
    if (p.isSet(o.dpi) && !intValue(p, o.dpi, 30, 2400, &s.dpi, e))
        return e;

    const bool range = p.isSet(o.from) || p.isSet(o.to);
    if (range && p.isSet(o.step))
        return "--from/--to and --step exclude each other";
    if (range) {
        if (p.isSet(o.from) != p.isSet(o.to))
            return "--from and --to go together";
        TimeRange r;
        if (!timeValue(p, o.from, &r.start, e) || !timeValue(p, o.to, &r.end, e))
            return e;
        if (r.end <= r.start)
            return "--from " + formatDuration(r.start) + " is not before --to " + formatDuration(r.end);
        s.rangeKind = FigureSpec::RangeKind::Custom;
        s.range = r;
    }
    if (p.isSet(o.step)) {
        s.rangeKind = FigureSpec::RangeKind::Step;
        if (!intValue(p, o.step, -1000000000, 1000000000, &s.step, e))
            return e;
    }
    if (p.isSet(o.timeOrigin)) {
        if (p.value(o.timeOrigin) != QStringLiteral("step") && p.value(o.timeOrigin) != QStringLiteral("trace"))
            return "--time-origin '" + p.value(o.timeOrigin).toStdString() + "': expected step or trace";
        s.stepOrigin = p.value(o.timeOrigin) == QStringLiteral("step");
    }
    if (p.isSet(o.rows)) {
        QString err;
        if (!parseRowsArgument(p.value(o.rows), &s, &err))
            return "--rows: " + err.toStdString();
    }
    if (p.isSet(o.group)) {
        const auto grouping = rankGroupingFromName(p.value(o.group).toLower().toStdString());
        if (!grouping || *grouping == RankGrouping::None)
            return "--group '" + p.value(o.group).toStdString() + "': expected auto, host, stage, dp or blocks";
        if (p.isSet(o.rows) && s.rows != FigureSpec::RowsKind::Groups)
            return "--group draws a row per group: it goes with --rows groups (or without --rows)";
        s.rows = FigureSpec::RowsKind::Groups;
        s.grouping = *grouping;
    }
    if (p.isSet(o.noOverlap))
        s.overlapLanes = false;
    if (p.isSet(o.load.clock)) {
        if (p.value(o.load.clock) != QStringLiteral("aligned") && p.value(o.load.clock) != QStringLiteral("recorded"))
            return "--clock '" + p.value(o.load.clock).toStdString() + "': expected aligned or recorded";
        s.alignedClocks = p.value(o.load.clock) == QStringLiteral("aligned");
    }
    if (p.isSet(o.palette)) {
        bool ok = false;
        s.palette = paletteKindFromName(p.value(o.palette), &ok);
        if (!ok)
            return "--palette '" + p.value(o.palette).toStdString() + "': expected default, colorblind or grayscale";
    }
    if (p.isSet(o.legend) && p.isSet(o.noLegend))
        return "--legend and --no-legend exclude each other";
    if (p.isSet(o.legend) || p.isSet(o.legendPos))
        s.legend = true;
    if (p.isSet(o.noLegend))
        s.legend = false;
    if (p.isSet(o.legendPos) && !legendPositionFromName(p.value(o.legendPos), &s.legendPosition))
        return "--legend-position '" + p.value(o.legendPos).toStdString() + "': expected top, bottom, right or inside";
    if (p.isSet(o.title))
        s.title = p.value(o.title);
    if (p.isSet(o.fontFamily)) {
        s.fontFamily = p.value(o.fontFamily).trimmed();
        if (s.fontFamily.isEmpty())
            return "--font-family: empty font family";
    }
    if (p.isSet(o.fontSize) && !doubleValue(p, o.fontSize, 2, 72, &s.fontSize, e))
        return e;
    if (p.isSet(o.axisLabel))
        s.timeAxisLabel = p.value(o.axisLabel);
    if (p.isSet(o.timeUnit) && !timeUnitFromName(p.value(o.timeUnit), &s.timeUnit))
        return "--time-unit '" + p.value(o.timeUnit).toStdString() + "': expected auto, ns, us, ms or s";
    return applyHeatMapArguments(p, o, s);
}

// Qt's notes about the environment of a headless run (no XDG_RUNTIME_DIR, ...) are not the user's business;
// everything else still reaches stderr.
void quietHandler(QtMsgType type, const QMessageLogContext& context, const QString& message)
{
    if (type <= QtWarningMsg && message.startsWith(QLatin1String("QStandardPaths:")))
        return;
    std::fprintf(stderr, "%s\n", qPrintable(qFormatLogMessage(type, context, message)));
}

} // namespace

void prepareRenderProcess()
{
    // Qt's PDF writer orders font objects by QHash iteration, which a per-process random seed reorders: a fixed
    // seed (set before any QHash exists) makes the PDF bytes the same from run to run.
    QHashSeed::setDeterministicGlobalSeed();
    qInstallMessageHandler(quietHandler);
    // Headless: no display is needed (and none is used when there is one but nothing says so).
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY")
        && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
}

int parseRenderRequest(RenderRequest& request)
{
    QCommandLineParser parser;
    setUpCommand(parser, "render", QString::fromLatin1(kDescription));
    Options o;
    o.addTo(parser);
    parser.addPositionalArgument(QStringLiteral("TRACE"),
        QStringLiteral("An OTF2 anchor file, an archive folder, a folder of per-rank archives, or "
                       "torch.profiler .json / .json.gz traces, or Nsight Systems .sqlite / .nsys-rep "
                       "reports (optional with --spec: the "
                       "spec's trace)."));
    if (!parser.parse(QCoreApplication::arguments()))
        return fail("render: " + parser.errorText().toStdString());
    if (printedHelpOrVersion(parser, "render"))
        return 0;
    const QStringList args = parser.positionalArguments();
    if (args.size() > 1)
        return fail("render: expected one TRACE argument, got " + std::to_string(args.size())
            + " (see 'exposure-cli render --help')");
    if (!parser.isSet(o.output))
        return fail("render: -o FILE is required (see 'exposure-cli render --help')");
    const QString outPath = parser.value(o.output);

    FigureSpec spec;
    if (parser.isSet(o.spec)) {
        try {
            spec = FigureSpec::load(parser.value(o.spec));
        } catch (const std::exception& e) {
            return fail(e.what());
        }
    }
    if (!args.isEmpty())
        spec.tracePath = args.front();
    if (spec.tracePath.isEmpty())
        return fail("render: no TRACE given (neither as an argument nor in the spec)");
    const std::string err = applyArguments(parser, o, spec);
    if (!err.empty())
        return fail(err);
    try {
        spec.validate(parser.isSet(o.spec) ? parser.value(o.spec) : QStringLiteral("render"));
    } catch (const std::exception& e) {
        return fail(e.what());
    }
    // Cheap checks before the (possibly long) load.
    const bool force = parser.isSet(o.force);
    if (!force && QFileInfo::exists(outPath))
        return fail(outPath.toStdString() + ": already exists (not overwritten; use --force to replace it)");
    if (parser.isSet(o.saveSpec) && !force && QFileInfo::exists(parser.value(o.saveSpec)))
        return fail(parser.value(o.saveSpec).toStdString() + ": already exists (not overwritten; use --force)");
    request.spec = spec;
    request.output = outPath;
    request.force = force;
    request.saveSpec = parser.isSet(o.saveSpec) ? parser.value(o.saveSpec) : QString();
    request.even = parser.isSet(o.even);
    if (parser.isSet(o.grid)) {
        const QString grid = parser.value(o.grid);
        if (grid != QStringLiteral("dp-pp") && grid != QStringLiteral("rank-step"))
            return fail("--grid '" + grid.toStdString() + "': expected rank-step or dp-pp");
        if (spec.heatmap != HeatMetric::Slowdown)
            return fail("--grid applies to --heatmap slowdown only");
        request.dpPpGrid = grid == QStringLiteral("dp-pp");
    }
    if (const std::string problem = o.load.apply(parser, request.run); !problem.empty())
        return fail(problem);
    request.run.clock = spec.alignedClocks ? ClockMode::Aligned : ClockMode::Recorded; // --clock over the spec's
    request.run.load.keepLaunchParameters = false; // not drawn
    request.run.collectives = true; // the waiting for peers is drawn (timeline and heat map)
    return -1;
}

int runRender(int argc, char** argv)
{
    prepareRenderProcess();
    QApplication app(argc, argv);
    RenderRequest request;
    if (const int status = parseRenderRequest(request); status >= 0)
        return status;
    FigureSpec& spec = request.spec;
    const QString& outPath = request.output;
    const bool force = request.force;

    const auto run = openRunOrFail(spec.tracePath.toStdString(), request.run);
    if (!run)
        return 2;
    try {
        if (spec.heatmap) {
            auto map = std::make_shared<StepHeatMap>(
                computeStepHeatMap(*run->trace, *run->analysis, run->collectives.get()));
            if (request.dpPpGrid) { // one replay per DP rank × stage cell
                whatif::EvenOptions options;
                options.grid = true;
                const whatif::EvenResult even
                    = whatif::WhatIfModel(run->trace, run->analysis, run->collectives).even(options);
                if (even.grid.empty())
                    return fail(spec.tracePath.toStdString()
                        + ": --grid dp-pp needs ranks with data- and pipeline-parallel coordinates (dp, pp), every "
                          "rank with both and at most 4 cells per rank; this trace's ranks do not have them");
                HeatMapFigure figure(HeatMapScene::makeSlowdownGrid(run->trace, std::move(map), even));
                figure.renderToFile(spec, outPath, force);
            } else {
                if (*spec.heatmap == HeatMetric::Slowdown) // the straggler attribution: one replay per rank
                    whatif::addSlowdown(
                        *map, *run->trace, whatif::WhatIfModel(run->trace, run->analysis, run->collectives).even());
                HeatMapFigure figure(run->trace, std::move(map));
                figure.renderToFile(spec, outPath, force);
            }
        } else if (request.even) {
            // The evened job as the replay predicts it, analysed and matched like a recorded one.
            const whatif::WhatIfModel model(run->trace, run->analysis, run->collectives);
            whatif::Edits edits;
            edits.even = true;
            const std::shared_ptr<const Trace> predicted = model.predictedTrace(edits);
            const std::shared_ptr<const Analysis> analysis = analyze(*predicted, run->analysis->rules);
            FigureRenderer renderer(predicted, analysis);
            renderer.setCollectives(std::make_shared<const CollectiveMatch>(matchCollectives(*predicted, *analysis)));
            renderer.renderToFile(spec, outPath, force);
        } else {
            FigureRenderer renderer(run->trace, run->analysis);
            renderer.setCollectives(run->collectives);
            renderer.renderToFile(spec, outPath, force);
        }
        if (!request.saveSpec.isEmpty())
            spec.save(request.saveSpec);
    } catch (const std::exception& e) {
        return fail(e.what());
    }
    return 0;
}

} // namespace exposure::cli
