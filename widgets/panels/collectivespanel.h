// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/collectives.h"
#include "model/trace.h"
#include "panels/collectivesmodel.h"

#include <QWidget>
#include <memory>

class QLabel;
class QTreeView;

namespace exposure {

// The "Collectives" dock: per process group how its collectives were matched (process group, stream or time), count
// mismatches, its collectives by type, data type and message size (count, total and mean duration, latency without
// waiting, NCCL algorithm, bus bandwidth by the nccl-tests formulas, waiting share), and its stragglers. The whole
// trace, computed once from the loaded match (cheap: one pass over the matched collectives).
class CollectivesPanel : public QWidget
{
    Q_OBJECT
public:
    using Column = CollectivesModel::Column;
    using enum CollectivesModel::Column;

    explicit CollectivesPanel(QWidget* parent = nullptr);
    // With the analysis, each process group's rows are grouped by the operation the program called.
    void setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const CollectiveMatch> match,
        std::shared_ptr<const Analysis> analysis = {});

    QTreeView* tree() const { return m_tree; }
    CollectivesModel* model() const { return m_model; }
    QString summary() const;

private:
    void fitFirstColumn();
    QLabel* m_summary;
    CollectivesModel* m_model;
    std::shared_ptr<const Analysis> m_analysis; // kept while its names are shown
    QTreeView* m_tree;
};

} // namespace exposure
