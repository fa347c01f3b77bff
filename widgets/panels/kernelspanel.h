// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"
#include "jobs/jobslot.h"
#include "model/trace.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QWidget>
#include <memory>
#include <vector>

class QLabel;
class QLineEdit;
class QTableView;

namespace exposure {

// kernelTable() rows as a sortable model. Display role: formatted text; Qt::UserRole: the raw
// value used for sorting; Qt::UserRole + 1 on any column: the StringId.
class KernelsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { Name, Category, Subgroup, Phase, Count, Total, Mean, Min, Max, Share, ColumnCount };
    using QAbstractTableModel::QAbstractTableModel;

    void setRows(
        std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis, std::vector<KernelRow> rows);
    const KernelRow& row(int i) const { return m_rows[i]; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QString nameOf(const KernelRow& r) const;

    std::shared_ptr<const Trace> m_trace;
    std::shared_ptr<const Analysis> m_analysis;
    std::vector<KernelRow> m_rows;
};

// The "Kernels" dock: kernels of the visible range (recomputed in the background), a filter box,
// and selection that highlights a kernel's instances in the timeline.
class KernelsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit KernelsPanel(QWidget* parent = nullptr);
    void setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis);
    void setVisibleRange(TimeRange range);
    void setFilterText(const QString& text);

    KernelsModel* model() const { return m_model; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }
    QTableView* view() const { return m_view; }
    JobSlot* jobs() const { return m_jobs; }

signals:
    void kernelSelected(quint32 name); // kInvalidString when the selection is cleared

private:
    void recompute();

    std::shared_ptr<const Trace> m_trace;
    std::shared_ptr<const Analysis> m_analysis;
    TimeRange m_range;
    KernelsModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QLineEdit* m_filter;
    QLabel* m_caption;
    QTableView* m_view;
    JobSlot* m_jobs;
};

} // namespace exposure
