// SPDX-License-Identifier: GPL-3.0-or-later
// Replay of a what-if graph: every event's time recomputed from the (edited) work of the nodes and the calibrated
// dependencies, in one topological pass; and the critical path that decided an event's time.
#pragma once

#include "whatif/graph.h"

#include <array>
#include <cstdint>
#include <vector>

namespace exposure::whatif {

// What the replay runs: the work of every node (recorded or edited) and which dependencies an edit removed.
struct Plan
{
    std::vector<TimeNs> work; // by node; empty: the recorded work (Graph::work)
    std::vector<std::uint8_t> noRelease; // by node: 1 = its release dependencies are ignored; empty: none are
    bool groupsAtMedian = false; // a group is complete when the median member (lower median) has started, not the last

    const TimeNs* workOf(const Graph& g) const { return work.empty() ? g.work.data() : work.data(); }
    bool waitsFor(std::uint32_t node) const { return noRelease.empty() || !noRelease[node]; }
};
// The plan that replays the recording.
Plan recordedPlan(const Graph& graph);
// A plan that edits start from: the recorded work in `work`, no dependency ignored.
Plan editablePlan(const Graph& graph);

inline constexpr std::uint32_t kSourceBind = 0xFFFFFFFFu; // an event without dependencies: its recorded time
inline constexpr std::uint32_t kChainBind = 0xFFFFFFFEu; // S: the lane's previous node's E; E: its own S

struct Replay
{
    std::vector<TimeNs> time; // by event (2·node: start, 2·node+1: end)
    std::vector<std::uint32_t> bind; // by event: the edge index, kChainBind or kSourceBind that decided it
    std::size_t forced = 0; // events taken out of order because their dependencies formed a cycle

    TimeNs start(std::uint32_t node) const { return time[2 * std::size_t(node)]; }
    TimeNs end(std::uint32_t node) const { return time[2 * std::size_t(node) + 1]; }
};

Replay replay(const Graph& graph, const Plan& plan);

// Many replays that differ from one shared baseline in the work of a few nodes (the straggler what-if's attribution:
// one group of nodes as recorded, everything else evened). The baseline is replayed once in full, recording the order
// in which the events were taken; that order depends on the graph and the plan's dropped dependencies only, never on
// the work, so it is the order of every replay that changes work alone. A replay of changed work then recomputes,
// in that order, only the events whose inputs changed: the ends of the changed nodes, and whatever an event whose
// time moved leads to. Each recomputed event is the maximum over its inputs (those taken before it, as in the full
// replay, where an event forced out of a cycle ignores the ones taken after it) plus its work: every time is exactly
// the full replay's. Cost: the events reachable from a change whose time moves, not the whole graph.
// Plans with groupsAtMedian are not supported (the median of the arrivals is not a maximum): replay() them in full.
class IncrementalReplay
{
public:
    IncrementalReplay(const Graph& graph, Plan base); // base.groupsAtMedian must be false
    const Plan& basePlan() const { return m_plan; }
    const Replay& base() const { return m_base; }
    // The replay of the base plan with the work of the `changed` nodes taken from `work` (by node; every other node
    // keeps the base's): its times (Replay::bind is left empty, forced is the base's). Listed nodes whose work
    // equals the base's cost nothing. `recomputed`, when given, receives the number of events recomputed (a full
    // replay computes all of them).
    Replay replayChanged(
        const std::vector<std::uint32_t>& changed, const TimeNs* work, std::size_t* recomputed = nullptr) const;

private:
    const Graph& m_g;
    Plan m_plan;
    Replay m_base;
    std::vector<std::uint32_t> m_order; // events in the order the replay took them
    std::vector<std::uint32_t> m_pos; // by event: its place in m_order
    // By place in the order: the base's time, the base's work of an end (0 for a start).
    std::vector<TimeNs> m_baseTime, m_work;
    // By place: its inputs (places taken before it) [m_inBegin[p], m_inBegin[p + 1]) of m_inSrc / m_inGap, and the
    // places it leads to [m_outBegin[p], m_outBegin[p + 1]) of m_outDst.
    std::vector<std::uint32_t> m_inBegin, m_inSrc, m_outBegin, m_outDst;
    std::vector<TimeNs> m_inGap;
};

// The critical path into one event, followed back to time `from`, summed by part. Every part is >= 0 and the parts
// add up to exactly time(event) - from: each instant goes to the latest piece of the path that covers it (an edge
// whose gap is negative leads back to a later time: the pieces before it count only below the earliest time reached).
// `otherRanksNs` is the part of the path that lies on ranks other than `rank` (reached through collective groups).
struct PathSums
{
    std::array<TimeNs, kPathPartCount> ns {};
    TimeNs otherRanksNs = 0;
    TimeNs total() const;
    PathSums& operator+=(const PathSums& o);
};
PathSums criticalPath(
    const Graph& graph, const Plan& plan, const Replay& replay, std::uint32_t event, TimeNs from, int rank);

} // namespace exposure::whatif
