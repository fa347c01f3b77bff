// SPDX-License-Identifier: GPL-3.0-or-later
// The what-if result as JSON (stable shape, exact integers) and as a table.
#include "model/timeformat.h"
#include "report/statsreport.h"
#include "whatif/whatif.h"

#include <cstdio>

namespace exposure::whatif {

namespace {

// The project's one JSON string writer (valid UTF-8 whatever the bytes, report/statsreport.h).
std::string quoted(const std::string& s)
{
    return jsonQuoted(s);
}

std::string pathJson(const PathSums& p)
{
    std::string out = "{";
    for (int i = 0; i < kPathPartCount; ++i)
        out += (i ? ", " : "") + quoted(pathPartName(PathPart(i))) + ": " + std::to_string(p.ns[std::size_t(i)]);
    return out + ", \"other_ranks\": " + std::to_string(p.otherRanksNs) + "}";
}

double ratio(TimeNs a, TimeNs b)
{
    return b > 0 ? double(a) / double(b) : 0.0;
}

std::string rankJson(const RankWhatIf& r)
{
    std::string out = "    {\"rank\": " + std::to_string(r.rank) + ", \"label\": " + quoted(r.label)
        + ", \"steps_used\": " + std::to_string(r.steps.size()) + ",\n";
    out += "     \"measured_step_ns\": " + std::to_string(r.measuredMean) + ", \"replay_step_ns\": "
        + std::to_string(r.replayMean) + ", \"predicted_step_ns\": " + std::to_string(r.predictedMean)
        + ", \"change_ns\": " + std::to_string(r.predictedMean - r.replayMean) + ",\n";
    out += "     \"fidelity\": " + formatFixed(ratio(r.replayMean, r.measuredMean), 4)
        + ", \"max_step_error_percent\": " + formatFixed(r.maxStepErrorPercent, 2) + ",\n";
    out += "     \"critical_path\": " + pathJson(r.predictedPath) + ",\n";
    out += "     \"replay_critical_path\": " + pathJson(r.replayPath) + ",\n";
    out += "     \"steps\": [";
    for (std::size_t k = 0; k < r.steps.size(); ++k) {
        const StepTimes& s = r.steps[k];
        out += (k ? ", " : "") + std::string("{\"index\": ") + std::to_string(s.index) + ", \"number\": "
            + std::to_string(s.number) + ", \"measured_ns\": " + std::to_string(s.measured) + ", \"replay_ns\": "
            + std::to_string(s.replay) + ", \"predicted_ns\": " + std::to_string(s.predicted) + "}";
    }
    return out + "]}";
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
    std::string out = "{\n  \"edits\": " + quoted(edits.describe()) + ",\n";
    out += "  \"graph\": {\"nodes\": " + std::to_string(result.nodes) + ", \"edges\": " + std::to_string(result.edges)
        + ", \"collective_groups\": " + std::to_string(result.groups) + "},\n";
    out += "  \"ranks\": [\n";
    for (std::size_t i = 0; i < result.ranks.size(); ++i)
        out += rankJson(result.ranks[i]) + (i + 1 < result.ranks.size() ? ",\n" : "\n");
    out += "  ],\n  \"warnings\": [";
    for (std::size_t i = 0; i < result.warnings.size(); ++i)
        out += (i ? ", " : "") + quoted(result.warnings[i]);
    return out + "]\n}\n";
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
