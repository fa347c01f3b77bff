// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow's layout: the status bar, and the compact layout of small screens (every panel tabbed with Details on the
// right, so that the timeline keeps the window's height).
#include "common/elidedlabel.h"
#include "shell/mainwindow.h"

#include <QAction>
#include <QDockWidget>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QResizeEvent>
#include <QStatusBar>
#include <QStyle>
#include <QToolButton>
#include <algorithm>

namespace exposure {

void MainWindow::createStatusBar()
{
    m_progress->setMaximumWidth(220);
    m_progress->setTextVisible(false);
    m_progress->hide();
    m_cancelButton->setText(tr("Cancel"));
    m_cancelButton->setToolTip(tr("Stop loading and keep the current trace"));
    m_cancelButton->hide();
    connect(m_cancelButton, &QToolButton::clicked, this, &MainWindow::cancelLoading);
    m_warningsButton->setAutoRaise(true);
    m_warningsButton->setIcon(style()->standardIcon(QStyle::SP_MessageBoxWarning));
    m_warningsButton->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_warningsButton->setToolTip(tr("What the importer found inconsistent or incomplete in this trace: counted, and "
                                    "clipped or dropped only where it says so"));
    m_warningsButton->hide();
    connect(m_warningsButton, &QToolButton::clicked, this, &MainWindow::showTraceWarnings);
    statusBar()->addWidget(m_statusText, 1);
    m_clockLabel = new ElidedLabel(this);
    m_clockLabel->hide();
    statusBar()->addPermanentWidget(m_clockLabel);
    statusBar()->addPermanentWidget(m_warningsButton);
    statusBar()->addPermanentWidget(m_cursorLabel);
    statusBar()->addPermanentWidget(m_rangeLabel);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancelButton);
    m_cursorLabel->setMinimumWidth(130);
    m_rangeLabel->setMinimumWidth(130);
}

void MainWindow::createLayoutAction()
{
    m_compactAction = m_viewMenu->addAction(tr("Co&mpact Layout"));
    m_compactAction->setCheckable(true);
    m_compactAction->setToolTip(tr("Every panel in tabs beside Details, right of the timeline (chosen by itself for "
                                   "windows less than %1 pixels high)")
                                    .arg(kCompactHeight));
    connect(m_compactAction, &QAction::triggered, this, [this](bool on) {
        m_layoutByHand = true;
        setCompactLayout(on);
    });
}

void MainWindow::setCompactLayout(bool compact)
{
    m_compact = compact;
    // Fixed widths keep the labels from jittering as the cursor moves; a small window needs the room.
    m_cursorLabel->setMinimumWidth(compact ? 0 : 130);
    m_rangeLabel->setMinimumWidth(compact ? 0 : 130);
    if (m_compactAction)
        m_compactAction->setChecked(compact);
    if (compact) {
        QDockWidget* previous = m_detailsDock;
        for (const Panel& panel : m_panels) {
            addDockWidget(Qt::RightDockWidgetArea, panel.dock);
            tabifyDockWidget(previous, panel.dock);
            previous = panel.dock;
        }
        m_panels.front().dock->raise();
        resizeDocks({ m_detailsDock }, { std::clamp(width() * 2 / 5, 260, 460) }, Qt::Horizontal);
        return;
    }
    for (std::size_t i = 0; i < m_panels.size(); ++i) {
        addDockWidget(Qt::BottomDockWidgetArea, m_panels[i].dock);
        if (i > 0)
            tabifyDockWidget(m_panels[i - 1].dock, m_panels[i].dock);
    }
    m_panels.front().dock->raise();
    resizeDocks({ m_detailsDock }, { 380 }, Qt::Horizontal);
    resizeDocks({ m_panels.front().dock }, { std::min(260, height() * 3 / 10) }, Qt::Vertical);
}

void MainWindow::adaptLayout()
{
    if (m_layoutByHand)
        return;
    const bool small = height() < kCompactHeight;
    if (small != m_compact)
        setCompactLayout(small);
}

void MainWindow::showEvent(QShowEvent* event)
{
    QMainWindow::showEvent(event);
    adaptLayout();
}

void MainWindow::resizeEvent(QResizeEvent* event)
{
    QMainWindow::resizeEvent(event);
    if (isVisible())
        adaptLayout();
}

} // namespace exposure
