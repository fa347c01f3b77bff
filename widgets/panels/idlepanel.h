// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"
#include "jobs/jobslot.h"

#include <QWidget>
#include <memory>
#include <vector>

class QLabel;
class QTableWidget;

namespace exposure {

// The "Idle" dock: why the GPUs were idle in the visible range. Per rank a one-line finding (host-bound, sync wait,
// queued, data loading), then the longest gaps across ranks with their causes, the CPU region the launching thread
// was in when the gap began, and the launch that ended it. Activating a gap asks to zoom there.
class IdlePanel : public QWidget
{
    Q_OBJECT
public:
    static constexpr int kMaxGaps = 200;
    enum Column { Rank, Start, Duration, Cause, HostBound, SyncWait, Queued, Region, Launch, ColumnCount };

    explicit IdlePanel(QWidget* parent = nullptr);
    void setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis);
    void setVisibleRange(TimeRange range);

    QTableWidget* table() const { return m_table; }
    QString findings() const;
    JobSlot* jobs() const { return m_jobs; }

signals:
    void zoomRequested(exposure::TimeRange range);

private:
    struct Result
    {
        std::vector<std::string> findings; // per rank
        std::vector<std::pair<int, IdleGap>> gaps; // (rank index, gap), longest first
    };
    void recompute();
    void show(const Result& r);

    std::shared_ptr<const Trace> m_trace;
    std::shared_ptr<const Analysis> m_analysis;
    TimeRange m_range;
    QLabel* m_summary;
    QTableWidget* m_table;
    JobSlot* m_jobs;
    std::vector<TimeRange> m_rowRanges;
};

} // namespace exposure
