// SPDX-License-Identifier: GPL-3.0-or-later
#include "whatif/graph.h"

#include "model/enumnames.h"

#include <algorithm>
#include <limits>

namespace exposure::whatif {

namespace {

constexpr TimeNs kCrossSlackNs = 2'000; // a kernel started this much later than its launch and stream explain ...
constexpr TimeNs kCrossWindowNs = 20'000; // ... and within this after work on another stream ended: it waited for it
// Op-level timers of one worker (Chrome traces) may end a little after the next operation has started (Megatron's
// receive timer stops after the compute that needed it has begun): what ends this soon after a start still came
// before it.
constexpr TimeNs kTimerSkewNs = 50'000;
constexpr TimeNs kWakeMinGapNs = 1'000'000; // untraced time at least this long may be a wait for another thread

inline std::uint32_t evS(std::uint32_t node)
{
    return 2 * node;
}
inline std::uint32_t evE(std::uint32_t node)
{
    return 2 * node + 1;
}

std::uint32_t addNode(
    Graph& g, TimeNs start, TimeNs end, std::uint32_t owner, std::uint32_t lane, NodeKind kind, PathPart part)
{
    const auto n = std::uint32_t(g.recStart.size());
    g.recStart.push_back(start);
    g.recEnd.push_back(end);
    g.work.push_back(end - start);
    g.chainGap.push_back(0);
    g.owner.push_back(owner);
    g.laneOf.push_back(lane);
    g.kind.push_back(kind);
    g.part.push_back(part);
    return n;
}

PathPart partOfCategory(Category c)
{
    switch (c) {
    case Category::Communication:
        return PathPart::Communication;
    case Category::Memcpy:
        return PathPart::Memcpy;
    default:
        return PathPart::Compute;
    }
}

// Cuts a CPU lane into pieces (see graph.h) and records each interval's first and last piece and its parent.
class HostSweep
{
public:
    HostSweep(Graph& g, const Analysis& a, const IntervalTable& t, std::uint32_t laneIndex)
        : m_g(g)
        , m_a(a)
        , m_t(t)
        , m_lane(laneIndex)
        , m_ln(g.lanes[laneIndex])
    { }

    void run()
    {
        const std::size_t n = m_t.size();
        m_ln.firstPiece.assign(n, kNone);
        m_ln.lastPiece.assign(n, kNone);
        m_ln.parent.assign(n, kNone);
        m_syncChild.assign(n, 0);
        m_cursor = n ? m_t.start(0) : 0;
        for (std::size_t i = 0; i < n; ++i) {
            const TimeNs s = m_t.start(i);
            while (!m_stack.empty() && m_t.end(m_stack.back()) <= s)
                pop();
            emit(s, m_stack.empty() ? kNone : m_stack.back());
            m_ln.parent[i] = m_stack.empty() ? kNone : m_stack.back();
            m_ln.firstPiece[i] = std::uint32_t(m_g.recStart.size()); // the first piece inside it comes next
            if (isSync(std::uint32_t(i)))
                for (const std::uint32_t j : m_stack)
                    if (isSync(j))
                        m_syncChild[j] = 1;
            m_stack.push_back(std::uint32_t(i));
        }
        while (!m_stack.empty())
            pop();
    }

private:
    bool isSync(std::uint32_t i) const { return m_a.names[m_t.name(i)].syncCall; }

    void pop()
    {
        const std::uint32_t top = m_stack.back();
        emit(m_t.end(top), top);
        if (m_g.recStart.size() == m_ln.firstPiece[top]) // nothing inside: a zero-length piece stands for it
            addNode(m_g, m_cursor, m_cursor, top, m_lane, kindOf(top), partOf(kindOf(top)));
        m_ln.lastPiece[top] = std::uint32_t(m_g.recStart.size() - 1);
        const std::uint32_t last = m_ln.lastPiece[top];
        if (isSync(top) && !m_syncChild[top] && m_g.owner[last] == top) {
            m_g.kind[last] = NodeKind::Sync;
            m_g.part[last] = PathPart::Sync;
        }
        m_stack.pop_back();
    }

