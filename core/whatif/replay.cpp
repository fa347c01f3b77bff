// SPDX-License-Identifier: GPL-3.0-or-later
#include "whatif/replay.h"

#include <algorithm>
#include <limits>

namespace exposure::whatif {

namespace {

constexpr TimeNs kUnset = std::numeric_limits<TimeNs>::min();

class Replayer
{
public:
    Replayer(const Graph& g, const Plan& p, std::vector<std::uint32_t>* order = nullptr)
        : m_g(g)
        , m_p(p)
        , m_work(p.workOf(g))
        , m_order(order)
    { }

    Replay run()
    {
        const std::size_t nodes = m_g.nodeCount(), events = 2 * nodes;
        m_r.time.assign(events, kUnset);
        m_r.bind.assign(events, kSourceBind);
        m_pending.assign(events, 0);
        for (std::uint32_t n = 0; n < nodes; ++n) {
            m_pending[2 * n] = m_g.hasChain(n) ? 1 : 0;
            m_pending[2 * n + 1] = 1;
        }
        for (const Edge& e : m_g.edges)
            if (!dropped(e))
                ++m_pending[e.dst];
        if (m_p.groupsAtMedian)
            m_arrivals.resize(m_g.groupNode.size());
        for (std::uint32_t ev = 0; ev < events; ev += 2)
            if (m_pending[ev] == 0)
                m_ready.push_back(ev);
        std::size_t cursor = 0;
        for (;;) {
            while (!m_ready.empty()) {
                const std::uint32_t ev = m_ready.back();
                m_ready.pop_back();
                process(ev);
            }
            while (cursor < events && m_pending[cursor] == kDone)
                ++cursor;
            if (cursor == events)
                break;
            // A cycle (e.g. collectives matched crosswise): take the earliest unfinished event as it stands.
            ++m_r.forced;
            m_pending[cursor] = 0;
            process(std::uint32_t(cursor));
        }
        return std::move(m_r);
    }

private:
    static constexpr std::uint32_t kDone = 0xFFFFFFFFu; // m_pending of a processed event

    bool dropped(const Edge& e) const { return (e.dst & 1) && !m_p.waitsFor(e.dst >> 1); }

    void notify(std::uint32_t dst, TimeNs t, std::uint32_t bind)
    {
        if (m_pending[dst] == kDone)
            return;
        if (m_p.groupsAtMedian && !(dst & 1) && m_g.kind[dst >> 1] == NodeKind::Group)
            m_arrivals[m_g.owner[dst >> 1]].emplace_back(t, bind);
        else if (m_r.time[dst] == kUnset || t > m_r.time[dst]) {
            m_r.time[dst] = t;
            m_r.bind[dst] = bind;
        }
        if (--m_pending[dst] == 0)
            m_ready.push_back(dst);
    }

    void medianArrival(std::uint32_t ev)
    {
        auto& a = m_arrivals[m_g.owner[ev >> 1]];
        if (a.empty())
            return;
        const auto mid = a.begin() + std::ptrdiff_t((a.size() - 1) / 2);
        std::nth_element(a.begin(), mid, a.end());
        m_r.time[ev] = mid->first;
        m_r.bind[ev] = mid->second;
        a.clear();
        a.shrink_to_fit();
    }

    void process(std::uint32_t ev)
    {
        m_pending[ev] = kDone;
        if (m_order)
            m_order->push_back(ev);
        const std::uint32_t node = ev >> 1;
        if (!(ev & 1)) {
            if (m_p.groupsAtMedian && m_g.kind[node] == NodeKind::Group)
                medianArrival(ev);
            if (m_r.time[ev] == kUnset) {
                m_r.time[ev] = m_g.recStart[node];
                m_r.bind[ev] = kSourceBind;
            }
            notify(ev + 1, m_r.time[ev], kChainBind);
        } else {
            m_r.time[ev] += m_work[node];
            const std::uint32_t next = node + 1;
            if (next < m_g.nodeCount() && m_g.hasChain(next) && m_g.laneOf[next] == m_g.laneOf[node])
                notify(2 * next, m_r.time[ev] + m_g.chainGap[next], kChainBind);
        }
        for (std::uint32_t e = m_g.edgeBegin[ev]; e < m_g.edgeBegin[ev + 1]; ++e)
            if (!dropped(m_g.edges[e]))
                notify(m_g.edges[e].dst, m_r.time[ev] + m_g.edges[e].gap, e);
    }

