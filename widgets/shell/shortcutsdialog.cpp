// SPDX-License-Identifier: GPL-3.0-or-later
#include "shell/shortcutsdialog.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMenu>
#include <QMenuBar>
#include <QSet>
#include <QTableWidget>
#include <QVBoxLayout>

namespace exposure {

namespace {

QString plainText(QString text)
{
    text.remove(QRegularExpression(QStringLiteral("&(?!&)")));
    return text.replace(QStringLiteral("&&"), QStringLiteral("&")).remove(QStringLiteral("…")).trimmed();
}

void collect(
    const QList<QAction*>& actions, const QString& menu, QVector<ShortcutRow>& rows, QSet<const QAction*>& seen)
{
    for (const QAction* a : actions) {
        if (a->isSeparator() || seen.contains(a))
            continue;
        seen.insert(a);
        if (a->menu()) {
            const QString sub = plainText(a->menu()->title());
            collect(a->menu()->actions(), menu.isEmpty() ? sub : menu + QStringLiteral(" ▸ ") + sub, rows, seen);
            continue;
        }
        QStringList keys;
        for (const QKeySequence& k : a->shortcuts())
            if (!k.isEmpty())
                keys << k.toString(QKeySequence::NativeText);
        if (!keys.isEmpty())
            rows.push_back({ menu, plainText(a->text()), keys.join(QStringLiteral(", ")) });
    }
}

} // namespace

QVector<ShortcutRow> shortcutRows(const QWidget* window, const QMenuBar* menuBar)
{
    QVector<ShortcutRow> rows;
    QSet<const QAction*> seen;
    if (menuBar)
        collect(menuBar->actions(), QString(), rows, seen);
    if (window)
        collect(window->actions(), QString(), rows, seen);
    return rows;
}

ShortcutsDialog::ShortcutsDialog(const QVector<ShortcutRow>& rows, QWidget* parent)
    : QDialog(parent)
{
    setWindowTitle(tr("Keyboard Shortcuts"));
    // The timeline's gestures: not actions, so written here (README "Navigation" says the same).
    static const char* const gestures[][2] = {
        { QT_TR_NOOP("Zoom at the cursor"), QT_TR_NOOP("Wheel") },
        { QT_TR_NOOP("Pan"), QT_TR_NOOP("Drag") },
        { QT_TR_NOOP("Zoom to a rubber band"), QT_TR_NOOP("Shift+Drag") },
        { QT_TR_NOOP("Scroll the rows"), QT_TR_NOOP("Shift+Wheel") },
        { QT_TR_NOOP("Details of a kernel or region"), QT_TR_NOOP("Click") },
    };
    m_table = new QTableWidget(int(rows.size()) + int(std::size(gestures)), 3, this);
    m_table->setHorizontalHeaderLabels({ tr("Menu"), tr("Action"), tr("Keys") });
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    int row = 0;
    for (const ShortcutRow& r : rows) {
        m_table->setItem(row, 0, new QTableWidgetItem(r.menu));
        m_table->setItem(row, 1, new QTableWidgetItem(r.action));
        m_table->setItem(row, 2, new QTableWidgetItem(r.keys));
        ++row;
    }
    for (const auto& g : gestures) {
        m_table->setItem(row, 0, new QTableWidgetItem(tr("Timeline")));
        m_table->setItem(row, 1, new QTableWidgetItem(tr(g[0])));
        m_table->setItem(row, 2, new QTableWidgetItem(tr(g[1])));
        ++row;
    }
    m_table->resizeColumnsToContents();
    m_table->horizontalHeader()->setStretchLastSection(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_table);
    layout->addWidget(buttons);
    resize(560, 520);
}

} // namespace exposure
