// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/collectives.h"

#include "analysis/analysis_p.h"
#include "analysis/kernelop.h"
#include "model/enumnames.h"
#include "model/parallelfor.h"

#include <algorithm>
#include <boost/icl/interval_set.hpp>
#include <cctype>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace exposure {

namespace {

using TimeSet = boost::icl::interval_set<TimeNs, std::less, boost::icl::right_open_interval<TimeNs, std::less>>;
using TimeInterval = boost::icl::right_open_interval<TimeNs, std::less>;

} // namespace

const CollectiveMatch::Ref* CollectiveMatch::find(IntervalRef ref) const
{
    const Ref key { ref.rank, ref.lane, ref.interval, 0, 0 };
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

const char* matchMethodName(MatchMethod m)
{
    static constexpr EnumName<MatchMethod> names[] = { { MatchMethod::ProcessGroup, "process_group" },
        { MatchMethod::Stream, "stream" }, { MatchMethod::Identity, "identity" } };
    return nameIn(names, m, "time");
}

const CollectiveArgs* collectiveArgsOf(const Trace& trace, const Lane& lane, std::uint32_t interval)
{
    auto it = std::lower_bound(lane.collectiveArgs.begin(), lane.collectiveArgs.end(), std::make_pair(interval, 0u));
    if (it == lane.collectiveArgs.end() || it->first != interval || it->second >= trace.collectiveArgs.size())
        return nullptr;
    return &trace.collectiveArgs[it->second];
}

std::uint64_t collectiveSeqOf(const Lane& lane, std::uint32_t interval)
{
    auto it = std::lower_bound(
        lane.collectiveSeq.begin(), lane.collectiveSeq.end(), std::make_pair(interval, std::uint64_t(0)));
    return it == lane.collectiveSeq.end() || it->first != interval ? kNoCollectiveSeq : it->second;
}

std::string groupKeyText(const Lane& lane, const CollectiveArgs* args)
{
    if (args && (!args->processGroup.empty() || !args->groupRanks.empty()))
        return "\x1epg\x1f" + args->processGroup + "\x1f" + args->groupRanks;
    // The stream stands for the communicator only where no kernel of the lane names its process group (a kernel
    // without arguments beside ones with them may belong to any group that uses the stream).
    if (lane.stream >= 0 && lane.collectiveArgs.empty())
        return "\x1estream\x1f" + std::to_string(lane.stream);
    return {};
}

bool p2pIdentity(const CollectiveArgs& args, int self, std::string& group, std::string& signature)
{
    std::string op;
    for (const char c : args.collective)
        op += char(std::tolower(static_cast<unsigned char>(c)));
    const bool sends = op == "send", receives = op == "recv" || op == "receive";
    if (self < 0 || (!sends && !receives))
        return false;
    int peer = args.peer;
    if (peer < 0) {
        // A group of two: the peer is the other member.
        std::vector<int> members;
        for (std::size_t i = 0; i < args.groupRanks.size();) {
            if (!std::isdigit(static_cast<unsigned char>(args.groupRanks[i]))) {
                ++i;
                continue;
            }
            int v = 0;
            for (; i < args.groupRanks.size() && std::isdigit(static_cast<unsigned char>(args.groupRanks[i])); ++i)
                v = std::min(v * 10 + (args.groupRanks[i] - '0'), 1 << 24);
            members.push_back(v);
        }
        if (members.size() != 2 || (members[0] != self && members[1] != self))
            return false;
        peer = members[0] == self ? members[1] : members[0];
    }
    if (peer == self)
        return false;
    const int src = sends ? self : peer, dst = sends ? peer : self;
    group = "\x1ep2p\x1f" + (args.processGroup.empty() ? std::string("p2p") : args.processGroup) + ", "
        + std::to_string(src) + " \xE2\x86\x92 " + std::to_string(dst) + "\x1f" + args.groupRanks;
    signature
        = "\x1esig\x1fp2p\x1f" + args.dtype + "\x1f" + std::to_string(std::max(args.inElements, args.outElements));
    return true;
}

std::string signatureText(const CollectiveArgs& args)
{
    return "\x1esig\x1f" + args.collective + "\x1f" + args.dtype + "\x1f" + std::to_string(args.inElements) + "\x1f"
        + std::to_string(args.outElements) + "\x1f" + std::to_string(args.groupSize);
}

CollectiveMatch matchCollectives(const Trace& trace, const Analysis& analysis, TimeNs toleranceNs)
{
    std::set<std::string> hosts;
    std::vector<CollectiveCandidate> all;
    std::vector<std::string> keys;
    std::unordered_map<std::string, std::uint32_t> keyIndex;
    auto intern = [&](const std::string& text) {
        auto [it, fresh] = keyIndex.try_emplace(text, std::uint32_t(keys.size()));
        if (fresh)
            keys.push_back(text);
        return it->second;
    };
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const Rank& rank = trace.ranks[r];
        hosts.insert(rank.host);
        detail::forEachGpuLane(rank, [&](std::size_t l, const Lane& lane) {
            if (lane.commRole != CommRole::None)
                return; // an op-level timer lane (Chrome traces), not kernels: nothing to match
            const auto& t = lane.intervals;
            for (std::size_t i = 0; i < t.size(); ++i) {
                const StringId name = t.name(i);
                if (analysis.classOf(name).category != Category::Communication)
                    continue;
                CollectiveCandidate c { t.start(i), t.end(i), int(r), int(l), std::uint32_t(i), name };
                identifyCandidate(lane, std::uint32_t(i), trace, c, intern, rank.rank);
                if (std::string group, sig; batchedP2pIdentity(trace, lane, std::uint32_t(i), rank.rank, group, sig)) {
                    c.group = intern(group);
                    c.signature = intern(sig);
                    c.seq = kNoCollectiveSeq;
                }
                all.push_back(c);
            }
        });
    }
    markQueued(
        all, keys, [&](std::uint32_t name) { return kernelOpText(trace, analysis, StringId(name)); }, intern);
    std::vector<CollectiveCandidate> ops
        = opLevelCandidates(trace, analysis, intern, [](StringId name) { return std::uint32_t(name); });
    all.insert(all.end(), ops.begin(), ops.end());
    CollectiveMatch result
        = matchCandidates(std::move(all), trace.ranks.size(), hosts.size() > 1, toleranceNs, std::move(keys));
    const auto waits = waitParts(result);
    // Each rank's on its own from shared read-only data, on all cores: serial, this was nine tenths of the "align"
    // stage, the one serial stage of a 1 024-rank torch.profiler run (1.2-1.4 s at 1.2 cores of 16).
    const std::size_t ranks = std::min(trace.ranks.size(), analysis.ranks.size());
    parallelFor(ranks, workerCount(ranks),
        [&](std::size_t r) { result.ranks[r].exposedWaitNs = exposedWait(waits[r], analysis.ranks[r]); });
    return result;
}

