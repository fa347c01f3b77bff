// SPDX-License-Identifier: GPL-3.0-or-later
#include "shell/mainwindow.h"

#include "common/elidedlabel.h"
#include "common/labels.h"
#include "compare/comparewindow.h"
#include "figure/exportfiguredialog.h"
#include "jobs/jobslot.h"
#include "panels/bookmarkspanel.h"
#include "panels/collectivespanel.h"
#include "panels/detailspanel.h"
#include "panels/exposedpanel.h"
#include "panels/heatmappanel.h"
#include "panels/idlepanel.h"
#include "panels/kernelspanel.h"
#include "panels/rulespanel.h"
#include "panels/transferspanel.h"
#include "panels/whatifpanel.h"
#include "run/openrun.h"
#include "shell/emptystate.h"
#include "shell/findbar.h"
#include "shell/recentfilesmenu.h"
#include "shell/shortcutsdialog.h"
#include "timeline/timelineplot.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

// The resources are compiled into this static library; referencing their initialiser here keeps the
// linker from dropping it in every program that shows a MainWindow (Q_INIT_RESOURCE needs global scope).
static void initExposureResources()
{
    Q_INIT_RESOURCE(resources);
}

namespace exposure {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_loader(new TraceLoader(this))
    , m_timeline(new TimelinePlot(this))
    , m_details(new DetailsPanel(this))
    , m_exposed(new ExposedPanel(this))
    , m_kernels(new KernelsPanel(this))
    , m_idle(new IdlePanel(this))
    , m_transfers(new TransfersPanel(this))
    , m_rules(new RulesPanel(this))
    , m_collectives(new CollectivesPanel(this))
    , m_statusText(new ElidedLabel(this))
    , m_cursorLabel(new QLabel(this))
    , m_rangeLabel(new QLabel(this))
    , m_progress(new QProgressBar(this))
    , m_cancelButton(new QToolButton(this))
    , m_warningsButton(new QToolButton(this))
{
    initExposureResources();
    m_whatIf = new WhatIfPanel(this);
    m_heatMap = new HeatMapPanel(this);
    m_bookmarks = new BookmarksPanel(this);
    setObjectName(QStringLiteral("MainWindow"));
    setWindowIcon(QIcon(QStringLiteral(":/exposure/icons/exposure.svg")));
    // The timeline, or while no trace is open a page that says how to open one.
    m_central = new QStackedWidget(this);
    m_emptyState = new EmptyState(m_central);
    m_central->addWidget(m_emptyState);
    m_timelinePage = new QWidget(m_central);
    m_findBar = new FindBar(m_timeline, m_timelinePage);
    auto* page = new QVBoxLayout(m_timelinePage);
    page->setContentsMargins(0, 0, 0, 0);
    page->setSpacing(0);
    page->addWidget(m_findBar);
    page->addWidget(m_timeline, 1);
    m_central->addWidget(m_timelinePage);
    setCentralWidget(m_central);
    setAcceptDrops(true);
    m_sink = [this](const QString& title, const QString& text) { QMessageBox::critical(this, title, text); };

    createActions();
    createDocks();
    createStatusBar();

    connectLoader();
    connectPreviews();
    connectPanels();

    resize(1400, 900);
    restoreSettings();
    updateTitle();
    updateActions();
}

MainWindow::~MainWindow() = default;

// The loader's progress, result and failures in the status bar, the timeline and dialogs.
void MainWindow::connectLoader()
{
    connect(m_loader, &TraceLoader::started, this, [this](const QString& path) {
        m_progress->setRange(0, 0);
        m_progress->setValue(0);
        m_progress->show();
        m_cancelButton->show();
        m_statusText->setText(tr("Loading %1…").arg(QFileInfo(path).fileName()));
    });
    connect(m_loader, &TraceLoader::progress, this, [this](int permille, const QString& text) {
        if (permille >= 0) {
            m_progress->setRange(0, 1000);
            m_progress->setValue(permille);
        }
        m_statusText->setText(text);
    });
    auto stopProgress = [this] {
        m_progress->hide();
        m_cancelButton->hide();
    };
    connect(m_loader, &TraceLoader::loaded, this, [this, stopProgress](const LoadedTrace& loaded) {
        stopProgress();
        applyLoaded(loaded);
        if (m_remembersRecent) // a screenshot run is not the user's history
            m_recent->add(loaded.path);
        m_statusText->setText(tr("Loaded %1: %2 ranks, %3 intervals")
                                  .arg(QFileInfo(loaded.path).fileName())
                                  .arg(loaded.trace->ranks.size())
                                  .arg(groupDigits(loaded.trace->intervalCount())));
        emit traceLoaded(loaded.path);
    });
    connect(m_loader, &TraceLoader::failed, this, [this, stopProgress](const QString& path, const QString& message) {
        stopProgress();
        dropPreview();
        m_statusText->setText(tr("Could not open %1").arg(QFileInfo(path).fileName()));
        showError(tr("Could not open trace"), message);
        emit loadFailed(path, message);
    });
    connect(m_loader, &TraceLoader::tooLarge, this, [this, stopProgress](const QString& path, const QString& message) {
        stopProgress();
        dropPreview();
        offerRanks(path, message);
    });
    connect(m_loader, &TraceLoader::cancelled, this, [this, stopProgress](const QString& path) {
        stopProgress();
        dropPreview();
        m_statusText->setText(tr("Loading cancelled"));
        emit loadCancelled(path);
    });

    // F5 keeps the zoom and the selection; failure and cancel messages leave the status bar after a while.
    connect(this, &MainWindow::traceLoaded, this, &MainWindow::restoreAfterReload);
    connect(this, &MainWindow::traceLoaded, this, &MainWindow::applySession);
    connect(this, &MainWindow::traceLoaded, this, &MainWindow::offerJobs);
    connect(this, &MainWindow::loadFailed, this, [this] {
        m_reloadState.reset();
        m_pendingSession.reset();
        clearStatusLater();
    });
    connect(this, &MainWindow::loadCancelled, this, [this] {
        m_reloadState.reset();
        clearStatusLater();
    });
    m_emptyState->setDemoAvailable(!demoTracePath().isEmpty());
    connect(m_emptyState, &EmptyState::openRequested, this, [this] { openDialog(false); });
    connect(m_emptyState, &EmptyState::openFolderRequested, this, [this] { openDialog(true); });
    connect(m_emptyState, &EmptyState::demoRequested, this, &MainWindow::openDemoTrace);
}

// The timeline, the panels and the details talk to each other through the window.
void MainWindow::connectPanels()
{
    connect(m_timeline, &TimelinePlot::intervalSelected, this, &MainWindow::onIntervalSelected);
    connect(m_timeline, &TimelinePlot::foldClicked, this, [this](const TimelineHit& hit) {
        if (m_current.trace)
            m_details->showFold(*m_current.trace, m_current.analysis.get(), m_current.index.get(), hit,
                m_timeline->foldComposition(hit), m_current.collectives.get());
    });
    connect(m_timeline, &TimelinePlot::selectionCleared, m_details, &DetailsPanel::clear);
    connect(m_timeline, &TimelinePlot::visibleRangeChanged, this, &MainWindow::onVisibleRangeChanged);
    connect(m_timeline, &QCustomPlot::afterReplot, this, [this] {
        // Without a trace the timeline's placeholder range means nothing.
        m_rangeLabel->setText(
            m_current.trace ? tr("visible: %1").arg(durationText(m_timeline->visibleRange().duration())) : QString());
    });
    connect(m_timeline, &TimelinePlot::cursorTimeChanged, this,
        [this](qint64 ns) { m_cursorLabel->setText(tr("cursor: %1").arg(durationText(ns))); });
    connect(m_details, &DetailsPanel::previousInstanceRequested, this, [this] { selectInstance(-1); });
    connect(m_details, &DetailsPanel::nextInstanceRequested, this, [this] { selectInstance(+1); });
    connect(m_details, &DetailsPanel::zoomToSelectionRequested, m_timeline, &TimelinePlot::zoomToSelection);
    connect(m_details, &DetailsPanel::peerInstanceRequested, this, &MainWindow::showPeerInstance);
    connect(m_idle, &IdlePanel::zoomRequested, this, [this](TimeRange r) { m_timeline->setVisibleRange(r); });
    connect(m_transfers, &TransfersPanel::transferSelected, this, [this](IntervalRef ref) {
        m_timeline->select(ref, true);
        onIntervalSelected(ref);
    });
    connect(m_heatMap, &HeatMapPanel::cellActivated, this,
        [this](int rank, int, TimeRange window) { showRankWindow(rank, window); });
    connect(m_kernels, &KernelsPanel::kernelSelected, m_timeline,
        [this](quint32 name) { m_timeline->setHighlightedName(StringId(name)); });
}

void MainWindow::createActions()
{
    createFileMenu();
    createEditMenu();
    createViewMenu();
    createBookmarksMenu();
    createHelpMenu();
}

void MainWindow::createFileMenu()
{
    m_fileMenu = menuBar()->addMenu(tr("&File"));
    QAction* open = m_fileMenu->addAction(
        QIcon::fromTheme(QStringLiteral("document-open")), tr("&Open Trace…"), this, [this] { openDialog(false); });
    open->setShortcut(QKeySequence::Open);
    open->setToolTip(tr("Open an OTF2 anchor file (traces.otf2)"));
    m_fileMenu->addAction(tr("Open Trace &Folder…"), this, [this] { openDialog(true); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    m_recent = new RecentFilesMenu(this);
    m_fileMenu->addMenu(m_recent);
    connect(m_recent, &RecentFilesMenu::fileSelected, this, &MainWindow::openTrace);
    m_reloadAction = m_fileMenu->addAction(
        QIcon::fromTheme(QStringLiteral("view-refresh")), tr("&Reload"), this, &MainWindow::reload);
    m_reloadAction->setShortcut(QKeySequence::Refresh);
    QAction* close = m_fileMenu->addAction(tr("&Close Trace"), this, &MainWindow::closeTrace);
    close->setShortcut(QKeySequence::Close);
    m_traceActions << m_reloadAction << close;
    createSessionActions();
    m_fileMenu->addSeparator();
    m_fileExtensionAnchor = m_fileMenu->addSeparator();
    // Compare Runs: one window per main window, kept when closed so its runs survive; the open trace is the
    // first run (the baseline) when the window is first made.
    QAction* compare = new QAction(tr("Co&mpare Runs…"), this);
    compare->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    compare->setToolTip(tr("Compare step time, exposed communication and scaling efficiency of several runs"));
    m_fileMenu->insertAction(m_fileExtensionAnchor, compare);
    connect(compare, &QAction::triggered, this, [this] {
        auto* w = findChild<CompareWindow*>();
        const bool made = !w;
        if (made)
            w = new CompareWindow(this);
        w->setRunOptions(m_loader->runOptions()); // runs load as the main window's trace did
        if (made && m_beforePreview) // a preview: only some ranks are read yet, so the run is read whole there
            w->addRun(tracePath());
        else if (made && trace())
            w->addLoadedRun(tracePath(), trace(), analysis());
        w->show();
        w->raise();
        w->activateWindow();
    });
    ExportFigureDialog::installAction(m_fileMenu, m_fileExtensionAnchor, this, [this] {
        return FigureSource { trace(), analysis(), m_timeline->viewIndex(), visibleRange(), collectives(),
            m_timeline->options().grouping };
    });
    QAction* quit = m_fileMenu->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
}

void MainWindow::createViewMenu()
{
    m_viewMenu = menuBar()->addMenu(tr("&View"));
    auto add = [this](const QString& text, QList<QKeySequence> keys, auto slot) {
        QAction* a = m_viewMenu->addAction(text, m_timeline, slot);
        // Platform sequences (QKeySequence::ZoomOut is Ctrl+- on Linux) may repeat an explicit one: a key bound twice
        // to one action is ambiguous in Qt and then does nothing.
        QList<QKeySequence> unique;
        for (const QKeySequence& k : keys)
            if (!k.isEmpty() && !unique.contains(k))
                unique << k;
        a->setShortcuts(unique);
        a->setShortcutContext(Qt::WindowShortcut);
        m_traceActions << a;
        addAction(a);
        return a;
    };
    add(tr("&Back"), { QKeySequence::Back }, [this] { m_timeline->back(); });
    add(tr("&Forward"), { QKeySequence::Forward }, [this] { m_timeline->forward(); });
    m_viewMenu->addSeparator();
    add(tr("Zoom &In"), { QKeySequence(Qt::CTRL | Qt::Key_Equal), QKeySequence::ZoomIn },
        [this] { m_timeline->zoomIn(); });
    add(tr("Zoom &Out"), { QKeySequence(Qt::CTRL | Qt::Key_Minus), QKeySequence::ZoomOut },
        [this] { m_timeline->zoomOut(); });
    add(tr("Zoom to &Fit"), { QKeySequence(Qt::CTRL | Qt::Key_0) }, [this] { m_timeline->zoomToFit(); });
    add(tr("Zoom to S&tep…"), { QKeySequence(Qt::CTRL | Qt::Key_G) }, [this] { zoomToStepDialog(); });
    // Plain keys act only while the timeline has focus, so they never steal typing or table navigation.
    for (QAction* a :
        { add(tr("Zoom to &Selection"), { QKeySequence(Qt::Key_Z) }, [this] { m_timeline->zoomToSelection(); }),
            add(tr("Pan &Left"), { QKeySequence(Qt::Key_Left) }, [this] { m_timeline->panLeft(); }),
            add(tr("Pan &Right"), { QKeySequence(Qt::Key_Right) }, [this] { m_timeline->panRight(); }) }) {
        removeAction(a);
        a->setShortcutContext(Qt::WidgetShortcut);
        m_timeline->addAction(a);
    }
    m_viewMenu->addSeparator();
    // A checked action that shows or hides some rows of the timeline.
    auto rowToggle = [this](const QString& text, bool TimelineOptions::*show) {
        QAction* a = m_viewMenu->addAction(text);
        a->setCheckable(true);
        a->setChecked(true);
        connect(a, &QAction::toggled, this, [this, show](bool on) {
            TimelineOptions o = m_timeline->options();
            o.*show = on;
            o.range.reset();
            m_timeline->setOptions(o);
            m_whatIf->followTimelineOptions(o);
        });
        return a;
    };
    m_showCpuAction = rowToggle(tr("Show &CPU Threads"), &TimelineOptions::showCpu);
    m_showOverlapAction = rowToggle(tr("Show &Overlap Lanes"), &TimelineOptions::showOverlap);
    createGroupMenu();
    // Ranks on different hosts: their clocks put on one time base from the ends of matched collectives (reloads).
    m_alignClocksAction = m_viewMenu->addAction(tr("&Align Clocks Across Hosts"));
    m_alignClocksAction->setCheckable(true);
    m_alignClocksAction->setChecked(true);
    m_alignClocksAction->setToolTip(tr("Estimate each host's clock offset from the transfer starts of matched "
                                       "collectives and apply it where significant (ranks of one host are never "
                                       "shifted); off: times as recorded"));
    connect(m_alignClocksAction, &QAction::toggled, this, [this](bool on) {
        m_loader->setClockMode(on ? ClockMode::Aligned : ClockMode::Recorded);
        if (m_current.trace && !m_current.path.isEmpty())
            reload();
    });
    QMenu* paletteMenu = m_viewMenu->addMenu(tr("&Palette"));
    auto* group = new QActionGroup(this);
    const std::pair<PaletteKind, QString> kinds[] = { { PaletteKind::Default, tr("&Default (colour-blind safe)") },
        { PaletteKind::ColorBlind, tr("&One colour per category") }, { PaletteKind::Grayscale, tr("&Greyscale") } };
    for (const auto& [kind, text] : kinds) {
        QAction* a = paletteMenu->addAction(text);
        a->setCheckable(true);
        a->setData(int(kind));
        a->setChecked(kind == PaletteKind::Default);
        group->addAction(a);
        m_paletteActions << a;
        connect(a, &QAction::triggered, this, [this, kind = kind] { setPalette(kind); });
    }
    m_viewMenu->addSeparator();
}

void MainWindow::createHelpMenu()
{
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("Open &Demo Trace"), this, [this] {
        if (!openDemoTrace())
            showError(tr("No demo trace"),
                tr("The demo trace was not found next to the program or in the build folder. "
                   "Create one with: exposure-make-demo OUTDIR"));
    });
    QAction* keys = help->addAction(tr("&Keyboard Shortcuts"), this, [this] {
        ShortcutsDialog dialog(shortcutRows(this, menuBar()), this);
        dialog.exec();
    });
    keys->setObjectName(QStringLiteral("keyboardShortcuts"));
    keys->setShortcut(QKeySequence(Qt::Key_F1));
    help->addAction(tr("&About Exposure"), this, [this] {
        QMessageBox::about(this, tr("About Exposure"),
            tr("<h3>Exposure %1</h3><p>Where does the wall-clock time of multi-GPU training go: "
               "compute, or communication that is not hidden behind compute?</p>"
               "<p>Licensed under the GNU GPL version 3 or later.</p>")
                .arg(QCoreApplication::applicationVersion()));
    });
}

void MainWindow::addPanel(QWidget* widget, const QString& title, const QString& objectName,
    std::function<void(const LoadedTrace&)> load, std::function<void(TimeRange)> followRange)
{
    auto* d = new QDockWidget(title, this);
    d->setObjectName(objectName);
    // In a scroll area: a panel wider or taller than a small window's dock scrolls instead of holding the window (and
    // the timeline) larger. Above its minimum size the panel fills the dock as before.
    auto* scroll = qobject_cast<QScrollArea*>(widget);
    if (!scroll) {
        scroll = new QScrollArea(this);
        scroll->setWidget(widget);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
    }
    scroll->setMinimumSize(80, 60);
    d->setWidget(scroll);
    addDockWidget(Qt::BottomDockWidgetArea, d);
    m_viewMenu->addAction(d->toggleViewAction());
    if (!m_panels.empty())
        tabifyDockWidget(m_panels.back().dock, d);
    m_panels.push_back({ d, std::move(load), std::move(followRange) });
}

void MainWindow::createDocks()
{
    m_detailsDock = new QDockWidget(tr("Details"), this);
    m_detailsDock->setObjectName(QStringLiteral("detailsDock"));
    m_detailsDock->setWidget(m_details);
    addDockWidget(Qt::RightDockWidgetArea, m_detailsDock);
    m_viewMenu->addAction(m_detailsDock->toggleViewAction());

    addPanel(
        m_exposed, tr("Exposed Communication"), QStringLiteral("exposedDock"),
        [this](const LoadedTrace& l) { m_exposed->setTrace(l.trace, l.analysis, l.collectives); },
        [this](TimeRange r) { m_exposed->setVisibleRange(r); });
    addPanel(
        m_kernels, tr("Kernels"), QStringLiteral("kernelsDock"),
        [this](const LoadedTrace& l) { m_kernels->setTrace(l.trace, l.analysis); },
        [this](TimeRange r) { m_kernels->setVisibleRange(r); });
    addPanel(
        m_idle, tr("Idle"), QStringLiteral("idleDock"),
        [this](const LoadedTrace& l) {
            m_idle->setCollectives(l.collectives);
            m_idle->setTrace(l.trace, l.analysis);
        },
        [this](TimeRange r) { m_idle->setVisibleRange(r); });
    addPanel(
        m_transfers, tr("Transfers"), QStringLiteral("transfersDock"),
        [this](const LoadedTrace& l) { m_transfers->setTrace(l.trace, l.analysis); },
        [this](TimeRange r) { m_transfers->setVisibleRange(r); });
    addPanel(m_rules, tr("Rules"), QStringLiteral("rulesDock"),
        [this](const LoadedTrace& l) { m_rules->setRules(l.analysis ? &l.analysis->rules : nullptr, l.ruleUsage); });
    // Edits, table and predicted timeline need more height than the bottom area has: they scroll instead of making
    // the whole bottom area taller.
    auto* whatIfScroll = new QScrollArea(this);
    whatIfScroll->setWidget(m_whatIf);
    whatIfScroll->setWidgetResizable(true);
    whatIfScroll->setFrameShape(QFrame::NoFrame);
    addPanel(
        whatIfScroll, tr("What If"), QStringLiteral("whatIfDock"),
        [this](const LoadedTrace& l) {
            m_whatIf->setCollectives(l.collectives);
            m_whatIf->setTrace(l.trace, l.analysis);
        },
        [this](TimeRange r) { m_whatIf->setVisibleRange(r); });
    addPanel(m_collectives, tr("Collectives"), QStringLiteral("collectivesDock"),
        [this](const LoadedTrace& l) { m_collectives->setTrace(l.trace, l.collectives, l.analysis); });
    addPanel(m_heatMap, tr("Heat Map"), QStringLiteral("heatMapDock"), [this](const LoadedTrace& l) {
        m_heatMap->setTrace(l.trace, l.analysis, l.collectives);
        // Many ranks: the overview comes first.
        if (l.trace && l.trace->ranks.size() > std::size_t(HeatMapPanel::kAutoOpenRanks)) {
            m_heatMapDock->show();
            m_heatMapDock->raise();
        }
    });
    m_heatMapDock = m_panels.back().dock;
    // Bookmarks belong to a trace: another trace starts without them (a session brings its own once loaded).
    addPanel(m_bookmarks, tr("Bookmarks"), QStringLiteral("bookmarksDock"),
        [this, shown = std::make_shared<QString>()](const LoadedTrace& l) {
            if (l.path != *shown || !l.trace)
                m_bookmarks->setBookmarks({});
            *shown = l.trace ? l.path : QString();
        });
    m_bookmarksDock = m_panels.back().dock;
    m_panels.front().dock->raise();
    resizeDocks({ m_detailsDock }, { 380 }, Qt::Horizontal);
    resizeDocks({ m_panels.front().dock }, { 260 }, Qt::Vertical);
    createLayoutAction();
}

std::shared_ptr<const Trace> MainWindow::trace() const
{
    return m_current.trace;
}

std::shared_ptr<const Analysis> MainWindow::analysis() const
{
    return m_current.analysis;
}

TimelineOptions MainWindow::timelineOptions() const
{
    return m_timeline->options();
}

TimeRange MainWindow::visibleRange() const
{
    return m_timeline->visibleRange();
}

void MainWindow::openTrace(const QString& path)
{
    if (path.isEmpty())
        return;
    m_loader->load(path);
}

void MainWindow::openTraceRanks(const QString& path, const std::vector<int>& ranks)
{
    if (path.isEmpty())
        return;
    m_loader->load(path, ranks);
}

void MainWindow::offerRanks(const QString& path, const QString& message)
{
    const std::vector<int> available = selectableRanks(path.toStdString());
    if (available.size() < 2) { // nothing to choose from: a plain error
        showError(tr("Could not open trace"), message);
        emit loadFailed(path, message);
        return;
    }
    RankChooser chooser
        = m_rankChooser ? m_rankChooser : [this](const QString&, const QString& text, const std::vector<int>& ranks) {
              std::optional<std::vector<int>> chosen;
              QMessageBox box(QMessageBox::Warning, tr("Trace too large"), text, QMessageBox::Cancel, this);
              QPushButton* some = box.addButton(tr("Load Some Ranks…"), QMessageBox::AcceptRole);
              box.setInformativeText(tr("The folder holds %n rank(s) (%1). Ranks are independent up to collective "
                                        "matching: loading some of them shows those ranks exactly.",
                  nullptr, int(ranks.size()))
                                         .arg(QString::fromStdString(formatRankList(ranks))));
              box.setDefaultButton(some);
              box.exec();
              if (box.clickedButton() != some)
                  return chosen;
              const std::vector<int> half(ranks.begin(), ranks.begin() + std::ptrdiff_t(ranks.size() / 2));
              bool ok = false;
              const QString list = QInputDialog::getText(this, tr("Load Some Ranks"), tr("Ranks to load (e.g. 0-3,6):"),
                  QLineEdit::Normal, QString::fromStdString(formatRankList(half)), &ok);
              if (ok)
                  chosen = parseRankList(list.toStdString());
              return chosen;
          };
    m_statusText->setText(tr("%1 is too large to load whole").arg(QFileInfo(path).fileName()));
    const auto ranks = chooser(path, message, available);
    if (!ranks) {
        emit loadFailed(path, message);
        return;
    }
    openTraceRanks(path, *ranks);
}

void MainWindow::reload()
{
    if (m_current.path.isEmpty())
        return;
    const TimelineOptions o = m_timeline->options();
    m_reloadState = ReloadState { m_current.path, m_timeline->visibleRange(), m_timeline->selection(), o.grouping,
        o.collapsedGroups };
    openTraceRanks(m_current.path, m_current.ranks);
}

void MainWindow::restoreAfterReload(const QString& path)
{
    const auto state = std::exchange(m_reloadState, std::nullopt);
    if (!state || state->path != path || !m_current.trace)
        return;
    const Trace& trace = *m_current.trace;
    // The groups as they were (the reloaded trace has the same ranks).
    TimelineOptions o = m_timeline->options();
    o.range.reset();
    o.grouping = state->grouping;
    o.collapsedGroups = state->collapsedGroups;
    m_timeline->setOptions(o);
    syncGroupActions();
    // The zoom, when the reloaded trace still covers it (clipped to its extent).
    const TimeRange extent = trace.extent;
    const TimeRange visible { std::max(state->visible.start, extent.start), std::min(state->visible.end, extent.end) };
    if (visible.duration() > 0)
        m_timeline->setVisibleRange(visible, false);
    // The selection, when that interval still exists.
    if (const auto& sel = state->selection; sel && sel->rank >= 0 && std::size_t(sel->rank) < trace.ranks.size()
        && sel->lane >= 0 && std::size_t(sel->lane) < trace.ranks[sel->rank].lanes.size()
        && sel->interval < trace.ranks[sel->rank].lanes[sel->lane].intervals.size()) {
        m_timeline->select(*sel);
        onIntervalSelected(*sel);
    }
}

QString MainWindow::clockNote() const
{
    return m_clockLabel->text();
}

QString MainWindow::statusText() const
{
    return m_statusText->text();
}

void MainWindow::clearStatusLater()
{
    // Cleared only if nothing replaced the message meanwhile.
    QTimer::singleShot(m_transientStatusMs, this, [this, text = m_statusText->text()] {
        if (m_statusText->text() == text)
            m_statusText->clear();
    });
}

void MainWindow::closeTrace()
{
    m_loader->cancel();
    applyLoaded(LoadedTrace {});
    m_statusText->clear();
}

void MainWindow::cancelLoading()
{
    m_loader->cancel();
}

QString MainWindow::demoTracePath()
{
    QStringList candidates;
    const QString appDir = QCoreApplication::applicationDirPath();
    candidates << appDir + QStringLiteral("/demo-trace") << appDir + QStringLiteral("/../share/exposure/demo-trace");
#ifdef EXPOSURE_BUILD_DEMO_TRACE
    candidates << QStringLiteral(EXPOSURE_BUILD_DEMO_TRACE);
#endif
    for (const QString& c : std::as_const(candidates))
        if (QFileInfo(c).isDir())
            return QDir::cleanPath(c);
    return {};
}

bool MainWindow::openDemoTrace()
{
    const QString path = demoTracePath();
    if (path.isEmpty())
        return false;
    openTrace(path);
    return true;
}

void MainWindow::whenIdle(std::function<void()> fn)
{
    const auto slots_ = findChildren<JobSlot*>();
    auto pending
        = [slots_] { return std::any_of(slots_.begin(), slots_.end(), [](const JobSlot* s) { return s->busy(); }); };
    if (!pending()) {
        QTimer::singleShot(0, this, std::move(fn));
        return;
    }
    // Checked again whenever one of them becomes idle; the connections go away with `guard`.
    auto* guard = new QObject(this);
    auto once = std::make_shared<std::function<void()>>(std::move(fn));
    for (JobSlot* s : slots_)
        connect(s, &JobSlot::idle, guard, [guard, pending, once] {
            if (pending() || !*once)
                return;
            auto f = std::move(*once);
            *once = nullptr;
            guard->deleteLater();
            f();
        });
}

void MainWindow::openDialog(bool folder)
{
    const QString start = m_current.path.isEmpty() ? QDir::homePath() : QFileInfo(m_current.path).absolutePath();
    const QString path = folder
        ? QFileDialog::getExistingDirectory(this, tr("Open Trace Folder"), start)
        : QFileDialog::getOpenFileName(this, tr("Open Trace"), start,
            tr("Traces (*.otf2 *.json *.json.gz *.sqlite *.nsys-rep *.qdrep);;OTF2 archive anchors (*.otf2);;"
               "torch.profiler and Chrome traces (*.json *.json.gz);;"
               "Nsight Systems reports (*.sqlite *.nsys-rep *.qdrep);;All files (*)"));
    openTrace(path);
}

void MainWindow::applyLoaded(const LoadedTrace& loaded)
{
    m_beforePreview.reset();
    m_current = loaded;
    m_timeline->setTrace(loaded.trace, loaded.analysis, loaded.index);
    applyDefaultGrouping();
    m_timeline->setCollectives(loaded.collectives);
    m_findBar->setTrace(loaded.trace, loaded.analysis); // after the timeline: it draws the new matches
    m_details->clear();
    for (const Panel& panel : m_panels)
        panel.load(loaded);
    const QString clock = loaded.trace ? QString::fromStdString(clockSummaryLine(*loaded.trace)) : QString();
    m_clockLabel->setText(clock);
    m_clockLabel->setVisible(!clock.isEmpty());
    const std::size_t warnings = loaded.trace ? loaded.trace->warnings.size() : 0;
    m_warningsButton->setText(warnings == 1 ? tr("1 warning") : tr("%1 warnings").arg(warnings));
    m_warningsButton->setVisible(warnings > 0);
    updateTitle();
    updateActions();
}

void MainWindow::updateTitle()
{
    if (m_current.path.isEmpty()) {
        setWindowTitle(tr("Exposure"));
        setWindowFilePath(QString());
        return;
    }
    const QFileInfo fi(m_current.path);
    // A folder of per-rank archives is named after the folder; an anchor file after its folder too
    // ("traces.otf2" alone says nothing).
    const QString name = fi.isDir() ? fi.fileName() : fi.dir().dirName() + QLatin1Char('/') + fi.fileName();
    const QString ranks = m_current.ranks.empty()
        ? QString()
        : tr(" (ranks %1)").arg(QString::fromStdString(formatRankList(m_current.ranks)));
    setWindowTitle(tr("%1%2 — Exposure").arg(name, ranks));
    setWindowFilePath(m_current.path);
}

void MainWindow::updateActions()
{
    const bool has = m_current.trace != nullptr;
    for (QAction* a : std::as_const(m_traceActions))
        a->setEnabled(has);
    QWidget* shown = has ? m_timelinePage : static_cast<QWidget*>(m_emptyState);
    // Only the page shown holds the window's minimum size (a stacked layout takes every page's otherwise).
    for (QWidget* page : { m_timelinePage, static_cast<QWidget*>(m_emptyState) })
        page->setSizePolicy(page == shown ? QSizePolicy::Preferred : QSizePolicy::Ignored,
            page == shown ? QSizePolicy::Preferred : QSizePolicy::Ignored);
    m_central->setCurrentWidget(shown);
}

void MainWindow::showError(const QString& title, const QString& text)
{
    emit errorShown(title, text);
    if (m_sink)
        m_sink(title, text);
}

void MainWindow::onIntervalSelected(IntervalRef ref)
{
    if (m_compact) // the details share the right area with the panels: bring them to the front
        m_detailsDock->raise();
    if (m_current.trace)
        m_details->showInterval(
            *m_current.trace, m_current.analysis.get(), m_current.index.get(), ref, m_current.collectives.get());
}

void MainWindow::showPeerInstance(IntervalRef ref)
{
    const auto [rank, lane, interval] = ref;
    if (!m_current.trace)
        return;
    // Show the whole collective (every member, with a margin) so the waiting is visible next to the peer's
    // instance, then select the peer's instance.
    TimeRange span { 0, 0 };
    if (const CollectiveGroup* g = m_current.collectives ? m_current.collectives->groupOf(ref) : nullptr) {
        span = { g->members.front().start, g->members.front().end };
        for (const auto& m : g->members)
            span = { std::min(span.start, m.start), std::max(span.end, m.end) };
    } else {
        const auto& t = m_current.trace->ranks.at(rank).lanes.at(lane).intervals;
        span = { t.start(interval), t.end(interval) };
    }
    const TimeNs margin = std::max<TimeNs>(span.duration() / 4, 1000);
    m_timeline->setVisibleRange({ span.start - margin, span.end + margin });
    m_timeline->select(ref);
}

void MainWindow::showRankWindow(int rank, TimeRange window)
{
    if (!m_current.trace || window.isEmpty())
        return;
    m_timeline->setVisibleRange(window);
    m_timeline->expandGroupOf(rank);
    // The rank's rows: its last row into view, then its first (the first wins where not all of them fit).
    int first = -1, last = -1;
    const auto& rows = m_timeline->rows();
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i].rank == rank && rows[i].kind != TimelineRow::Kind::Group) {
            first = first < 0 ? int(i) : first;
            last = int(i);
        }
    if (first < 0)
        return;
    // How many rows fit depends on the timeline's current height (a dock that just opened changed it).
    m_timeline->layOutNow();
    m_timeline->ensureRowVisible(last);
    m_timeline->ensureRowVisible(first);
}

