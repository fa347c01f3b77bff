// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "model/trace.h"
#include "timeline/palette.h"
#include "timeline/rowpaint.h"
#include "timeline/timelineoptions.h"
#include "view/viewindex.h"

#include <QColor>
#include <QString>
#include <memory>
#include <vector>

namespace exposure {

// The overlap rows' tables once collectives are matched: by rank, the view index's overlap segments with the
// waiting parts split off (splitWaiting), and their LOD and share indexes.
struct WaitingOverlap
{
    std::vector<IntervalTable> tables;
    std::vector<LodIndex> lods;
    std::vector<ShareIndex> shares;

    // Null when no matched member waits.
    static std::shared_ptr<const WaitingOverlap> build(const ViewIndex& index, const CollectiveMatch& match);
};

// State shared by the plot, its one plottable and its overlay: the data and how to draw it.
struct TimelineScene
{
    std::shared_ptr<const Trace> trace;
    std::shared_ptr<const Analysis> analysis;
    std::shared_ptr<const ViewIndex> index;
    // Optional: matched collectives; the waiting part of each matched communication block is hatched.
    std::shared_ptr<const CollectiveMatch> collectives;
    // From the collectives: what the overlap rows draw (with the waiting states); null: the view index's tables.
    std::shared_ptr<const WaitingOverlap> waiting;
    std::vector<TimelineRow> rows;
    std::vector<RankGroup> groups; // of options.grouping on this trace (TimelineRow::group indexes them)
    TimelineOptions options;
    Palette palette;
    std::vector<QColor> nameColors; // by StringId
    std::vector<QColor> classColors; // by paint class (ViewIndex::paintClasses)
    std::uint64_t generation = 0; // bumped whenever rows/data/colours change

    // Interval table drawn in a row (the lane's, or the rank's overlap segments).
    const IntervalTable* table(int row) const;
    const LodIndex* lod(int row) const;
    // Exact time per paint class of the row's table (overlap rows: per overlap state).
    const ShareIndex* shares(int row) const;
    // The ranks of a group as group rows aggregate them: each rank's overlap row table (with the waiting states once
    // collectives are matched) and its share index.
    std::vector<GroupMember> groupMembers(int group) const;
    int rowOf(int rank, int lane) const; // -1 if not shown (a CPU lane split by depth: its top sub-row)
    // The row that draws one interval of a lane (its depth's sub-row for nested CPU lanes); -1 if not shown.
    int rowOf(IntervalRef ref) const;
    // Index in the lane's table of item index `i` of table(row) (they differ in depth sub-rows).
    std::uint32_t laneInterval(int row, std::uint32_t i) const;
    // The depth tables of a row's lane, or nullptr if the row draws the lane's own table.
    const ViewIndex::DepthTables* depthTables(int row) const;
    QColor colorOf(int row, std::uint32_t interval) const;
    // Exact time per paint class (overlap rows: per OverlapState) of a row inside [start, end), largest first,
    // classes without time left out.
    std::vector<std::pair<std::uint8_t, TimeNs>> classTimes(int row, TimeNs start, TimeNs end) const;
    // What a class of a row is called: the sub-group (gemm, AllReduce), else the category; overlap states.
    QString classLabel(int row, std::uint8_t cls) const;
    bool classIsBusy(int row, std::uint8_t cls) const; // not idle / sync
};

} // namespace exposure
