// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"
#include "jobs/traceloader.h"
#include "model/trace.h"
#include "shell/session.h"
#include "timeline/timelineoptions.h"

#include <QMainWindow>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QStackedWidget;
class QToolButton;

namespace exposure {

class BookmarksPanel;
class DetailsPanel;
class ElidedLabel;
class EmptyState;
class FindBar;
class ExposedPanel;
class HeatMapPanel;
class KernelsPanel;
class IdlePanel;
class WhatIfPanel;
class TransfersPanel;
class RecentFilesMenu;
class RulesPanel;
class CollectivesPanel;
class TimelinePlot;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    // Error messages go through a sink so tests can capture them instead of blocking on a dialog.
    using MessageSink = std::function<void(const QString& title, const QString& text)>;

    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    void openTrace(const QString& path);
    // Loads only these ranks of a folder of per-rank archives (a trace too large to load whole).
    void openTraceRanks(const QString& path, const std::vector<int>& ranks);
    // What the window asks when a trace would not fit in memory: which ranks to load (nullopt: none). Tests replace
    // the dialog; `available` are the folder's rank numbers.
    using RankChooser = std::function<std::optional<std::vector<int>>(
        const QString& path, const QString& message, const std::vector<int>& available)>;
    void setRankChooser(RankChooser chooser) { m_rankChooser = std::move(chooser); }
    // What the window asks when the files of a loaded run look like different jobs (run/jobcheck.h): open each job
    // in a window of its own, compare them in Compare Runs, or keep them as one run. `jobs` are the paths that open
    // each job alone (mainwindowjobs.cpp). Tests replace the dialog.
    enum class JobChoice { OpenAsOne, OpenSeparately, Compare };
    using JobChooser = std::function<JobChoice(const QString& warning, const QStringList& jobs)>;
    void setJobChooser(JobChooser chooser) { m_jobChooser = std::move(chooser); }
    // Calls `fn` once (on the GUI thread) when no background job of the window runs: loading, the panels'
    // recomputations. What a screenshot waits for instead of a timer.
    void whenIdle(std::function<void()> fn);
    void reload();
    void closeTrace();
    void cancelLoading();
    bool openDemoTrace();
    static QString demoTracePath(); // "" if no demo trace is found

    // --- accessors for tests and for extensions (figure export) ---
    QMenu* fileMenu() const { return m_fileMenu; }
    // The File-menu action before which extensions insert their own (e.g. "Export Figure…").
    QAction* fileMenuExtensionAnchor() const { return m_fileExtensionAnchor; }
    TimelinePlot* timeline() const { return m_timeline; }
    // Shown instead of the timeline while no trace is open.
    EmptyState* emptyState() const { return m_emptyState; }
    // The status bar's message line ("Loaded …", "Could not open …").
    QString statusText() const;
    // The status bar's note on the ranks' clocks ("clocks aligned across 2 hosts ..."); empty for one rank.
    QString clockNote() const;
    QAction* alignClocksAction() const { return m_alignClocksAction; }
    CollectivesPanel* collectivesPanel() const { return m_collectives; }
    // How long a failure or cancel message stays in the status bar (default 10 s; tests shorten it).
    void setTransientStatusTimeout(int ms) { m_transientStatusMs = ms; }
    DetailsPanel* detailsPanel() const { return m_details; }
    ExposedPanel* exposedPanel() const { return m_exposed; }
    KernelsPanel* kernelsPanel() const { return m_kernels; }
    IdlePanel* idlePanel() const { return m_idle; }
    WhatIfPanel* whatIfPanel() const { return m_whatIf; }
    TransfersPanel* transfersPanel() const { return m_transfers; }
    // The rank × step heat map; its dock opens by itself for a trace of more than HeatMapPanel::kAutoOpenRanks ranks.
    HeatMapPanel* heatMapPanel() const { return m_heatMap; }
    QDockWidget* heatMapDock() const { return m_heatMapDock; }
    // Zooms to a window and scrolls the timeline to the rows of rank index `rank` (the heat map's cell clicks).
    void showRankWindow(int rank, TimeRange window);
    RecentFilesMenu* recentFilesMenu() const { return m_recent; }
    // The status-bar button that counts the trace's import warnings (hidden when there are none) and lists them.
    QToolButton* traceWarningsButton() const { return m_warningsButton; }
    // The import warnings as one text (what the button's dialog shows).
    QString traceWarningsText() const;
    TraceLoader* loader() const { return m_loader; }
    std::shared_ptr<const Trace> trace() const;
    std::shared_ptr<const Analysis> analysis() const;
    std::shared_ptr<const CollectiveMatch> collectives() const { return m_current.collectives; }
    QString tracePath() const { return m_current.path; }
    TimelineOptions timelineOptions() const;
    TimeRange visibleRange() const;
    void setMessageSink(MessageSink sink) { m_sink = std::move(sink); }
    // Whether opened traces go into File ▸ Open Recent (true; `exposure --screenshot` turns it off).
    void setRemembersRecentFiles(bool on) { m_remembersRecent = on; }

