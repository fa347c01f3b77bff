// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/bookmarkspanel.h"

#include "common/labels.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

namespace exposure {

int BookmarksModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_marks.size());
}

int BookmarksModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant BookmarksModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || std::size_t(index.row()) >= m_marks.size())
        return {};
    const Bookmark& b = m_marks[std::size_t(index.row())];
    if (role == Qt::DisplayRole || role == Qt::EditRole) {
        switch (index.column()) {
        case Name:
            return b.name;
        case Start:
            return durationText(b.range.start);
        case Duration:
            return durationText(b.range.duration());
        }
    }
    if (role == Qt::ToolTipRole)
        return tr("%1: %2 to %3 (%4 ns to %5 ns); Ctrl+%6 goes there")
            .arg(b.name, durationText(b.range.start), durationText(b.range.end), groupDigits(b.range.start),
                groupDigits(b.range.end))
            .arg(index.row() + 1);
    if (role == Qt::TextAlignmentRole && index.column() != Name)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant BookmarksModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Name:
        return tr("Bookmark");
    case Start:
        return tr("Start");
    case Duration:
        return tr("Duration");
    }
    return {};
}

bool BookmarksModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (!index.isValid() || index.column() != Name || role != Qt::EditRole || value.toString().trimmed().isEmpty())
        return false;
    m_marks[std::size_t(index.row())].name = value.toString().trimmed();
    emit dataChanged(index, index);
    return true;
}

Qt::ItemFlags BookmarksModel::flags(const QModelIndex& index) const
{
    Qt::ItemFlags f = QAbstractTableModel::flags(index);
    return index.column() == Name ? f | Qt::ItemIsEditable : f;
}

void BookmarksModel::setBookmarks(std::vector<Bookmark> marks)
{
    beginResetModel();
    m_marks = std::move(marks);
    std::stable_sort(m_marks.begin(), m_marks.end(),
        [](const Bookmark& a, const Bookmark& b) { return a.range.start < b.range.start; });
    endResetModel();
}

int BookmarksModel::add(const Bookmark& mark)
{
    const auto it = std::upper_bound(m_marks.begin(), m_marks.end(), mark,
        [](const Bookmark& a, const Bookmark& b) { return a.range.start < b.range.start; });
    const int row = int(it - m_marks.begin());
    beginInsertRows({}, row, row);
    m_marks.insert(it, mark);
    endInsertRows();
    return row;
}

void BookmarksModel::remove(int row)
{
    if (row < 0 || std::size_t(row) >= m_marks.size())
        return;
    beginRemoveRows({}, row, row);
    m_marks.erase(m_marks.begin() + row);
    endRemoveRows();
}

BookmarksPanel::BookmarksPanel(QWidget* parent)
    : QWidget(parent)
    , m_model(new BookmarksModel(this))
    , m_view(new QTableView(this))
{
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setEditTriggers(QAbstractItemView::EditKeyPressed | QAbstractItemView::SelectedClicked);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setSectionResizeMode(BookmarksModel::Name, QHeaderView::Stretch);
    m_view->horizontalHeader()->setSectionResizeMode(BookmarksModel::Start, QHeaderView::ResizeToContents);
    m_view->horizontalHeader()->setSectionResizeMode(BookmarksModel::Duration, QHeaderView::ResizeToContents);
    auto* add = new QPushButton(tr("Add Visible Range"), this);
    auto* go = new QPushButton(tr("Go"), this);
    auto* remove = new QPushButton(tr("Remove"), this);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(add);
    buttons->addWidget(go);
    buttons->addWidget(remove);
    buttons->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(buttons);
    layout->addWidget(m_view, 1);
    connect(add, &QPushButton::clicked, this, &BookmarksPanel::addRequested);
    connect(go, &QPushButton::clicked, this, [this] { jumpTo(m_view->currentIndex().row()); });
    connect(remove, &QPushButton::clicked, this, [this] { m_model->remove(m_view->currentIndex().row()); });
    connect(m_view, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
        if (i.column() != BookmarksModel::Name)
            jumpTo(i.row());
    });
}

int BookmarksPanel::add(const Bookmark& mark)
{
    const int row = m_model->add(mark);
    m_view->selectRow(row);
    return row;
}

bool BookmarksPanel::jumpTo(int k)
{
    if (k < 0 || std::size_t(k) >= bookmarks().size())
        return false;
    m_view->selectRow(k);
    emit jumpRequested(k);
    return true;
}

} // namespace exposure
