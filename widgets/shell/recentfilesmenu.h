// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QMenu>
#include <QStringList>

namespace exposure {

// File ▸ Open Recent: up to 10 paths kept in QSettings ("recentFiles"); entries whose file or
// folder no longer exists are dropped when the menu is rebuilt.
class RecentFilesMenu : public QMenu
{
    Q_OBJECT
public:
    explicit RecentFilesMenu(QWidget* parent = nullptr);
    void add(const QString& path);
    void clearList();
    QStringList paths() const { return m_paths; }

signals:
    void fileSelected(const QString& path);

private:
    void load();
    void save();
    void rebuild();

    QStringList m_paths;
    static constexpr int kMax = 10;
};

} // namespace exposure
