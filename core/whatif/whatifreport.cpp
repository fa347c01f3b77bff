// SPDX-License-Identifier: GPL-3.0-or-later
// The what-if result as JSON (stable shape, exact integers; report/jsonwriter.h) and as a table.
#include "model/timeformat.h"
#include "report/jsonwriter.h"
#include "whatif/whatif.h"

#include <cstdio>

namespace exposure::whatif {

namespace {

void writePath(JsonWriter& j, const PathSums& p)
{
    j.beginObject();
    for (int i = 0; i < kPathPartCount; ++i)
        j.field(pathPartName(PathPart(i)), p.ns[std::size_t(i)]);
    j.field("other_ranks", p.otherRanksNs).endObject();
}

double ratio(TimeNs a, TimeNs b)
{
    return b > 0 ? double(a) / double(b) : 0.0;
}

void writeRank(JsonWriter& j, const RankWhatIf& r)
{
    j.beginObject()
        .field("rank", r.rank)
        .field("label", r.label)
        .field("steps_used", r.steps.size())
        .breakBefore(5)
        .field("measured_step_ns", r.measuredMean)
        .field("replay_step_ns", r.replayMean)
        .field("predicted_step_ns", r.predictedMean)
        .field("change_ns", r.predictedMean - r.replayMean)
        .breakBefore(5)
        .fixedField("fidelity", ratio(r.replayMean, r.measuredMean), 4)
        .fixedField("max_step_error_percent", r.maxStepErrorPercent, 2)
        .breakBefore(5)
        .key("critical_path");
    writePath(j, r.predictedPath);
    j.breakBefore(5).key("replay_critical_path");
    writePath(j, r.replayPath);
    j.breakBefore(5).key("steps").beginArray();
    for (const StepTimes& s : r.steps)
        j.beginObject()
            .field("index", s.index)
            .field("number", s.number)
            .field("measured_ns", s.measured)
            .field("replay_ns", s.replay)
            .field("predicted_ns", s.predicted)
            .endObject();
    j.endArray().endObject();
}

std::string percentChange(TimeNs now, TimeNs before)
{
    if (before <= 0)
        return "-";
    const double p = 100.0 * double(now - before) / double(before);
    return (p >= 0 ? "+" : "") + formatFixed(p, 1) + " %";
}

std::string pathLine(const PathSums& p)
{
    std::string out;
    for (int i = 0; i < kPathPartCount; ++i) {
        const TimeNs v = p.ns[std::size_t(i)];
        if (v == 0)
            continue;
        out += (out.empty() ? "" : ", ") + std::string(pathPartName(PathPart(i))) + " " + formatDuration(v);
    }
    if (p.otherRanksNs != 0)
        out += " (" + formatDuration(p.otherRanksNs) + " of it on other ranks)";
    return out.empty() ? "-" : out;
}

} // namespace

std::string whatIfJson(const WhatIfResult& result, const Edits& edits)
{
    std::string out;
    JsonWriter j(out);
    j.beginObject(JsonWriter::Layout::Lines)
        .field("edits", edits.describe())
        .key("graph")
        .beginObject()
        .field("nodes", result.nodes)
        .field("edges", result.edges)
        .field("collective_groups", result.groups)
        .endObject()
        .key("ranks")
        .beginArray(JsonWriter::Layout::Lines);
    for (const RankWhatIf& r : result.ranks)
        writeRank(j, r);
    j.endArray().key("warnings").beginArray();
    for (const std::string& w : result.warnings)
        j.value(w);
    j.endArray().endObject();
    return out + "\n";
}

std::string whatIfTable(const WhatIfResult& result, const Edits& edits)
{
    std::string out = "What if: " + edits.describe() + "\n\n";
    char line[256];
    std::snprintf(line, sizeof line, "%-10s %6s %12s %12s %12s %9s %9s\n", "rank", "steps", "measured", "replay",
        "predicted", "change", "fidelity");
    out += line;
    bool noSteps = false;
    for (const RankWhatIf& r : result.ranks) {
        const bool none = r.steps.empty();
        noSteps = noSteps || none;
        auto dur = [none](TimeNs t) { return none ? std::string("-") : formatDuration(t); };
        std::snprintf(line, sizeof line, "%-10s %6zu %12s %12s %12s %9s %9s\n",
            (r.label.empty() ? std::to_string(r.rank) : r.label).c_str(), r.steps.size(), dur(r.measuredMean).c_str(),
            dur(r.replayMean).c_str(), dur(r.predictedMean).c_str(),
            none ? "-" : percentChange(r.predictedMean, r.replayMean).c_str(),
            none ? "-" : (formatFixed(100.0 * ratio(r.replayMean, r.measuredMean), 1) + " %").c_str());
        out += line;
    }
    if (noSteps)
        out += "(-: no training steps found on that rank: no step time to predict)\n";
    out += "\nCritical path of a mean step (replay -> predicted):\n";
    for (const RankWhatIf& r : result.ranks) {
        const std::string label = r.label.empty() ? std::to_string(r.rank) : r.label;
        out += "  " + label + " replay:    " + pathLine(r.replayPath) + "\n";
        out += "  " + label + " predicted: " + pathLine(r.predictedPath) + "\n";
    }
    out += "\nmeasured: the mean step time of the trace (the steps 'stats' averages); replay: the same steps replayed\n"
           "without edits (fidelity = replay / measured); predicted: replayed with the edits; change: predicted vs\n"
           "replay. The parts of a critical path are never negative and add up to the step time it explains.\n";
    for (const std::string& w : result.warnings)
        out += "warning: " + w + "\n";
    return out;
}

} // namespace exposure::whatif
