// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/statsparts.h"

#include "analysis/clockalign.h"
#include "analysis/gpuwork_p.h"
#include "analysis/grouplayout.h"
#include "analysis/kernelop.h"
#include "model/parallelfor.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

namespace exposure {

RankReport rankReport(const Trace& trace, const Analysis& analysis, int rankIndex, const StatsReportOptions& o,
    bool stepIdle, const SharedGroupLayout* layout)
{
    const Rank& rank = trace.ranks.at(std::size_t(rankIndex));
    const RankAnalysis& ra = analysis.ranks.at(std::size_t(rankIndex));
    RankReport r;
    r.rank = rank.rank;
    r.label = rank.label;
    r.host = rank.host;
    r.device = rank.devices.empty() ? -1 : rank.devices[0];
    r.stats = computeStats(trace, analysis, rankIndex, o.window);
    r.phaseSource = ra.phaseSource;
    r.phaseFromLaunch = ra.phaseFromLaunch;
    r.phaseFromName = ra.phaseFromName;
    r.phaseFromHeuristic = ra.phaseFromHeuristic;
    r.phaseUnknown = ra.phaseUnknown;
    r.launchPairing = ra.launchPairing;
    r.kernelsPaired = ra.kernelsPaired;
    r.kernelsUnpaired = ra.kernelsUnpaired;
    r.kernelsPerCall = ra.launchCalls.kernelsPerCall();
    r.idle = computeIdleBreakdown(trace, analysis, rankIndex, o.window);
    r.launches = diagnoseLaunches(trace, analysis, rankIndex, o.window);
    r.stepSource = ra.stepSource;
    r.stepsByLaunch = ra.stepsByLaunch;
    r.stepAxis = ra.stepAxis;
    r.stepCount = ra.steps.size();
    const auto stepStats = computeStepStats(trace, analysis, rankIndex, o.window);
    for (std::size_t k = 0; k < ra.steps.size(); ++k) {
        const StepWindow& w = ra.steps[k];
        // Steps whose window intersects the report window (all of them for the whole trace).
        if (!(w.range.intersects(o.window) || w.range.isEmpty()))
            continue;
        StepReport s;
        s.index = w.index;
        s.number = w.number;
        s.name = w.name;
        s.range = w.range;
        s.hostRange = w.hostRange;
        s.stats = stepStats[k];
        if (stepIdle)
            s.idle = sumIdleGaps(idleGapsCut(trace, analysis, rankIndex, w.range.intersected(o.window)));
        r.steps.push_back(std::move(s));
    }
    const SharedGroupLayout own(trace); // inferred only if needed and no shared layout is given
    const SharedGroupLayout& groups = layout ? *layout : own;
    r.commOps = commOperations(trace, analysis, rankIndex, o.window, &groups);
    r.coords = rank.coords;
    // A rank of a job with several parallelism roles: its coordinates in the grid the groups' layout gives, where the
    // trace gives none (analysis/grouplayout.h).
    if (!r.coords.known() && r.commOps.roles.size() > 1)
        r.coords = groups.get().coordsOf(rank.rank);
    r.warnings = ra.warnings;
    return r;
}

void fillStepCollectives(RankReport& r, const CollectiveMatch& match, int rank, TimeRange window)
{
    const RankCollectiveParts parts(match, rank);
    for (StepReport& s : r.steps) {
        const CollectiveSplit split = parts.in(s.range.intersected(window));
        s.waitNs = split.waitNs;
        s.transferNs = split.transferNs;
    }
    for (CommOpReport& op : r.commOps.ops) {
        op.waitNs = op.transferNs = op.queuedNs = 0;
        op.queuedBehind.clear();
    }
    for (CommRoleReport& role : r.commOps.roles)
        role.waitNs = role.transferNs = 0;
    fillCommOpCollectives(r.commOps, match, rank, window);
}

std::map<int, TimeRange> reportJobWindows(const StatsReport& report)
{
    std::vector<std::vector<StepWindow>> steps(report.ranks.size());
    for (std::size_t r = 0; r < report.ranks.size(); ++r)
        for (const StepReport& s : report.ranks[r].steps)
            steps[r].push_back({ s.index, s.name, s.range, s.hostRange });
    return jobStepWindows(steps);
}

void fillStepBubbles(RankReport& r, const Trace& trace, const Analysis& analysis, int rankIndex,
    const std::map<int, TimeRange>& jobWindows, TimeRange window)
{
    for (StepReport& s : r.steps) {
        const auto it = jobWindows.find(s.index);
        if (it == jobWindows.end())
            continue;
        const TimeRange w = it->second.intersected(window);
        s.bubbleNs = w.isEmpty() ? 0 : w.duration() - computeStats(trace, analysis, rankIndex, w).computeBusyNs;
    }
}

void fillPeerWaits(StatsReport& report, const CollectiveMatch& match, TimeRange window)
{
    const auto labelOf = [&report](int r) {
        return std::size_t(r) < report.ranks.size() ? report.ranks[std::size_t(r)].label : std::string();
    };
    for (std::size_t r = 0; r < report.ranks.size(); ++r)
        report.ranks[r].peers = peerWaitInWindow(match, labelOf, int(r), window);
}

KernelParts kernelParts(
    const Trace& trace, const Analysis& analysis, TimeRange window, const std::vector<int>& rankIndexes)
{
    std::unordered_map<StringId, KernelPart> byName;
    KernelParts out;
    auto addRank = [&](std::size_t r) {
        detail::forEachGpuWork(trace, analysis, r, window, [&](StringId id, const NameClass& nc, TimeNs d, Phase p) {
            out.gpuTotalNs += d;
            auto [it, fresh] = byName.try_emplace(id);
            KernelPart& row = it->second;
            detail::addKernelInstance(row, fresh, nc, d);
            ++row.phaseCount[std::size_t(p)];
        });
    };
    if (rankIndexes.empty()) {
        for (std::size_t r = 0; r < trace.ranks.size(); ++r)
            addRank(r);
    } else {
        for (const int r : rankIndexes)
            addRank(std::size_t(r));
    }
    out.rows.reserve(byName.size());
    for (auto& [id, part] : byName) {
        part.name = trace.name(id);
        part.displayName = analysis.names[id].displayName;
        out.rows.push_back(std::move(part));
    }
    std::sort(
        out.rows.begin(), out.rows.end(), [](const KernelPart& a, const KernelPart& b) { return a.name < b.name; });
    return out;
}

void mergeKernelParts(KernelParts& into, const KernelParts& other)
{
    into.gpuTotalNs += other.gpuTotalNs;
    std::vector<KernelPart> merged;
    merged.reserve(into.rows.size() + other.rows.size());
    std::size_t i = 0, j = 0;
    while (i < into.rows.size() || j < other.rows.size()) {
        if (j == other.rows.size() || (i < into.rows.size() && into.rows[i].name < other.rows[j].name)) {
            merged.push_back(std::move(into.rows[i++]));
        } else if (i == into.rows.size() || other.rows[j].name < into.rows[i].name) {
            merged.push_back(other.rows[j++]);
        } else {
            KernelPart a = std::move(into.rows[i++]);
            const KernelPart& b = other.rows[j++];
            a.count += b.count;
            a.totalNs += b.totalNs;
            a.minNs = std::min(a.minNs, b.minNs);
            a.maxNs = std::max(a.maxNs, b.maxNs);
            for (std::size_t p = 0; p < a.phaseCount.size(); ++p)
                a.phaseCount[p] += b.phaseCount[p];
            merged.push_back(std::move(a));
        }
    }
    into.rows = std::move(merged);
}

std::vector<KernelReportRow> kernelRows(const KernelParts& parts)
{
    std::vector<KernelReportRow> rows;
    rows.reserve(parts.rows.size());
    for (const KernelPart& k : parts.rows) {
        KernelReportRow row;
        row.name = k.name;
        row.displayName = k.displayName;
        row.category = k.category;
        row.subgroup = k.subgroup;
        row.count = k.count;
        row.totalNs = k.totalNs;
        row.minNs = k.minNs;
        row.maxNs = k.maxNs;
        row.meanNs = double(k.totalNs) / double(k.count);
        row.gpuShare = parts.gpuTotalNs > 0 ? double(k.totalNs) / double(parts.gpuTotalNs) : 0.0;
        // The phase most instances have; ties go to the earlier enum value (unknown first).
        const auto best = std::max_element(k.phaseCount.begin(), k.phaseCount.end());
        row.phase = Phase(best - k.phaseCount.begin());
        rows.push_back(std::move(row));
    }
    std::sort(rows.begin(), rows.end(), [](const KernelReportRow& a, const KernelReportRow& b) {
        if (a.totalNs != b.totalNs)
            return a.totalNs > b.totalNs;
        return a.name < b.name;
    });
    return rows;
}

CollectiveCandidates collectiveCandidates(
    const Trace& trace, const Analysis& analysis, const std::vector<int>& globalIndexOf)
{
    CollectiveCandidates out;
    std::unordered_map<StringId, std::uint32_t> nameIndex;
    // Identity and signature keys share the names table (they start with '\x1e', which no kernel name does).
    std::unordered_map<std::string, std::uint32_t> keyIndex;
    auto intern = [&](const std::string& text) {
        auto [it, fresh] = keyIndex.try_emplace(text, std::uint32_t(out.names.size()));
        if (fresh)
            out.names.push_back(text);
        return it->second;
    };
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const Rank& rank = trace.ranks[r];
        const int global = globalIndexOf.empty() ? int(r) : globalIndexOf.at(r);
        forEachGpuInterval(rank, [&](std::size_t l, const Lane& lane, std::size_t i) {
            const auto& t = lane.intervals;
            const StringId name = t.name(i);
            // Op-level timer lanes (Chrome traces' ROLE-comm lanes) hold operations, not kernels: below.
            if (lane.commRole != CommRole::None || analysis.classOf(name).category != Category::Communication)
                return;
            auto [it, fresh] = nameIndex.try_emplace(name, std::uint32_t(out.names.size()));
            if (fresh)
                out.names.push_back(trace.name(name));
            CollectiveCandidate c { t.start(i), t.end(i), global, int(l), std::uint32_t(i), it->second };
            identifyCandidate(lane, std::uint32_t(i), trace, c, intern, rank.rank);
            if (std::string group, sig; batchedP2pIdentity(trace, lane, std::uint32_t(i), rank.rank, group, sig)) {
                c.group = intern(group);
                c.signature = intern(sig);
                c.seq = kNoCollectiveSeq;
            }
            out.items.push_back(c);
        });
    }
    std::unordered_map<std::uint32_t, StringId> kernelOf; // the kernel names' indexes in out.names
    for (const auto& [id, index] : nameIndex)
        kernelOf.emplace(index, id);
    auto opText = [&](std::uint32_t name) {
        const auto it = kernelOf.find(name);
        return it == kernelOf.end() ? out.names[name] : kernelOpText(trace, analysis, it->second);
    };
    markQueued(out.items, out.names, opText, intern);
    auto nameOf = [&](StringId name) {
        auto [it, fresh] = nameIndex.try_emplace(name, std::uint32_t(out.names.size()));
        if (fresh)
            out.names.push_back(trace.name(name));
        return it->second;
    };
    std::vector<CollectiveCandidate> ops = opLevelCandidates(trace, analysis, intern, nameOf, globalIndexOf);
    out.items.insert(out.items.end(), ops.begin(), ops.end());
    return out;
}

