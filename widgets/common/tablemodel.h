// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QAbstractTableModel>
#include <QColor>
#include <QIcon>
#include <QStringList>
#include <QVariant>
#include <optional>
#include <vector>

namespace exposure {

// One cell of a TableModel: its text and how it is shown and sorted.
struct TableCell
{
    QString text;
    // Numeric sort key (SortRole). A column sorts keyed cells by their key, keyed cells before unkeyed ones
    // (ascending), and unkeyed cells by their text.
    QVariant sortKey;
    Qt::Alignment alignment = {}; // none: the view's default (left, vertically centred)
    QString toolTip;
    QColor foreground; // invalid: the view's text colour
    bool bold = false;
    // Set (even to a null icon, as QIcon::fromTheme gives where the theme lacks it): the view keeps room for it.
    std::optional<QIcon> icon;

    // A cell with no text, no key and no icon is absent: it sorts after every present cell in either order.
    bool present() const { return !text.isEmpty() || sortKey.isValid() || icon.has_value(); }
};

// A cell sorted by `sortKey`: right-aligned (a number) or with the view's default alignment (a label).
TableCell keyedCell(const QString& text, qint64 sortKey, bool right);

// A read-only table of rows of TableCells behind a QTableView: column titles (and tooltips), optional row titles,
// a per-row tag that follows the row through sorting (an index into the owner's data), and sorting in place by
// SortRole that is kept when the rows are replaced (as a sorting QTableWidget does).
class TableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Role { SortRole = Qt::UserRole, TagRole };
    using Row = std::vector<TableCell>;

    explicit TableModel(QStringList columns, QObject* parent = nullptr);

    // Replaces all rows (a model reset); `tags[i]` belongs to rows[i] (the row's index when empty). Sorted by the
    // last sort() column, if any.
    void setRows(std::vector<Row> rows, std::vector<qint64> tags = {});
    void clear() { setRows({}); }
    // Row titles in the vertical header (empty: row numbers); set before setRows().
    void setRowTitles(QStringList titles);
    void setColumnTitle(int column, const QString& title, const QString& toolTip = {});
    void setColumnToolTip(int column, const QString& toolTip);

    const TableCell& cell(int row, int column) const;
    QString text(int row, int column) const { return cell(row, column).text; }
    qint64 tag(int row) const;
    // The element of `items` that row's tag indexes (rows filled with their item's index as tag), else T{}.
    template <class T> T tagged(const std::vector<T>& items, int row) const
    {
        const qint64 k = tag(row);
        return k >= 0 && std::size_t(k) < items.size() ? items[std::size_t(k)] : T {};
    }
    // The column the rows are sorted by (-1: the order they were given in).
    int sortColumn() const { return m_sortColumn; }
    Qt::SortOrder sortOrder() const { return m_sortOrder; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

private:
    struct Entry
    {
        Row cells;
        qint64 tag = 0;
        int given = 0; // position in setRows(): the order of sortColumn -1
        QString title;
    };
    void sortEntries();
    bool lessThan(const Entry& a, const Entry& b) const;

    QStringList m_columns;
    QStringList m_columnTips;
    QStringList m_rowTitles;
    std::vector<Entry> m_rows;
    int m_sortColumn = -1;
    Qt::SortOrder m_sortOrder = Qt::AscendingOrder;
};

} // namespace exposure
