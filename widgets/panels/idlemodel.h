// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"
#include "common/tablemodel.h"

#include <utility>
#include <vector>

namespace exposure {

// The Idle dock's table: one row per GPU idle gap (rank, start, length, the cause with the most time, the time per
// cause, the CPU region the launching thread was in, the launch that ended it). Each row knows its gap's range.
class IdleModel : public TableModel
{
    Q_OBJECT
public:
    enum Column { Rank, Start, Duration, Cause, HostBound, SyncWait, Queued, Region, Launch, ColumnCount };

    explicit IdleModel(QObject* parent = nullptr);

    // (rank index, gap) pairs of `trace`, in the order given; region and launch names through `analysis`.
    void setGaps(const Trace& trace, const Analysis& analysis, const std::vector<std::pair<int, IdleGap>>& gaps);
    // The gap shown in a row (an empty range for a row that does not exist).
    TimeRange gapAt(int row) const;

    // The cause with the most time in a gap ("host-bound", "sync wait", "queued", "unattributed"; host-bound gaps
    // mostly spent loading data say so).
    static QString causeText(const IdleGap& gap);

private:
    std::vector<TimeRange> m_ranges; // by TableModel::tag
};

} // namespace exposure