void addCrossRank(StatsReport& report, const CollectiveMatch& match, const Rules& rules)
{
    report.anyCollectiveGroup = !match.groups.empty();
    report.multipleHosts = match.multipleHosts;
    report.processGroups = match.processGroups;
    for (ProcessGroupMatch& pg : report.processGroups)
        for (int& m : pg.members)
            m = std::size_t(m) < report.ranks.size() ? report.ranks[std::size_t(m)].rank : m;
    const auto& keys = match.keys;
    report.collectiveSummary = collectiveSummary(
        match, rules, [&](std::uint32_t name) { return name < keys.size() ? keys[name] : std::string(); });
    report.stragglers = stragglerSummary(match);
}

StatsReport buildStatsReport(const Trace& trace, const Analysis& analysis, const StatsReportOptions& o, bool stepIdle)
{
    StatsReport report;
    report.tracePath = trace.sourcePath;
    report.rulesSource = analysis.rules.source();
    report.traceWarnings = trace.warnings;
    std::set<std::string> hosts;
    // Each rank's report from that rank alone: on all cores.
    report.ranks.resize(trace.ranks.size());
    const SharedGroupLayout layout(trace);
    parallelFor(trace.ranks.size(), workerCount(trace.ranks.size()),
        [&](std::size_t r) { report.ranks[r] = rankReport(trace, analysis, int(r), o, stepIdle, &layout); });
    for (const Rank& rank : trace.ranks)
        hosts.insert(rank.host);
    CollectiveCandidates candidates = collectiveCandidates(trace, analysis);
    const CollectiveMatch match
        = matchCandidates(std::move(candidates.items), trace.ranks.size(), hosts.size() > 1, 200'000, candidates.names);
    const auto waits = waitParts(match);
    // On all cores too (serial, this took 2 s at 1 024 ranks): each rank's own report from shared read-only data.
    parallelFor(trace.ranks.size(), workerCount(trace.ranks.size()), [&](std::size_t r) {
        report.ranks[r].collectives = match.ranks[r];
        report.ranks[r].collectives.exposedWaitNs = exposedWait(waits[r], analysis.ranks[r]);
        fillStepCollectives(report.ranks[r], match, int(r), o.window);
    });
    const std::map<int, TimeRange> jobWindows = reportJobWindows(report);
    parallelFor(trace.ranks.size(), workerCount(trace.ranks.size()),
        [&](std::size_t r) { fillStepBubbles(report.ranks[r], trace, analysis, int(r), jobWindows, o.window); });
    fillPeerWaits(report, match, o.window);
    report.clocks = trace.clocks;
    report.clockLine = clockSummaryLine(trace);
    addCrossRank(report, match, analysis.rules);
    report.kernels = kernelRows(kernelParts(trace, analysis, o.window));
    return report;
}

} // namespace exposure