    NodeKind kindOf(std::uint32_t owner) const
    {
        return owner != kNone && m_a.names[m_t.name(owner)].kernelLaunch ? NodeKind::Launch : NodeKind::Host;
    }
    static PathPart partOf(NodeKind k) { return k == NodeKind::Launch ? PathPart::Launch : PathPart::Host; }

    // A piece [cursor, end) owned by `owner` (the innermost open interval, kNone between top-level regions).
    void emit(TimeNs end, std::uint32_t owner)
    {
        end = std::max(end, m_cursor);
        if (end == m_cursor)
            return;
        const NodeKind k = kindOf(owner);
        addNode(m_g, m_cursor, end, owner, m_lane, k, partOf(k));
        m_cursor = end;
    }

    Graph& m_g;
    const Analysis& m_a;
    const IntervalTable& m_t;
    std::uint32_t m_lane;
    LaneNodes& m_ln;
    std::vector<std::uint32_t> m_stack;
    std::vector<std::uint8_t> m_syncChild;
    TimeNs m_cursor = 0;
};

void addGpuLane(Graph& g, const Analysis& a, const IntervalTable& t, std::uint32_t laneIndex)
{
    LaneNodes& ln = g.lanes[laneIndex];
    ln.nodeOf.assign(t.size(), kNone);
    for (std::size_t i = 0; i < t.size(); ++i) {
        const Category c = a.names[t.name(i)].category;
        if (c == Category::Idle || c == Category::Host)
            continue;
        ln.nodeOf[i] = addNode(g, t.start(i), t.end(i), std::uint32_t(i), laneIndex, NodeKind::Gpu, partOfCategory(c));
    }
}

// The recorded start of the call that launched GPU node `node` (its first piece), or kNone.
std::uint32_t launchPiece(const Graph& g, const Analysis& a, int rank, std::uint32_t node)
{
    const LaneNodes& ln = g.lanes[g.laneOf[node]];
    const auto call = launchCallOf(a, IntervalRef { rank, ln.lane, g.owner[node] });
    if (!call)
        return kNone;
    const LaneNodes& cpu = g.laneNodes(rank, call->lane);
    return call->interval < cpu.firstPiece.size() ? cpu.firstPiece[call->interval] : kNone;
}

// Per rank: the GPU lanes' dependencies (chain gaps, launch edges, inferred waits on other streams).
class GpuDeps
{
public:
    // `opLevel`: the rank's GPU lanes are one worker's operations recorded by its own timers (Chrome traces), which
    // run one after the other: each waits for whatever on another lane ended last before it, however long ago.
    GpuDeps(Graph& g, const Analysis& a, int rank, std::size_t laneCount, bool opLevel)
        : m_g(g)
        , m_a(a)
        , m_rank(rank)
        , m_laneCount(laneCount)
        , m_opLevel(opLevel)
        , m_slack(opLevel ? 0 : kCrossSlackNs)
        , m_window(opLevel ? std::numeric_limits<TimeNs>::max() / 4 : kCrossWindowNs)
        , m_skew(opLevel ? kTimerSkewNs : 0)
    { }