namespace {

// A signature that compares equal exactly when two instances are the same kind of collective.
std::uint64_t sigOf(const CollectiveCandidate& c)
{
    return c.signature != kNoKey ? c.signature : (std::uint64_t(1) << 32) | c.name;
}

// Matches `b` (one member's instances of a group, in issue order) against the reference member's `a`: the index
// into b of each a instance's counterpart, -1 where it has none.
class PairAligner
{
public:
    // `pointToPoint`: the instances are one direction of a group's sends and receives (p2pIdentity), each list in
    // issue order; the k-th send meets the k-th receive, whatever their sequence numbers (a rank's count of a group's
    // point-to-point operations runs over both directions).
    PairAligner(const std::vector<const CollectiveCandidate*>& a, const std::vector<const CollectiveCandidate*>& b,
        TimeNs toleranceNs, bool pointToPoint = false)
        : m_a(a)
        , m_b(b)
        , m_tol(toleranceNs)
        , m_p2p(pointToPoint)
    { }

    std::vector<std::int64_t> align() const
    {
        if (m_p2p && m_a.size() == m_b.size()) {
            std::vector<std::int64_t> out(m_a.size());
            for (std::size_t i = 0; i < out.size(); ++i)
                out[i] = sigOf(*m_a[i]) == sigOf(*m_b[i]) ? std::int64_t(i) : -1;
            if (std::find(out.begin(), out.end(), -1) == out.end())
                return out;
        }
        if (!m_p2p && bySeq())
            return alignBySeq();
        if (m_a.size() == m_b.size() && ordinalConsistent()) {
            std::vector<std::int64_t> out(m_a.size());
            for (std::size_t i = 0; i < out.size(); ++i)
                out[i] = std::int64_t(i);
            return out;
        }
        return merge(voteOffset());
    }

private:
    bool bySeq() const
    {
        auto all = [](const std::vector<const CollectiveCandidate*>& v) {
            return std::all_of(v.begin(), v.end(), [](const auto* c) { return c->seq != kNoCollectiveSeq; });
        };
        return all(m_a) && all(m_b);
    }

