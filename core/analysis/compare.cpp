// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/compare.h"

#include "analysis/stepmean.h"
#include "model/enumnames.h"
#include "model/timeformat.h"
#include "report/statsreport.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

namespace exposure {

RunSummary summarizeRun(const Trace& trace, const Analysis& analysis, const CompareOptions& options)
{
    RunSummary s;
    s.trace = trace.sourcePath;
    s.ranks = int(trace.ranks.size());
    std::set<std::string> hosts;
    for (const auto& r : trace.ranks)
        hosts.insert(r.host);
    s.hosts = int(hosts.size());
    if (!analysis.ranks.empty())
        s.stepSource = analysis.ranks.front().stepSource;

    // Sums over the (rank, step) pairs used, all over each step's window; per-rank sums of exposed time to find the
    // worst rank.
    const auto match = matchCollectives(trace, analysis);
    WindowStats sum; // over every pair
    TimeNs step = 0, wait = 0, transfer = 0;
    int pairs = 0;
    for (int r = 0; r < s.ranks; ++r) {
        const RankCollectiveParts collectives(match, r);
        const auto& ra = analysis.ranks[std::size_t(r)];
        const auto perStep = computeStepStats(trace, analysis, r);
        std::vector<std::pair<TimeRange, WindowStats>> rows;
        if (perStep.empty()) {
            const auto w = computeStats(trace, analysis, r, activityRange(trace));
            rows.push_back({ TimeRange { 0, w.spanNs }, w });
            const CollectiveSplit split = collectives.in(activityRange(trace));
            wait += split.waitNs;
            transfer += split.transferNs;
        } else {
            std::vector<std::size_t> all(perStep.size());
            for (std::size_t k = 0; k < all.size(); ++k)
                all[k] = k;
            const StepMean mean
                = options.skipSteps < 0 ? stepMean(ra.steps, all) : stepMeanSkipping(ra.steps, all, options.skipSteps);
            for (const std::size_t k : mean.used) {
                rows.push_back({ ra.steps[k].range, perStep[k] });
                const CollectiveSplit split = collectives.in(ra.steps[k].range);
                wait += split.waitNs;
                transfer += split.transferNs;
            }
            s.stepsLeftOut += int(mean.startup.size());
            if (r == 0)
                s.stepsCovered = mean.describe(ra.steps);
        }
        TimeNs rankExposed = 0;
        for (const auto& [range, w] : rows) {
            step += range.duration();
            accumulate(sum, w);
            rankExposed += w.exposedNs;
            ++pairs;
        }
        const TimeNs meanRankExposed = rows.empty() ? 0 : rankExposed / TimeNs(rows.size());
        if (s.worstExposedRank < 0 || meanRankExposed > s.worstExposedNs) {
            s.worstExposedNs = meanRankExposed;
            s.worstExposedRank = trace.ranks[std::size_t(r)].rank;
        }
        if (!perStep.empty())
            s.stepsUsed += int(rows.size());
    }
    if (pairs > 0) {
        s.stepNs = TimeNs(step / pairs);
        s.computeNs = TimeNs(sum.computeBusyNs / pairs);
        s.commBusyNs = TimeNs(sum.commBusyNs / pairs);
        s.commKernelSumNs = TimeNs(sum.commKernelSumNs / pairs);
        s.hiddenNs = TimeNs(sum.overlappedNs / pairs);
        s.exposedNs = TimeNs(sum.exposedNs / pairs);
        s.idleNs = TimeNs(sum.idleNs / pairs);
        s.waitNs = TimeNs(wait / pairs);
        s.transferNs = TimeNs(transfer / pairs);
    }
    if (sum.commBusyNs > 0)
        s.overlapRatio = double(sum.overlappedNs) / double(sum.commBusyNs);

    for (const auto& rc : match.ranks)
        s.unmatchedCollectives += rc.unmatched;
    return s;
}

std::optional<double> weakScalingEfficiency(const RunSummary& base, const RunSummary& r)
{
    if (base.stepNs <= 0 || r.stepNs <= 0 || base.ranks == r.ranks)
        return std::nullopt;
    return double(base.stepNs) / double(r.stepNs);
}

EfficiencyNote efficiencyNote(const RunSummary& base, const RunSummary& r, bool isBase)
{
    if (isBase)
        return EfficiencyNote::Baseline;
    if (base.ranks == r.ranks)
        return EfficiencyNote::SameGpuCount;
    if (base.stepNs <= 0 || r.stepNs <= 0)
        return EfficiencyNote::NoStepTime;
    return EfficiencyNote::None;
}

const char* efficiencyNoteText(EfficiencyNote note)
{
    static constexpr EnumName<EfficiencyNote> names[] = { { EfficiencyNote::None, "" },
        { EfficiencyNote::Baseline, "baseline" }, { EfficiencyNote::SameGpuCount, "same GPU count as the baseline" },
        { EfficiencyNote::NoStepTime, "no step time" } };
    return nameIn(names, note, "");
}

void orderByGpuCount(std::vector<RunSummary>& runs)
{
    std::stable_sort(
        runs.begin(), runs.end(), [](const RunSummary& a, const RunSummary& b) { return a.ranks < b.ranks; });
}

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
    std::ostringstream o;
    o << "{\"runs\": [";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& r = runs[i];
        // The baseline is 100 % by definition; a run with its GPU count has none.
        const auto eff = i == 0 ? std::optional<double>(1.0) : weakScalingEfficiency(runs.front(), r);
        const EfficiencyNote note = efficiencyNote(runs.front(), r, i == 0);
        o << (i ? ", " : "") << "{\"trace\": " << jsonQuoted(r.trace) << ", \"ranks\": " << r.ranks
          << ", \"hosts\": " << r.hosts << ", \"steps_used\": " << r.stepsUsed
          << ", \"steps_left_out\": " << r.stepsLeftOut << ", \"steps_covered\": " << jsonQuoted(r.stepsCovered)
          << ", \"step_source\": " << jsonQuoted(stepSourceName(r.stepSource)) << ", \"step_ns\": " << r.stepNs
          << ", \"compute_busy_ns\": " << r.computeNs << ", \"comm_busy_ns\": " << r.commBusyNs
          << ", \"comm_kernel_sum_ns\": " << r.commKernelSumNs << ", \"overlapped_ns\": " << r.hiddenNs
          << ", \"exposed_ns\": " << r.exposedNs << ", \"idle_ns\": " << r.idleNs << ", \"overlap_ratio\": ";
        if (r.overlapRatio) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.6f", *r.overlapRatio);
            o << buf;
        } else {
            o << "null";
        }
        o << ", \"worst_exposed_ns\": " << r.worstExposedNs << ", \"worst_exposed_rank\": " << r.worstExposedRank
          << ", \"comm_wait_ns\": " << r.waitNs << ", \"comm_transfer_ns\": " << r.transferNs
          << ", \"unmatched_collectives\": " << r.unmatchedCollectives << ", \"efficiency\": ";
        if (eff) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.6f", *eff);
            o << buf;
        } else {
            o << "null";
        }
        o << ", \"efficiency_note\": "
          << (note == EfficiencyNote::None ? std::string("null") : jsonQuoted(efficiencyNoteText(note))) << "}";
    }
    o << "]}\n";
    return o.str();
}

} // namespace exposure
