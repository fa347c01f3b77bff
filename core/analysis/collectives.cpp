// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/collectives.h"


#include <boost/icl/interval_set.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace exposure {

namespace {

using TimeSet = boost::icl::interval_set<TimeNs, std::less, boost::icl::right_open_interval<TimeNs, std::less>>;
using TimeInterval = boost::icl::right_open_interval<TimeNs, std::less>;

} // namespace

const CollectiveMatch::Ref* CollectiveMatch::find(IntervalRef ref) const
{
    const Ref key{ref.rank, ref.lane, ref.interval, 0, 0};
    auto it = std::lower_bound(index.begin(), index.end(), key);
    if (it == index.end() || it->rank != ref.rank || it->lane != ref.lane || it->interval != ref.interval)
        return nullptr;
    return &*it;
}

const CollectiveGroup* CollectiveMatch::groupOf(IntervalRef ref) const
{
    const Ref* r = find(ref);
    return r ? &groups[r->group] : nullptr;
}

const CollectiveMember* CollectiveMatch::member(IntervalRef ref) const
{
    const Ref* r = find(ref);
    return r ? &groups[r->group].members[r->member] : nullptr;
}

CollectiveMatch matchCollectives(const Trace& trace, const Analysis& analysis, TimeNs toleranceNs)
{
    std::set<std::string> hosts;
    std::vector<CollectiveCandidate> all;
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const Rank& rank = trace.ranks[r];
        hosts.insert(rank.host);
        for (std::size_t l = 0; l < rank.lanes.size(); ++l) {
            const Lane& lane = rank.lanes[l];
            if (!lane.isGpu())
                continue;
            const auto& t = lane.intervals;
            for (std::size_t i = 0; i < t.size(); ++i) {
                const StringId name = t.name(i);
                if (analysis.classOf(name).category != Category::Communication)
                    continue;
                all.push_back({t.start(i), t.end(i), int(r), int(l), std::uint32_t(i), name});
            }
        }
    }
    CollectiveMatch result = matchCandidates(std::move(all), trace.ranks.size(), hosts.size() > 1, toleranceNs);
    const auto waits = waitParts(result);
    for (std::size_t r = 0; r < trace.ranks.size() && r < analysis.ranks.size(); ++r)
        result.ranks[r].exposedWaitNs = exposedWait(waits[r], analysis.ranks[r]);
    return result;
}

