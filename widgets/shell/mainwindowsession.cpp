// SPDX-License-Identifier: GPL-3.0-or-later
// What MainWindow remembers: sessions (File ▸ Save / Open Session), bookmarks, the rules file, and its settings.
#include "common/atomicwrite.h"
#include "common/elidedlabel.h"
#include "jobs/traceloader.h"
#include "panels/bookmarkspanel.h"
#include "panels/whatifpanel.h"
#include "shell/findbar.h"
#include "shell/mainwindow.h"
#include "timeline/timelineplot.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QJsonDocument>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStandardPaths>

namespace exposure {

void MainWindow::createSessionActions()
{
    m_fileMenu->addSeparator();
    QAction* open = m_fileMenu->addAction(tr("Open &Session…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open Session"), QString(), tr("Exposure sessions (*.exposure-session *.json);;All files (*)"));
        if (!path.isEmpty())
            openSession(path);
    });
    open->setToolTip(tr("Open a trace with the view, panels, rules, figure settings and bookmarks saved with it"));
    QAction* save = m_fileMenu->addAction(tr("Save Sess&ion…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save Session"),
            QFileInfo(m_current.path).completeBaseName() + QStringLiteral(".exposure-session"),
            tr("Exposure sessions (*.exposure-session)"));
        if (!path.isEmpty())
            saveSession(path);
    });
    save->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_S));
    save->setToolTip(tr("Save the trace's path, the view, the panels, the rules file, the figure settings and the "
                        "bookmarks to a small JSON file"));
    QAction* rules = m_fileMenu->addAction(tr("R&ules File…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Rules File (cancel: the built-in rules)"), m_rulesFile, tr("Rules (*.json);;All files (*)"));
        if (setRulesFile(path) && m_current.trace)
            reload();
    });
    rules->setToolTip(tr("Classify kernels with the rules of a file (as exposure-cli --rules); the trace reloads"));
    QAction* last = m_fileMenu->addAction(tr("Reopen &Last Session"), this, [this] {
        if (QFileInfo::exists(lastSessionPath()))
            openSession(lastSessionPath());
        else
            m_statusText->setText(tr("No session was saved when a window last closed"));
    });
    last->setObjectName(QStringLiteral("reopenLastSession"));
    last->setToolTip(tr("The trace and view of the window that was closed last (saved when a window closes)"));
    m_traceActions << save;
}

void MainWindow::createBookmarksMenu()
{
    QMenu* menu = menuBar()->addMenu(tr("&Bookmarks"));
    QAction* add = menu->addAction(tr("&Add Bookmark…"), this, [this] { addBookmark(); });
    add->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    add->setToolTip(tr("Bookmark the visible range under a name"));
    // The next / previous bookmark from the visible range's start, in start order, wrapping.
    auto step = [this](int direction) {
        const auto& marks = m_bookmarks->bookmarks();
        if (marks.empty())
            return;
        const TimeNs at = m_timeline->visibleRange().start;
        int k = direction > 0 ? 0 : int(marks.size()) - 1;
        for (int i = 0; i < int(marks.size()); ++i)
            if (direction > 0 ? marks[std::size_t(i)].range.start > at : marks[std::size_t(i)].range.start < at) {
                k = i;
                if (direction > 0)
                    break;
            }
        m_bookmarks->jumpTo(k);
    };
    menu->addAction(tr("&Next Bookmark"), this, [step] { step(+1); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_BracketRight));
    menu->addAction(tr("&Previous Bookmark"), this, [step] { step(-1); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_BracketLeft));
    menu->addSeparator();
    for (int k = 0; k < 9; ++k)
        menu->addAction(tr("Go to Bookmark %1").arg(k + 1), this, [this, k] { m_bookmarks->jumpTo(k); })
            ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + k)));
    m_traceActions << menu->actions();
    connect(m_bookmarks, &BookmarksPanel::jumpRequested, this,
        [this](int row) { m_timeline->setVisibleRange(m_bookmarks->bookmarks().at(std::size_t(row)).range); });
    connect(m_bookmarks, &BookmarksPanel::addRequested, this, [this] { addBookmark(); });
}

void MainWindow::addBookmark(const QString& name)
{
    if (!m_current.trace)
        return;
    QString text = name;
    if (text.isEmpty()) {
        bool ok = false;
        text = QInputDialog::getText(this, tr("Add Bookmark"), tr("Name of the visible range:"), QLineEdit::Normal,
            tr("Bookmark %1").arg(m_bookmarks->bookmarks().size() + 1), &ok)
                   .trimmed();
        if (!ok || text.isEmpty())
            return;
    }
    m_bookmarks->add({ text, m_timeline->visibleRange() });
    m_bookmarksDock->show();
    m_bookmarksDock->raise();
}

