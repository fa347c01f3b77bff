// SPDX-License-Identifier: GPL-3.0-or-later
// Cross-rank matching of collective communication kernels: separates the time an NCCL kernel spends waiting for
// its slowest peer to arrive (LL/LL128 kernels busy-wait) from the time it spends moving data.
//
// Why ends, not starts: a collective cannot complete on any rank before every rank has joined it, and once the
// last rank joins they all finish within a few microseconds of each other. So the instances of one collective on
// different ranks overlap in time and end together, whereas their starts differ by however long the early ranks
// waited. Matching by end time (with an overlap requirement) is robust against instances missing on one rank (a
// profiling window that starts later, a dropped record), which ordinal matching is not.
#pragma once

#include "analysis/analysis.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace exposure {

struct CollectiveMember
{
    int rank = 0;           // index into Trace::ranks
    int lane = 0;
    std::uint32_t interval = 0;
    TimeNs start = 0;
    TimeNs end = 0;
    TimeNs waitNs = 0;      // from this instance's start until the last peer started (clipped to its duration)
    TimeNs transferNs = 0;  // the rest of the instance: all peers present
};

struct CollectiveGroup
{
    StringId name = 0;           // the kernel name shared by the members
    TimeNs lastArrival = 0;      // latest start among the members
    int lastRank = -1;           // the rank that arrived last (the one the others waited for)
    std::vector<CollectiveMember> members; // one per participating rank, sorted by rank
};

struct RankCollectiveStats
{
    std::uint64_t matched = 0;     // communication kernels that belong to a group of at least two ranks
    std::uint64_t unmatched = 0;   // communication kernels with no counterpart
    TimeNs waitNs = 0;             // Σ waitNs of the matched instances
    TimeNs transferNs = 0;         // Σ transferNs of the matched instances
    TimeNs exposedWaitNs = 0;      // |U(wait parts) \ U(compute)|: waiting that nothing hides
    std::uint64_t causedWaits = 0; // groups in which this rank arrived last while others waited
    TimeNs causedWaitNs = 0;       // Σ of the other members' waits in those groups
};

struct CollectiveMatch
{
    std::vector<CollectiveGroup> groups;         // sorted by lastArrival
    std::vector<RankCollectiveStats> ranks;      // by rank index
    bool multipleHosts = false;                  // ranks on several hosts: their clocks may not be aligned
    TimeNs toleranceNs = 0;
    TimeNs maxWaitNs = 0;                        // longest wait part of any member (bounds window searches)

    // The group member for a communication kernel instance, or nullptr if it was not matched.
    const CollectiveMember* member(IntervalRef interval) const;
    const CollectiveGroup* groupOf(IntervalRef interval) const;

    // (rank, lane, interval) -> (group, member) lookup, sorted.
    struct Ref
    {
        int rank;
        int lane;
        std::uint32_t interval;
        std::uint32_t group;
        std::uint32_t member;
        bool operator<(const Ref& o) const
        {
            return rank != o.rank ? rank < o.rank : lane != o.lane ? lane < o.lane : interval < o.interval;
        }
    };
    std::vector<Ref> index;

private:
    const Ref* find(IntervalRef interval) const;
};

// One communication kernel instance as the matching sees it. `name` identifies the kernel name (a StringId, or an
// index into a name table shared by all candidates); `rank` is the rank's index in the whole trace.
struct CollectiveCandidate
{
    TimeNs start = 0;
    TimeNs end = 0;
    int rank = 0;
    int lane = 0;
    std::uint32_t interval = 0;
    std::uint32_t name = 0;
};

// The matching of matchCollectives() over explicit candidates of `rankCount` ranks (in any order): groups, per-rank
// counts and sums and the index; RankCollectiveStats::exposedWaitNs is left 0 (see exposedWait()).
CollectiveMatch matchCandidates(
    std::vector<CollectiveCandidate> all, std::size_t rankCount, bool multipleHosts, TimeNs toleranceNs = 200'000);
// Per rank (match.ranks order): the wait parts [start, start + waitNs) of its matched instances with waitNs > 0.
std::vector<std::vector<TimeRange>> waitParts(const CollectiveMatch& match);
// |U(waits) \ U(compute of the rank)|: the waiting that no compute of the rank hides.
TimeNs exposedWait(const std::vector<TimeRange>& waits, const RankAnalysis& rank);

// Matches the communication kernels (Category::Communication) of all ranks. Instances of the same kernel name on
// different ranks form a group when they overlap in time and their ends lie within `toleranceNs` of the group's
// first end. Each rank contributes at most one instance per group.
CollectiveMatch matchCollectives(const Trace& trace, const Analysis& analysis, TimeNs toleranceNs = 200'000);

// Waiting of one rank's matched communication kernels inside a window (the GUI's scopes: whole trace, a step,
// the visible range).
struct CollectiveWaitStats
{
    TimeNs waitNs = 0;        // Σ over the rank's members of |[start, start + waitNs) ∩ window|
    TimeNs exposedWaitNs = 0; // |U(those clipped wait parts) \ U(compute of the rank)|: waiting nothing hides
    std::uint64_t members = 0; // members whose wait part intersects the window
};
CollectiveWaitStats collectiveWaitInWindow(const CollectiveMatch& match, const Analysis& analysis, int rank,
                                           TimeRange window);

// The waiting and transfer parts of one rank's matched communication kernels clipped to a window (a step's values:
// the parts of adjacent windows add up to those over their union; over the whole trace they equal the rank's
// RankCollectiveStats::waitNs and transferNs).
struct CollectiveSplit
{
    TimeNs waitNs = 0;     // Σ |[start, start + waitNs) ∩ window|
    TimeNs transferNs = 0; // Σ |[start + waitNs, end) ∩ window|
};
CollectiveSplit collectiveSplitInWindow(const CollectiveMatch& match, int rank, TimeRange window);

// The rank's waiting inside a window (its members' wait parts clipped to it) and the rank it waited for most
// (the last arrival of the groups that hold most of it), named by `trace`'s rank labels.
PeerWait peerWaitInWindow(const CollectiveMatch& match, const Trace& trace, int rank, TimeRange window);

// One rank's matched communication kernels as [start, start + waitNs, end), sorted by start: many windows of one
// rank (its steps) are read from it in O(log n + members in the window) each.
class RankCollectiveParts
{
public:
    RankCollectiveParts(const CollectiveMatch& match, int rank);
    CollectiveSplit in(TimeRange window) const;

private:
    struct Part
    {
        TimeNs start, waitEnd, end;
    };
    std::vector<Part> m_parts;
    TimeNs m_maxDuration = 0;
};

} // namespace exposure
