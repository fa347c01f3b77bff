// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/statsparts.h"

#include "analysis/gpuwork_p.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>

namespace exposure {

RankReport rankReport(
    const Trace& trace, const Analysis& analysis, int rankIndex, const StatsReportOptions& o, bool stepIdle)
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
        s.name = w.name;
        s.range = w.range;
        s.hostRange = w.hostRange;
        s.stats = stepStats[k];
        if (stepIdle)
            s.idle = sumIdleGaps(idleGapsCut(trace, analysis, rankIndex, w.range.intersected(o.window)));
        r.steps.push_back(std::move(s));
    }
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
            if (fresh) {
                row.category = nc.category;
                row.subgroup = nc.subgroup;
                row.minNs = d;
                row.maxNs = d;
            }
            ++row.count;
            row.totalNs += d;
            row.minNs = std::min(row.minNs, d);
            row.maxNs = std::max(row.maxNs, d);
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
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const Rank& rank = trace.ranks[r];
        const int global = globalIndexOf.empty() ? int(r) : globalIndexOf.at(r);
        for (std::size_t l = 0; l < rank.lanes.size(); ++l) {
            const Lane& lane = rank.lanes[l];
            if (!lane.isGpu())
                continue;
            const auto& t = lane.intervals;
            for (std::size_t i = 0; i < t.size(); ++i) {
                const StringId name = t.name(i);
                if (analysis.classOf(name).category != Category::Communication)
                    continue;
                auto [it, fresh] = nameIndex.try_emplace(name, std::uint32_t(out.names.size()));
                if (fresh)
                    out.names.push_back(trace.name(name));
                out.items.push_back({ t.start(i), t.end(i), global, int(l), std::uint32_t(i), it->second });
            }
        }
    }
    return out;
}

StatsReport buildStatsReport(const Trace& trace, const Analysis& analysis, const StatsReportOptions& o, bool stepIdle)
{
    StatsReport report;
    report.tracePath = trace.sourcePath;
    report.rulesSource = analysis.rules.source();
    report.traceWarnings = trace.warnings;
    std::set<std::string> hosts;
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        report.ranks.push_back(rankReport(trace, analysis, int(r), o, stepIdle));
        hosts.insert(trace.ranks[r].host);
    }
    CollectiveCandidates candidates = collectiveCandidates(trace, analysis);
    const CollectiveMatch match = matchCandidates(std::move(candidates.items), trace.ranks.size(), hosts.size() > 1);
    const auto waits = waitParts(match);
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        report.ranks[r].collectives = match.ranks[r];
        report.ranks[r].collectives.exposedWaitNs = exposedWait(waits[r], analysis.ranks[r]);
        fillStepCollectives(report.ranks[r], match, int(r), o.window);
    }
    report.anyCollectiveGroup = !match.groups.empty();
    report.multipleHosts = match.multipleHosts;
    report.kernels = kernelRows(kernelParts(trace, analysis, o.window));
    return report;
}

// ---- serialization ----

