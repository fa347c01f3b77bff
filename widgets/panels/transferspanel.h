// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/transfers.h"
#include "jobs/jobslot.h"

#include <QWidget>
#include <memory>
#include <vector>

class QLabel;
class QTableWidget;

namespace exposure {

struct Analysis;

// The "Transfers" dock: copies and memsets of the visible range — per direction the count, bytes, time and mean
// bandwidth, the sums per rank and step, and every copy (rank, stream, direction, bytes, duration, bandwidth, step).
// Activating a copy asks to select it on the timeline.
class TransfersPanel : public QWidget
{
    Q_OBJECT
public:
    static constexpr int kMaxRows = 2000;
    enum Column { Rank, Stream, Direction, Bytes, Duration, Bandwidth, Step, Start, ColumnCount };

    explicit TransfersPanel(QWidget* parent = nullptr);
    void setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis);
    void setVisibleRange(TimeRange range);

    QTableWidget* table() const { return m_table; }
    QString summary() const;
    JobSlot* jobs() const { return m_jobs; }

signals:
    void transferSelected(int rank, int lane, quint32 interval);

private:
    struct Result
    {
        std::vector<TransferRow> rows;
        std::vector<TransferSum> byDirection, byStep;
    };
    void recompute();
    void show(const Result& r);

    std::shared_ptr<const Trace> m_trace;
    std::shared_ptr<const Analysis> m_analysis;
    TimeRange m_range;
    QLabel* m_summary;
    QTableWidget* m_table;
    JobSlot* m_jobs;
    std::vector<IntervalRef> m_refs;
};

} // namespace exposure
