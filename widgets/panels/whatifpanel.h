// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/collectives.h"
#include "panels/rangepanel.h"
#include "timeline/timelineoptions.h"
#include "whatif/whatif.h"

#include <memory>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QPushButton;

namespace exposure {

struct ViewIndex;
class TimelinePlot;

// The "What if" dock: edits of the trace's work (regions removed, GPU work scaled, communication hidden / faster /
// without waiting, synchronising calls removed, faster launches), replayed through the what-if graph
// (core/whatif). Per rank the measured, replayed and predicted mean step time and the critical path; below, the
// predicted timeline of the visible steps, drawn by the same plot as the recorded one and exportable as a figure.
class WhatIfPanel : public RangePanel
{
    Q_OBJECT
public:
    enum Column { Rank, Measured, Replay, Predicted, Change, Fidelity, Path, ColumnCount };

    explicit WhatIfPanel(QWidget* parent = nullptr);
    ~WhatIfPanel() override;

    // The edits the controls describe; throws nothing (a malformed "PATTERN=F" entry is skipped and reported in the
    // summary).
    whatif::Edits edits(QString* problem = nullptr) const;
    void setEdits(const whatif::Edits& edits);
    // Replays the current edits now (the Replay button; nothing is replayed before it is pressed once per trace).
    void apply();

    TimelinePlot* predictedPlot() const { return m_plot; }
    // The main timeline's drawing options (palette, rows shown) for the predicted timeline (its range stays its own).
    void followTimelineOptions(const TimelineOptions& options);
    // The predicted trace of the last replay (null before one) and the range the plot shows.
    std::shared_ptr<const Trace> predictedTrace() const { return m_predTrace; }
    TimeRange predictedRange() const { return m_predRange; }
    QString summary() const;
    // The cross-rank matching of the trace set next (may be null): the replay's model uses it, and the findings over
    // the visible range (rankFinding, as the Idle panel and `stats`) name a rank waiting for a peer. Call before
    // setTrace().
    void setCollectives(std::shared_ptr<const CollectiveMatch> collectives) { m_collectives = std::move(collectives); }

signals:
    // A replay (table and predicted timeline) was shown.
    void replayed();

private:
    struct Result
    {
        std::shared_ptr<const whatif::WhatIfModel> model;
        whatif::WhatIfResult result;
        std::shared_ptr<const Trace> trace;
        std::shared_ptr<const Analysis> analysis;
        std::shared_ptr<const ViewIndex> index;
        std::vector<TimeRange> recordedSteps, predictedSteps; // the first rank with steps
        std::string problem;
        std::string edits; // what was replayed
        std::vector<std::string> findings; // per rank, over the recorded visible range
        std::string straggler; // with typical durations: the slowdown and who costs the job most (evenTable)
    };
    void recompute() override;
    void clear() override;
    void show(const Result& r);
    void showRange();
    void exportFigure();
    QWidget* makeControls();

    QLineEdit* m_remove = nullptr;
    QLineEdit* m_scale = nullptr;
    QComboBox* m_comm = nullptr;
    QDoubleSpinBox* m_commFactor = nullptr;
    QCheckBox* m_noSync = nullptr;
    QCheckBox* m_even = nullptr;
    QDoubleSpinBox* m_launch = nullptr;
    QPushButton* m_export = nullptr;
    TimelinePlot* m_plot = nullptr;

    std::shared_ptr<const CollectiveMatch> m_collectives;
    std::shared_ptr<const whatif::WhatIfModel> m_model; // of m_trace, built by the first replay
    std::shared_ptr<const Trace> m_predTrace;
    std::shared_ptr<const Analysis> m_predAnalysis;
    std::shared_ptr<const ViewIndex> m_predIndex;
    std::vector<TimeRange> m_recordedSteps, m_predictedSteps;
    TimeRange m_predRange;
    QString m_title; // the predicted plot's title: what was replayed
    bool m_requested = false; // Replay was pressed for the current trace (replays are not started on their own)
    bool m_shown = false; // a replay of the current trace and edits is shown
};

} // namespace exposure
