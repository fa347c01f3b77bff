// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/transfers.h"
#include "panels/rangepanel.h"

#include <memory>
#include <vector>

namespace exposure {

// The "Transfers" dock: copies and memsets of the visible range — per direction the count, bytes, time and mean
// bandwidth, the sums per rank and step, and every copy (rank, stream, direction, bytes, duration, bandwidth, step).
// Activating a copy asks to select it on the timeline.
class TransfersPanel : public RangePanel
{
    Q_OBJECT
public:
    static constexpr int kMaxRows = 2000;
    enum Column { Rank, Stream, Direction, Bytes, Duration, Bandwidth, Step, Start, ColumnCount };

    explicit TransfersPanel(QWidget* parent = nullptr);
    QString summary() const;

signals:
    void transferSelected(int rank, int lane, quint32 interval);

private:
    struct Result
    {
        std::vector<TransferRow> rows;
        std::vector<TransferSum> byDirection, byStep;
    };
    void recompute() override;
    void clear() override { show({}); }
    void show(const Result& r);

    std::vector<IntervalRef> m_refs;
};

} // namespace exposure
