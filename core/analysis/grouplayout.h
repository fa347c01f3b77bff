// SPDX-License-Identifier: GPL-3.0-or-later
// Parallelism roles and coordinates read from the layout of a job's process groups, for the groups whose role neither a
// "process_groups" rule nor the group's name or description says (docs/statistics.md, "Roles from the layout").
//  * A group whose recorded operations are all sends and receives is pipeline parallel (pp).
//  * Megatron's grid (tensor parallel innermost, pipeline outermost: rank = pp·t·d + dp·t + tp): where the groups that
//    carry collectives (the whole job's group aside) are exactly contiguous blocks of t ≥ 2 ranks starting at
//    multiples of t that carry all-reduce, and groups of d ≥ 2 ranks at stride t, starting within the first t ranks
//    of a block of t·d, that carry all-reduce, all-gather or reduce-scatter, t·d divides N, and the pipeline groups
//    (if any) have stride t·d, the blocks are tp and the strided groups dp. Every rank then has its tp and dp
//    coordinates, and its pp coordinate where there are pipeline groups and all have p = N / (t·d) ranks.
//  * The group of all N ranks of the job (N: one more than the highest rank the trace or any group names) is dp when it
//    is the only group with a known operation, and other in a job that has other groups.
//  * Anything else (one kind of collective group only, strides that do not nest, a group of one rank) stays other.
#pragma once

#include "model/trace.h"

#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace exposure {

// One process group as the trace's collectives record it.
struct LayoutGroup
{
    std::string name; // CollectiveArgs::groupName, else CollectiveArgs::processGroup
    std::vector<int> ranks; // its global ranks, sorted
    std::set<std::string> ops; // the normalised operations recorded on it ("all_reduce", "send", ...)
    std::string role; // what the layout says: "dp", "tp", "pp" or "other"
};

struct GroupLayout
{
    std::vector<LayoutGroup> groups; // by (ranks, name)
    int worldSize = 0; // N
    int tp = 0, dp = 0, pp = 0; // the grid where the layout gives it (0: not known)
    // The group of each recorded (ranks text, name): "[0, 1, ...]" + '\x1f' + name -> index into groups. A job of
    // 1 024 ranks records the same text of 5 KB with every collective: read once, not once per collective.
    std::unordered_map<std::string, std::size_t> byText;

    // The layout's role of the group of `args`; empty where the layout does not know the group.
    std::string roleOf(const CollectiveArgs& args) const;
    // The coordinates of global rank `rank` in the inferred grid; all -1 where the grid is not known.
    ParallelCoords coordsOf(int rank) const;
};

// The layout of the process groups recorded anywhere in `trace` (kernels' and record_param_comms' arguments). Groups
// that a rule or their name decide are part of the layout too (their shape counts); their role stays theirs
// (roleOfGroup in analysis/commops.h asks the layout last).
GroupLayout inferGroupLayout(const Trace& trace);

// The layout of one trace, inferred when first asked for, once, whichever thread asks first: the per-rank work of a
// report on all cores shares it (inferred per rank, it cost 76 s of CPU at 1 024 ranks).
class SharedGroupLayout
{
public:
    explicit SharedGroupLayout(const Trace& trace)
        : m_trace(trace)
    { }
    const GroupLayout& get() const
    {
        std::call_once(m_once, [this] { m_layout = inferGroupLayout(m_trace); });
        return m_layout;
    }

private:
    const Trace& m_trace;
    mutable std::once_flag m_once;
    mutable GroupLayout m_layout;
};

// "[0, 1, 2]" -> {0, 1, 2} (any non-digits separate the numbers), sorted.
std::vector<int> groupRankList(const std::string& text);

} // namespace exposure
