// SPDX-License-Identifier: GPL-3.0-or-later
// Ranks in groups (by host, pipeline stage, data-parallel group or blocks of consecutive ranks), and what a group
// drawn as one row paints: per pixel column, the time its ranks spend in each overlap state, idle included, so that
// a state's painted area in the row equals its share of the group's rank-time.
#pragma once

#include "analysis/categories.h"
#include "model/trace.h"
#include "view/shareindex.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exposure {

// How the ranks of a trace are grouped on the timeline.
enum class RankGrouping : std::uint8_t {
    None, // no groups: every rank's rows as they come
    Auto, // hosts where the trace names several, else pipeline stages, else DP groups, else blocks
    Host, // Rank::host
    Stage, // the pipeline-parallel coordinate (ParallelCoords::pp)
    DataParallel, // ranks that differ only in the dp coordinate (one gradient all-reduce group)
    Blocks, // consecutive ranks, kBlockRanks or more a block (at most kMaxBlockGroups blocks)
};
const char* rankGroupingName(RankGrouping g); // "none", "auto", "host", "stage", "dp", "blocks"
std::optional<RankGrouping> rankGroupingFromName(std::string_view name);

// Traces with more ranks than this open with their ranks grouped (RankGrouping::Auto) and every group collapsed:
// 16 ranks with a GPU stream, a communication stream and an overlap row each are already 48 rows, about what a
// window shows at the minimum row height; beyond that a rank-per-row timeline scrolls and no longer reads at a glance.
inline constexpr std::size_t kGroupRanksAbove = 16;
// Blocks: 8 ranks (the GPUs of one common node) or the smallest power of two above that keeps the blocks at most 64.
inline constexpr int kBlockRanks = 8;
inline constexpr int kMaxBlockGroups = 64;

struct RankGroup
{
    std::string label; // "node3", "stage 1", "dp group pp 0 · tp 1", "ranks 8–15"
    std::vector<int> ranks; // indexes into Trace::ranks, increasing
    bool operator==(const RankGroup&) const = default;
};

// The grouping Auto stands for on this trace (any other grouping is returned as is).
RankGrouping resolveGrouping(const Trace& trace, RankGrouping grouping);
// The groups of `grouping` (Auto resolved): every rank in exactly one group, groups in the order of their first rank.
// Ranks without the coordinate a grouping needs form a group of their own ("stage ?"). Empty for None.
std::vector<RankGroup> groupRanks(const Trace& trace, RankGrouping grouping);

// The states of a group row: the overlap states (OverlapState values) and, last, idle (no state).
inline constexpr int kGroupIdle = kOverlapStateCount;
inline constexpr int kGroupStateCount = kOverlapStateCount + 1;

// A rank of a group: its overlap segments (disjoint, names = OverlapState) and their share index.
struct GroupMember
{
    const IntervalTable* table = nullptr;
    const ShareIndex* shares = nullptr;
};

// The time span of column x of the grid as the share index counts it: [edge(x), edge(x + 1)), or the nanosecond at
// edge(x) for a column narrower than one.
TimeRange columnSpan(const ColumnGrid& grid, int x);

// Per column of `grid`, the time the members spend in each state: out[x · kGroupStateCount + s], exact integer ns.
// Idle (s = kGroupIdle) is each member's time inside `within` (the trace's extent) in no state, so that inside
// `within` the states of a column sum to members × the column's span: a state's share of the column is its share of
// the group's rank-time there.
void groupStateColumns(
    const std::vector<GroupMember>& members, const ColumnGrid& grid, TimeRange within, std::vector<TimeNs>& out);
// The same summed over [range.start, range.end) ∩ within.
std::array<TimeNs, kGroupStateCount> groupStateTimes(
    const std::vector<GroupMember>& members, TimeRange range, TimeRange within);

} // namespace exposure
