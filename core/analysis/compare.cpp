// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/compare.h"

#include "analysis/stepmean.h"
#include "model/enumnames.h"

#include <algorithm>
#include <set>

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

} // namespace exposure