bool MainWindow::setRulesFile(const QString& path)
{
    try {
        m_loader->setRules(path.isEmpty() ? Rules::defaults() : Rules::fromFile(path.toStdString(), false));
    } catch (const std::exception& e) {
        showError(tr("Could not read the rules file"), QString::fromUtf8(e.what()));
        return false;
    }
    m_rulesFile = path.isEmpty() ? QString() : QFileInfo(path).absoluteFilePath();
    return true;
}

Session MainWindow::currentSession() const
{
    Session s;
    s.tracePath = m_current.path.isEmpty() ? QString() : QFileInfo(m_current.path).absoluteFilePath();
    s.ranks = m_current.ranks;
    const TimelineOptions o = m_timeline->options();
    if (m_current.trace) {
        s.window = m_timeline->visibleRange();
        s.selection = m_timeline->selection();
        s.firstRow = m_timeline->firstRow();
    }
    s.showCpu = o.showCpu;
    s.showOverlap = o.showOverlap;
    s.collapsedRanks = o.collapsedRanks;
    s.grouping = QString::fromLatin1(rankGroupingName(o.grouping));
    s.collapsedGroups = o.collapsedGroups;
    s.palette = paletteKindName(o.palette);
    s.alignClocks = m_alignClocksAction->isChecked();
    s.geometry = saveGeometry();
    s.docks = saveState();
    s.rulesFile = m_rulesFile;
    // As the session file holds it (compact JSON), so that a session read back compares equal.
    const QJsonDocument spec
        = QJsonDocument::fromJson(QSettings().value(QStringLiteral("ExportFigure/spec")).toByteArray());
    s.figureSpec = spec.isObject() ? spec.toJson(QJsonDocument::Compact) : QByteArray();
    s.bookmarks = m_bookmarks->bookmarks();
    if (m_findBar->isVisible()) {
        s.findText = m_findBar->search()->query().text;
        s.findRegex = m_findBar->search()->query().regex;
    }
    return s;
}

bool MainWindow::saveSession(const QString& path)
{
    if (!m_current.trace) {
        showError(tr("Could not save the session"), tr("No trace is open."));
        return false;
    }
    const QString problem = writeFileAtomically(path, currentSession().toJson(path));
    if (!problem.isEmpty()) {
        showError(tr("Could not save the session"), QStringLiteral("%1: %2").arg(path, problem));
        return false;
    }
    m_statusText->setText(tr("Session saved to %1").arg(QDir::toNativeSeparators(path)));
    return true;
}

bool MainWindow::openSession(const QString& path)
{
    Session s;
    try {
        s = Session::load(path);
    } catch (const std::exception& e) {
        showError(tr("Could not open the session"), QString::fromUtf8(e.what()));
        return false;
    }
    QString trace = s.existingTracePath(path);
    if (trace.isEmpty()) { // moved: ask for the folder that holds it now
        const QString name = QFileInfo(s.tracePath).fileName();
        const FolderChooser chooser = m_folderChooser ? m_folderChooser : [this](const QString& missing) {
            QMessageBox::information(this, tr("Trace not found"),
                tr("The session's trace %1 is not there any more. Choose the folder that holds %2 now.")
                    .arg(QDir::toNativeSeparators(missing), QFileInfo(missing).fileName()));
            return QFileDialog::getExistingDirectory(this, tr("Where is %1?").arg(QFileInfo(missing).fileName()));
        };
        const QString folder = chooser(s.tracePath);
        if (folder.isEmpty()) {
            m_statusText->setText(tr("Session not opened: %1 was not found").arg(name));
            return false;
        }
        const QString inside = QDir(folder).filePath(name);
        trace = QFileInfo::exists(inside) ? inside : QFileInfo(folder).fileName() == name ? folder : QString();
        if (trace.isEmpty()) {
            showError(tr("Could not open the session"),
                tr("%1: %2 is not in %3").arg(QFileInfo(path).fileName(), name, QDir::toNativeSeparators(folder)));
            return false;
        }
    }
    if (s.rulesFile != m_rulesFile && !setRulesFile(s.rulesFile))
        setRulesFile(QString()); // said in a dialog; the built-in rules instead
    {
        const QSignalBlocker block(m_alignClocksAction); // toggling reloads the current trace
        m_alignClocksAction->setChecked(s.alignClocks);
    }
    m_loader->setClockMode(s.alignClocks ? ClockMode::Aligned : ClockMode::Recorded);
    m_pendingSession = std::make_pair(QDir::cleanPath(trace), std::move(s));
    openTraceRanks(trace, m_pendingSession->second.ranks);
    return true;
}