    std::vector<std::int64_t> alignBySeq() const
    {
        std::unordered_map<std::uint64_t, std::int64_t> bOf;
        for (std::size_t j = 0; j < m_b.size(); ++j)
            bOf.emplace(m_b[j]->seq, std::int64_t(j));
        std::vector<std::int64_t> out(m_a.size(), -1);
        for (std::size_t i = 0; i < m_a.size(); ++i) {
            const auto it = bOf.find(m_a[i]->seq);
            if (it != bOf.end() && sigOf(*m_b[std::size_t(it->second)]) == sigOf(*m_a[i]))
                out[i] = it->second;
        }
        return out;
    }

    // Same counts: the k-th with the k-th, unless the signatures disagree or fewer than half of the end differences
    // agree with their median (rooted collectives such as LL broadcasts end early on the root, so not all do).
    bool ordinalConsistent() const
    {
        std::vector<TimeNs> d;
        d.reserve(m_a.size());
        for (std::size_t i = 0; i < m_a.size(); ++i) {
            if (sigOf(*m_a[i]) != sigOf(*m_b[i]))
                return false;
            d.push_back(m_b[i]->end - m_a[i]->end);
        }
        if (d.empty())
            return true;
        std::vector<TimeNs> sorted = d;
        std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(sorted.size() / 2), sorted.end());
        const TimeNs med = sorted[sorted.size() / 2];
        const auto close = std::count_if(d.begin(), d.end(), [&](TimeNs x) { return std::abs(x - med) <= m_tol; });
        return std::size_t(close) * 2 >= d.size();
    }

    // The clock offset of b against a. Each small shift s of the order (b's k+s-th against a's k-th) proposes the
    // densest cluster of end differences (window 2 × tolerance) of instances with equal signatures; the proposal under
    // which the most of a's instances find an instance of b with the same signature and end wins (in a periodic run
    // of identical collectives one period more is nearly as dense, but only the true offset covers both sides of a
    // gap).
    TimeNs voteOffset() const
    {
        const std::int64_t na = std::int64_t(m_a.size()), nb = std::int64_t(m_b.size());
        const std::int64_t reach = std::min<std::int64_t>(64, std::abs(na - nb) + 2);
        const std::int64_t step = std::max<std::int64_t>(1, na / 2048);
        struct Proposal
        {
            TimeNs offset;
            std::size_t density;
            std::int64_t shift;
        };
        std::vector<Proposal> proposals;
        std::vector<TimeNs> d;
        for (std::int64_t s = -reach; s <= reach; ++s) {
            d.clear();
            for (std::int64_t i = 0; i < na; i += step) {
                const std::int64_t j = i + s;
                if (j >= 0 && j < nb && sigOf(*m_a[std::size_t(i)]) == sigOf(*m_b[std::size_t(j)]))
                    d.push_back(m_b[std::size_t(j)]->end - m_a[std::size_t(i)]->end);
            }
            std::sort(d.begin(), d.end());
            Proposal best { 0, 0, s };
            std::size_t lo = 0;
            for (std::size_t hi = 0; hi < d.size(); ++hi) {
                while (d[hi] - d[lo] > 2 * m_tol)
                    ++lo;
                if (hi - lo + 1 > best.density)
                    best = { d[lo + (hi - lo) / 2], hi - lo + 1, s };
            }
            if (best.density > 0)
                proposals.push_back(best);
        }
        std::vector<std::pair<TimeNs, std::uint64_t>> bEnds; // (end, signature), sorted
        for (const auto* c : m_b)
            bEnds.emplace_back(c->end, sigOf(*c));
        std::sort(bEnds.begin(), bEnds.end());
        auto coverage = [&](TimeNs offset) {
            std::size_t n = 0;
            for (std::int64_t i = 0; i < na; i += step) {
                const auto* a = m_a[std::size_t(i)];
                auto it = std::lower_bound(
                    bEnds.begin(), bEnds.end(), std::make_pair(a->end + offset - m_tol, std::uint64_t(0)));
                for (; it != bEnds.end() && it->first <= a->end + offset + m_tol; ++it)
                    if (it->second == sigOf(*a)) {
                        ++n;
                        break;
                    }
            }
            return n;
        };
        TimeNs best = 0;
        std::size_t bestCover = 0, bestDensity = 0;
        std::int64_t bestShift = 0;
        for (const Proposal& p : proposals) {
            const std::size_t cover = coverage(p.offset);
            if (std::tie(cover, p.density) > std::tie(bestCover, bestDensity)
                || (cover == bestCover && p.density == bestDensity && std::abs(p.shift) < std::abs(bestShift))) {
                best = p.offset;
                bestCover = cover;
                bestDensity = p.density;
                bestShift = p.shift;
            }
        }
        return best;
    }