void MainWindow::onVisibleRangeChanged(TimeRange range)
{
    m_rangeLabel->setText(m_current.trace ? tr("visible: %1").arg(durationText(range.duration())) : QString());
    for (const Panel& panel : m_panels)
        if (panel.followRange)
            panel.followRange(range);
}

void MainWindow::selectInstance(int direction)
{
    const auto sel = m_timeline->selection();
    if (!sel || !m_current.trace)
        return;
    const auto& t = m_current.trace->ranks[sel->rank].lanes[sel->lane].intervals;
    const StringId name = t.name(sel->interval);
    for (std::int64_t i = std::int64_t(sel->interval) + direction; i >= 0 && std::size_t(i) < t.size();
         i += direction) {
        if (t.name(std::size_t(i)) == name) {
            m_timeline->select({ sel->rank, sel->lane, std::uint32_t(i) }, true);
            return;
        }
    }
    m_statusText->setText(
        direction > 0 ? tr("No later instance on this stream") : tr("No earlier instance on this stream"));
}

void MainWindow::zoomToStepDialog()
{
    if (!m_current.analysis)
        return;
    // The steps as the timeline labels them (their CPU regions' names: ProfilerStep#6), in order, once each.
    QStringList names;
    for (const auto& ra : m_current.analysis->ranks)
        for (const auto& st : ra.steps)
            if (const QString name = QString::fromStdString(st.name); !names.contains(name))
                names << name;
    if (names.isEmpty()) {
        m_statusText->setText(tr("This trace has no training steps"));
        return;
    }
    bool ok = false;
    const QString text = QInputDialog::getItem(this, tr("Zoom to Step"),
        tr("Step (its name, the number it is labelled with, or its index):"), names, 0, true, &ok);
    if (!ok)
        return;
    const int step = stepIndexNamed(*m_current.analysis, text.toStdString());
    if (step < 0 || !m_timeline->zoomToStep(step))
        m_statusText->setText(tr("Step %1 not found").arg(text));
}

