// SPDX-License-Identifier: GPL-3.0-or-later
// Help ▸ Keyboard Shortcuts: every shortcut of the window, read from its actions (so the list cannot go stale), and
// the timeline's mouse gestures.
#pragma once

#include <QDialog>
#include <QString>
#include <QVector>

class QMenuBar;
class QTableWidget;

namespace exposure {

struct ShortcutRow
{
    QString menu; // "View", "File ▸ Open Recent"; empty for an action outside the menus
    QString action; // the action's text without its mnemonic ("Zoom to Fit")
    QString keys; // "Ctrl+0", several separated by ", ", in the platform's native text
};

// The actions of `window` (its menu bar, recursively, and the actions added to the window itself) that have a
// shortcut, each once, in menu order.
QVector<ShortcutRow> shortcutRows(const QWidget* window, const QMenuBar* menuBar);

class ShortcutsDialog : public QDialog
{
    Q_OBJECT
public:
    ShortcutsDialog(const QVector<ShortcutRow>& rows, QWidget* parent = nullptr);
    QTableWidget* table() const { return m_table; }

private:
    QTableWidget* m_table = nullptr;
};

} // namespace exposure
