// SPDX-License-Identifier: GPL-3.0-or-later
// WhatIfModel: the graph and the unedited replay of a trace, the step windows mapped onto replayed times, and the
// replay of edits compared with both.
#include "analysis/stepmean.h"
#include "whatif/whatif.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace exposure::whatif {

namespace {

// The event of the rank recorded last at or before t (ties: an end event for a step's end, a start event for its
// start; GPU work before host pieces), with the offset from it to t.
Anchor nearestEvent(const Graph& g, const Trace& trace, int rank, TimeNs t, bool isEnd)
{
    Anchor best;
    TimeNs bestRec = std::numeric_limits<TimeNs>::min();
    int bestScore = -1;
    auto consider = [&](TimeNs rec, std::uint32_t ev, bool gpu) {
        const int score = ((ev & 1) == (isEnd ? 1u : 0u) ? 2 : 0) + (gpu ? 1 : 0);
        if (rec > bestRec || (rec == bestRec && score > bestScore)) {
            bestRec = rec;
            bestScore = score;
            best = { ev, t - rec };
        }
    };
    const Rank& r = trace.ranks[std::size_t(rank)];
    for (std::size_t l = 0; l < r.lanes.size(); ++l) {
        const LaneNodes& ln = g.laneNodes(rank, int(l));
        const auto first = g.recStart.begin() + ln.first;
        const auto idx = std::size_t(std::upper_bound(first, first + ln.count, t) - first);
        if (idx == 0)
            continue;
        const std::uint32_t n = ln.first + std::uint32_t(idx - 1);
        const bool gpu = r.lanes[l].isGpu();
        consider(g.recStart[n], 2 * n, gpu);
        if (g.recEnd[n] <= t)
            consider(g.recEnd[n], 2 * n + 1, gpu);
        else if (idx >= 2)
            consider(g.recEnd[n - 1], 2 * n - 1, gpu);
    }
    return best;
}

std::vector<StepAnchors> anchorSteps(const Graph& g, const Trace& trace, const Analysis& a, int rank)
{
    const RankAnalysis& ra = a.ranks[std::size_t(rank)];
    struct RegionStep
    {
        TimeNs start, end;
        std::uint32_t first, last;
        bool operator<(const RegionStep& o) const { return start < o.start; }
    };
    std::vector<RegionStep> regions;
    // A Chrome timeline's step lane is drawn from its operations (first start to last end of a step's ones), no
    // thread of the program: its steps are anchored to those operations (nearestEvent) and move with them.
    const Rank& r = trace.ranks[std::size_t(rank)];
    const bool opLevel
        = std::any_of(r.lanes.begin(), r.lanes.end(), [](const Lane& l) { return l.commRole != CommRole::None; });
    if (ra.stepSource == StepSource::Regions && !opLevel) {
        for (std::size_t l = 0; l < r.lanes.size(); ++l) {
            if (r.lanes[l].isGpu())
                continue;
            const IntervalTable& t = r.lanes[l].intervals;
            const LaneNodes& ln = g.laneNodes(rank, int(l));
            for (std::size_t i = 0; i < t.size(); ++i)
                if (a.names[t.name(i)].stepRegion && ln.firstPiece[i] != kNone)
                    regions.push_back({ t.start(i), t.end(i), ln.firstPiece[i], ln.lastPiece[i] });
        }
        std::sort(regions.begin(), regions.end());
    }
    std::vector<StepAnchors> out;
    // What-if measures a step as the host's step region (ProfilerStep#N): the iteration as the program runs it, whose
    // start and end are events of the graph. (`stats` measures each step's window on the GPU; in a steady state the
    // two means agree, and the README says where they differ.)
    for (const StepWindow& step : ra.steps) {
        const TimeRange w = step.hostRange;
        auto it = std::lower_bound(regions.begin(), regions.end(), RegionStep { w.start, 0, 0, 0 });
        while (it != regions.end() && it->start == w.start && it->end != w.end)
            ++it;
        if (it != regions.end() && it->start == w.start)
            out.push_back({ { 2 * it->first, 0 }, { 2 * it->last + 1, 0 } });
        else
            out.push_back({ nearestEvent(g, trace, rank, w.start, false), nearestEvent(g, trace, rank, w.end, true) });
    }
    return out;
}

TimeNs at(const Replay& r, const Anchor& a, TimeNs recorded)
{
    return a.event == kNone ? recorded : r.time[a.event] + a.offset;
}

TimeNs meanOf(const std::vector<StepTimes>& steps, TimeNs StepTimes::*field)
{
    if (steps.empty())
        return 0;
    TimeNs sum = 0;
    for (const StepTimes& s : steps)
        sum += s.*field;
    return sum / TimeNs(steps.size());
}

// The mean per step of paths summed over n steps, each part rounded down and the nanoseconds lost to rounding given
// to the parts with the largest remainders: the parts add up to exactly total / n (the mean step, rounded down).
PathSums meanPath(PathSums sum, std::size_t n)
{
    if (n == 0)
        return {};
    const auto count = TimeNs(n);
    const TimeNs total = sum.total() / count;
    std::array<TimeNs, kPathPartCount> rest {};
    TimeNs floors = 0;
    for (std::size_t i = 0; i < sum.ns.size(); ++i) {
        rest[i] = sum.ns[i] % count;
        sum.ns[i] /= count;
        floors += sum.ns[i];
    }
    for (TimeNs left = total - floors; left > 0; --left) {
        const auto most = std::size_t(std::max_element(rest.begin(), rest.end()) - rest.begin());
        ++sum.ns[most];
        rest[most] = -1;
    }
    sum.otherRanksNs /= count;
    return sum;
}

} // namespace