    void run()
    {
        const std::uint32_t base = m_g.rankLaneBase[std::size_t(m_rank)];
        for (std::size_t l = 0; l < m_laneCount; ++l) {
            const LaneNodes& ln = m_g.lanes[base + l];
            for (std::uint32_t k = ln.first; k < ln.first + ln.count && m_g.kind[k] == NodeKind::Gpu; ++k) {
                m_launch.push_back(launchPiece(m_g, m_a, m_rank, k));
            }
            if (ln.count && m_g.kind[ln.first] == NodeKind::Gpu)
                m_firstGpu.emplace_back(ln.first, ln.count);
        }
        m_latency = nominalLatency();
        std::size_t li = 0;
        for (const auto& [first, count] : m_firstGpu)
            for (std::uint32_t k = first; k < first + count; ++k)
                calibrate(k, k > first, m_launch[li++]);
    }

private:
    // The median time from a launch call's start to its kernel's start, over kernels whose stream was idle at
    // the launch (the latency of an uncontended launch).
    TimeNs nominalLatency() const
    {
        std::vector<TimeNs> v;
        std::size_t li = 0;
        for (const auto& [first, count] : m_firstGpu)
            for (std::uint32_t k = first; k < first + count; ++k, ++li) {
                if (m_launch[li] == kNone)
                    continue;
                const TimeNs l = m_g.recStart[m_launch[li]];
                if (k == first || m_g.recEnd[k - 1] < l)
                    v.push_back(std::max<TimeNs>(0, m_g.recStart[k] - l));
            }
        if (v.empty())
            return 0;
        auto mid = v.begin() + std::ptrdiff_t((v.size() - 1) / 2);
        std::nth_element(v.begin(), mid, v.end());
        return *mid;
    }

    // GPU work on another lane of the rank that ended in (after, before], the latest; kNone if none. (The work of
    // one stream runs one after the other: its ends are in order.)
    std::uint32_t waitedOn(std::uint32_t k, TimeNs after, TimeNs before) const
    {
        std::uint32_t best = kNone;
        for (const auto& [first, count] : m_firstGpu) {
            if (m_g.laneOf[first] == m_g.laneOf[k])
                continue;
            const auto begin = m_g.recEnd.begin() + first;
            const auto it = std::upper_bound(begin, begin + count, before);
            if (it == begin || *(it - 1) <= after)
                continue;
            const auto y = std::uint32_t(it - 1 - m_g.recEnd.begin());
            if (best == kNone || m_g.recEnd[y] > m_g.recEnd[best])
                best = y;
        }
        return best;
    }

public:
    // The launch piece of every GPU node of the rank, in lane order (after run()).
    const std::vector<std::uint32_t>& launches() const { return m_launch; }

private:
    void calibrate(std::uint32_t k, bool chain, std::uint32_t launch)
    {
        const TimeNs s = m_g.recStart[k];
        struct Dep
        {
            std::uint32_t src;
            TimeNs t;
            TimeNs nominal;
        };
        Dep deps[3];
        int n = 0;
        if (chain)
            deps[n++] = { kNone, m_g.recEnd[k - 1], 0 };
        if (launch != kNone)
            deps[n++] = { evS(launch), m_g.recStart[launch], m_latency };
        TimeNs explained = std::numeric_limits<TimeNs>::min();
        for (int i = 0; i < n; ++i)
            explained = std::max(explained, deps[i].t + deps[i].nominal);
        if (n > 0 ? s - explained > m_slack : m_opLevel) {
            const std::uint32_t y = waitedOn(k, std::max(explained, s - m_window), s + m_skew);
            if (y != kNone)
                deps[n++] = { evE(y), m_g.recEnd[y], 0 };
        }
        int binding = -1;
        for (int i = 0; i < n; ++i)
            if (binding < 0 || deps[i].t + deps[i].nominal > deps[binding].t + deps[binding].nominal)
                binding = i;
        for (int i = 0; i < n; ++i) {
            const TimeNs gap = i == binding ? s - deps[i].t : std::min(deps[i].nominal, s - deps[i].t);
            if (deps[i].src == kNone)
                m_g.chainGap[k] = gap;
            else
                m_g.edges.push_back({ deps[i].src, evS(k), gap });
        }
    }