CollectiveMatch matchCandidates(
    std::vector<CollectiveCandidate> all, std::size_t rankCount, bool multipleHosts, TimeNs toleranceNs)
{
    CollectiveMatch result;
    result.toleranceNs = toleranceNs;
    result.ranks.resize(rankCount);
    result.multipleHosts = multipleHosts;

    // Greedy clustering in end order, per kernel name: a group opens at the earliest unmatched end and takes,
    // from each other rank, the first instance that ends within the tolerance and overlaps every member so far.
    // Ties in the end go by (rank, lane, interval), so that the result does not depend on the candidates' order.
    std::sort(all.begin(), all.end(), [](const CollectiveCandidate& a, const CollectiveCandidate& b) {
        if (a.name != b.name)
            return a.name < b.name;
        if (a.end != b.end)
            return a.end < b.end;
        if (a.rank != b.rank)
            return a.rank < b.rank;
        if (a.lane != b.lane)
            return a.lane < b.lane;
        return a.interval < b.interval;
    });
    std::vector<bool> used(all.size(), false);
    std::vector<bool> rankTaken(rankCount, false);
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (used[i])
            continue;
        used[i] = true;
        std::vector<std::size_t> members{i};
        TimeNs commonStart = all[i].start, commonEnd = all[i].end;
        rankTaken[std::size_t(all[i].rank)] = true;
        for (std::size_t j = i + 1; j < all.size() && all[j].name == all[i].name; ++j) {
            if (all[j].end - all[i].end > toleranceNs)
                break;
            if (used[j] || rankTaken[std::size_t(all[j].rank)])
                continue;
            const TimeNs s = std::max(commonStart, all[j].start);
            const TimeNs e = std::min(commonEnd, all[j].end);
            // Zero-length instances count as overlapping when their instant lies in the common span.
            if (e < s || (e == s && all[j].end > all[j].start && commonEnd > commonStart))
                continue;
            commonStart = s;
            commonEnd = e;
            used[j] = true;
            rankTaken[std::size_t(all[j].rank)] = true;
            members.push_back(j);
        }
        for (std::size_t m : members)
            rankTaken[std::size_t(all[m].rank)] = false;
        if (members.size() < 2) {
            ++result.ranks[std::size_t(all[i].rank)].unmatched;
            continue;
        }
        CollectiveGroup g;
        g.name = all[i].name;
        g.lastArrival = std::numeric_limits<TimeNs>::min();
        for (std::size_t m : members) {
            if (all[m].start > g.lastArrival) {
                g.lastArrival = all[m].start;
                g.lastRank = all[m].rank;
            }
        }
        for (std::size_t m : members) {
            const CollectiveCandidate& c = all[m];
            CollectiveMember mem;
            mem.rank = c.rank;
            mem.lane = c.lane;
            mem.interval = c.interval;
            mem.start = c.start;
            mem.end = c.end;
            mem.waitNs = std::clamp<TimeNs>(g.lastArrival - c.start, 0, c.end - c.start);
            mem.transferNs = (c.end - c.start) - mem.waitNs;
            g.members.push_back(mem);
        }
        std::sort(g.members.begin(), g.members.end(),
                  [](const CollectiveMember& a, const CollectiveMember& b) { return a.rank < b.rank; });
        result.groups.push_back(std::move(g));
    }
    std::sort(result.groups.begin(), result.groups.end(),
              [](const CollectiveGroup& a, const CollectiveGroup& b) { return a.lastArrival < b.lastArrival; });

    // Per-rank sums and the lookup index.
    for (std::uint32_t gi = 0; gi < result.groups.size(); ++gi) {
        const auto& g = result.groups[gi];
        TimeNs othersWait = 0;
        for (std::uint32_t mi = 0; mi < g.members.size(); ++mi) {
            const auto& m = g.members[mi];
            auto& rs = result.ranks[std::size_t(m.rank)];
            ++rs.matched;
            rs.waitNs += m.waitNs;
            rs.transferNs += m.transferNs;
            if (m.rank != g.lastRank)
                othersWait += m.waitNs;
            result.maxWaitNs = std::max(result.maxWaitNs, m.waitNs);
            result.index.push_back({m.rank, m.lane, m.interval, gi, mi});
        }
        if (othersWait > 0) {
            auto& last = result.ranks[std::size_t(g.lastRank)];
            ++last.causedWaits;
            last.causedWaitNs += othersWait;
        }
    }
    std::sort(result.index.begin(), result.index.end());
    return result;
}

std::vector<std::vector<TimeRange>> waitParts(const CollectiveMatch& match)
{
    std::vector<std::vector<TimeRange>> out(match.ranks.size());
    for (const auto& g : match.groups)
        for (const auto& m : g.members)
            if (m.waitNs > 0)
                out[std::size_t(m.rank)].push_back({ m.start, m.start + m.waitNs });
    return out;
}

TimeNs exposedWait(const std::vector<TimeRange>& waits, const RankAnalysis& ra)
{
    if (waits.empty())
        return 0;
    TimeSet waitSet;
    for (const TimeRange& w : waits)
        waitSet.add(TimeInterval(w.start, w.end));
    TimeSet compute;
    for (std::size_t k = 0; k < ra.activityStart.size(); ++k) {
        if (ra.activityMask[k] & ActivityCompute)
            compute.add(TimeInterval(ra.activityStart[k], ra.activityEnd[k]));
    }
    return TimeNs(boost::icl::length(waitSet - compute));
}

