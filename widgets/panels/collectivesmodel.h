// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/collectives.h"
#include "model/trace.h"

#include <QAbstractItemModel>
#include <QStringList>
#include <vector>

namespace exposure {

// The Collectives dock's tree: one top row per process group (its collectives and how they were matched), under it
// its count mismatches, one row per collective type, data type and message size (count, total and mean duration,
// latency, NCCL algorithm, bus bandwidth, waiting share) and its stragglers. Group, mismatch and straggler rows are
// one text in column 0 (isSpanned: the view spans it over all columns).
class CollectivesModel : public QAbstractItemModel
{
    Q_OBJECT
public:
    enum Column { Type, DataType, Size, Algorithm, Count, Total, Mean, Latency, BusBandwidth, Waiting, ColumnCount };

    explicit CollectivesModel(QObject* parent = nullptr);

    // The groups of `match` (of `trace`); empty for fewer than two ranks or no process group. With the trace's
    // analysis, each group's rows are grouped by the operation the program called ("all_reduce (send_recv kernels)").
    void setMatch(const Trace& trace, const CollectiveMatch& match, const Analysis* analysis = nullptr);
    void clear();
    bool isSpanned(const QModelIndex& index) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    // What a column's figure is, for its header's tooltip ("Total": Σ of the collectives' spans across ranks, ...).
    static QString columnToolTip(Column column);

private:
    struct Line
    {
        QStringList cells; // one text (spanned) or ColumnCount texts
        bool spanned = false;
        QString sizeTip; // "28 351 488 bytes"
    };
    struct Group
    {
        QString title;
        std::vector<Line> lines;
    };
    // The line of a child index (null for a top-level one).
    const Line* lineOf(const QModelIndex& index) const;

    std::vector<Group> m_groups;
};

} // namespace exposure