    Graph& m_g;
    const Analysis& m_a;
    int m_rank;
    std::size_t m_laneCount;
    bool m_opLevel;
    TimeNs m_slack, m_window, m_skew;
    std::vector<std::uint32_t> m_launch; // per GPU node of the rank, in lane order
    std::vector<std::pair<std::uint32_t, std::uint32_t>> m_firstGpu; // (first node, count) of each GPU lane
    TimeNs m_latency = 0;
};

// Per rank: each synchronising call waits for the last work launched on each GPU lane before it began.
void addSyncEdges(Graph& g, int rank, std::size_t laneCount, const std::vector<std::uint32_t>& launches)
{
    std::size_t li = 0;
    const std::uint32_t base = g.rankLaneBase[std::size_t(rank)];
    std::vector<std::pair<std::uint32_t, std::vector<TimeNs>>> gpu; // (first node, launch time prefix max)
    for (std::size_t l = 0; l < laneCount; ++l) {
        const LaneNodes& ln = g.lanes[base + l];
        if (!ln.count || g.kind[ln.first] != NodeKind::Gpu)
            continue;
        std::vector<TimeNs> launched(ln.count);
        TimeNs run = std::numeric_limits<TimeNs>::min();
        for (std::uint32_t i = 0; i < ln.count; ++i) {
            const std::uint32_t lp = launches[li++];
            run = std::max(run, lp != kNone ? g.recStart[lp] : g.recStart[ln.first + i]);
            launched[i] = run;
        }
        gpu.emplace_back(ln.first, std::move(launched));
    }
    std::vector<std::uint32_t> waited;
    for (std::size_t l = 0; l < laneCount; ++l) {
        const LaneNodes& ln = g.lanes[base + l];
        for (std::uint32_t p = ln.first; p < ln.first + ln.count; ++p) {
            if (g.kind[p] != NodeKind::Sync)
                continue;
            waited.clear();
            TimeNs lastEnd = std::numeric_limits<TimeNs>::min();
            for (const auto& [first, launched] : gpu) {
                const auto it = std::upper_bound(launched.begin(), launched.end(), g.recStart[p]);
                if (it == launched.begin())
                    continue;
                const auto item = first + std::uint32_t(it - launched.begin() - 1);
                waited.push_back(item);
                lastEnd = std::max(lastEnd, g.recEnd[item]);
            }
            if (waited.empty()) {
                g.kind[p] = NodeKind::Host;
                continue;
            }
            const TimeNs dur = g.recEnd[p] - g.recStart[p];
            g.work[p] = std::clamp<TimeNs>(g.recEnd[p] - lastEnd, 0, dur);
            const TimeNs release = g.recEnd[p] - g.work[p];
            for (const std::uint32_t item : waited)
                g.edges.push_back({ evE(item), evE(p), std::min<TimeNs>(0, release - g.recEnd[item]) });
        }
    }
}

// Busy (non-gap) time of a CPU lane's pieces inside [a, b).
TimeNs busyIn(const Graph& g, const LaneNodes& ln, const std::vector<TimeNs>& prefix, TimeNs a, TimeNs b)
{
    const auto first = g.recEnd.begin() + ln.first, last = first + ln.count;
    const auto lo = std::size_t(std::upper_bound(first, last, a) - first); // first piece ending after a
    const auto hi
        = std::size_t(std::lower_bound(g.recStart.begin() + ln.first, g.recStart.begin() + ln.first + ln.count, b)
            - (g.recStart.begin() + ln.first)); // first piece starting at or after b
    if (lo >= hi)
        return 0;
    TimeNs busy = prefix[hi] - prefix[lo];
    const std::uint32_t pl = ln.first + std::uint32_t(lo), ph = ln.first + std::uint32_t(hi - 1);
    if (g.owner[pl] != kNone)
        busy -= std::max<TimeNs>(0, a - g.recStart[pl]);
    if (g.owner[ph] != kNone)
        busy -= std::max<TimeNs>(0, g.recEnd[ph] - b);
    return busy;
}

// A thread that begins after another one of its rank was started by it: its first piece starts after the other
// threads' most recent piece end (instead of at its recorded time, whatever came before).
void addFirstWake(Graph& g, const std::vector<std::uint32_t>& cpu, std::size_t a)
{
    const std::uint32_t p = g.lanes[cpu[a]].first;
    const TimeNs s = g.recStart[p];
    std::uint32_t waker = kNone;
    for (std::size_t b = 0; b < cpu.size(); ++b) {
        const LaneNodes& lb = g.lanes[cpu[b]];
        if (b == a || !lb.count)
            continue;
        const auto first = g.recEnd.begin() + lb.first;
        const auto k = std::size_t(std::upper_bound(first, first + lb.count, s) - first);
        if (k > 0 && (waker == kNone || g.recEnd[lb.first + k - 1] > g.recEnd[waker]))
            waker = lb.first + std::uint32_t(k - 1);
    }
    if (waker != kNone)
        g.edges.push_back({ evE(waker), evS(p), s - g.recEnd[waker] });
}

// Per rank with several CPU threads: a thread that resumes after a long stretch of untraced time during which another
// thread was busy at least half the time was woken by that thread (autograd's backward thread, the main thread
// waiting for it in backward()).
void addWakeEdges(Graph& g, int rank, std::size_t laneCount)
{
    const std::uint32_t base = g.rankLaneBase[std::size_t(rank)];
    std::vector<std::uint32_t> cpu;
    std::vector<std::vector<TimeNs>> prefix;
    for (std::size_t l = 0; l < laneCount; ++l) {
        const LaneNodes& ln = g.lanes[base + l];
        if (!ln.count || g.kind[ln.first] == NodeKind::Gpu)
            continue;
        cpu.push_back(base + std::uint32_t(l));
        std::vector<TimeNs> p(ln.count + 1, 0);
        for (std::uint32_t i = 0; i < ln.count; ++i)
            p[i + 1] = p[i] + (g.owner[ln.first + i] != kNone ? g.recEnd[ln.first + i] - g.recStart[ln.first + i] : 0);
        prefix.push_back(std::move(p));
    }
    if (cpu.size() < 2)
        return;
    for (std::size_t a = 0; a < cpu.size(); ++a) {
        const LaneNodes& la = g.lanes[cpu[a]];
        addFirstWake(g, cpu, a);
        // Untraced time: between top-level regions, or a region's own time between its children (Python waiting
        // in backward(), a step region's time between its ops); a leaf region's time is its own work.
        std::vector<std::uint8_t> hasChild(la.parent.size(), 0);
        for (const std::uint32_t parent : la.parent)
            if (parent != kNone)
                hasChild[parent] = 1;
        for (std::uint32_t p = la.first + 1; p + 1 < la.first + la.count; ++p) {
            const TimeNs s = g.recStart[p], e = g.recEnd[p];
            const bool untraced = g.owner[p] == kNone || hasChild[g.owner[p]];
            if (!untraced || g.kind[p] != NodeKind::Host || e - s < kWakeMinGapNs)
                continue;
            std::size_t best = cpu.size();
            TimeNs bestBusy = 0;
            for (std::size_t b = 0; b < cpu.size(); ++b) {
                if (b == a)
                    continue;
                const TimeNs busy = busyIn(g, g.lanes[cpu[b]], prefix[b], s, e);
                if (busy > bestBusy)
                    best = b, bestBusy = busy;
            }
            if (best == cpu.size() || 2 * bestBusy < e - s)
                continue;
            const LaneNodes& lb = g.lanes[cpu[best]];
            const auto first = g.recEnd.begin() + lb.first;
            auto k = std::size_t(std::upper_bound(first, first + lb.count, e) - first);
            while (k > 0 && g.owner[lb.first + k - 1] == kNone)
                --k;
            if (k == 0)
                continue;
            const std::uint32_t waker = lb.first + std::uint32_t(k - 1);
            g.kind[p] = NodeKind::Wake;
            g.work[p] = 0;
            g.edges.push_back({ evE(waker), evE(p), e - g.recEnd[waker] });
        }
    }
}

TimeNs recordedTime(const Graph& g, std::uint32_t ev)
{
    return ev & 1 ? g.recEnd[ev >> 1] : g.recStart[ev >> 1];
}

// A start dependency of a node as calibrated before groups are added: event `src` + gap.
struct StartDep
{
    std::uint32_t src;
    TimeNs gap;
};

// The start dependencies of op-level group members (and of the nodes before them on their lanes), read once before
// any group changes them.
class StartDeps
{
public:
    StartDeps(const Graph& g, const CollectiveMatch& match)
        : m_g(g)
        , m_index(g.nodeCount(), kNone)
    {
        for (const CollectiveGroup& grp : match.groups)
            for (const CollectiveMember& m : grp.members) {
                const LaneNodes& ln = g.laneNodes(m.rank, m.lane);
                if (!grp.waitBeforeStart || m.interval >= ln.nodeOf.size() || ln.nodeOf[m.interval] == kNone)
                    continue;
                for (std::uint32_t k = ln.nodeOf[m.interval];; --k) {
                    mark(k);
                    if (!batched(k))
                        break;
                }
            }
        for (std::size_t e = 0; e < g.edges.size(); ++e)
            if (!(g.edges[e].dst & 1) && m_index[g.edges[e].dst >> 1] != kNone) {
                m_edges[m_index[g.edges[e].dst >> 1]].push_back(e);
                m_deps[m_index[g.edges[e].dst >> 1]].push_back({ g.edges[e].src, g.edges[e].gap });
            }
    }