namespace {

class Writer
{
public:
    template <typename T> void pod(const T& v)
    {
        static_assert(std::is_trivially_copyable_v<T>);
        m_out.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    void str(const std::string& s)
    {
        pod(std::uint64_t(s.size()));
        m_out += s;
    }
    void stats(const WindowStats& s)
    {
        pod(s.kernelCount);
        pod(s.commKernelCount);
        pod(s.commKernelSumNs);
        pod(s.commBusyNs);
        pod(s.computeBusyNs);
        pod(s.overlappedNs);
        pod(s.exposedNs);
        pod(std::uint8_t(s.overlapRatio.has_value()));
        pod(s.overlapRatio.value_or(0.0));
        pod(s.backwardOverlappedNs);
        pod(s.memcpyBusyNs);
        pod(s.gpuBusyNs);
        pod(s.spanNs);
        pod(s.idleNs);
        pod(s.unclassifiedNs);
    }
    std::string take() { return std::move(m_out); }

private:
    std::string m_out;
};

class Reader
{
public:
    explicit Reader(std::string_view in)
        : m_in(in)
    { }
    template <typename T> T pod()
    {
        static_assert(std::is_trivially_copyable_v<T>);
        if (m_in.size() - m_pos < sizeof(T))
            throw std::runtime_error("truncated statistics message");
        T v;
        std::memcpy(&v, m_in.data() + m_pos, sizeof v);
        m_pos += sizeof v;
        return v;
    }
    std::string str()
    {
        const auto n = pod<std::uint64_t>();
        if (m_in.size() - m_pos < n)
            throw std::runtime_error("truncated statistics message");
        std::string s(m_in.substr(m_pos, std::size_t(n)));
        m_pos += std::size_t(n);
        return s;
    }
    WindowStats stats()
    {
        WindowStats s;
        s.kernelCount = pod<std::uint64_t>();
        s.commKernelCount = pod<std::uint64_t>();
        s.commKernelSumNs = pod<TimeNs>();
        s.commBusyNs = pod<TimeNs>();
        s.computeBusyNs = pod<TimeNs>();
        s.overlappedNs = pod<TimeNs>();
        s.exposedNs = pod<TimeNs>();
        const bool hasRatio = pod<std::uint8_t>() != 0;
        const double ratio = pod<double>();
        if (hasRatio)
            s.overlapRatio = ratio;
        s.backwardOverlappedNs = pod<TimeNs>();
        s.memcpyBusyNs = pod<TimeNs>();
        s.gpuBusyNs = pod<TimeNs>();
        s.spanNs = pod<TimeNs>();
        s.idleNs = pod<TimeNs>();
        s.unclassifiedNs = pod<TimeNs>();
        return s;
    }
    void expectEnd() const
    {
        if (m_pos != m_in.size())
            throw std::runtime_error("statistics message longer than expected");
    }

private:
    std::string_view m_in;
    std::size_t m_pos = 0;
};

static_assert(std::is_trivially_copyable_v<IdleBreakdown>);
static_assert(std::is_trivially_copyable_v<LaunchDiagnosis>);
static_assert(std::is_trivially_copyable_v<RankCollectiveStats>);
static_assert(std::is_trivially_copyable_v<CollectiveCandidate>);

} // namespace

std::string serialize(const RankReport& r)
{
    Writer w;
    w.pod(r.rank);
    w.str(r.label);
    w.str(r.host);
    w.pod(r.device);
    w.stats(r.stats);
    w.pod(r.phaseSource);
    w.pod(r.phaseFromLaunch);
    w.pod(r.phaseFromName);
    w.pod(r.phaseFromHeuristic);
    w.pod(r.phaseUnknown);
    w.pod(r.launchPairing);
    w.pod(r.kernelsPaired);
    w.pod(r.kernelsUnpaired);
    w.pod(r.idle);
    w.pod(r.launches);
    w.pod(r.stepSource);
    w.pod(std::uint8_t(r.stepsByLaunch));
    w.pod(r.stepAxis);
    w.pod(r.stepCount);
    w.pod(std::uint64_t(r.steps.size()));
    for (const StepReport& s : r.steps) {
        w.pod(s.index);
        w.str(s.name);
        w.pod(s.range);
        w.pod(s.hostRange);
        w.stats(s.stats);
        w.pod(s.idle);
        w.pod(s.waitNs);
        w.pod(s.transferNs);
    }
    w.pod(r.collectives);
    w.pod(std::uint64_t(r.warnings.size()));
    for (const auto& s : r.warnings)
        w.str(s);
    return w.take();
}

RankReport deserializeRankReport(std::string_view bytes)
{
    Reader in(bytes);
    RankReport r;
    r.rank = in.pod<int>();
    r.label = in.str();
    r.host = in.str();
    r.device = in.pod<int>();
    r.stats = in.stats();
    r.phaseSource = in.pod<PhaseSource>();
    r.phaseFromLaunch = in.pod<std::uint64_t>();
    r.phaseFromName = in.pod<std::uint64_t>();
    r.phaseFromHeuristic = in.pod<std::uint64_t>();
    r.phaseUnknown = in.pod<std::uint64_t>();
    r.launchPairing = in.pod<LaunchPairing>();
    r.kernelsPaired = in.pod<std::uint64_t>();
    r.kernelsUnpaired = in.pod<std::uint64_t>();
    r.idle = in.pod<IdleBreakdown>();
    r.launches = in.pod<LaunchDiagnosis>();
    r.stepSource = in.pod<StepSource>();
    r.stepsByLaunch = in.pod<std::uint8_t>() != 0;
    r.stepAxis = in.pod<StepAxis>();
    r.stepCount = in.pod<std::uint64_t>();
    const auto steps = in.pod<std::uint64_t>();
    for (std::uint64_t k = 0; k < steps; ++k) {
        StepReport s;
        s.index = in.pod<int>();
        s.name = in.str();
        s.range = in.pod<TimeRange>();
        s.hostRange = in.pod<TimeRange>();
        s.stats = in.stats();
        s.idle = in.pod<IdleBreakdown>();
        s.waitNs = in.pod<TimeNs>();
        s.transferNs = in.pod<TimeNs>();
        r.steps.push_back(std::move(s));
    }
    r.collectives = in.pod<RankCollectiveStats>();
    const auto warnings = in.pod<std::uint64_t>();
    for (std::uint64_t k = 0; k < warnings; ++k)
        r.warnings.push_back(in.str());
    in.expectEnd();
    return r;
}

std::string serialize(const KernelParts& k)
{
    Writer w;
    w.pod(k.gpuTotalNs);
    w.pod(std::uint64_t(k.rows.size()));
    for (const KernelPart& p : k.rows) {
        w.str(p.name);
        w.str(p.displayName);
        w.pod(p.category);
        w.str(p.subgroup);
        w.pod(p.phaseCount);
        w.pod(p.count);
        w.pod(p.totalNs);
        w.pod(p.minNs);
        w.pod(p.maxNs);
    }
    return w.take();
}

KernelParts deserializeKernelParts(std::string_view bytes)
{
    Reader in(bytes);
    KernelParts k;
    k.gpuTotalNs = in.pod<TimeNs>();
    const auto n = in.pod<std::uint64_t>();
    for (std::uint64_t i = 0; i < n; ++i) {
        KernelPart p;
        p.name = in.str();
        p.displayName = in.str();
        p.category = in.pod<Category>();
        p.subgroup = in.str();
        p.phaseCount = in.pod<std::array<std::uint64_t, 4>>();
        p.count = in.pod<std::uint64_t>();
        p.totalNs = in.pod<TimeNs>();
        p.minNs = in.pod<TimeNs>();
        p.maxNs = in.pod<TimeNs>();
        k.rows.push_back(std::move(p));
    }
    in.expectEnd();
    return k;
}

std::string serialize(const CollectiveCandidates& c)
{
    Writer w;
    w.pod(std::uint64_t(c.names.size()));
    for (const auto& n : c.names)
        w.str(n);
    w.pod(std::uint64_t(c.items.size()));
    std::string out = w.take();
    if (!c.items.empty())
        out.append(reinterpret_cast<const char*>(c.items.data()), c.items.size() * sizeof(CollectiveCandidate));
    return out;
}

CollectiveCandidates deserializeCollectiveCandidates(std::string_view bytes)
{
    Reader in(bytes);
    CollectiveCandidates c;
    const auto names = in.pod<std::uint64_t>();
    for (std::uint64_t i = 0; i < names; ++i)
        c.names.push_back(in.str());
    const auto n = in.pod<std::uint64_t>();
    c.items.reserve(std::size_t(n));
    for (std::uint64_t i = 0; i < n; ++i) {
        c.items.push_back(in.pod<CollectiveCandidate>());
        if (c.items.back().name >= c.names.size())
            throw std::runtime_error("statistics message: bad name index");
    }
    in.expectEnd();
    return c;
}

} // namespace exposure
