// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/tablemodel.h"

#include <QBrush>
#include <QFont>
#include <algorithm>

namespace exposure {

namespace {

const TableCell& absentCell()
{
    static const TableCell cell;
    return cell;
}

} // namespace

TableCell keyedCell(const QString& text, qint64 sortKey, bool right)
{
    TableCell c;
    c.text = text;
    c.sortKey = sortKey;
    if (right)
        c.alignment = Qt::AlignRight | Qt::AlignVCenter;
    return c;
}

TableModel::TableModel(QStringList columns, QObject* parent)
    : QAbstractTableModel(parent)
    , m_columns(std::move(columns))
{
    for (qsizetype c = 0; c < m_columns.size(); ++c)
        m_columnTips << QString();
}

void TableModel::setRows(std::vector<Row> rows, std::vector<qint64> tags)
{
    beginResetModel();
    m_rows.clear();
    m_rows.reserve(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        Entry e;
        e.cells = std::move(rows[i]);
        e.cells.resize(std::size_t(m_columns.size()));
        e.tag = i < tags.size() ? tags[i] : qint64(i);
        e.given = int(i);
        e.title = m_rowTitles.value(qsizetype(i));
        m_rows.push_back(std::move(e));
    }
    sortEntries();
    endResetModel();
}

void TableModel::setRowTitles(QStringList titles)
{
    m_rowTitles = std::move(titles);
}

void TableModel::setColumnTitle(int column, const QString& title, const QString& toolTip)
{
    if (column < 0 || column >= m_columns.size())
        return;
    m_columns[column] = title;
    m_columnTips[column] = toolTip;
    emit headerDataChanged(Qt::Horizontal, column, column);
}

void TableModel::setColumnToolTip(int column, const QString& toolTip)
{
    if (column < 0 || column >= m_columns.size())
        return;
    m_columnTips[column] = toolTip;
    emit headerDataChanged(Qt::Horizontal, column, column);
}

const TableCell& TableModel::cell(int row, int column) const
{
    if (row < 0 || std::size_t(row) >= m_rows.size() || column < 0 || column >= m_columns.size())
        return absentCell();
    return m_rows[std::size_t(row)].cells[std::size_t(column)];
}

qint64 TableModel::tag(int row) const
{
    return row >= 0 && std::size_t(row) < m_rows.size() ? m_rows[std::size_t(row)].tag : -1;
}

int TableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int TableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_columns.size());
}

QVariant TableModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.model() != this)
        return {};
    const TableCell& c = cell(index.row(), index.column());
    switch (role) {
    case Qt::DisplayRole:
        return c.present() ? QVariant(c.text) : QVariant();
    case Qt::ToolTipRole:
        return c.toolTip.isEmpty() ? QVariant() : QVariant(c.toolTip);
    case Qt::TextAlignmentRole:
        return c.alignment ? QVariant::fromValue(c.alignment) : QVariant();
    case Qt::ForegroundRole:
        return c.foreground.isValid() ? QVariant(QBrush(c.foreground)) : QVariant();
    case Qt::FontRole: {
        if (!c.bold)
            return {};
        QFont f;
        f.setBold(true);
        return f;
    }
    case Qt::DecorationRole:
        return c.icon ? QVariant(*c.icon) : QVariant();
    case SortRole:
        return c.sortKey.isValid() ? c.sortKey : QVariant(c.text);
    case TagRole:
        return tag(index.row());
    default:
        return {};
    }
}

QVariant TableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal) {
        if (section < 0 || section >= m_columns.size())
            return {};
        if (role == Qt::DisplayRole)
            return m_columns[section];
        if (role == Qt::ToolTipRole && !m_columnTips[section].isEmpty())
            return m_columnTips[section];
        return {};
    }
    if (section < 0 || std::size_t(section) >= m_rows.size() || role != Qt::DisplayRole)
        return {};
    const QString& title = m_rows[std::size_t(section)].title;
    return title.isEmpty() ? QVariant(section + 1) : QVariant(title);
}

Qt::ItemFlags TableModel::flags(const QModelIndex& index) const
{
    if (!index.isValid() || index.model() != this)
        return Qt::NoItemFlags;
    return Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemNeverHasChildren;
}

void TableModel::sort(int column, Qt::SortOrder order)
{
    if (column < -1 || column >= m_columns.size())
        return;
    m_sortColumn = column;
    m_sortOrder = order;
    emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    const QModelIndexList before = persistentIndexList();
    std::vector<int> given;
    given.reserve(std::size_t(before.size()));
    for (const QModelIndex& i : before)
        given.push_back(m_rows[std::size_t(i.row())].given);
    sortEntries();
    std::vector<int> rowOfGiven(m_rows.size());
    for (std::size_t r = 0; r < m_rows.size(); ++r)
        rowOfGiven[std::size_t(m_rows[r].given)] = int(r);
    QModelIndexList after;
    after.reserve(before.size());
    for (qsizetype k = 0; k < before.size(); ++k)
        after << index(rowOfGiven[std::size_t(given[std::size_t(k)])], before[k].column());
    changePersistentIndexList(before, after);
    emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
}

bool TableModel::lessThan(const Entry& a, const Entry& b) const
{
    const TableCell& x = a.cells[std::size_t(m_sortColumn)];
    const TableCell& y = b.cells[std::size_t(m_sortColumn)];
    if (x.sortKey.isValid() && y.sortKey.isValid())
        return x.sortKey.toDouble() < y.sortKey.toDouble();
    if (x.sortKey.isValid() != y.sortKey.isValid())
        return x.sortKey.isValid();
    return x.text < y.text;
}

void TableModel::sortEntries()
{
    if (m_sortColumn < 0) {
        std::sort(m_rows.begin(), m_rows.end(), [](const Entry& a, const Entry& b) { return a.given < b.given; });
        return;
    }
    const auto column = std::size_t(m_sortColumn);
    // Stable on the current order; rows whose cell is absent keep their order after the others, in either order
    // (as QTableWidget sorts).
    const auto absent = std::stable_partition(
        m_rows.begin(), m_rows.end(), [column](const Entry& e) { return e.cells[column].present(); });
    std::stable_sort(m_rows.begin(), absent, [this](const Entry& a, const Entry& b) {
        return m_sortOrder == Qt::AscendingOrder ? lessThan(a, b) : lessThan(b, a);
    });
}

} // namespace exposure