void MainWindow::applySession(const QString& path)
{
    if (!m_pendingSession || m_pendingSession->first != QDir::cleanPath(path) || !m_current.trace)
        return;
    const Session s = std::move(m_pendingSession->second);
    m_pendingSession.reset();
    if (!s.geometry.isEmpty())
        restoreGeometry(s.geometry);
    if (!s.docks.isEmpty() && restoreState(s.docks))
        m_layoutByHand = true; // the session's docks stay as saved
    setPalette(paletteKindFromName(s.palette));
    TimelineOptions o = m_timeline->options();
    o.showCpu = s.showCpu;
    o.showOverlap = s.showOverlap;
    o.collapsedRanks = s.collapsedRanks;
    if (const auto grouping = rankGroupingFromName(s.grouping.toStdString())) { // else as the trace opened
        o.grouping = *grouping;
        o.collapsedGroups = s.collapsedGroups;
    }
    o.range = s.window;
    {
        const QSignalBlocker cpu(m_showCpuAction), overlap(m_showOverlapAction);
        m_showCpuAction->setChecked(s.showCpu);
        m_showOverlapAction->setChecked(s.showOverlap);
    }
    m_timeline->setOptions(o);
    syncGroupActions();
    m_whatIf->followTimelineOptions(o);
    const Trace& t = *m_current.trace;
    if (const auto& sel = s.selection; sel && sel->rank >= 0 && std::size_t(sel->rank) < t.ranks.size()
        && sel->lane >= 0 && std::size_t(sel->lane) < t.ranks[sel->rank].lanes.size()
        && sel->interval < t.ranks[sel->rank].lanes[sel->lane].intervals.size()) {
        m_timeline->select(*sel);
        onIntervalSelected(*sel);
    }
    m_timeline->layOutNow();
    m_timeline->setFirstRow(s.firstRow);
    m_bookmarks->setBookmarks(s.bookmarks);
    if (!s.figureSpec.isEmpty())
        QSettings().setValue(QStringLiteral("ExportFigure/spec"), s.figureSpec);
    if (!s.findText.isEmpty())
        m_findBar->find(s.findText, s.findRegex);
    emit sessionRestored(path);
}

void MainWindow::restoreSettings()
{
    QSettings s;
    restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(s.value(QStringLiteral("window/state")).toByteArray());
    // A damaged or hand-edited settings file: a value that is not what we wrote gives the default.
    auto flag = [&s](const QString& key, bool fallback) {
        const QVariant v = s.value(key);
        if (v.typeId() == QMetaType::Bool)
            return v.toBool();
        const QString text = v.toString();
        return text == QLatin1String("true") ? true : text == QLatin1String("false") ? false : fallback;
    };
    const bool showCpu = flag(QStringLiteral("view/showCpu"), true);
    const bool showOverlap = flag(QStringLiteral("view/showOverlap"), true);
    m_showCpuAction->setChecked(showCpu);
    m_showOverlapAction->setChecked(showOverlap);
    setPalette(paletteKindFromName(s.value(QStringLiteral("view/palette"), QStringLiteral("default")).toString()));
}

QString MainWindow::lastSessionPath()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/last.exposure-session");
}

void MainWindow::saveSettings()
{
    // The session of a window that closes with a trace: File ▸ Reopen Last Session brings it back.
    if (m_current.trace && !m_current.path.isEmpty() && m_remembersRecent
        && QDir().mkpath(QFileInfo(lastSessionPath()).absolutePath()))
        writeFileAtomically(lastSessionPath(), currentSession().toJson(lastSessionPath()));
    QSettings s;
    s.setValue(QStringLiteral("window/geometry"), saveGeometry());
    s.setValue(QStringLiteral("window/state"), saveState());
    s.setValue(QStringLiteral("view/showCpu"), m_showCpuAction->isChecked());
    s.setValue(QStringLiteral("view/showOverlap"), m_showOverlapAction->isChecked());
    s.setValue(QStringLiteral("view/palette"), paletteKindName(m_timeline->options().palette));
}

} // namespace exposure
