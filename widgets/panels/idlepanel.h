// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/collectives.h"
#include "panels/idlemodel.h"
#include "panels/rangepanel.h"

#include <memory>
#include <vector>

namespace exposure {

// The "Idle" dock: why the GPUs were idle in the visible range. Per rank a one-line finding (host-bound, sync wait,
// queued, data loading), then the longest gaps across ranks with their causes, the CPU region the launching thread
// was in when the gap began, and the launch that ended it. Activating a gap asks to zoom there.
class IdlePanel : public RangePanel
{
    Q_OBJECT
public:
    static constexpr int kMaxGaps = 200;
    using Column = IdleModel::Column;
    using enum IdleModel::Column;

    explicit IdlePanel(QWidget* parent = nullptr);
    QString findings() const;
    IdleModel* gapsModel() const { return m_gaps; }
    // The cross-rank matching of the trace set next (may be null): a rank whose GPU is busy but whose NCCL time is
    // mostly waiting for a peer is then named as such. Call before setTrace().
    void setCollectives(std::shared_ptr<const CollectiveMatch> collectives) { m_collectives = std::move(collectives); }

signals:
    void zoomRequested(exposure::TimeRange range);

private:
    struct Result
    {
        std::vector<std::string> findings; // per rank
        std::vector<std::pair<int, IdleGap>> gaps; // (rank index, gap), longest first
    };
    void recompute() override;
    void clear() override { show({}); }
    void show(const Result& r);

    IdleModel* m_gaps;
    std::shared_ptr<const CollectiveMatch> m_collectives;
};

} // namespace exposure
