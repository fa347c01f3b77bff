// SPDX-License-Identifier: GPL-3.0-or-later
// Cross-rank matching of collective communication kernels: separates the time an NCCL kernel spends waiting for
// its slowest peer to arrive (LL/LL128 kernels busy-wait) from the time it spends moving data.
//
// Matching by identity: NCCL requires every member of a communicator to issue that communicator's collectives in
// the same order, so the k-th collective of one process group on each member is one collective. The group is known
// from torch.profiler's collective arguments (process group name, description and ranks; "Seq" numbers where
// recorded) or, without them, from the GPU stream (one NCCL stream per communicator and device). Where member counts
// differ (a truncated trace, a dropped record) the order is re-synchronised on the collective's type and size and on
// the end times after removing the members' clock offset. Instances without any identity (no stream) fall back to
// clustering by kernel name and end time: a collective ends on all members within microseconds of each other.
#pragma once

#include "analysis/analysis.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace exposure {

inline constexpr std::uint32_t kNoKey = 0xFFFFFFFFu;
inline constexpr std::uint64_t kNoCollectiveSeq = ~0ull;

struct CollectiveMember
{
    int rank = 0; // index into Trace::ranks
    int lane = 0;
    std::uint32_t interval = 0;
    TimeNs start = 0;
    TimeNs end = 0;
    TimeNs waitNs = 0; // from this instance's start until the last peer started (clipped to its duration)
    TimeNs transferNs = 0; // the rest of the instance: all peers present
    // Time the kernel spent queued behind an operation of the same communicator on another stream (FSDP's
    // all-gather and reduce-scatter streams): [start - queuedNs, start) is the recorded kernel before `start`, which
    // is where the collective itself could begin. Neither waiting for a peer nor transfer.
    TimeNs queuedNs = 0;
    std::uint32_t behind = kNoKey; // index into CollectiveMatch::keys: the operation queued behind ("all_gather")
};

// How the instances of one process group were matched.
enum class MatchMethod : std::uint8_t {
    ProcessGroup, // torch.profiler process group arguments, in issue order (or by "Seq")
    Stream, // the GPU stream of the communicator, in issue order
    Time, // kernel name and end time (no identity known, or identity matching failed)
    Identity, // op-level timers (Chrome traces): the operation's name, step, order and the ranks' coordinates
};
const char* matchMethodName(MatchMethod m);

// A member whose count of a group's collectives differs from the reference member's.
struct CountMismatch
{
    int rank = 0; // index into Trace::ranks
    int reference = 0; // the member with the most instances
    std::uint64_t rankCount = 0, referenceCount = 0;
    std::uint64_t unmatched = 0; // the rank's instances that found no counterpart
    TimeNs firstUnmatched = -1; // start of the rank's first such instance (-1: none, the reference has extras)
};

struct ProcessGroupMatch
{
    MatchMethod method = MatchMethod::Time;
    std::string name; // "0 (default_pg)", "stream 17"; empty for the time fallback
    std::string ranks; // "[0, 1]" as recorded; empty if not
    std::vector<int> members; // rank indexes with instances, sorted
    std::uint64_t instances = 0, matchedInstances = 0;
    std::uint64_t collectives = 0; // matched collectives (CollectiveGroups)
    std::vector<CountMismatch> mismatches;
};

struct CollectiveGroup
{
    StringId name = 0; // the kernel name shared by the members
    TimeNs lastArrival = 0; // latest start among the members
    int lastRank = -1; // the rank that arrived last (the one the others waited for)
    std::vector<CollectiveMember> members; // one per participating rank, sorted by rank
    std::uint32_t processGroup = 0; // index into CollectiveMatch::processGroups
    std::uint32_t ordinal = 0; // position in the process group's order (the reference member's)
    std::uint32_t signature = kNoKey; // index into CollectiveMatch::keys: type, dtype, sizes; kNoKey if unknown
    // Op-level timers (MatchMethod::Identity): the members were recorded from the moment all of them were present,
    // so a member's waiting lies before its start, not inside it (what-if: the group decides the members' starts).
    bool waitBeforeStart = false;
};