    // Node k's dependencies as the group's arrival sees them. A node that starts before the one before it on its
    // lane has ended runs batched with it (a send and a receive issued together): it arrives as that one does, so
    // it takes that one's dependencies instead of depending on it.
    std::vector<StartDep> resolved(std::uint32_t k) const
    {
        std::vector<StartDep> out = m_deps[m_index[k]];
        if (batched(k)) {
            const auto more = resolved(k - 1);
            out.insert(out.end(), more.begin(), more.end());
        } else if (m_g.hasChain(k)) {
            out.push_back({ evE(k - 1), m_chainGap[m_index[k]] });
        }
        return out;
    }
    // The edges into node k's start (indexes into Graph::edges).
    const std::vector<std::size_t>& edgesInto(std::uint32_t k) const { return m_edges[m_index[k]]; }

private:
    bool batched(std::uint32_t k) const { return m_g.hasChain(k) && m_g.recEnd[k - 1] > m_g.recStart[k]; }
    void mark(std::uint32_t k)
    {
        if (m_index[k] != kNone)
            return;
        m_index[k] = std::uint32_t(m_deps.size());
        m_deps.emplace_back();
        m_edges.emplace_back();
        m_chainGap.push_back(m_g.chainGap[k]);
    }

    const Graph& m_g;
    std::vector<std::uint32_t> m_index; // node -> index into the lists below, kNone if not read
    std::vector<std::vector<StartDep>> m_deps;
    std::vector<std::vector<std::size_t>> m_edges;
    std::vector<TimeNs> m_chainGap;
};

// A group of op-level timers (CollectiveGroup::waitBeforeStart): each member was recorded from the moment all of
// them were present, and its waiting lies in the gap before it. So the group decides the members' starts: its
// arrivals are the members' start dependencies. The member that was ready last keeps its recorded gap after them,
// the others at most that gap (they would have been as quick). A member's own start dependencies keep no positive
// gap (they are in the group's arrival); it starts its recorded offset after the group. Replaying without edits
// gives back every recorded start.
void addStartGroup(Graph& g, std::uint32_t node, const std::vector<std::uint32_t>& members, const StartDeps& deps)
{
    std::vector<std::vector<StartDep>> dep(members.size());
    std::vector<TimeNs> ready(members.size(), std::numeric_limits<TimeNs>::min());
    std::size_t last = 0;
    for (std::size_t i = 0; i < members.size(); ++i) {
        dep[i] = deps.resolved(members[i]);
        for (const StartDep& d : dep[i])
            ready[i] = std::max(ready[i], recordedTime(g, d.src));
        if (dep[i].empty())
            ready[i] = g.recStart[members[i]];
        if (ready[i] > ready[last])
            last = i;
    }
    const TimeNs lastGap = g.recStart[members[last]] - ready[last];
    TimeNs groupTime = std::numeric_limits<TimeNs>::min();
    for (std::size_t i = 0; i < members.size(); ++i) {
        const std::uint32_t k = members[i];
        const TimeNs arrival = ready[i] + std::min(g.recStart[k] - ready[i], lastGap);
        groupTime = std::max(groupTime, arrival);
        for (const StartDep& d : dep[i]) {
            const TimeNs t = recordedTime(g, d.src);
            g.edges.push_back({ d.src, evS(node), t == ready[i] ? arrival - t : std::min<TimeNs>(0, arrival - t) });
        }
        g.chainGap[k] = std::min<TimeNs>(g.chainGap[k], 0);
        for (const std::size_t e : deps.edgesInto(k))
            g.edges[e].gap = std::min<TimeNs>(g.edges[e].gap, 0);
    }
    g.recStart[node] = g.recEnd[node] = groupTime;
    for (const std::uint32_t k : members) {
        g.edges.push_back({ evS(node), evS(k), g.recStart[k] - groupTime });
        g.edges.push_back({ evE(node), evE(k), std::min<TimeNs>(0, g.recStart[k] - groupTime) });
    }
}

void addGroups(Graph& g, const CollectiveMatch& match)
{
    const StartDeps starts(g, match);
    LaneNodes groupLane;
    groupLane.first = std::uint32_t(g.recStart.size());
    const auto laneIndex = std::uint32_t(g.lanes.size());
    g.lanes.push_back(std::move(groupLane));
    g.groupNode.assign(match.groups.size(), kNone);
    for (std::size_t gi = 0; gi < match.groups.size(); ++gi) {
        const CollectiveGroup& grp = match.groups[gi];
        std::vector<std::uint32_t> members;
        for (const CollectiveMember& m : grp.members) {
            const LaneNodes& ln = g.laneNodes(m.rank, m.lane);
            if (m.interval < ln.nodeOf.size() && ln.nodeOf[m.interval] != kNone)
                members.push_back(ln.nodeOf[m.interval]);
        }
        if (members.size() < 2)
            continue;
        const std::uint32_t node = addNode(
            g, grp.lastArrival, grp.lastArrival, std::uint32_t(gi), laneIndex, NodeKind::Group, PathPart::Latency);
        g.groupNode[gi] = node;
        if (grp.waitBeforeStart) {
            addStartGroup(g, node, members, starts);
            continue;
        }
        for (const std::uint32_t m : members) {
            g.edges.push_back({ evS(m), evS(node), 0 });
            const TimeNs release = std::clamp(grp.lastArrival, g.recStart[m], g.recEnd[m]);
            g.work[m] = g.recEnd[m] - release;
            g.edges.push_back({ evE(node), evE(m), std::min<TimeNs>(0, release - grp.lastArrival) });
        }
    }
    g.lanes[laneIndex].count = std::uint32_t(g.recStart.size()) - g.lanes[laneIndex].first;
}

void reserveNodes(Graph& g, std::size_t n)
{
    g.recStart.reserve(n);
    g.recEnd.reserve(n);
    g.work.reserve(n);
    g.chainGap.reserve(n);
    g.owner.reserve(n);
    g.laneOf.reserve(n);
    g.kind.reserve(n);
    g.part.reserve(n);
}

// Orders the edges by source event (counting sort) and fills edgeBegin.
void indexEdges(Graph& g)
{
    const std::size_t events = 2 * g.nodeCount();
    g.edgeBegin.assign(events + 1, 0);
    for (const Edge& e : g.edges)
        ++g.edgeBegin[e.src + 1];
    for (std::size_t i = 0; i < events; ++i)
        g.edgeBegin[i + 1] += g.edgeBegin[i];
    std::vector<Edge> sorted(g.edges.size());
    std::vector<std::uint32_t> fill(g.edgeBegin.begin(), g.edgeBegin.end() - 1);
    for (const Edge& e : g.edges)
        sorted[fill[e.src]++] = e;
    g.edges = std::move(sorted);
}

} // namespace

const char* pathPartName(PathPart p)
{
    static constexpr EnumName<PathPart> names[] = { { PathPart::Host, "host" }, { PathPart::Launch, "launch" },
        { PathPart::Sync, "sync" }, { PathPart::Compute, "compute" }, { PathPart::Communication, "communication" },
        { PathPart::Memcpy, "memcpy" }, { PathPart::Latency, "latency" }, { PathPart::Other, "other" } };
    return nameIn(names, p, "other");
}

std::optional<IntervalRef> launchCallOf(const Analysis& analysis, IntervalRef gpu)
{
    if (gpu.rank < 0 || std::size_t(gpu.rank) >= analysis.ranks.size())
        return std::nullopt;
    const auto& of = analysis.ranks[std::size_t(gpu.rank)].launchOf;
    if (gpu.lane < 0 || std::size_t(gpu.lane) >= of.size() || gpu.interval >= of[std::size_t(gpu.lane)].size())
        return std::nullopt;
    const LaunchRef l = of[std::size_t(gpu.lane)][gpu.interval];
    if (l.cpuLane == kUnknownLaunch)
        return std::nullopt;
    return IntervalRef { gpu.rank, int(l.cpuLane), l.interval };
}

Graph buildGraph(const Trace& trace, const Analysis& analysis, const CollectiveMatch& match)
{
    Graph g;
    // At most two pieces per CPU interval (its first piece and the one after it), one node per GPU interval.
    std::size_t bound = match.groups.size();
    for (const Rank& rank : trace.ranks)
        for (const Lane& lane : rank.lanes)
            bound += lane.isGpu() ? lane.intervals.size() : 2 * lane.intervals.size() + 1;
    reserveNodes(g, bound);
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const Rank& rank = trace.ranks[r];
        g.rankLaneBase.push_back(std::uint32_t(g.lanes.size()));
        for (std::size_t l = 0; l < rank.lanes.size(); ++l) {
            const auto laneIndex = std::uint32_t(g.lanes.size());
            LaneNodes ln;
            ln.rank = int(r);
            ln.lane = int(l);
            ln.first = std::uint32_t(g.recStart.size());
            g.lanes.push_back(std::move(ln));
            if (rank.lanes[l].isGpu())
                addGpuLane(g, analysis, rank.lanes[l].intervals, laneIndex);
            else
                HostSweep(g, analysis, rank.lanes[l].intervals, laneIndex).run();
            g.lanes[laneIndex].count = std::uint32_t(g.recStart.size()) - g.lanes[laneIndex].first;
        }
    }
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const std::size_t lanes = trace.ranks[r].lanes.size();
        const auto& rl = trace.ranks[r].lanes;
        const bool opLevel
            = std::any_of(rl.begin(), rl.end(), [](const Lane& l) { return l.commRole != CommRole::None; });
        GpuDeps deps(g, analysis, int(r), lanes, opLevel);
        deps.run();
        addSyncEdges(g, int(r), lanes, deps.launches());
        addWakeEdges(g, int(r), lanes);
    }
    addGroups(g, match);
    indexEdges(g);
    return g;
}

} // namespace exposure::whatif
