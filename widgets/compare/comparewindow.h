// SPDX-License-Identifier: GPL-3.0-or-later
// "Compare Runs": the same per-run summary as `exposure-cli compare`, for runs of one training at different
// scales (1, 4, 8 GPUs ...), as a table and a stacked bar chart of where each run's step time goes.
#pragma once

#include "analysis/analysis.h"
#include "analysis/compare.h"
#include "analysis/stepmean.h"
#include "common/tablemodel.h"
#include "compare/comparechart.h"
#include "jobs/jobslot.h"
#include "model/trace.h"
#include "run/openrun.h"

#include <QDialog>
#include <QString>
#include <QStringList>
#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

class QLabel;
class QListWidget;
class QPushButton;
class QSpinBox;
class QTableView;

namespace exposure {

class CompareWindow : public QDialog
{
    Q_OBJECT
public:
    enum Column {
        ColRun,
        ColRanks,
        ColSteps,
        ColStep,
        ColCompute,
        ColCommBusy,
        ColHidden,
        ColExposed,
        ColOverlap,
        ColExposedShare,
        ColWaiting,
        ColTransfer,
        ColEfficiency,
        ColStatus,
        ColCount
    };

    explicit CompareWindow(QWidget* parent = nullptr);
    ~CompareWindow() override; // cancels the loads and waits for them

    // How the runs added next load: the main window's rules, clock mode, memory limit and stall limit
    // (TraceLoader::runOptions()); the built-in rules and the defaults until set.
    void setRunOptions(RunOptions options);
    const RunOptions& runOptions() const { return m_runOptions; }
    // Loads `path` in the background (openRun with runOptions(), then summarizeRun).
    void addRun(const QString& path);
    // A run that is already loaded (e.g. the trace open in the main window): only summarised.
    void addLoadedRun(
        const QString& path, std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis);
    void removeRun(int index);
    void moveRun(int from, int to);
    int runCount() const { return int(m_runs.size()); }
    QString runPath(int index) const;
    bool isLoading() const;

    void setSkipSteps(int n);
    int skipSteps() const;

    // Summaries of the runs that loaded, in run order (the first is the efficiency baseline).
    std::vector<RunSummary> summaries() const;
    QString csv() const;
    QString json() const;

    QTableView* table() const { return m_table; }
    // The table's rows, one per run (in the order the table shows them: sorted like the view).
    TableModel* model() const { return m_model; }
    CompareChart* chart() const { return m_chart; }
    QListWidget* runList() const { return m_list; }
    // The errors of the runs that failed, one "<file>: <problem>" a line, shown under the table.
    QString errorText() const;
    // One sentence comparing the run with the most GPUs (the last of them) with the baseline (shown under the chart);
    // empty with fewer than two.
    QString finding() const;

    static QStringList columnTitles();

signals:
    void runsChanged(); // a run was added, removed, moved, loaded, or failed

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    struct Run
    {
        quint64 id = 0;
        QString path;
        QString name;
        std::shared_ptr<const Trace> trace;
        std::shared_ptr<const Analysis> analysis;
        std::optional<RunSummary> summary;
        QString error;
        bool busy = false;
        JobSlot* job = nullptr; // a newer job of the run (after a skip-steps change) supersedes the older one
    };
    struct JobResult;

    void startJob(Run& run);
    // Parts of the constructor.
    QWidget* buildRunList();
    void setUpTable();
    QWidget* buildTableAndChart();
    void connectButtons();
    void finishJob(quint64 id, const JobResult& result);
    void placeByGpuCount(quint64 id);
    Run* findRun(quint64 id);
    void refresh();
    void fillTable();
    void updateButtons();
    void addDialog(bool folder);
    void saveDialog(bool json);

public:
    // Where Add Run… / Add Folder… / Save start (also for tests).
    QString lastFolder() const;

private:
    void rememberFolder(const QString& path);

    std::vector<std::unique_ptr<Run>> m_runs;
    RunOptions m_runOptions;
    quint64 m_nextId = 1;
    QListWidget* m_list;
    TableModel* m_model;
    QTableView* m_table;
    CompareChart* m_chart;
    QSpinBox* m_skip;
    QLabel* m_caption;
    QLabel* m_finding;
    QLabel* m_errors;
    QPushButton* m_remove;
    QPushButton* m_up;
    QPushButton* m_down;
    QPushButton* m_copyCsv;
    QPushButton* m_saveCsv;
    QPushButton* m_saveJson;
};

} // namespace exposure