struct RankCollectiveStats
{
    std::uint64_t matched = 0; // communication kernels that belong to a group of at least two ranks
    std::uint64_t unmatched = 0; // communication kernels with no counterpart
    TimeNs waitNs = 0; // Σ waitNs of the matched instances
    TimeNs transferNs = 0; // Σ transferNs of the matched instances
    TimeNs exposedWaitNs = 0; // |U(wait parts) \ U(compute)|: waiting that nothing hides
    std::uint64_t causedWaits = 0; // groups in which this rank arrived last while others waited
    TimeNs causedWaitNs = 0; // Σ of the other members' waits in those groups
    std::uint64_t unidentified = 0; // communication kernels without a process group or stream identity
    TimeNs queuedNs = 0; // Σ queuedNs of the matched instances (CollectiveMember)
};

struct CollectiveMatch
{
    std::vector<CollectiveGroup> groups; // sorted by lastArrival
    std::vector<RankCollectiveStats> ranks; // by rank index
    bool multipleHosts = false; // ranks on several hosts: their clocks may not be aligned
    TimeNs toleranceNs = 0;
    TimeNs maxWaitNs = 0; // longest wait part of any member (bounds window searches)
    std::vector<ProcessGroupMatch> processGroups; // the time fallback, if used, is one entry with method Time
    std::vector<std::string> keys; // identity and signature texts (see CollectiveCandidate)

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
    std::uint32_t group = kNoKey; // key index of the process group's identity ("\x1epg\x1f..." / "\x1estream\x1f...")
    std::uint32_t signature = kNoKey; // key index of "\x1esig\x1f<type>\x1f<dtype>\x1f<in>\x1f<out>\x1f<size>"
    std::uint64_t seq = kNoCollectiveSeq; // the process group's sequence number, if recorded
    // Key index of the one operation this instance takes part in, where its identity is known outright (op-level
    // timers); candidates with equal `preset` form one group. kNoKey: matched by process group, stream or time.
    std::uint32_t preset = kNoKey;
    // Queued behind an instance of the same process group on another lane of the rank that started earlier and
    // ended after this one started: until then (markQueued()); `behind` is the key index of that one's operation.
    TimeNs queuedUntil = std::numeric_limits<TimeNs>::min();
    std::uint32_t behind = kNoKey;
    bool sends = false; // an op-level timer of the sending side of a transfer (its group is named after it)
};

// The communication timers of op-level lanes (Chrome traces' ROLE-comm lanes), each with `group` = the role
// ("\x1eop\x1fpp") and, where its identity can be told, `preset` = the operation it takes part in (opidentity.cpp
// says how); `intern` maps a key text to its index in the caller's key table.
// `nameOf` gives a candidate's `name` for a kernel name; `globalIndexOf[k]` the rank index of local rank k (empty:
// the same).
std::vector<CollectiveCandidate> opLevelCandidates(const Trace& trace, const Analysis& analysis,
    const std::function<std::uint32_t(const std::string&)>& intern,
    const std::function<std::uint32_t(StringId)>& nameOf, const std::vector<int>& globalIndexOf = {});
// Kernels of one process group on two lanes of a rank (FSDP2's all-gather and reduce-scatter streams share one
// communicator): NCCL runs a communicator's operations one after the other, so a kernel that starts while an
// earlier-started one of its group still runs on another lane is queued behind it until that one ends. Sets
// `queuedUntil` and `behind` (interned: the normalised operation, "all_gather"); `nameText` gives a candidate's
// kernel name, `keys` is the table the candidates' group indexes refer to.
void markQueued(std::vector<CollectiveCandidate>& items, const std::vector<std::string>& keys,
    const std::function<std::string(std::uint32_t)>& nameText,
    const std::function<std::uint32_t(const std::string&)>& intern);

// The identity of the communication kernel `interval` of `lane` (group, signature, seq); `intern` maps a key
// text to its index in the caller's key table; `self` is the global rank (Rank::rank) of the lane's rank, which a
// send or receive needs (p2pIdentity).
template <typename Intern>
void identifyCandidate(const Lane& lane, std::uint32_t interval, const Trace& trace, CollectiveCandidate& c,
    Intern&& intern, int self = -1);
