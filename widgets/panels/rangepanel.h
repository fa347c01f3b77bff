// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"
#include "common/tablemodel.h"
#include "jobs/jobslot.h"

#include <QStringList>
#include <QWidget>
#include <memory>

class QLabel;
class QTableView;

namespace exposure {

// A dock panel about the visible range: a summary line over a read-only table of rows (a TableModel in a
// QTableView), recomputed in a JobSlot whenever the trace or the range changes (a newer range supersedes the older
// job).
class RangePanel : public QWidget
{
    Q_OBJECT
public:
    void setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis);
    void setVisibleRange(TimeRange range);

    QTableView* table() const { return m_table; }
    TableModel* model() const { return m_model; }
    JobSlot* jobs() const { return m_jobs; }

protected:
    // Takes `model` over (its columns are the table's).
    RangePanel(TableModel* model, QWidget* parent);
    // Starts the job for the current trace and range (both set).
    virtual void recompute() = 0;
    // Empties the panel (a new trace is coming).
    virtual void clear() = 0;

    QLabel* summaryLabel() const { return m_summary; }

    std::shared_ptr<const Trace> m_trace;
    std::shared_ptr<const Analysis> m_analysis;
    TimeRange m_range;

private:
    QLabel* m_summary;
    TableModel* m_model;
    QTableView* m_table;
    JobSlot* m_jobs;
};

} // namespace exposure
