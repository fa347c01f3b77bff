// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"
#include "model/trace.h"
#include "view/drawlist.h"
#include "view/rankgroups.h"
#include "view/shareindex.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace exposure {

// What a lane mostly does (by busy time), used for row labels and ordering.
enum class LaneRole : std::uint8_t { Compute, Communication, Memcpy, Other, Cpu };
const char* laneRoleName(LaneRole role); // "compute", "NCCL", "memcpy", "", "CPU"

// Category of a name, from the analysis when there is one, else from its region kind and, for kernels, the default
// rules (so the timeline can draw a trace before or without an analysis).
Category categoryOf(const Trace& trace, const Analysis* analysis, StringId name);

// What one colour of the timeline stands for: a category and sub-group (gemm, AllReduce, HtoD, ...).
struct PaintClass
{
    Category category = Category::Host;
    std::string subgroup;
};

struct NameStats
{
    std::uint64_t count = 0;
    TimeNs total = 0;
    TimeNs min = 0;
    TimeNs max = 0;
};

// Everything the timeline needs besides the trace and the analysis, computed once per trace in the
// loading thread: LOD indexes per lane, the overlap segments as interval tables (name = OverlapState),
// lane roles and per-name instance statistics over all lanes.
struct ViewIndex
{
    std::vector<std::vector<LodIndex>> lod; // [rank][lane]
    std::vector<std::vector<LaneRole>> roles; // [rank][lane]
    // [rank][lane]: a communication stream's parallelism role and process group ("dp · 0 (default_pg)"; roles by the
    // analysis' rules, its "process_groups" first); empty where none is recorded.
    std::vector<std::vector<std::string>> commLabels;
    std::vector<IntervalTable> overlap; // [rank]; empty without analysis
    std::vector<LodIndex> overlapLod; // [rank]
    // Exact time per paint class at any zoom, for the area-true drawing of every row (see ShareIndex).
    std::vector<PaintClass> paintClasses; // by class id, in category then sub-group order
    std::vector<std::uint8_t> paintClassOfName; // by StringId
    // [rank][lane]; empty (intervalCount() 0) for CPU lanes split by depth, whose rows use DepthTables::shares:
    // their whole-lane index (a flattened copy, 16 bytes per piece) is built on first use by laneShares().
    std::vector<std::vector<ShareIndex>> shares;
    std::vector<ShareIndex> overlapShares; // [rank]; classes are OverlapState values
    std::vector<NameStats> nameStats; // by StringId
    // By StringId: 1 for idle / sync names, so that a fold of kernels and the idle gaps between them
    // shows a kernel colour (the lane LODs are built with it; pass it in DrawListParams::lowPriority).
    std::vector<std::uint8_t> lowPriority;

    // CPU lanes nest regions (ProfilerStep > forward > aten::… > cuLaunchKernel): drawn in one row, the deepest
    // region would hide its parents. So each CPU lane with nesting is split into one table per depth, depth 0 on
    // top; depths >= kMaxDepthRows - 1 share the last sub-row. `original` maps back to the lane's intervals.
    static constexpr int kMaxDepthRows = 4;
    struct DepthTables
    {
        std::vector<IntervalTable> tables; // [sub-row]; empty: the lane has no nesting
        std::vector<std::vector<std::uint32_t>> original; // [sub-row][i] = interval index in the lane
        std::vector<LodIndex> lods; // [sub-row]
        std::vector<ShareIndex> shares; // [sub-row]
        std::vector<std::uint8_t> rowOfInterval; // [lane interval] = sub-row
    };
    std::vector<std::vector<DepthTables>> depth; // [rank][lane]; empty tables for GPU lanes and flat CPU lanes

    // Sizes every table indexed by rank for `n` ranks.
    void resizeRanks(std::size_t n);
    static int depthRow(std::uint8_t depth) { return std::min<int>(depth, kMaxDepthRows - 1); }

    // On `threads` threads (0: one per hardware thread), ranks in blocks; the result does not depend on the count.
    static std::shared_ptr<const ViewIndex> build(const Trace& trace, const Analysis* analysis, int threads = 0);

    // The share index of a whole lane (built now if it is a nested CPU lane not indexed yet); thread-safe.
    const ShareIndex* laneShares(const Trace& trace, int rank, int lane) const;

private:
    mutable std::mutex m_lazyMutex;
    mutable std::map<std::pair<int, int>, std::unique_ptr<ShareIndex>> m_lazyShares;
};

// One row of the timeline.
struct TimelineRow
{
    // Group: the header row of a group of ranks (RowFilter::groups), drawn as the group's overlap states
    // (rankgroups.h); its ranks' rows follow it unless the group is collapsed.
    enum class Kind : std::uint8_t { Lane, Overlap, Group };
    Kind kind = Kind::Lane;
    int rank = 0; // a group row: the group's first rank
    int group = -1; // index into RowFilter::groups of a group row, and of the rows of a grouped rank
    int lane = -1; // -1 for the overlap row
    bool firstOfRank = false; // the row that carries the rank (or group) name in its label
    int depth = -1; // a CPU lane's nesting sub-row (ViewIndex::depth), -1: the whole lane in one row
    std::string label; // "Rank 0 · CUDA[0:7] compute", "CUDA[0:17] NCCL", "overlap"
};

struct RowFilter
{
    bool showCpu = true;
    bool showOverlap = true;
    bool gpuOnly = false; // hides CPU rows (and overlap rows when showOverlap is false)
    std::set<int> collapsedRanks; // rank indexes shown as one row
    // Ranks in groups (ignored with `only`, or when no rank has overlap rows to aggregate): each group is a header row
    // followed by its ranks' rows, or the header row alone when collapsed.
    std::vector<RankGroup> groups;
    std::set<int> collapsedGroups; // indexes into groups
    std::vector<std::pair<int, int>> only; // if non-empty: only these (rank, lane) rows; lane -1 = overlap
    bool cpuDepthRows = true; // CPU lanes with nesting get one sub-row per depth (ViewIndex::depth)
};

// Rows in display order: per rank its GPU streams (compute, then communication, memcpy, others),
// its overlap row, then its CPU threads; with groups, per group its header row and (expanded) its ranks' rows.
std::vector<TimelineRow> buildRows(const Trace& trace, const ViewIndex& index, const RowFilter& filter);

} // namespace exposure
