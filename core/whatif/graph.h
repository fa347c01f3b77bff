// SPDX-License-Identifier: GPL-3.0-or-later
// The dependency graph of a trace for what-if replay (pure C++, no Qt GUI).
//
// Nodes are the work of the trace, laid out lane by lane in recorded order:
//  - host pieces: each CPU thread cut at every region boundary into pieces, each owned by the innermost region open
//    there (or by nothing: a gap between top-level regions). Pieces tile the thread; each follows the one before.
//  - GPU work: every kernel, copy and memset of a stream, in stream order (idle and sync markers are not work).
//  - collective groups: one node per cross-rank group of a communication kernel (its time is the last member's
//    start).
// Each node has a start event S and an end event E (event id 2·node and 2·node+1). A node starts when all its start
// dependencies are met: the previous node of its lane (the "chain", with a recorded gap) and cross edges (launch →
// GPU work, an inferred wait of one stream on another, group → nothing). It is *released* when its start and all its
// release dependencies are met (a synchronising call waits for the GPU work it waits on; a collective member waits
// for its group; a thread woken by another waits for the waker), and ends `work` after its release.
//
// Every gap on an edge is calibrated on the recording: the dependency that decided an event's recorded time keeps
// its recorded gap, the others get min(nominal gap, recorded gap). So replaying without edits gives back the
// recorded times exactly, and an edit moves what depends on it.
#pragma once

#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "model/trace.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace exposure::whatif {

inline constexpr std::uint32_t kNone = 0xFFFFFFFFu;

enum class NodeKind : std::uint8_t {
    Host, // a piece of a CPU region (or of a gap between regions)
    Launch, // a piece of a kernel-launch call
    Sync, // the last piece of a synchronising call: released when the GPU work it waits on has ended
    Wake, // a gap after which a thread was woken by another one: no work, released by the waker
    Gpu, // a kernel, copy or memset
    Group, // a cross-rank collective group
};

// What a stretch of a critical path is.
enum class PathPart : std::uint8_t {
    Host, // CPU regions and the time between them
    Launch, // kernel-launch calls
    Sync, // the own time of synchronising calls (not the waiting: that is the GPU work waited for)
    Compute, // compute kernels
    Communication, // the transfer part of communication kernels
    Memcpy, // copies and memsets
    Latency, // between a launch and its kernel, between kernels of a stream, between threads
    Other, // before the first node the path reaches (not in the graph)
};
inline constexpr int kPathPartCount = 8;
const char* pathPartName(PathPart p); // "host", "launch", "sync", "compute", "communication", "memcpy", ...

// A cross edge: event `src` + gap decides (with the others) the time of event `dst`.
struct Edge
{
    std::uint32_t src = 0;
    std::uint32_t dst = 0;
    TimeNs gap = 0;
};

// The nodes of one lane (a CPU thread, a GPU stream, or the groups of the trace) are nodes [first, first + count).
struct LaneNodes
{
    int rank = -1; // -1 for the group lane
    int lane = -1;
    std::uint32_t first = 0;
    std::uint32_t count = 0;
    // CPU lanes, by interval of the lane: its first and last piece (absolute node index) and its parent interval.
    std::vector<std::uint32_t> firstPiece, lastPiece, parent;
    // GPU lanes, by interval of the lane: its node (kNone for idle/sync markers).
    std::vector<std::uint32_t> nodeOf;
};

struct Graph
{
    // Per node.
    std::vector<TimeNs> recStart, recEnd;
    std::vector<TimeNs> work; // recorded time from release to end
    std::vector<TimeNs> chainGap; // recorded gap after the previous node of the lane (unused for a lane's first)
    std::vector<std::uint32_t> owner; // host: owning interval (kNone: a gap); GPU: interval; group: group index
    std::vector<std::uint32_t> laneOf; // index into lanes
    std::vector<NodeKind> kind;
    std::vector<PathPart> part;

    std::vector<LaneNodes> lanes;
    std::vector<Edge> edges; // sorted by src
    std::vector<std::uint32_t> edgeBegin; // by event: edges [edgeBegin[ev], edgeBegin[ev + 1]) leave it
    std::vector<std::uint32_t> groupNode; // by CollectiveMatch group
    std::vector<std::uint32_t> rankLaneBase; // by rank: index into lanes of its first lane (lanes follow in order)
    std::vector<std::string> warnings;

    std::size_t nodeCount() const { return recStart.size(); }
    bool hasChain(std::uint32_t node) const
    {
        return node > lanes[laneOf[node]].first && lanes[laneOf[node]].rank >= 0;
    }
    const LaneNodes& laneNodes(int rank, int lane) const
    {
        return lanes[rankLaneBase[std::size_t(rank)] + std::size_t(lane)];
    }
};

// The CPU call that launched a GPU interval, if known. The one place the what-if reads the analysis' launch pairing.
std::optional<IntervalRef> launchCallOf(const Analysis& analysis, IntervalRef gpu);

// Builds the graph of the whole trace. `match` is the cross-rank matching of its communication kernels.
Graph buildGraph(const Trace& trace, const Analysis& analysis, const CollectiveMatch& match);

} // namespace exposure::whatif