WhatIfModel::WhatIfModel(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis,
    std::shared_ptr<const CollectiveMatch> collectives)
    : m_trace(std::move(trace))
    , m_analysis(std::move(analysis))
{
    if (!collectives)
        collectives = std::make_shared<const CollectiveMatch>(matchCollectives(*m_trace, *m_analysis));
    const CollectiveMatch& match = *collectives;
    m_graph = buildGraph(*m_trace, *m_analysis, match);
    m_recordedPlan = recordedPlan(m_graph);
    m_recorded = replay(m_graph, m_recordedPlan);
    for (std::size_t r = 0; r < m_trace->ranks.size() && r < m_analysis->ranks.size(); ++r)
        m_anchors.push_back(anchorSteps(m_graph, *m_trace, *m_analysis, int(r)));
}

std::vector<TimeRange> WhatIfModel::stepWindows(int rank, const Edits& edits) const
{
    const Replay edited = edits.empty() ? Replay {} : replay(m_graph, makePlan(*m_trace, *m_analysis, m_graph, edits));
    const Replay& r = edits.empty() ? m_recorded : edited;
    const auto& anchors = m_anchors[std::size_t(rank)];
    const RankAnalysis& ra = m_analysis->ranks[std::size_t(rank)];
    std::vector<TimeRange> out;
    for (std::size_t k = 0; k < anchors.size(); ++k)
        out.push_back(
            { at(r, anchors[k].start, ra.steps[k].hostRange.start), at(r, anchors[k].end, ra.steps[k].hostRange.end) });
    return out;
}

PathSums WhatIfModel::stepPath(int rank, std::size_t step, const Plan& plan, const Replay& r) const
{
    const StepAnchors& a = m_anchors[std::size_t(rank)][step];
    if (a.end.event == kNone || a.start.event == kNone)
        return {};
    const TimeNs from = at(r, a.start, 0);
    PathSums s = criticalPath(m_graph, plan, r, a.end.event, from, rank);
    s.ns[std::size_t(PathPart::Other)] += a.end.offset;
    return s;
}

WhatIfResult WhatIfModel::evaluate(const Edits& edits) const
{
    WhatIfResult out;
    out.nodes = m_graph.nodeCount();
    out.edges = m_graph.edges.size();
    out.groups = std::size_t(
        std::count_if(m_graph.groupNode.begin(), m_graph.groupNode.end(), [](std::uint32_t n) { return n != kNone; }));
    const Plan plan = edits.empty() ? m_recordedPlan : makePlan(*m_trace, *m_analysis, m_graph, edits);
    const Replay edited = edits.empty() ? Replay {} : replay(m_graph, plan);
    const Replay& predicted = edits.empty() ? m_recorded : edited;
    out.forcedEvents = predicted.forced + m_recorded.forced;
    if (out.forcedEvents > 0)
        out.warnings.push_back(
            std::to_string(out.forcedEvents) + " events replayed out of order: their dependencies formed a cycle");
    for (std::size_t r = 0; r < m_trace->ranks.size() && r < m_analysis->ranks.size(); ++r) {
        const RankAnalysis& ra = m_analysis->ranks[r];
        RankWhatIf rw;
        rw.rank = m_trace->ranks[r].rank;
        rw.label = m_trace->ranks[r].label;
        const StepMean mean = stepMean(ra.steps);
        const auto& anchors = m_anchors[r];
        PathSums replaySum, predictedSum;
        for (const std::size_t k : mean.used) {
            const StepAnchors& a = anchors[k];
            const TimeRange w = ra.steps[k].hostRange;
            StepTimes st;
            st.index = ra.steps[k].index;
            st.number = ra.steps[k].number;
            st.measured = w.duration();
            st.replay = at(m_recorded, a.end, w.end) - at(m_recorded, a.start, w.start);
            st.predicted = at(predicted, a.end, w.end) - at(predicted, a.start, w.start);
            rw.steps.push_back(st);
            if (st.measured > 0)
                rw.maxStepErrorPercent = std::max(
                    rw.maxStepErrorPercent, 100.0 * std::fabs(double(st.replay - st.measured)) / double(st.measured));
            replaySum += stepPath(int(r), k, m_recordedPlan, m_recorded);
            predictedSum += stepPath(int(r), k, plan, predicted);
        }
        rw.measuredMean = meanOf(rw.steps, &StepTimes::measured);
        rw.replayMean = meanOf(rw.steps, &StepTimes::replay);
        rw.predictedMean = meanOf(rw.steps, &StepTimes::predicted);
        rw.replayPath = meanPath(replaySum, rw.steps.size());
        rw.predictedPath = meanPath(predictedSum, rw.steps.size());
        out.ranks.push_back(std::move(rw));
    }
    return out;
}

} // namespace exposure::whatif

