// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/transfers.h"
#include "panels/rangepanel.h"
#include "panels/transfersmodel.h"

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
    using Column = TransfersModel::Column;
    using enum TransfersModel::Column;

    explicit TransfersPanel(QWidget* parent = nullptr);
    QString summary() const;
    TransfersModel* transfersModel() const { return m_transfers; }

signals:
    void transferSelected(exposure::IntervalRef ref);

private:
    struct Result
    {
        std::vector<TransferRow> rows;
        std::vector<TransferSum> byDirection, byStep;
    };
    void recompute() override;
    void clear() override { show({}); }
    void show(const Result& r);

    TransfersModel* m_transfers;
};

} // namespace exposure
