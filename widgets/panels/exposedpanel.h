// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "analysis/commops.h"
#include "common/tablemodel.h"
#include "jobs/jobslot.h"
#include "model/trace.h"
#include "timeline/palette.h"

#include <QWidget>
#include <memory>
#include <vector>

class QComboBox;
class QLabel;
class QTableView;

namespace exposure {

class ElidedLabel;

// Per rank: one stacked bar of compute-only / hidden / exposed / idle time over the scope.
class RankBarChart : public QWidget
{
    Q_OBJECT
public:
    explicit RankBarChart(QWidget* parent = nullptr);
    void setData(QStringList labels, std::vector<WindowStats> stats);
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QStringList m_labels;
    std::vector<WindowStats> m_stats;
};

// The "Exposed communication" dock: per-rank and total statistics (computeStats / computeTotal /
// computeStepStats) for the whole trace, one step, or the visible range — recomputed in the
// background as the view changes; stale results are dropped.
class ExposedPanel : public QWidget
{
    Q_OBJECT
public:
    enum class Scope { WholeTrace, VisibleRange, Step };
    // Totals: one row per rank (the statistics table). ByRole: the rank's communication split by the role of its
    // process groups (commRoleShares), one row per rank and role, then the ranks' sums per role.
    enum class Split { Totals, ByRole };

    explicit ExposedPanel(QWidget* parent = nullptr);

    // `collectives` (optional) adds the "Waiting" / "Exposed waiting" columns: NCCL time spent waiting for peers.
    void setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis,
        std::shared_ptr<const CollectiveMatch> collectives = nullptr);
    void setVisibleRange(TimeRange range);
    void setScope(Scope scope, int step = 0);
    Scope scope() const { return m_scope; }
    void setSplit(Split split);
    Split split() const { return m_split; }

    // Last delivered numbers: index = rank, last = total. For tests and export.
    const std::vector<WindowStats>& stats() const { return m_stats; }
    // Waiting for peers in the same scope, same indexing (empty without collectives).
    const std::vector<CollectiveWaitStats>& waits() const { return m_waits; }
    TimeRange statsWindow() const { return m_window; }
    // Per rank: its step's length on the GPU (step scope) or its span; the "All ranks" row shows the longest.
    const std::vector<TimeNs>& lengths() const { return m_lengths; }
    QTableView* table() const { return m_table; }
    // Rows: the ranks, then "All ranks"; the rank labels are the row titles (vertical header).
    TableModel* model() const { return m_model; }
    JobSlot* jobs() const { return m_jobs; }
    // By role (last delivered, empty while split by nothing): index = rank, last = the sums over the ranks per role.
    const std::vector<std::vector<CommRoleShare>>& roleShares() const { return m_roleShares; }
    // Rows: "<rank> · <role>" for each rank and role, then "All ranks · <role>"; columns: busy, exposed, waiting,
    // transfer, kernels.
    TableModel* roleModel() const { return m_roleModel; }
    QTableView* roleTable() const { return m_roleTable; }

signals:
    void updated();

private:
    void recompute();
    void show(const std::vector<WindowStats>& stats, const std::vector<CollectiveWaitStats>& waits);
    void onScopeChanged(int comboIndex);
    void showRoles(const std::vector<std::vector<CommRoleShare>>& shares);

    std::shared_ptr<const Trace> m_trace;
    std::shared_ptr<const Analysis> m_analysis;
    std::shared_ptr<const CollectiveMatch> m_collectives;
    Scope m_scope = Scope::WholeTrace;
    int m_step = 0;
    TimeRange m_visible;
    TimeRange m_window;
    std::vector<WindowStats> m_stats;
    std::vector<CollectiveWaitStats> m_waits;
    std::vector<TimeNs> m_lengths; // per rank: step time (step scope) or span
    Split m_split = Split::Totals;
    std::vector<std::vector<CommRoleShare>> m_roleShares;
    QComboBox* m_scopeBox;
    QComboBox* m_splitBox;
    ElidedLabel* m_caption; // what the scope covers: elided to its room (the whole text in its tooltip)
    TableModel* m_model;
    QTableView* m_table;
    TableModel* m_roleModel;
    QTableView* m_roleTable;
    RankBarChart* m_chart;
    JobSlot* m_jobs;
};

} // namespace exposure
