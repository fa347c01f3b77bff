// SPDX-License-Identifier: GPL-3.0-or-later
// The Bookmarks dock: named time ranges of the trace (saved in the session), listed by start; double-click or
// Ctrl+1 … Ctrl+9 go to one, Ctrl+B adds the visible range.
#pragma once

#include "shell/session.h"

#include <QAbstractTableModel>
#include <QWidget>
#include <vector>

class QTableView;

namespace exposure {

class BookmarksModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { Name, Start, Duration, ColumnCount };
    using QAbstractTableModel::QAbstractTableModel;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

    const std::vector<Bookmark>& bookmarks() const { return m_marks; }
    void setBookmarks(std::vector<Bookmark> marks); // kept sorted by start
    int add(const Bookmark& mark); // its row
    void remove(int row);

private:
    std::vector<Bookmark> m_marks;
};

class BookmarksPanel : public QWidget
{
    Q_OBJECT
public:
    explicit BookmarksPanel(QWidget* parent = nullptr);
    BookmarksModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }
    const std::vector<Bookmark>& bookmarks() const { return m_model->bookmarks(); }
    void setBookmarks(std::vector<Bookmark> marks) { m_model->setBookmarks(std::move(marks)); }
    int add(const Bookmark& mark);
    // The k-th bookmark (from 0) in start order, if there is one; emits jumpRequested.
    bool jumpTo(int k);

signals:
    void jumpRequested(int row); // to bookmarks()[row]
    void addRequested(); // the Add button: the window adds its visible range

private:
    BookmarksModel* m_model;
    QTableView* m_view;
};

} // namespace exposure
