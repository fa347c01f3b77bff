// SPDX-License-Identifier: GPL-3.0-or-later
#include "shell/recentfilesmenu.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QVariant>

namespace exposure {

RecentFilesMenu::RecentFilesMenu(QWidget* parent)
    : QMenu(tr("Open &Recent"), parent)
{
    setToolTipsVisible(true);
    load();
    rebuild();
    connect(this, &QMenu::aboutToShow, this, &RecentFilesMenu::rebuild);
}

void RecentFilesMenu::refresh()
{
    rebuild();
}

void RecentFilesMenu::load()
{
    // Anything but a list of absolute paths (a hand-edited or damaged settings file) is ignored entry by entry.
    const QVariant v = QSettings().value(QStringLiteral("recentFiles"));
    m_paths.clear();
    if (v.typeId() != QMetaType::QStringList && v.typeId() != QMetaType::QVariantList
        && v.typeId() != QMetaType::QString)
        return;
    for (const QString& p : v.toStringList())
        if (!p.isEmpty() && QDir::isAbsolutePath(p) && !p.contains(QChar(0)) && !m_paths.contains(p)
            && m_paths.size() < kMax)
            m_paths << p;
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
    m_missing.clear();
    int n = 1;
    for (const QString& p : std::as_const(m_paths)) {
        const bool exists = QFileInfo::exists(p);
        QString label = QStringLiteral("&%1 %2").arg(n++ % 10).arg(QDir::toNativeSeparators(p));
        if (!exists) {
            label += tr(" (not found)");
            m_missing << p;
        }
        QAction* a = addAction(label);
        a->setEnabled(exists);
        if (!exists)
            a->setToolTip(tr("%1 no longer exists (deleted, moved or on a disk that is not mounted)").arg(p));
        connect(a, &QAction::triggered, this, [this, p] { emit fileSelected(p); });
    }
    if (!m_paths.isEmpty())
        addSeparator();
    QAction* clearAction = addAction(tr("&Clear List"), this, &RecentFilesMenu::clearList);
    clearAction->setEnabled(!m_paths.isEmpty());
    setEnabled(true);
}

} // namespace exposure