CollectiveWaitStats collectiveWaitInWindow(const CollectiveMatch& match, const Analysis& analysis, int rank,
                                           TimeRange window)
{
    CollectiveWaitStats out;
    if (window.end <= window.start)
        return out;
    // A member's wait part is [start, min(lastArrival, end)), so it can reach into the window only if its group's
    // lastArrival lies after window.start, and only if lastArrival - maxWaitNs < window.end (groups are sorted by
    // lastArrival): that bounds the scan to the groups near the window.
    auto it = std::upper_bound(match.groups.begin(), match.groups.end(), window.start,
                               [](TimeNs t, const CollectiveGroup& g) { return t < g.lastArrival; });
    TimeSet waits;
    for (; it != match.groups.end() && it->lastArrival - match.maxWaitNs < window.end; ++it) {
        for (const CollectiveMember& m : it->members) {
            if (m.rank != rank || m.waitNs <= 0)
                continue;
            const TimeNs s = std::max(m.start, window.start);
            const TimeNs e = std::min(m.start + m.waitNs, window.end);
            if (e <= s)
                continue;
            out.waitNs += e - s;
            ++out.members;
            waits.add(TimeInterval(s, e));
        }
    }
    if (waits.empty() || rank < 0 || std::size_t(rank) >= analysis.ranks.size()) {
        out.exposedWaitNs = TimeNs(boost::icl::length(waits));
        return out;
    }
    const RankAnalysis& ra = analysis.ranks[std::size_t(rank)];
    TimeSet compute;
    // Activity segments are disjoint and sorted: start at the first that ends after the window starts.
    auto k = std::size_t(std::upper_bound(ra.activityEnd.begin(), ra.activityEnd.end(), window.start)
                         - ra.activityEnd.begin());
    for (; k < ra.activityStart.size() && ra.activityStart[k] < window.end; ++k) {
        if (ra.activityMask[k] & ActivityCompute)
            compute.add(TimeInterval(std::max(ra.activityStart[k], window.start), std::min(ra.activityEnd[k], window.end)));
    }
    out.exposedWaitNs = TimeNs(boost::icl::length(waits - compute));
    return out;
}

RankCollectiveParts::RankCollectiveParts(const CollectiveMatch& match, int rank)
{
    for (const CollectiveGroup& g : match.groups)
        for (const CollectiveMember& m : g.members)
            if (m.rank == rank) {
                m_parts.push_back({m.start, m.start + m.waitNs, m.end});
                m_maxDuration = std::max(m_maxDuration, m.end - m.start);
            }
    std::sort(m_parts.begin(), m_parts.end(), [](const Part& a, const Part& b) { return a.start < b.start; });
}

CollectiveSplit RankCollectiveParts::in(TimeRange window) const
{
    CollectiveSplit out;
    if (window.isEmpty())
        return out;
    // A part that reaches into the window starts at most m_maxDuration before it.
    const TimeNs from = window.start < std::numeric_limits<TimeNs>::min() + m_maxDuration
        ? std::numeric_limits<TimeNs>::min()
        : window.start - m_maxDuration;
    auto it = std::lower_bound(
        m_parts.begin(), m_parts.end(), from, [](const Part& p, TimeNs t) { return p.start < t; });
    for (; it != m_parts.end() && it->start < window.end; ++it) {
        out.waitNs += TimeRange{it->start, it->waitEnd}.intersected(window).duration();
        out.transferNs += TimeRange{it->waitEnd, it->end}.intersected(window).duration();
    }
    return out;
}

CollectiveSplit collectiveSplitInWindow(const CollectiveMatch& match, int rank, TimeRange window)
{
    return RankCollectiveParts(match, rank).in(window);
}

PeerWait peerWaitInWindow(const CollectiveMatch& match, const Trace& trace, int rank, TimeRange window)
{
    PeerWait out;
    std::map<int, TimeNs> byPeer;
    for (const CollectiveGroup& g : match.groups)
        for (const CollectiveMember& m : g.members) {
            if (m.rank != rank || m.waitNs <= 0)
                continue;
            const TimeNs w = TimeRange{m.start, m.start + m.waitNs}.intersected(window).duration();
            out.waitNs += w;
            if (w > 0 && g.lastRank >= 0)
                byPeer[g.lastRank] += w;
        }
    const auto top = std::max_element(
        byPeer.begin(), byPeer.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    if (top != byPeer.end() && std::size_t(top->first) < trace.ranks.size())
        out.mostWaitedFor = trace.ranks[std::size_t(top->first)].label;
    return out;
}

} // namespace exposure
