// SPDX-License-Identifier: GPL-3.0-or-later
#include "shell/recentfilesmenu.h"


#include <QDir>
#include <QFileInfo>
#include <QSettings>

namespace exposure {

RecentFilesMenu::RecentFilesMenu(QWidget* parent)
    : QMenu(tr("Open &Recent"), parent)
{
    load();
    rebuild();
}

void RecentFilesMenu::load()
{
    m_paths = QSettings().value(QStringLiteral("recentFiles")).toStringList();
}

void RecentFilesMenu::save()
{
    QSettings().setValue(QStringLiteral("recentFiles"), m_paths);
}

void RecentFilesMenu::add(const QString& path)
{
    const QString abs = QFileInfo(path).absoluteFilePath();
    m_paths.removeAll(abs);
    m_paths.prepend(abs);
    while (m_paths.size() > kMax)
        m_paths.removeLast();
    save();
    rebuild();
}

void RecentFilesMenu::clearList()
{
    m_paths.clear();
    save();
    rebuild();
}

void RecentFilesMenu::rebuild()
{
    clear();
    QStringList kept;
    for (const QString& p : std::as_const(m_paths))
        if (QFileInfo::exists(p))
            kept << p;
    if (kept != m_paths) {
        m_paths = kept;
        save();
    }
    int n = 1;
    for (const QString& p : std::as_const(m_paths)) {
        const QString label = QStringLiteral("&%1 %2").arg(n++ % 10).arg(QDir::toNativeSeparators(p));
        QAction* a = addAction(label);
        connect(a, &QAction::triggered, this, [this, p] { emit fileSelected(p); });
    }
    if (!m_paths.isEmpty())
        addSeparator();
    QAction* clearAction = addAction(tr("&Clear List"), this, &RecentFilesMenu::clearList);
    clearAction->setEnabled(!m_paths.isEmpty());
    setEnabled(true);
}

} // namespace exposure
