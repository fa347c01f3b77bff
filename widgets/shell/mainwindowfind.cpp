// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow's Edit menu: Find (Ctrl+F) and stepping through its matches (F3, Shift+F3).
#include "common/elidedlabel.h"
#include "shell/findbar.h"
#include "shell/mainwindow.h"

#include <QAction>
#include <QMenu>
#include <QMenuBar>

namespace exposure {

void MainWindow::createEditMenu()
{
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* find = edit->addAction(
        QIcon::fromTheme(QStringLiteral("edit-find")), tr("&Find…"), this, [this] { m_findBar->activate(); });
    find->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_F));
    find->setToolTip(tr("Find kernels and CPU regions by name (text or regular expression)"));
    QAction* next = edit->addAction(tr("Find &Next"), this, [this] { m_findBar->findNext(+1); });
    next->setShortcut(QKeySequence(Qt::Key_F3));
    QAction* previous = edit->addAction(tr("Find &Previous"), this, [this] { m_findBar->findNext(-1); });
    previous->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F3));
    m_traceActions << find << next << previous;
    connect(m_findBar, &FindBar::message, m_statusText, &ElidedLabel::setText);
}

} // namespace exposure
