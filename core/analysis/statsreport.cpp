// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/statsreport.h"

#include "analysis/collectives.h"
#include "analysis/stepmean.h"
#include "model/timeformat.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace exposure {

// Minimal JSON text helpers: written by hand so that field order is stable and int64 stays exact
// (QJsonValue holds numbers as double).
std::string jsonQuoted(std::string_view s)
{
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += ch;
            }
        }
    }
    out += '"';
    return out;
}

namespace {

std::string quoted(std::string_view s)
{
    return jsonQuoted(s);
}

std::string number(double v, int decimals = 6)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string ratioText(const std::optional<double>& r) { return r ? number(*r) : std::string("null"); }

// Field values in statsFieldNames() order, as JSON/CSV tokens.
std::vector<std::string> fieldValues(const WindowStats& s)
{
    return {std::to_string(s.kernelCount),      std::to_string(s.commKernelCount),
            std::to_string(s.commKernelSumNs),  std::to_string(s.commBusyNs),
            std::to_string(s.computeBusyNs),    std::to_string(s.overlappedNs),
            std::to_string(s.exposedNs),        ratioText(s.overlapRatio),
            std::to_string(s.backwardOverlappedNs), std::to_string(s.memcpyBusyNs),
            std::to_string(s.gpuBusyNs),        std::to_string(s.spanNs),
            std::to_string(s.idleNs),           std::to_string(s.unclassifiedNs)};
}

void appendFields(std::string& out, const WindowStats& s, const std::string& indent)
{
    const auto& names = statsFieldNames();
    const auto values = fieldValues(s);
    for (std::size_t i = 0; i < names.size(); ++i) {
        out += indent + quoted(names[i]) + ": " + values[i];
        out += i + 1 < names.size() ? ",\n" : "\n";
    }
}

// Steps whose window intersects the report window (all of them for the whole trace).
std::vector<std::size_t> stepsInWindow(const RankAnalysis& ra, TimeRange w)
{
    std::vector<std::size_t> out;
    for (std::size_t k = 0; k < ra.steps.size(); ++k)
        if (ra.steps[k].range.intersects(w) || ra.steps[k].range.isEmpty())
            out.push_back(k);
    return out;
}

std::string idleJson(const IdleBreakdown& b)
{
    return "{\"host_bound_ns\": " + std::to_string(b.hostBoundNs) + ", \"sync_wait_ns\": " + std::to_string(b.syncWaitNs)
        + ", \"queued_ns\": " + std::to_string(b.queuedNs) + ", \"data_loading_ns\": " + std::to_string(b.dataLoadingNs)
        + ", \"unattributed_ns\": " + std::to_string(b.unattributedNs) + ", \"gaps\": " + std::to_string(b.gaps) + "}";
}

std::string stepAssignment(const RankAnalysis& ra)
{
    if (ra.steps.empty())
        return "none";
    return ra.stepsByLaunch ? "launch" : "start";
}

std::string percent(const std::optional<double>& r)
{
    return r ? number(*r * 100.0, 1) + " %" : std::string("-");
}

// A plain text table: columns right-aligned except the first `leftColumns` (and the last one if lastLeft).
std::string renderTable(const std::vector<std::vector<std::string>>& rows, std::size_t leftColumns,
                        bool lastLeft = false)
{
    std::vector<std::size_t> width;
    auto displayWidth = [](const std::string& s) {
        // UTF-8: count code points, not bytes (µ is two bytes).
        std::size_t n = 0;
        for (const char c : s)
            if ((static_cast<unsigned char>(c) & 0xC0) != 0x80)
                ++n;
        return n;
    };
    for (const auto& r : rows) {
        if (width.size() < r.size())
            width.resize(r.size(), 0);
        for (std::size_t i = 0; i < r.size(); ++i)
            width[i] = std::max(width[i], displayWidth(r[i]));
    }
    std::string out;
    for (const auto& r : rows) {
        std::string line;
        for (std::size_t i = 0; i < r.size(); ++i) {
            const std::string pad(width[i] - displayWidth(r[i]), ' ');
            if (i > 0)
                line += "  ";
            const bool left = i < leftColumns || (lastLeft && i + 1 == r.size());
            line += left ? r[i] + pad : pad + r[i];
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line + "\n";
    }
    return out;
}

std::string dur(TimeNs ns) { return formatDuration(ns); }

// Which of a rank's steps in the window its mean step covers (analysis/stepmean.h), as a JSON object.
std::string stepMeanJson(const RankAnalysis& ra, const StepMean& m)
{
    std::string out = "{\"mean_ns\": " + std::to_string(m.meanNs) + ", \"steps_used\": " + std::to_string(m.used.size())
        + ", \"first_step\": " + (m.used.empty() ? std::string("null") : std::to_string(ra.steps[m.used.front()].index))
        + ", \"last_step\": " + (m.used.empty() ? std::string("null") : std::to_string(ra.steps[m.used.back()].index))
        + ", \"startup_steps\": [";
    for (std::size_t i = 0; i < m.startup.size(); ++i)
        out += (i ? ", " : "") + std::to_string(ra.steps[m.startup[i]].index);
    return out + "], \"covers\": " + quoted(m.describe(ra.steps)) + "}";
}

// "mean step = mean step-window length over: Rank 0: steps 1–14 (step 0 left out: start-up, 8.2 s); …", one line
// when every rank has the same steps.
std::string stepMeanNotes(const std::vector<std::pair<std::string, std::string>>& perRank)
{
    if (perRank.empty())
        return {};
    const std::string rule = "a first step lasting over " + std::to_string(kStartupFactor)
        + "x the median of the later ones is start-up and left out.\n";
    if (std::all_of(perRank.begin(), perRank.end(), [&](const auto& p) { return p.second == perRank.front().second; }))
        return "mean step = mean step-window length over " + perRank.front().second
            + (perRank.size() > 1 ? " (every rank)" : "") + ";\n" + rule;
    std::string out = "mean step = mean step-window length over\n";
    for (const auto& [label, covers] : perRank)
        out += "  " + label + ": " + covers + "\n";
    return out + rule;
}

} // namespace

const std::vector<std::string>& statsFieldNames()
{
    static const std::vector<std::string> names = {
        "kernel_count",  "comm_kernel_count", "comm_kernel_sum_ns", "comm_busy_ns", "compute_busy_ns",
        "overlapped_ns", "exposed_ns",        "overlap_ratio",      "backward_overlapped_ns",
        "memcpy_busy_ns", "gpu_busy_ns",      "span_ns",            "idle_ns",      "unclassified_ns"};
    return names;
}

std::string statsJson(const Trace& trace, const Analysis& analysis, const StatsReportOptions& o)
{
    std::string out = "{\n";
    out += "  \"trace\": " + quoted(trace.sourcePath) + ",\n";
    out += "  \"rules\": " + quoted(analysis.rules.source()) + ",\n";
    out += "  \"window\": {\"start_ns\": " + std::to_string(o.window.start)
        + ", \"end_ns\": " + std::to_string(o.window.end) + "},\n";
    // What the importer found inconsistent or incomplete (counted, clipped or dropped; see `info`).
    out += "  \"trace_warnings\": [";
    for (std::size_t i = 0; i < trace.warnings.size(); ++i)
        out += (i ? ", " : "") + quoted(trace.warnings[i]);
    out += "],\n";
    const CollectiveMatch collectives = matchCollectives(trace, analysis);
    out += "  \"ranks\": [";
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const Rank& rank = trace.ranks[r];
        const RankAnalysis& ra = analysis.ranks[r];
        out += r == 0 ? "\n" : ",\n";
        out += "    {\n";
        out += "      \"rank\": " + std::to_string(rank.rank) + ",\n";
        out += "      \"label\": " + quoted(rank.label) + ",\n";
        out += "      \"host\": " + quoted(rank.host) + ",\n";
        out += "      \"device\": " + (rank.devices.empty() ? std::string("null") : std::to_string(rank.devices[0]))
            + ",\n";
        const WindowStats rankStats = computeStats(trace, analysis, int(r), o.window);
        appendFields(out, rankStats, "      ");
        out.insert(out.size() - 1, ",");
        out += "      \"phase_source\": " + quoted(phaseSourceName(ra.phaseSource)) + ",\n";
        out += "      \"phase_counts\": {\"launch\": " + std::to_string(ra.phaseFromLaunch)
            + ", \"kernel_name\": " + std::to_string(ra.phaseFromName)
            + ", \"step_heuristic\": " + std::to_string(ra.phaseFromHeuristic)
            + ", \"unknown\": " + std::to_string(ra.phaseUnknown) + "},\n";
        out += "      \"launch_pairing\": " + quoted(launchPairingName(ra.launchPairing)) + ",\n";
        out += "      \"kernels_paired\": " + std::to_string(ra.kernelsPaired) + ",\n";
        out += "      \"kernels_unpaired\": " + std::to_string(ra.kernelsUnpaired) + ",\n";
        {
            const IdleBreakdown idle = computeIdleBreakdown(trace, analysis, int(r), o.window);
            const LaunchDiagnosis ld = diagnoseLaunches(trace, analysis, int(r), o.window);
            out += "      \"idle_breakdown\": " + idleJson(idle) + ",\n";
            out += "      \"launch_diagnosis\": {\"kernels\": " + std::to_string(ld.kernels)
                + ", \"median_kernel_ns\": " + std::to_string(ld.medianKernelNs) + ", \"p90_kernel_ns\": "
                + std::to_string(ld.p90KernelNs) + ", \"median_launch_ns\": " + std::to_string(ld.medianLaunchNs)
                + ", \"p90_launch_ns\": " + std::to_string(ld.p90LaunchNs) + ", \"shorter_than_launch\": "
                + number(ld.shorterThanLaunch) + ", \"launches_per_second\": " + number(ld.launchesPerSecond, 1) + "},\n";
            out += "      \"finding\": " + quoted(idleFinding(rankStats, idle, ld))
                + ",\n";
        }
        out += "      \"step_source\": " + quoted(stepSourceName(ra.stepSource)) + ",\n";
        out += "      \"step_assignment\": " + quoted(stepAssignment(ra)) + ",\n";
        const auto inWindow = stepsInWindow(ra, o.window);
        const StepMean mean = stepMean(ra.steps, inWindow);
        out += "      \"step_mean\": " + stepMeanJson(ra, mean) + ",\n";
        out += "      \"steps\": [";
        const auto stepStats = computeStepStats(trace, analysis, int(r), o.window);
        bool first = true;
        for (const std::size_t k : inWindow) {
            const StepWindow& w = ra.steps[k];
            out += first ? "\n" : ",\n";
            first = false;
            out += "        {\n";
            out += "          \"index\": " + std::to_string(w.index) + ",\n";
            out += "          \"name\": " + quoted(w.name) + ",\n";
            out += "          \"start_ns\": " + std::to_string(w.range.start) + ",\n";
            out += "          \"end_ns\": " + std::to_string(w.range.end) + ",\n";
            out += std::string("          \"startup\": ")
                + (std::find(mean.startup.begin(), mean.startup.end(), k) != mean.startup.end() ? "true" : "false")
                + ",\n";
            appendFields(out, stepStats[k], "          ");
            out.insert(out.size() - 1, ",");
            out += "          \"idle_breakdown\": " + idleJson(computeIdleBreakdown(trace, analysis, int(r), w.range))
                + "\n";
            out += "        }";
        }
        out += first ? "],\n" : "\n      ],\n";
        {
            // Whole trace (collectives are matched across ranks, not per window).
            const RankCollectiveStats& c = collectives.ranks[r];
            out += "      \"collectives\": {\"matched\": " + std::to_string(c.matched)
                + ", \"unmatched\": " + std::to_string(c.unmatched) + ", \"wait_ns\": " + std::to_string(c.waitNs)
                + ", \"transfer_ns\": " + std::to_string(c.transferNs)
                + ", \"exposed_wait_ns\": " + std::to_string(c.exposedWaitNs)
                + ", \"caused_waits\": " + std::to_string(c.causedWaits)
                + ", \"caused_wait_ns\": " + std::to_string(c.causedWaitNs) + "},\n";
        }
        out += "      \"warnings\": [";
        for (std::size_t i = 0; i < ra.warnings.size(); ++i)
            out += (i ? ", " : "") + quoted(ra.warnings[i]);
        out += "]\n";
        out += "    }";
    }
    out += trace.ranks.empty() ? "],\n" : "\n  ],\n";
    out += "  \"total\": {\n";
    appendFields(out, computeTotal(trace, analysis, o.window), "    ");
    out += "  },\n";
    out += "  \"kernels\": [";
    const auto rows = kernelTable(trace, analysis, o.window);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const KernelRow& k = rows[i];
        out += i == 0 ? "\n" : ",\n";
        out += "    {\"name\": " + quoted(analysis.classOf(k.name).displayName)
            + ", \"category\": " + quoted(categoryName(k.category)) + ", \"subgroup\": " + quoted(k.subgroup)
            + ", \"phase\": " + quoted(phaseName(k.phase)) + ", \"count\": " + std::to_string(k.count)
            + ", \"total_ns\": " + std::to_string(k.totalNs) + ", \"mean_ns\": " + number(k.meanNs, 1)
            + ", \"min_ns\": " + std::to_string(k.minNs) + ", \"max_ns\": " + std::to_string(k.maxNs)
            + ", \"gpu_share\": " + number(k.gpuShare) + "}";
    }
    out += rows.empty() ? "]\n" : "\n  ]\n";
    out += "}\n";
    return out;
}