void MainWindow::setPalette(PaletteKind kind)
{
    TimelineOptions o = m_timeline->options();
    o.palette = kind;
    o.range.reset();
    m_timeline->setOptions(o);
    m_whatIf->followTimelineOptions(o);
    for (QAction* a : std::as_const(m_paletteActions))
        a->setChecked(a->data().toInt() == int(kind));
}

QString MainWindow::traceWarningsText() const
{
    QStringList lines;
    if (m_current.trace)
        for (const auto& w : m_current.trace->warnings)
            lines << QString::fromStdString(w);
    return lines.join(QLatin1Char('\n'));
}

void MainWindow::showTraceWarnings()
{
    if (!m_current.trace || m_current.trace->warnings.empty())
        return;
    QMessageBox box(QMessageBox::Warning, tr("Trace warnings"),
        tr("%n finding(s) about the data of this trace. Numbers change only where a warning says what "
           "was clipped or dropped.",
            nullptr, int(m_current.trace->warnings.size())),
        QMessageBox::Close, this);
    box.setDetailedText(traceWarningsText());
    box.exec();
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    m_loader->cancel();
    saveSettings();
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls() && !event->mimeData()->urls().isEmpty()
        && event->mimeData()->urls().first().isLocalFile())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const auto urls = event->mimeData()->urls();
    if (urls.isEmpty() || !urls.first().isLocalFile())
        return;
    event->acceptProposedAction();
    openTrace(urls.first().toLocalFile());
}

} // namespace exposure
