// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/collectives.h"
#include "analysis/heatmap.h"
#include "common/tablemodel.h"
#include "figure/heatmappaint.h"
#include "jobs/jobslot.h"

#include <QWidget>
#include <memory>
#include <optional>

class QComboBox;
class QLabel;
class QTableView;

namespace exposure {

namespace whatif {
struct EvenResult;
}

// The heat map itself: every cell a rectangle of the same size (heatmappaint.h), a tool tip per cell, and a click
// on a cell says which rank and step it is.
class HeatMapView : public QWidget
{
    Q_OBJECT
public:
    explicit HeatMapView(QWidget* parent = nullptr);
    void setScene(HeatMapScene scene);
    const HeatMapScene& scene() const { return m_scene; }
    // The layout at the widget's current size (what the last paint used).
    HeatMapLayout currentLayout() const;
    // Widget pixel at the centre of the cell of rank index `rank` and column `column`; nullopt if not shown.
    std::optional<QPoint> cellCentre(int rank, std::size_t column) const;
    QSize sizeHint() const override { return { 480, 260 }; }
    QSize minimumSizeHint() const override { return { 160, 120 }; }
    // What the view says while it has no heat map: that a trace is needed, or that its map is being computed.
    void setEmptyText(const QString& text);
    const QString& emptyText() const { return m_emptyText; }

signals:
    void cellClicked(int rank, int column); // rank index into Trace::ranks, column into StepHeatMap::columns

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool event(QEvent* event) override;

private:
    HeatMapScene m_scene;
    QString m_emptyText;
};

// The "Heat Map" dock: rank × step heat map of a metric (or the slowdown per DP rank × pipeline stage) (step time,
// compute, exposed communication, waiting for peers, idle, pipeline bubble where the analysis has one, the straggler
// what-if's slowdown computed when chosen), rows ordered by rank number, host, stage or value, outliers against their
// step's median outlined (robust z-score, analysis/heatmap.h); beside it the straggler ranking: ranks by how often they
// arrived last in collectives and by how much longer their steps ran than the median. Computed in a JobSlot when a
// trace is set; clicking a cell asks to show that rank and step.
class HeatMapPanel : public QWidget
{
    Q_OBJECT
public:
    // A trace with more ranks than this opens the dock by itself.
    static constexpr int kAutoOpenRanks = 16;
    enum Column { Rank, ArrivedLast, CausedWait, ExcessStep, SlowSteps };

    explicit HeatMapPanel(QWidget* parent = nullptr);
    void setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis,
        std::shared_ptr<const CollectiveMatch> collectives);
    void setMetric(HeatMetric metric);
    void setOrder(RankOrder order);
    HeatMetric metric() const;
    RankOrder order() const;
    // Rank × step (false), or the straggler what-if's slowdown per DP rank × pipeline stage (true: only for a job
    // whose ranks all have dp and pp coordinates; choosing it chooses the Slowdown metric).
    void setDpPpGrid(bool grid);
    bool dpPpGrid() const;
    bool dpPpGridAvailable() const;

    HeatMapView* view() const { return m_view; }
    TableModel* stragglers() const { return m_stragglers; }
    QComboBox* metricBox() const { return m_metric; }
    QComboBox* gridBox() const { return m_grid; }
    QLabel* summaryLabel() const { return m_summary; }
    JobSlot* jobs() const { return m_jobs; }
    std::shared_ptr<const StepHeatMap> heatMap() const { return m_map; }

signals:
    // A click on a cell: rank index, the step's StepWindow::index and the window to show (the step on all ranks).
    void cellActivated(int rank, int stepIndex, exposure::TimeRange window);

private:
    struct Result
    {
        std::shared_ptr<const StepHeatMap> map;
        std::vector<StragglerRank> stragglers;
    };
    void showResult(const Result& r);
    void updateScene();
    void updateMetricItems();
    // The Slowdown metric, computed when first chosen (the straggler what-if: one replay per rank).
    void computeSlowdown();

    std::shared_ptr<const Trace> m_trace;
    std::shared_ptr<const Analysis> m_analysis;
    std::shared_ptr<const CollectiveMatch> m_collectives;
    std::shared_ptr<const StepHeatMap> m_map;
    QComboBox* m_metric;
    QComboBox* m_order;
    QComboBox* m_grid;
    std::shared_ptr<const whatif::EvenResult> m_even; // the straggler what-if behind the Slowdown metric
    QLabel* m_summary;
    HeatMapView* m_view;
    TableModel* m_stragglers;
    QTableView* m_table;
    JobSlot* m_jobs;
};

} // namespace exposure