    // In order: a pair when the signatures agree and the ends agree within the tolerance after removing the offset.
    // Otherwise the side whose next instance would re-synchronise (same signature, ends agreeing) has an extra one;
    // if neither does, equal signatures still pair (the order says so: a rooted collective whose ends differ), and
    // different ones leave the instance that ends first without a counterpart.
    std::vector<std::int64_t> merge(TimeNs offset) const
    {
        auto pairs = [&](std::size_t i, std::size_t j) {
            return i < m_a.size() && j < m_b.size() && sigOf(*m_a[i]) == sigOf(*m_b[j])
                && std::abs(m_b[j]->end - offset - m_a[i]->end) <= m_tol;
        };
        std::vector<std::int64_t> out(m_a.size(), -1);
        std::size_t i = 0, j = 0;
        while (i < m_a.size() && j < m_b.size()) {
            if (pairs(i, j)) {
                out[i++] = std::int64_t(j++);
                continue;
            }
            const bool skipB = pairs(i, j + 1), skipA = pairs(i + 1, j);
            if (skipB != skipA)
                (skipB ? j : i) += 1;
            else if (sigOf(*m_a[i]) == sigOf(*m_b[j]))
                out[i++] = std::int64_t(j++);
            else if (m_b[j]->end - offset < m_a[i]->end)
                ++j;
            else
                ++i;
        }
        return out;
    }

    const std::vector<const CollectiveCandidate*>& m_a;
    const std::vector<const CollectiveCandidate*>& m_b;
    TimeNs m_tol;
    bool m_p2p;
};

using MemberList = std::vector<const CollectiveCandidate*>;

struct PendingGroup
{
    MemberList members;
    std::uint32_t processGroup = 0;
    std::uint32_t ordinal = 0;
};

// Builds the collective of the members found for one instance (waiting, transfer, the last arrival).
CollectiveGroup makeGroup(const PendingGroup& p)
{
    CollectiveGroup g;
    g.name = p.members.front()->name;
    g.signature = p.members.front()->signature;
    g.processGroup = p.processGroup;
    g.ordinal = p.ordinal;
    g.lastArrival = std::numeric_limits<TimeNs>::min();
    // Where each member could begin: after any queue behind its own communicator's other stream.
    auto ready = [](const CollectiveCandidate* c) { return std::clamp(c->queuedUntil, c->start, c->end); };
    for (const CollectiveCandidate* c : p.members) {
        if (ready(c) > g.lastArrival || (ready(c) == g.lastArrival && c->rank < g.lastRank)) {
            g.lastArrival = ready(c);
            g.lastRank = c->rank;
        }
    }
    for (const CollectiveCandidate* c : p.members) {
        CollectiveMember mem;
        mem.rank = c->rank;
        mem.lane = c->lane;
        mem.interval = c->interval;
        mem.start = ready(c);
        mem.end = c->end;
        mem.queuedNs = mem.start - c->start;
        mem.behind = mem.queuedNs > 0 ? c->behind : kNoKey;
        mem.waitNs = std::clamp<TimeNs>(g.lastArrival - mem.start, 0, c->end - mem.start);
        mem.transferNs = (c->end - mem.start) - mem.waitNs;
        g.members.push_back(mem);
    }
    std::sort(g.members.begin(), g.members.end(),
        [](const CollectiveMember& a, const CollectiveMember& b) { return a.rank < b.rank; });
    return g;
}