namespace exposure::whatif {

namespace {

// A copy of `src` with new interval times (times[lane][interval] = {start, end}); the lane's other tables are kept.
// Every member but the intervals is copied by name: a member added to Lane must be added here too (the size check
// below fails until then).
static_assert(sizeof(void*) != 8 || sizeof(Lane) == 448,
    "Lane has changed: copy the new member in copyLane, then update this size");
void copyLane(const Lane& src, Lane& dst, const std::vector<std::pair<TimeNs, TimeNs>>& times)
{
    dst.name = src.name;
    dst.kind = src.kind;
    dst.device = src.device;
    dst.stream = src.stream;
    dst.nullStream = src.nullStream;
    dst.locationId = src.locationId;
    dst.eventCount = src.eventCount;
    dst.launches = src.launches;
    dst.launchByInterval = src.launchByInterval;
    dst.launchParamIds = src.launchParamIds;
    dst.copyBytes = src.copyBytes;
    dst.copyPeers = src.copyPeers;
    dst.collectiveArgs = src.collectiveArgs;
    dst.collectiveSeq = src.collectiveSeq;
    dst.commRole = src.commRole;
    dst.intervals.reserve(src.intervals.size());
    for (std::size_t i = 0; i < src.intervals.size(); ++i)
        dst.intervals.append(
            times[i].first, std::max(times[i].first, times[i].second), src.intervals.name(i), src.intervals.depth(i));
}

// Replayed times of every interval of a lane. Host intervals span their pieces; GPU markers that are no work
// (idle, sync) move with the work before them.
std::vector<std::pair<TimeNs, TimeNs>> laneTimes(const Graph& g, const Replay& r, const Lane& lane, const LaneNodes& ln)
{
    const IntervalTable& t = lane.intervals;
    std::vector<std::pair<TimeNs, TimeNs>> out(t.size());
    TimeNs shift = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const std::uint32_t a = lane.isGpu() ? ln.nodeOf[i] : ln.firstPiece[i];
        const std::uint32_t b = lane.isGpu() ? ln.nodeOf[i] : ln.lastPiece[i];
        if (a == kNone || b == kNone) {
            out[i] = { t.start(i) + shift, t.end(i) + shift };
            continue;
        }
        out[i] = { r.start(a), r.end(b) };
        shift = r.end(b) - g.recEnd[b];
    }
    return out;
}

} // namespace

std::shared_ptr<Trace> WhatIfModel::predictedTrace(const Edits& edits) const
{
    const Replay edited = edits.empty() ? Replay {} : replay(m_graph, makePlan(*m_trace, *m_analysis, m_graph, edits));
    const Replay& r = edits.empty() ? m_recorded : edited;
    const Trace& src = *m_trace;
    auto out = std::make_shared<Trace>();
    out->sourcePath = src.sourcePath;
    for (std::size_t i = 0; i < src.strings.size(); ++i)
        out->strings.internFrom(src.strings, StringId(i));
    out->regionKinds = src.regionKinds;
    out->canonicalNames = src.canonicalNames;
    out->launchParams = src.launchParams;
    out->collectiveArgs = src.collectiveArgs;
    out->originAbsNs = src.originAbsNs;
    out->eventCount = src.eventCount;
    out->ranks.resize(src.ranks.size());
    for (std::size_t rk = 0; rk < src.ranks.size(); ++rk) {
        const Rank& a = src.ranks[rk];
        Rank& b = out->ranks[rk];
        b.rank = a.rank;
        b.label = a.label;
        b.host = a.host;
        b.devices = a.devices;
        b.archivePath = a.archivePath;
        b.timerResolution = a.timerResolution;
        b.coords = a.coords;
        b.lanes.resize(a.lanes.size());
        for (std::size_t l = 0; l < a.lanes.size(); ++l)
            copyLane(a.lanes[l], b.lanes[l], laneTimes(m_graph, r, a.lanes[l], m_graph.laneNodes(int(rk), int(l))));
    }
    out->finalize(false);
    return out;
}

} // namespace exposure::whatif