// A send or receive of global rank `self` whose peer is known (CollectiveArgs::peer, else the other member of a
// two-rank group): its group key "\x1ep2p\x1f<group>, <src> → <dst>\x1f<ranks>", one per process group and
// direction (NCCL delivers a group's transfers from src to dst in the order they were issued, so the k-th send meets
// the k-th receive, in "Seq" order where recorded), and a signature that leaves the direction out. False (nothing
// set) for any other instance.
bool p2pIdentity(const CollectiveArgs& args, int self, std::string& group, std::string& signature);
// The key texts of one candidate (for identifyCandidate's callers).
std::string groupKeyText(const Lane& lane, const CollectiveArgs* args);
std::string signatureText(const CollectiveArgs& args);
const CollectiveArgs* collectiveArgsOf(const Trace& trace, const Lane& lane, std::uint32_t interval);
std::uint64_t collectiveSeqOf(const Lane& lane, std::uint32_t interval);

template <typename Intern>
void identifyCandidate(
    const Lane& lane, std::uint32_t interval, const Trace& trace, CollectiveCandidate& c, Intern&& intern, int self)
{
    const CollectiveArgs* args = collectiveArgsOf(trace, lane, interval);
    std::string group, signature;
    if (!args || !p2pIdentity(*args, self, group, signature)) {
        group = groupKeyText(lane, args);
        signature = args ? signatureText(*args) : std::string();
    }
    c.group = group.empty() ? kNoKey : intern(group);
    c.signature = args ? intern(signature) : kNoKey;
    c.seq = args ? collectiveSeqOf(lane, interval) : kNoCollectiveSeq;
}