bool issueOrder(const CollectiveCandidate* a, const CollectiveCandidate* b)
{
    if (a->seq != b->seq && a->seq != kNoCollectiveSeq && b->seq != kNoCollectiveSeq)
        return a->seq < b->seq;
    if (a->start != b->start)
        return a->start < b->start;
    if (a->end != b->end)
        return a->end < b->end;
    return a->lane != b->lane ? a->lane < b->lane : a->interval < b->interval;
}

// Matches one identified process group: every member against the reference member (the one with most instances).
// Returns false when fewer than half of the instances matched (the identity is then not trusted).
bool matchIdentified(const std::vector<const CollectiveCandidate*>& items, std::uint32_t pgIndex, ProcessGroupMatch& pg,
    TimeNs toleranceNs, std::vector<PendingGroup>& out, bool pointToPoint)
{
    std::map<int, MemberList> byRank;
    for (const CollectiveCandidate* c : items)
        byRank[c->rank].push_back(c);
    int ref = byRank.begin()->first;
    for (auto& [rank, list] : byRank) {
        std::sort(list.begin(), list.end(), issueOrder);
        pg.members.push_back(rank);
        if (list.size() > byRank[ref].size())
            ref = rank;
    }
    pg.instances = items.size();
    const MemberList& a = byRank[ref];
    std::vector<PendingGroup> groups(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        groups[i].members.push_back(a[i]);
        groups[i].processGroup = pgIndex;
        groups[i].ordinal = std::uint32_t(i);
    }
    std::vector<bool> refMatched(a.size(), false);
    for (const auto& [rank, b] : byRank) {
        if (rank == ref)
            continue;
        const auto matchOf = PairAligner(a, b, toleranceNs, pointToPoint).align();
        std::vector<bool> used(b.size(), false);
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (matchOf[i] < 0)
                continue;
            groups[i].members.push_back(b[std::size_t(matchOf[i])]);
            used[std::size_t(matchOf[i])] = true;
            refMatched[i] = true;
        }
        CountMismatch mm { rank, ref, b.size(), a.size(), 0, -1 };
        for (std::size_t j = 0; j < b.size(); ++j) {
            if (!used[j] && mm.unmatched++ == 0)
                mm.firstUnmatched = b[j]->start;
        }
        if (b.size() != a.size() || mm.unmatched > 0)
            pg.mismatches.push_back(mm);
    }
    for (auto& g : groups) {
        if (g.members.size() < 2)
            continue;
        pg.matchedInstances += g.members.size();
        ++pg.collectives;
    }
    if (pg.matchedInstances * 2 < pg.instances)
        return false;
    for (auto& g : groups)
        if (g.members.size() >= 2)
            out.push_back(std::move(g));
    return true;
}

// Op-level timers of one role: the instances of equal identity (CollectiveCandidate::preset) form one group, in the
// order of the identity texts; an instance alone with its identity, or with none, stays unmatched.
void matchPresets(const std::vector<const CollectiveCandidate*>& items, const std::vector<std::string>& keys,
    std::uint32_t pgIndex, ProcessGroupMatch& pg, std::vector<PendingGroup>& out)
{
    std::map<std::string, MemberList> byIdentity;
    std::set<int> ranks;
    for (const CollectiveCandidate* c : items) {
        ranks.insert(c->rank);
        if (c->preset != kNoKey && c->preset < keys.size())
            byIdentity[keys[c->preset]].push_back(c);
    }
    pg.members.assign(ranks.begin(), ranks.end());
    pg.instances = items.size();
    for (auto& [identity, members] : byIdentity) {
        std::sort(members.begin(), members.end(), issueOrder);
        // One instance per rank (a rank that names one identity twice keeps its first).
        MemberList unique;
        for (const CollectiveCandidate* c : members)
            if (std::none_of(unique.begin(), unique.end(), [&](const auto* u) { return u->rank == c->rank; }))
                unique.push_back(c);
        if (unique.size() < 2)
            continue;
        // A transfer is named after its send (the group takes its first member's name).
        std::stable_partition(unique.begin(), unique.end(), [&](const CollectiveCandidate* c) { return c->sends; });
        pg.matchedInstances += unique.size();
        out.push_back({ std::move(unique), pgIndex, std::uint32_t(pg.collectives++) });
    }
}