std::string statsCsv(const Trace& trace, const Analysis& analysis, const StatsReportOptions& o)
{
    auto csvField = [](const std::string& s) {
        if (s.find_first_of(",\"\n") == std::string::npos)
            return s;
        std::string q = "\"";
        for (const char c : s) {
            if (c == '"')
                q += '"';
            q += c;
        }
        return q + "\"";
    };
    std::string out = "scope,rank,step,name,start_ns,end_ns";
    for (const auto& n : statsFieldNames())
        out += "," + n;
    out += "\n";
    auto row = [&](const std::string& scope, const std::string& rank, const std::string& step, const std::string& name,
                   TimeRange range, const WindowStats& s) {
        out += scope + "," + rank + "," + step + "," + csvField(name) + "," + std::to_string(range.start) + ","
            + std::to_string(range.end);
        for (const auto& v : fieldValues(s))
            out += "," + (v == "null" ? std::string() : v);
        out += "\n";
    };
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const Rank& rank = trace.ranks[r];
        row("rank", std::to_string(rank.rank), "", rank.label, o.window, computeStats(trace, analysis, int(r), o.window));
        if (o.perStep) {
            const RankAnalysis& ra = analysis.ranks[r];
            const auto stepStats = computeStepStats(trace, analysis, int(r), o.window);
            for (const std::size_t k : stepsInWindow(ra, o.window))
                row("step", std::to_string(rank.rank), std::to_string(ra.steps[k].index), ra.steps[k].name,
                    ra.steps[k].range, stepStats[k]);
        }
    }
    row("total", "", "", "all ranks", o.window, computeTotal(trace, analysis, o.window));
    return out;
}