    // --- Find (Edit ▸ Find, mainwindowfind.cpp) ---
    FindBar* findBar() const { return m_findBar; }

    // --- sessions and bookmarks (mainwindowsession.cpp) ---
    // The session of what the window shows now (for `sessionFile`: the trace's relative path is taken from there).
    Session currentSession() const;
    // Writes the session; false (and a dialog) when it cannot be written.
    bool saveSession(const QString& path);
    // Opens the session's trace and, once loaded, restores its view, docks, rules, figure settings and bookmarks.
    // A trace that is not where the session says is asked for (its folder); bad JSON shows a dialog. False when
    // nothing is opened.
    bool openSession(const QString& path);
    // Asks for the folder that now holds a trace the session names (returns "" to give up); tests replace the dialog.
    using FolderChooser = std::function<QString(const QString& missingPath)>;
    void setFolderChooser(FolderChooser chooser) { m_folderChooser = std::move(chooser); }
    BookmarksPanel* bookmarksPanel() const { return m_bookmarks; }
    QDockWidget* bookmarksDock() const { return m_bookmarksDock; }
    // Adds the visible range as a bookmark named `name` (asked for when empty).
    void addBookmark(const QString& name = QString());
    // The rules file the next loads classify with ("" = the built-in rules); false and a dialog if it cannot be read.
    bool setRulesFile(const QString& path);
    QString rulesFile() const { return m_rulesFile; }
    // Where a window that closes with a trace saves its session (File ▸ Reopen Last Session opens it).
    static QString lastSessionPath();

    // --- rank groups (mainwindowgroups.cpp) ---
    // View ▸ Group Ranks: how the ranks are grouped (an action per RankGrouping, data = its value) and Collapse All
    // Groups / Expand All Groups. A trace of more than kGroupRanksAbove ranks opens grouped (Auto), every group
    // collapsed.
    QList<QAction*> groupingActions() const { return m_groupingActions; }
    QAction* collapseGroupsAction() const { return m_collapseGroupsAction; }
    QAction* expandGroupsAction() const { return m_expandGroupsAction; }
    void setRankGrouping(RankGrouping grouping, bool collapseAll);

    // --- small screens (mainwindowlayout.cpp) ---
    // Compact: every panel tabbed with Details on the right, so that the timeline keeps the window's height. Chosen
    // by itself when the window is shown, and when it is resized across, kCompactHeight logical pixels of height
    // (until View ▸ Compact Layout is switched by hand).
    static constexpr int kCompactHeight = 760;
    bool isCompactLayout() const { return m_compact; }
    void setCompactLayout(bool compact);
    ElidedLabel* statusLabel() const { return m_statusText; }

signals:
    void traceLoaded(const QString& path);
    void loadFailed(const QString& path, const QString& message);
    void loadCancelled(const QString& path);
    void errorShown(const QString& title, const QString& text);
    void sessionRestored(const QString& path); // its trace loaded and its view applied
    // A preview of a run being read (TraceLoader::setProgressive) is shown: its ranks read so far, of all.
    void previewShown(int ranksRead, int ranksTotal);

protected:
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createActions();
    void createFileMenu();
    void createViewMenu();
    void createHelpMenu();
    void createEditMenu();
    void createSessionActions();
    void createBookmarksMenu();
    void createGroupMenu();
    // Grouped as a trace of `ranks` ranks opens (default: the current trace's).
    void applyDefaultGrouping(std::size_t ranks = 0);
    // Progressive loading (mainwindowpreview.cpp): a preview shown while the run is read, and dropped (the trace shown
    // before it back) when the load fails or is cancelled.
    void connectPreviews();
    void applyPreview(const LoadedTrace& preview, int ranksRead, int ranksTotal);
    void dropPreview();
    void syncGroupActions();
    void applySession(const QString& path);
    void adaptLayout();
    void createLayoutAction();
    void connectLoader();
    void connectPanels();
    void createDocks();
    void createStatusBar();
    void applyLoaded(const LoadedTrace& loaded);
    void updateTitle();
    void updateActions();
    void showError(const QString& title, const QString& text);
    void selectInstance(int direction);
    void zoomToStepDialog();
    void setPalette(PaletteKind kind);
    void onIntervalSelected(IntervalRef ref);
    void showPeerInstance(IntervalRef ref);
    void onVisibleRangeChanged(TimeRange range);
    void openDialog(bool folder);
    void restoreSettings();
    void saveSettings();
    void restoreAfterReload(const QString& path);
    void clearStatusLater();
    void showTraceWarnings();

