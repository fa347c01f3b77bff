// SPDX-License-Identifier: GPL-3.0-or-later
// The report of `exposure-cli compare` and of Compare Runs' export (analysis/compare.h): one row per run, as a
// table and as JSON (report/jsonwriter.h).
#include "analysis/compare.h"
#include "analysis/stepmean.h"
#include "model/enumnames.h"
#include "model/timeformat.h"
#include "report/jsonwriter.h"

#include <cstdio>
#include <sstream>

namespace exposure {

namespace {

std::string percent(std::optional<double> v)
{
    if (!v)
        return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %%", *v * 100.0);
    return buf;
}

// The last path component of a run's trace.
std::string shortName(std::string name)
{
    while (name.size() > 1 && name.back() == '/')
        name.pop_back();
    if (auto slash = name.find_last_of('/'); slash != std::string::npos)
        name = name.substr(slash + 1);
    return name;
}

} // namespace

std::string compareTable(const std::vector<RunSummary>& runs)
{
    const std::vector<std::string> head = { "run", "ranks", "steps", "step time", "compute", "comm busy", "hidden",
        "exposed", "overlap", "exposed/step", "waiting", "transfer", "efficiency" };
    std::vector<std::vector<std::string>> rows;
    bool sameCount = false;
    for (const auto& r : runs) {
        const std::string name = shortName(r.trace);
        const auto eff = weakScalingEfficiency(runs.front(), r);
        const EfficiencyNote note = efficiencyNote(runs.front(), r, &r == &runs.front());
        sameCount = sameCount || note == EfficiencyNote::SameGpuCount;
        rows.push_back(
            { name, std::to_string(r.ranks), r.stepsUsed > 0 ? std::to_string(r.stepsUsed) : std::string("-"),
                formatDuration(r.stepNs), formatDuration(r.computeNs), formatDuration(r.commBusyNs),
                formatDuration(r.hiddenNs), formatDuration(r.exposedNs), percent(r.overlapRatio),
                percent(r.stepNs > 0 ? std::optional<double>(double(r.exposedNs) / double(r.stepNs)) : std::nullopt),
                r.ranks > 1 ? formatDuration(r.waitNs) : std::string("-"),
                r.ranks > 1 ? formatDuration(r.transferNs) : std::string("-"),
                eff                                    ? percent(eff)
                    : note == EfficiencyNote::Baseline ? std::string(efficiencyNoteText(note))
                                                       : std::string("-") });
    }
    std::vector<std::size_t> width(head.size());
    for (std::size_t c = 0; c < head.size(); ++c) {
        width[c] = head[c].size();
        for (const auto& row : rows)
            width[c] = std::max(width[c], row[c].size() - (row[c].find("\xC2\xB5") != std::string::npos ? 1 : 0));
    }
    std::ostringstream out;
    auto line = [&](const std::vector<std::string>& cells) {
        for (std::size_t c = 0; c < cells.size(); ++c) {
            const std::size_t shown = cells[c].size() - (cells[c].find("\xC2\xB5") != std::string::npos ? 1 : 0);
            const std::string pad(width[c] - shown, ' ');
            out << (c == 0 ? cells[c] + pad : pad + cells[c]) << (c + 1 < cells.size() ? "  " : "\n");
        }
    };
    line(head);
    for (const auto& row : rows)
        line(row);
    out << "\nPer-step means over all ranks, each value inside the step's window on the GPU (from the end of the\n"
           "previous step's GPU work to the end of the GPU work launched in the step; the CPU region when the trace\n"
           "links no launches), and the steps each mean covers: a rank's first step is start-up and\n"
           "left out when it lasts more than "
        << kStartupFactor << "x the median of its later steps (as in 'exposure-cli stats');\n";
    for (const auto& r : runs)
        if (r.stepsLeftOut > 0 || !r.stepsCovered.empty())
            out << "  " << shortName(r.trace) << ": " << r.stepsCovered
                << (r.stepsLeftOut > 0 ? "; " + std::to_string(r.stepsLeftOut) + " (rank, step) pairs left out" : "")
                << "\n";
    out << "hidden = communication overlapped by compute; exposed = communication with no compute running;\n"
           "waiting / transfer = NCCL time before / after the last rank joined each collective (matched across\n"
           "ranks by process group and order); efficiency = the baseline's (first run's) step time / this run's step "
           "time, for weak\n"
           "scaling: runs with different GPU counts and the same per-GPU workload.\n";
    if (sameCount)
        out << "Note: runs with the baseline's GPU count have no efficiency; compare them by their step time.\n";
    return out.str();
}

std::string compareJson(const std::vector<RunSummary>& runs)
{
    std::string out;
    JsonWriter j(out);
    j.beginObject().key("runs").beginArray();
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& r = runs[i];
        // The baseline is 100 % by definition; a run with its GPU count has none.
        const auto eff = i == 0 ? std::optional<double>(1.0) : weakScalingEfficiency(runs.front(), r);
        const EfficiencyNote note = efficiencyNote(runs.front(), r, i == 0);
        j.beginObject()
            .field("trace", r.trace)
            .field("ranks", r.ranks)
            .field("hosts", r.hosts)
            .field("steps_used", r.stepsUsed)
            .field("steps_left_out", r.stepsLeftOut)
            .field("steps_covered", r.stepsCovered)
            .field("step_source", stepSourceName(r.stepSource))
            .field("step_ns", r.stepNs)
            .field("compute_busy_ns", r.computeNs)
            .field("comm_busy_ns", r.commBusyNs)
            .field("comm_kernel_sum_ns", r.commKernelSumNs)
            .field("overlapped_ns", r.hiddenNs)
            .field("exposed_ns", r.exposedNs)
            .field("idle_ns", r.idleNs);
        if (r.overlapRatio)
            j.fixedField("overlap_ratio", *r.overlapRatio, 6);
        else
            j.nullField("overlap_ratio");
        j.field("worst_exposed_ns", r.worstExposedNs)
            .field("worst_exposed_rank", r.worstExposedRank)
            .field("comm_wait_ns", r.waitNs)
            .field("comm_transfer_ns", r.transferNs)
            .field("unmatched_collectives", r.unmatchedCollectives);
        if (eff)
            j.fixedField("efficiency", *eff, 6);
        else
            j.nullField("efficiency");
        if (note == EfficiencyNote::None)
            j.nullField("efficiency_note");
        else
            j.field("efficiency_note", efficiencyNoteText(note));
        j.endObject();
    }
    j.endArray().endObject();
    return out + "\n";
}

} // namespace exposure