    const Graph& m_g;
    const Plan& m_p;
    Replay m_r;
    const TimeNs* m_work;
    std::vector<std::uint32_t>* m_order; // when set: every event appended as it is taken
    std::vector<std::uint32_t> m_pending; // unmet dependencies of each event; kDone once processed
    std::vector<std::uint32_t> m_ready;
    std::vector<std::vector<std::pair<TimeNs, std::uint32_t>>> m_arrivals; // by group, groupsAtMedian only
};

} // namespace

Plan recordedPlan(const Graph&)
{
    return {};
}

Plan editablePlan(const Graph& graph)
{
    Plan p;
    p.work = graph.work;
    p.noRelease.assign(graph.nodeCount(), 0);
    return p;
}

Replay replay(const Graph& graph, const Plan& plan)
{
    return Replayer(graph, plan).run();
}

IncrementalReplay::IncrementalReplay(const Graph& graph, Plan base)
    : m_g(graph)
    , m_plan(std::move(base))
{
    const std::size_t events = 2 * m_g.nodeCount();
    m_order.reserve(events);
    m_base = Replayer(m_g, m_plan, &m_order).run();
    m_pos.assign(events, 0);
    for (std::uint32_t i = 0; i < m_order.size(); ++i)
        m_pos[m_order[i]] = i;
    // Everything by place in the order (a replay walks it front to back, so its reads and writes stay close).
    m_baseTime.resize(events);
    m_work.assign(events, 0);
    const TimeNs* work = m_plan.workOf(m_g);
    for (std::uint32_t p = 0; p < events; ++p) {
        m_baseTime[p] = m_base.time[m_order[p]];
        if (m_order[p] & 1)
            m_work[p] = work[m_order[p] >> 1];
    }
    // Every input the full replay heeds: a node's start → its end, the lane's previous end → its start (the chain),
    // the cross edges it does not drop; of those, only the ones taken before their destination count (notify()
    // ignores an event already taken).
    struct In
    {
        std::uint32_t src, dst; // places in the order
        TimeNs gap;
    };
    std::vector<In> inputs;
    inputs.reserve(events + m_g.edges.size());
    auto add = [&](std::uint32_t src, std::uint32_t dst, TimeNs gap) {
        if (m_pos[src] < m_pos[dst])
            inputs.push_back({ m_pos[src], m_pos[dst], gap });
    };
    for (std::uint32_t n = 0; n < m_g.nodeCount(); ++n) {
        if (m_g.hasChain(n))
            add(2 * n - 1, 2 * n, m_g.chainGap[n]);
        add(2 * n, 2 * n + 1, 0);
    }
    for (const Edge& e : m_g.edges)
        if (!((e.dst & 1) && !m_plan.waitsFor(e.dst >> 1)))
            add(e.src, e.dst, e.gap);
    m_inBegin.assign(events + 1, 0);
    m_outBegin.assign(events + 1, 0);
    for (const In& in : inputs) {
        ++m_inBegin[in.dst + 1];
        ++m_outBegin[in.src + 1];
    }
    for (std::size_t p = 0; p < events; ++p) {
        m_inBegin[p + 1] += m_inBegin[p];
        m_outBegin[p + 1] += m_outBegin[p];
    }
    m_inSrc.resize(inputs.size());
    m_inGap.resize(inputs.size());
    m_outDst.resize(inputs.size());
    std::vector<std::uint32_t> inFill(m_inBegin.begin(), m_inBegin.end() - 1);
    std::vector<std::uint32_t> outFill(m_outBegin.begin(), m_outBegin.end() - 1);
    for (const In& in : inputs) {
        m_inSrc[inFill[in.dst]] = in.src;
        m_inGap[inFill[in.dst]++] = in.gap;
        m_outDst[outFill[in.src]++] = in.dst;
    }
}

Replay IncrementalReplay::replayChanged(
    const std::vector<std::uint32_t>& changed, const TimeNs* work, std::size_t* recomputedOut) const
{
    // The changed ends, by place in the order, with their new work.
    std::vector<std::pair<std::uint32_t, TimeNs>> edits;
    for (const std::uint32_t n : changed) {
        const std::uint32_t p = m_pos[2 * n + 1];
        if (work[n] != m_work[p])
            edits.emplace_back(p, work[n]);
    }
    std::sort(edits.begin(), edits.end());
    Replay out;
    out.forced = m_base.forced;
    out.time = m_base.time;
    std::vector<TimeNs> time = m_baseTime; // by place in the order
    // Events still to recompute, by place; `pending` counts them.
    std::vector<std::uint8_t> dirty(m_order.size(), 0);
    std::size_t pending = 0, recomputed = 0;
    for (const auto& [p, w] : edits)
        if (!dirty[p]) {
            dirty[p] = 1;
            ++pending;
        }
    auto edit = edits.begin();
    for (std::size_t p = edits.empty() ? m_order.size() : edits.front().first; pending > 0; ++p) {
        if (!dirty[p])
            continue;
        --pending;
        ++recomputed;
        // Every dirty event has an input (the end its start, a start what marked it): the maximum is set.
        TimeNs t = kUnset;
        for (std::uint32_t i = m_inBegin[p]; i < m_inBegin[p + 1]; ++i)
            t = std::max(t, time[m_inSrc[i]] + m_inGap[i]);
        if (m_order[p] & 1) {
            while (edit != edits.end() && edit->first < p)
                ++edit;
            t += edit != edits.end() && edit->first == p ? edit->second : m_work[p];
        }
        if (t == time[p])
            continue;
        time[p] = t;
        out.time[m_order[p]] = t;
        for (std::uint32_t i = m_outBegin[p]; i < m_outBegin[p + 1]; ++i)
            if (!dirty[m_outDst[i]]) {
                dirty[m_outDst[i]] = 1;
                ++pending;
            }
    }
    if (recomputedOut)
        *recomputedOut = recomputed;
    return out;
}

TimeNs PathSums::total() const
{
    TimeNs t = 0;
    for (const TimeNs v : ns)
        t += v;
    return t;
}

PathSums& PathSums::operator+=(const PathSums& o)
{
    for (std::size_t i = 0; i < ns.size(); ++i)
        ns[i] += o.ns[i];
    otherRanksNs += o.otherRanksNs;
    return *this;
}

PathSums criticalPath(const Graph& g, const Plan& plan, const Replay& r, std::uint32_t event, TimeNs from, int rank)
{
    PathSums out;
    const TimeNs* work = plan.workOf(g);
    // Every instant of [from, time(event)) goes to one part: the latest piece of the path that covers it. A
    // dependency with a negative gap (a kernel recorded as starting before its launch call ended, a calibrated
    // release before its source's end) leads back to a later time than the one it decided; the pieces before it
    // then cover only what is still uncovered, below `frontier`, so no part is negative and the parts add up.
    TimeNs frontier = r.time[event];
    auto add = [&](PathPart part, TimeNs lo, TimeNs hi, std::uint32_t node) {
        const TimeNs amount = std::max<TimeNs>(0, std::min(hi, frontier) - std::max(lo, from));
        frontier = std::min(frontier, std::max(lo, from));
        if (amount == 0)
            return;
        out.ns[std::size_t(part)] += amount;
        const int nodeRank = g.lanes[g.laneOf[node]].rank;
        if (nodeRank >= 0 && nodeRank != rank)
            out.otherRanksNs += amount;
    };
    std::uint32_t ev = event;
    TimeNs cur = r.time[ev];
    while (std::min(cur, frontier) > from) {
        const std::uint32_t node = ev >> 1;
        const std::uint32_t b = r.bind[ev];
        if (b == kSourceBind) {
            add(PathPart::Other, from, cur, node);
            break;
        }
        std::uint32_t pred;
        if (ev & 1) {
            const TimeNs release = cur - work[node];
            add(g.part[node], release, cur, node);
            if (std::min(release, frontier) <= from)
                break;
            pred = b == kChainBind ? ev - 1 : g.edges[b].src;
            add(PathPart::Latency, r.time[pred], release, node);
        } else {
            pred = b == kChainBind ? ev - 1 : g.edges[b].src;
            const bool hostChain = b == kChainBind && g.kind[node] != NodeKind::Gpu;
            add(hostChain ? PathPart::Host : PathPart::Latency, r.time[pred], cur, node);
        }
        ev = pred;
        cur = r.time[ev];
    }
    return out;
}

} // namespace exposure::whatif