// The fallback: greedy clustering in end order, per kernel name. A group opens at the earliest unmatched end and
// takes, from each other rank, the first instance that ends within the tolerance and overlaps every member so far.
// Ties in the end go by (rank, lane, interval), so that the result does not depend on the candidates' order.
void matchByTime(std::vector<const CollectiveCandidate*> all, std::size_t rankCount, std::uint32_t pgIndex,
    ProcessGroupMatch& pg, TimeNs toleranceNs, std::vector<PendingGroup>& out)
{
    std::sort(all.begin(), all.end(), [](const CollectiveCandidate* a, const CollectiveCandidate* b) {
        if (a->name != b->name)
            return a->name < b->name;
        if (a->end != b->end)
            return a->end < b->end;
        if (a->rank != b->rank)
            return a->rank < b->rank;
        if (a->lane != b->lane)
            return a->lane < b->lane;
        return a->interval < b->interval;
    });
    std::set<int> members;
    std::vector<bool> used(all.size(), false);
    std::vector<bool> rankTaken(rankCount, false);
    for (std::size_t i = 0; i < all.size(); ++i) {
        members.insert(all[i]->rank);
        if (used[i])
            continue;
        used[i] = true;
        PendingGroup g;
        g.processGroup = pgIndex;
        g.members.push_back(all[i]);
        TimeNs commonStart = all[i]->start, commonEnd = all[i]->end;
        rankTaken[std::size_t(all[i]->rank)] = true;
        for (std::size_t j = i + 1; j < all.size() && all[j]->name == all[i]->name; ++j) {
            if (all[j]->end - all[i]->end > toleranceNs)
                break;
            if (used[j] || rankTaken[std::size_t(all[j]->rank)])
                continue;
            const TimeNs s = std::max(commonStart, all[j]->start);
            const TimeNs e = std::min(commonEnd, all[j]->end);
            // Zero-length instances count as overlapping when their instant lies in the common span.
            if (e < s || (e == s && all[j]->end > all[j]->start && commonEnd > commonStart))
                continue;
            commonStart = s;
            commonEnd = e;
            used[j] = true;
            rankTaken[std::size_t(all[j]->rank)] = true;
            g.members.push_back(all[j]);
        }
        for (const CollectiveCandidate* m : g.members)
            rankTaken[std::size_t(m->rank)] = false;
        if (g.members.size() < 2)
            continue;
        pg.matchedInstances += g.members.size();
        ++pg.collectives;
        out.push_back(std::move(g));
    }
    pg.instances += all.size();
    pg.members.assign(members.begin(), members.end());
}

// "\x1epg\x1f<name>\x1f<ranks>" / "\x1estream\x1f<n>": the group's method, name and recorded ranks.
void describeGroup(const std::string& key, ProcessGroupMatch& pg)
{
    const auto f1 = key.find('\x1f');
    const auto f2 = key.find('\x1f', f1 + 1);
    if (key.compare(0, f1, "\x1eop") == 0) {
        pg.method = MatchMethod::Identity;
        pg.name = key.substr(f1 + 1) + " timers";
    } else if (key.compare(0, f1, "\x1epg") == 0 || key.compare(0, f1, "\x1ep2p") == 0) {
        pg.method = MatchMethod::ProcessGroup;
        pg.name = key.substr(f1 + 1, f2 == std::string::npos ? std::string::npos : f2 - f1 - 1);
        pg.ranks = f2 == std::string::npos ? std::string() : key.substr(f2 + 1);
    } else {
        pg.method = MatchMethod::Stream;
        pg.name = "stream " + key.substr(f1 + 1);
    }
}

// Per-rank sums, the straggler counts and the lookup index of a finished match.
void summarise(CollectiveMatch& result)
{
    for (std::uint32_t gi = 0; gi < result.groups.size(); ++gi) {
        const auto& g = result.groups[gi];
        TimeNs othersWait = 0;
        for (std::uint32_t mi = 0; mi < g.members.size(); ++mi) {
            const auto& m = g.members[mi];
            auto& rs = result.ranks[std::size_t(m.rank)];
            ++rs.matched;
            rs.waitNs += m.waitNs;
            rs.transferNs += m.transferNs;
            rs.queuedNs += m.queuedNs;
            if (m.rank != g.lastRank)
                othersWait += m.waitNs;
            result.maxWaitNs = std::max(result.maxWaitNs, m.waitNs);
            result.index.push_back({ m.rank, m.lane, m.interval, gi, mi });
        }
        if (othersWait > 0) {
            auto& last = result.ranks[std::size_t(g.lastRank)];
            ++last.causedWaits;
            last.causedWaitNs += othersWait;
        }
    }
    std::sort(result.index.begin(), result.index.end());
}

} // namespace

