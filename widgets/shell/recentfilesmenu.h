// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QMenu>
#include <QStringList>

namespace exposure {

// File ▸ Open Recent: up to 10 paths kept in QSettings ("recentFiles"). The menu is rebuilt each time it opens:
// an entry whose file or folder no longer exists stays listed, disabled and marked "(not found)", until it is
// opened again from elsewhere or the list is cleared — a trace on an unmounted disk is not forgotten, and a
// deleted one is never offered as if it were there. A corrupt setting gives an empty list.
class RecentFilesMenu : public QMenu
{
    Q_OBJECT
public:
    explicit RecentFilesMenu(QWidget* parent = nullptr);
    void add(const QString& path);
    void clearList();
    QStringList paths() const { return m_paths; }
    // Paths listed as missing the last time the menu was built.
    QStringList missingPaths() const { return m_missing; }
    // Rebuilds the menu from the file system (also done before the menu shows).
    void refresh();

signals:
    void fileSelected(const QString& path);

private:
    void load();
    void save();
    void rebuild();

    QStringList m_paths;
    QStringList m_missing;
    static constexpr int kMax = 10;
};

} // namespace exposure