    LoadedTrace m_current;
    // While a preview is shown: the trace shown before it.
    std::optional<LoadedTrace> m_beforePreview;
    TraceLoader* m_loader;
    TimelinePlot* m_timeline;
    DetailsPanel* m_details;
    ExposedPanel* m_exposed;
    KernelsPanel* m_kernels;
    IdlePanel* m_idle;
    TransfersPanel* m_transfers;
    RulesPanel* m_rules;
    WhatIfPanel* m_whatIf = nullptr;
    CollectivesPanel* m_collectives;
    HeatMapPanel* m_heatMap = nullptr;
    QDockWidget* m_heatMapDock = nullptr;
    RecentFilesMenu* m_recent = nullptr;
    QMenu* m_fileMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QAction* m_fileExtensionAnchor = nullptr;
    QList<QAction*> m_traceActions; // enabled only with a trace
    QAction* m_reloadAction = nullptr;
    QAction* m_showCpuAction = nullptr;
    QAction* m_showOverlapAction = nullptr;
    QList<QAction*> m_paletteActions;
    QDockWidget* m_detailsDock = nullptr;
    // The bottom panels, tabbed in this order: each gets every loaded trace and, when it follows it, the visible
    // range. A new panel is one addPanel() call in createDocks().
    struct Panel
    {
        QDockWidget* dock = nullptr;
        std::function<void(const LoadedTrace&)> load;
        std::function<void(TimeRange)> followRange; // empty: the panel shows the whole trace
    };
    std::vector<Panel> m_panels;
    void addPanel(QWidget* widget, const QString& title, const QString& objectName,
        std::function<void(const LoadedTrace&)> load, std::function<void(TimeRange)> followRange = {});
    QAction* m_alignClocksAction = nullptr;
    ElidedLabel* m_clockLabel = nullptr;
    ElidedLabel* m_statusText;
    QLabel* m_cursorLabel;
    QLabel* m_rangeLabel;
    QProgressBar* m_progress;
    QToolButton* m_cancelButton;
    QToolButton* m_warningsButton;
    MessageSink m_sink;
    bool m_remembersRecent = true;
    QStackedWidget* m_central = nullptr;
    EmptyState* m_emptyState = nullptr;
    // What F5 Reload keeps when the reloaded trace still has it: the visible range and the selection.
    struct ReloadState
    {
        QString path;
        TimeRange visible;
        std::optional<IntervalRef> selection;
        RankGrouping grouping = RankGrouping::None;
        std::set<int> collapsedGroups;
    };
    std::optional<ReloadState> m_reloadState;
    RankChooser m_rankChooser;
    FindBar* m_findBar = nullptr;
    QWidget* m_timelinePage = nullptr; // the find bar above the timeline
    BookmarksPanel* m_bookmarks = nullptr;
    QDockWidget* m_bookmarksDock = nullptr;
    QAction* m_compactAction = nullptr;
    QList<QAction*> m_groupingActions;
    QAction* m_collapseGroupsAction = nullptr;
    QAction* m_expandGroupsAction = nullptr;
    bool m_compact = false;
    bool m_layoutByHand = false; // View ▸ Compact Layout was switched: no automatic changes any more
    bool m_shownOnce = false;
    QString m_rulesFile;
    FolderChooser m_folderChooser;
    // A session whose trace is loading: applied when it has loaded.
    std::optional<std::pair<QString, Session>> m_pendingSession;
    void offerRanks(const QString& path, const QString& message);
    void offerJobs(const QString& path);
    JobChooser m_jobChooser;
    int m_transientStatusMs = 10000;
};

} // namespace exposure