CollectiveMatch matchCandidates(std::vector<CollectiveCandidate> all, std::size_t rankCount, bool multipleHosts,
    TimeNs toleranceNs, std::vector<std::string> keys)
{
    CollectiveMatch result;
    result.toleranceNs = toleranceNs;
    result.ranks.resize(rankCount);
    result.multipleHosts = multipleHosts;
    result.keys = std::move(keys);

    // Identified instances by group key (in key order, so that the result does not depend on the candidates' order).
    std::map<std::string, std::vector<const CollectiveCandidate*>> byGroup, byOp;
    std::vector<const CollectiveCandidate*> unidentified;
    for (const CollectiveCandidate& c : all) {
        if (c.group != kNoKey && c.group < result.keys.size() && result.keys[c.group].rfind("\x1eop\x1f", 0) == 0)
            byOp[result.keys[c.group]].push_back(&c); // op-level timers: matched by their identity alone
        else if (c.group != kNoKey && c.group < result.keys.size())
            byGroup[result.keys[c.group]].push_back(&c);
        else {
            unidentified.push_back(&c);
            ++result.ranks[std::size_t(c.rank)].unidentified;
        }
    }
    std::vector<PendingGroup> pending;
    for (const auto& [key, items] : byOp) {
        ProcessGroupMatch pg;
        describeGroup(key, pg);
        matchPresets(items, result.keys, std::uint32_t(result.processGroups.size()), pg, pending);
        result.processGroups.push_back(std::move(pg));
    }
    for (auto& [key, items] : byGroup) {
        ProcessGroupMatch pg;
        describeGroup(key, pg);
        const bool pointToPoint = key.rfind("\x1ep2p\x1f", 0) == 0;
        if (matchIdentified(
                items, std::uint32_t(result.processGroups.size()), pg, toleranceNs, pending, pointToPoint)) {
            result.processGroups.push_back(std::move(pg));
            continue;
        }
        // Identity matching failed (e.g. one stream number serving different communicators): time fallback.
        unidentified.insert(unidentified.end(), items.begin(), items.end());
    }
    if (!unidentified.empty()) {
        ProcessGroupMatch pg;
        matchByTime(
            std::move(unidentified), rankCount, std::uint32_t(result.processGroups.size()), pg, toleranceNs, pending);
        result.processGroups.push_back(std::move(pg));
    }
    std::vector<std::uint64_t> matchedOf(rankCount, 0);
    for (const PendingGroup& p : pending) {
        result.groups.push_back(makeGroup(p));
        result.groups.back().waitBeforeStart = result.processGroups[p.processGroup].method == MatchMethod::Identity;
        for (const auto* c : p.members)
            ++matchedOf[std::size_t(c->rank)];
    }
    std::vector<std::uint64_t> countOf(rankCount, 0);
    for (const CollectiveCandidate& c : all)
        ++countOf[std::size_t(c.rank)];
    for (std::size_t r = 0; r < rankCount; ++r)
        result.ranks[r].unmatched = countOf[r] - matchedOf[r];
    std::sort(result.groups.begin(), result.groups.end(), [](const CollectiveGroup& a, const CollectiveGroup& b) {
        if (a.lastArrival != b.lastArrival)
            return a.lastArrival < b.lastArrival;
        return a.members.front().rank != b.members.front().rank
            ? a.members.front().rank < b.members.front().rank
            : a.members.front().interval < b.members.front().interval;
    });
    summarise(result);
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

IntervalTable splitWaiting(const IntervalTable& overlap, std::vector<TimeRange> waits)
{
    // The union of the wait parts as sorted disjoint ranges.
    std::sort(waits.begin(), waits.end(), [](const TimeRange& a, const TimeRange& b) { return a.start < b.start; });
    std::vector<TimeRange> merged;
    for (const TimeRange& w : waits) {
        if (w.end <= w.start)
            continue;
        if (!merged.empty() && w.start <= merged.back().end)
            merged.back().end = std::max(merged.back().end, w.end);
        else
            merged.push_back(w);
    }
    IntervalTable out;
    out.reserve(overlap.size() + 2 * merged.size());
    std::size_t k = 0;
    for (std::size_t i = 0; i < overlap.size(); ++i) {
        const auto state = OverlapState(overlap.name(i));
        TimeNs t = overlap.start(i);
        const TimeNs end = overlap.end(i);
        if ((state != OverlapState::Exposed && state != OverlapState::Hidden) || end <= t) {
            out.append(t, end, overlap.name(i));
            continue;
        }
        const auto waiting
            = StringId(state == OverlapState::Exposed ? OverlapState::WaitingExposed : OverlapState::WaitingHidden);
        while (k < merged.size() && merged[k].end <= t)
            ++k;
        for (std::size_t j = k; j < merged.size() && merged[j].start < end; ++j) {
            const TimeNs a = std::max(merged[j].start, t), b = std::min(merged[j].end, end);
            if (a > t)
                out.append(t, a, overlap.name(i));
            out.append(a, b, waiting);
            t = b;
        }
        if (t < end)
            out.append(t, end, overlap.name(i));
    }
    return out;
}

CollectiveWaitStats collectiveWaitInWindow(
    const CollectiveMatch& match, const Analysis& analysis, int rank, TimeRange window)
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
    auto k = std::size_t(
        std::upper_bound(ra.activityEnd.begin(), ra.activityEnd.end(), window.start) - ra.activityEnd.begin());
    for (; k < ra.activityStart.size() && ra.activityStart[k] < window.end; ++k) {
        if (ra.activityMask[k] & ActivityCompute)
            compute.add(
                TimeInterval(std::max(ra.activityStart[k], window.start), std::min(ra.activityEnd[k], window.end)));
    }
    out.exposedWaitNs = TimeNs(boost::icl::length(waits - compute));
    return out;
}