std::string statsTable(const Trace& trace, const Analysis& analysis, const StatsReportOptions& o)
{
    std::string out;
    out += "Trace:  " + trace.sourcePath + "\n";
    out += "Window: " + (o.windowGiven ? dur(o.window.start) + " to " + dur(o.window.end) + " (" + dur(o.window.duration()) + ")"
                                       : "whole trace (" + dur(o.window.duration()) + ")")
        + "\n";
    out += "Rules:  " + analysis.rules.source() + "\n";
    for (const auto& w : trace.warnings)
        out += "warning: " + w + "\n";
    out += "\n";

    std::vector<std::vector<std::string>> rows;
    rows.push_back({"rank", "host", "span", "mean step", "compute", "comm busy", "comm kernel sum", "hidden", "exposed",
                    "overlap", "bwd hidden", "memcpy", "idle", "unclassified"});
    auto statsRow = [&](const std::string& label, const std::string& host, const WindowStats& s,
                        const std::string& step) {
        rows.push_back({label, host, dur(s.spanNs), step, dur(s.computeBusyNs), dur(s.commBusyNs),
                        dur(s.commKernelSumNs), dur(s.overlappedNs), dur(s.exposedNs), percent(s.overlapRatio),
                        dur(s.backwardOverlappedNs), dur(s.memcpyBusyNs), dur(s.idleNs), dur(s.unclassifiedNs)});
    };
    std::vector<std::vector<WindowStats>> allSteps(trace.ranks.size());
    std::vector<std::pair<std::string, std::string>> meanNotes; // rank label, the steps its mean covers
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const RankAnalysis& ra = analysis.ranks[r];
        allSteps[r] = computeStepStats(trace, analysis, int(r), o.window);
        const StepMean mean = stepMean(ra.steps, stepsInWindow(ra, o.window));
        std::string meanStep = "-";
        if (!mean.used.empty()) {
            meanStep = dur(mean.meanNs) + " ×" + std::to_string(mean.used.size());
            meanNotes.emplace_back(trace.ranks[r].label, mean.describe(ra.steps));
        }
        statsRow(trace.ranks[r].label.empty() ? std::to_string(trace.ranks[r].rank) : trace.ranks[r].label,
                 trace.ranks[r].host, computeStats(trace, analysis, int(r), o.window), meanStep);
    }
    if (trace.ranks.size() > 1)
        statsRow("total", "", computeTotal(trace, analysis, o.window), "");
    out += renderTable(rows, 2);
    out += "\nhidden = communication overlapped by compute; exposed = communication with no compute running;\n"
           "overlap = hidden / comm busy. See 'exposure-cli stats --help' for the exact definitions.\n";
    out += stepMeanNotes(meanNotes);

    if (trace.ranks.size() > 1) {
        const CollectiveMatch m = matchCollectives(trace, analysis);
        if (!m.groups.empty()) {
            std::vector<std::vector<std::string>> crows;
            crows.push_back({"rank", "matched", "unmatched", "waiting", "transfer", "exposed waiting", "made others wait"});
            for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
                const RankCollectiveStats& c = m.ranks[r];
                crows.push_back({trace.ranks[r].label, std::to_string(c.matched), std::to_string(c.unmatched),
                                 dur(c.waitNs), dur(c.transferNs), dur(c.exposedWaitNs),
                                 c.causedWaits ? dur(c.causedWaitNs) + " in " + std::to_string(c.causedWaits) + " collectives"
                                               : std::string("-")});
            }
            out += "\nCommunication kernels matched across ranks (whole trace): NCCL time before the last rank joined\n"
                   "each collective is waiting for peers, the rest is transfer.\n";
            if (m.multipleHosts)
                out += "Note: the ranks run on several hosts whose clocks may not be aligned; matching assumes they are.\n";
            out += renderTable(crows, 2);
        }
    }

    {
        std::vector<std::vector<std::string>> irows;
        irows.push_back({"rank", "idle", "host-bound", "(data loading)", "sync wait", "queued", "unattributed", "gaps"});
        std::string findings;
        for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
            const IdleBreakdown b = computeIdleBreakdown(trace, analysis, int(r), o.window);
            const TimeNs idle = b.totalNs();
            auto part = [&](TimeNs v) {
                return dur(v) + (idle > 0 ? " (" + number(100.0 * double(v) / double(idle), 1) + " %)" : std::string());
            };
            irows.push_back({trace.ranks[r].label, dur(idle), part(b.hostBoundNs), part(b.dataLoadingNs),
                             part(b.syncWaitNs), part(b.queuedNs), part(b.unattributedNs), std::to_string(b.gaps)});
            const LaunchDiagnosis ld = diagnoseLaunches(trace, analysis, int(r), o.window);
            findings += trace.ranks[r].label + ": "
                + idleFinding(computeStats(trace, analysis, int(r), o.window), b, ld) + "\n";
            if (ld.kernels > 0)
                findings += "  kernels with a known launch: " + std::to_string(ld.kernels) + ", median "
                    + dur(ld.medianKernelNs) + " (p90 " + dur(ld.p90KernelNs) + ") against launch calls of median "
                    + dur(ld.medianLaunchNs) + " (p90 " + dur(ld.p90LaunchNs) + "); "
                    + number(ld.launchesPerSecond, 0) + " launches/s\n";
        }
        out += "\nWhy the GPUs were idle: for each gap, until the call that launched the next work ended the CPU was\n"
               "host-bound (or waiting in a synchronising call), after it the work was queued; unattributed gaps\n"
               "end in work without a known launch.\n";
        out += renderTable(irows, 1);
        out += "\n" + findings;
    }

    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const RankAnalysis& ra = analysis.ranks[r];
        out += "\n" + trace.ranks[r].label + ": phases by " + phaseSourceName(ra.phaseSource) + " (launch "
            + std::to_string(ra.phaseFromLaunch) + ", kernel name " + std::to_string(ra.phaseFromName)
            + ", step heuristic " + std::to_string(ra.phaseFromHeuristic) + ", unknown "
            + std::to_string(ra.phaseUnknown) + " kernels; launches paired by " + launchPairingName(ra.launchPairing)
            + ", " + std::to_string(ra.kernelsPaired) + " of " + std::to_string(ra.kernelsPaired + ra.kernelsUnpaired)
            + " kernels); steps from " + stepSourceName(ra.stepSource) + " ("
            + std::to_string(ra.steps.size()) + ", kernels assigned by " + stepAssignment(ra) + ")\n";
        for (const auto& w : ra.warnings)
            out += "  warning: " + w + "\n";
        if (o.perStep && !ra.steps.empty()) {
            std::vector<std::vector<std::string>> srows;
            srows.push_back({"step", "name", "window", "span", "compute", "comm busy", "hidden", "exposed", "overlap",
                             "bwd hidden", "idle", "kernels"});
            for (const std::size_t k : stepsInWindow(ra, o.window)) {
                const WindowStats& s = allSteps[r][k];
                srows.push_back({std::to_string(ra.steps[k].index), ra.steps[k].name, dur(ra.steps[k].range.duration()),
                                 dur(s.spanNs), dur(s.computeBusyNs), dur(s.commBusyNs), dur(s.overlappedNs),
                                 dur(s.exposedNs), percent(s.overlapRatio), dur(s.backwardOverlappedNs), dur(s.idleNs),
                                 std::to_string(s.kernelCount)});
            }
            out += renderTable(srows, 2);
        }
    }

    const auto kernels = kernelTable(trace, analysis, o.window);
    if (!kernels.empty()) {
        out += "\nTop kernels by total time (all ranks):\n";
        std::vector<std::vector<std::string>> krows;
        krows.push_back({"share", "total", "count", "mean", "min", "max", "category", "phase", "name"});
        for (std::size_t i = 0; i < kernels.size() && int(i) < o.topKernels; ++i) {
            const KernelRow& k = kernels[i];
            std::string name = analysis.classOf(k.name).displayName;
            if (name.size() > 90)
                name = name.substr(0, 87) + "...";
            krows.push_back({number(k.gpuShare * 100.0, 1) + " %", dur(k.totalNs), std::to_string(k.count),
                             dur(TimeNs(k.meanNs + 0.5)), dur(k.minNs), dur(k.maxNs),
                             std::string(categoryName(k.category)) + (k.subgroup.empty() ? "" : "/" + k.subgroup),
                             phaseName(k.phase), name});
        }
        out += renderTable(krows, 0, true);
        if (kernels.size() > std::size_t(o.topKernels))
            out += "(" + std::to_string(kernels.size() - std::size_t(o.topKernels))
                + " more; --json lists every kernel)\n";
    }
    return out;
}

} // namespace exposure
