// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"
#include "analysis/transfers.h"
#include "common/tablemodel.h"

#include <vector>

namespace exposure {

// The Transfers dock's table: one row per copy or memset (rank, stream, direction, bytes, duration, bandwidth, step,
// start); the numeric columns sort by value. Each row knows the interval it shows, whatever the sort order.
class TransfersModel : public TableModel
{
    Q_OBJECT
public:
    enum Column { Rank, Stream, Direction, Bytes, Duration, Bandwidth, Step, Start, ColumnCount };

    explicit TransfersModel(QObject* parent = nullptr);

    // The first `limit` of `rows` (named by `trace`, their steps by `analysis`).
    void setTransfers(
        const Trace& trace, const Analysis& analysis, const std::vector<TransferRow>& rows, std::size_t limit);
    // The copy shown in a row (rank -1 for a row that does not exist).
    IntervalRef transferAt(int row) const;

    // "4.10 kB"; "-" when the trace does not say.
    static QString bytesText(std::uint64_t bytes);
    // "2.05 GB/s"; "-" when unknown.
    static QString bandwidthText(double bytesPerSecond);

private:
    std::vector<IntervalRef> m_refs; // by TableModel::tag
};

} // namespace exposure