RankCollectiveParts::RankCollectiveParts(const CollectiveMatch& match, int rank)
{
    for (const CollectiveGroup& g : match.groups)
        for (const CollectiveMember& m : g.members)
            if (m.rank == rank) {
                m_parts.push_back({ m.start, m.start + m.waitNs, m.end });
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
    auto it
        = std::lower_bound(m_parts.begin(), m_parts.end(), from, [](const Part& p, TimeNs t) { return p.start < t; });
    for (; it != m_parts.end() && it->start < window.end; ++it) {
        out.waitNs += TimeRange { it->start, it->waitEnd }.intersected(window).duration();
        out.transferNs += TimeRange { it->waitEnd, it->end }.intersected(window).duration();
    }
    return out;
}

CollectiveSplit collectiveSplitInWindow(const CollectiveMatch& match, int rank, TimeRange window)
{
    return RankCollectiveParts(match, rank).in(window);
}

PeerWait peerWaitInWindow(const CollectiveMatch& match, const Trace& trace, int rank, TimeRange window)
{
    return peerWaitInWindow(
        match,
        [&trace](
            int r) { return std::size_t(r) < trace.ranks.size() ? trace.ranks[std::size_t(r)].label : std::string(); },
        rank, window);
}

std::string rankFinding(
    const Trace& trace, const Analysis& analysis, const CollectiveMatch* match, int rank, TimeRange window)
{
    PeerWait peers;
    if (match)
        peers = peerWaitInWindow(*match, trace, rank, window);
    return idleFinding(computeStats(trace, analysis, rank, window),
        sumIdleGaps(idleGaps(trace, analysis, rank, window)), diagnoseLaunches(trace, analysis, rank, window),
        match ? &peers : nullptr);
}

PeerWait peerWaitInWindow(
    const CollectiveMatch& match, const std::function<std::string(int)>& labelOf, int rank, TimeRange window)
{
    PeerWait out;
    std::map<int, TimeNs> byPeer;
    for (const CollectiveGroup& g : match.groups)
        for (const CollectiveMember& m : g.members) {
            if (m.rank != rank || m.waitNs <= 0)
                continue;
            const TimeNs w = TimeRange { m.start, m.start + m.waitNs }.intersected(window).duration();
            out.waitNs += w;
            if (w > 0 && g.lastRank >= 0)
                byPeer[g.lastRank] += w;
        }
    const auto top = std::max_element(
        byPeer.begin(), byPeer.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    if (top != byPeer.end())
        out.mostWaitedFor = labelOf(top->first);
    return out;
}

} // namespace exposure