// The matching of matchCollectives() over explicit candidates of `rankCount` ranks (in any order): groups, per-rank
// counts and sums and the index; RankCollectiveStats::exposedWaitNs is left 0 (see exposedWait()). `keys` is the
// table the candidates' group and signature indexes refer to.
CollectiveMatch matchCandidates(std::vector<CollectiveCandidate> all, std::size_t rankCount, bool multipleHosts,
    TimeNs toleranceNs = 200'000, std::vector<std::string> keys = {});
// Per rank (match.ranks order): the wait parts [start, start + waitNs) of its matched instances with waitNs > 0.
std::vector<std::vector<TimeRange>> waitParts(const CollectiveMatch& match);
// |U(waits) \ U(compute of the rank)|: the waiting that no compute of the rank hides.
TimeNs exposedWait(const std::vector<TimeRange>& waits, const RankAnalysis& rank);
// A rank's overlap segments (disjoint, sorted, names = OverlapState) with the parts of Exposed / Hidden segments
// that lie in U(waits) renamed WaitingExposed / WaitingHidden (split at the edges): what the timeline's overlap rows
// paint once collectives are matched. Every nanosecond keeps its place; the WaitingExposed time is exposedWait() and
// WaitingExposed + WaitingHidden is |U(waits)| (wait parts lie inside communication kernels).
IntervalTable splitWaiting(const IntervalTable& overlap, std::vector<TimeRange> waits);

// Matches the communication kernels (Category::Communication) of all ranks: by process group and order where the
// group is known (see the top of this file), otherwise instances of the same kernel name on different ranks form a
// group when they overlap in time and their ends lie within `toleranceNs` of the group's first end. Each rank
// contributes at most one instance per group.
CollectiveMatch matchCollectives(const Trace& trace, const Analysis& analysis, TimeNs toleranceNs = 200'000);

// Waiting of one rank's matched communication kernels inside a window (the GUI's scopes: whole trace, a step,
// the visible range).
struct CollectiveWaitStats
{
    TimeNs waitNs = 0; // Σ over the rank's members of |[start, start + waitNs) ∩ window|
    TimeNs exposedWaitNs = 0; // |U(those clipped wait parts) \ U(compute of the rank)|: waiting nothing hides
    std::uint64_t members = 0; // members whose wait part intersects the window
};
// When communication kernels exist on several ranks and fewer than 90 % of them were matched: one line naming the
// ranks and the reason (different counts, no group identity, clocks too far apart); empty otherwise.
std::string matchWarning(const Trace& trace, const CollectiveMatch& match);

// Per process group and collective (type, data type, message size): what users of nccl-tests read.
struct CollectiveSummaryRow
{
    std::uint32_t processGroup = 0; // index into CollectiveMatch::processGroups
    std::string op; // the operation the program called ("all_reduce", analysis/commops.h); empty where not asked
    std::string type; // "allreduce", ... (from the arguments, else the classification of the kernel name)
    std::string dtype; // empty if unknown
    std::uint64_t bytes = 0; // message size S (0 if unknown)
    std::string algorithm; // "RING_LL": the classification's algorithm and protocol; empty if it has no algorithm
    int ranks = 0; // members of the collectives
    std::uint64_t count = 0;
    TimeNs totalNs = 0; // Σ collective spans (first member's start to last member's end)
    TimeNs latencyTotalNs = 0; // Σ shortest member durations (the last arrival's: no waiting)
    TimeNs minLatencyNs = 0; // the shortest of those
    TimeNs memberNs = 0, waitNs = 0; // Σ member durations and Σ member waits
    double busBandwidth = 0; // bytes/s by the nccl-tests formula over the mean latency; 0 if unknown
};
// A row's type and algorithm are what `rules` make of its kernel name (NameClass: the collective, NCCL's algorithm
// and protocol, a rule's named groups included), unless the kernels' arguments say the type.
std::vector<CollectiveSummaryRow> collectiveSummary(
    const Trace& trace, const CollectiveMatch& match, const Rules& rules);
// The same with the kernel names of CollectiveGroup::name given by `kernelName` (candidates with their own table),
// and, given `opOf`, one row per operation the program called (`opOf` of a group: its first member's operation)
// within each process group, sorted by it: all-to-all and all-reduce carried by the same SendRecv kernels apart.
std::vector<CollectiveSummaryRow> collectiveSummary(const CollectiveMatch& match, const Rules& rules,
    const std::function<std::string(std::uint32_t)>& kernelName,
    const std::function<std::string(const CollectiveGroup&)>& opOf = {});

// Per process group and member: how often it arrived last while others waited, and the waiting it caused them.
struct StragglerRow
{
    std::uint32_t processGroup = 0;
    int rank = 0;
    std::uint64_t arrivedLast = 0;
    TimeNs causedWaitNs = 0;
};
std::vector<StragglerRow> stragglerSummary(const CollectiveMatch& match);

CollectiveWaitStats collectiveWaitInWindow(
    const CollectiveMatch& match, const Analysis& analysis, int rank, TimeRange window);

// The waiting and transfer parts of one rank's matched communication kernels clipped to a window (a step's values:
// the parts of adjacent windows add up to those over their union; over the whole trace they equal the rank's
// RankCollectiveStats::waitNs and transferNs).
struct CollectiveSplit
{
    TimeNs waitNs = 0; // Σ |[start, start + waitNs) ∩ window|
    TimeNs transferNs = 0; // Σ |[start + waitNs, end) ∩ window|
};
CollectiveSplit collectiveSplitInWindow(const CollectiveMatch& match, int rank, TimeRange window);

// The rank's waiting inside a window (its members' wait parts clipped to it) and the rank it waited for most
// (the last arrival of the groups that hold most of it), named by `trace`'s rank labels.
PeerWait peerWaitInWindow(const CollectiveMatch& match, const Trace& trace, int rank, TimeRange window);
// The finding of one rank over a window (idleFinding of its statistics, idle gaps, launch diagnosis and, with
// `match`, its waiting for peers): the one line the Idle panel, the What If dock and `exposure-cli stats` print.
std::string rankFinding(
    const Trace& trace, const Analysis& analysis, const CollectiveMatch* match, int rank, TimeRange window);
// The same with the labels of the ranks given by `labelOf(rank index)` (a report whose ranks live elsewhere).
PeerWait peerWaitInWindow(
    const CollectiveMatch& match, const std::function<std::string(int)>& labelOf, int rank, TimeRange window);

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
