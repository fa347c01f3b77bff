// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/collectivespanel.h"

#include <QHeaderView>
#include <QLabel>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>

namespace exposure {

CollectivesPanel::CollectivesPanel(QWidget* parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_model(new CollectivesModel(this))
    , m_tree(new QTreeView(this))
{
    m_summary->setWordWrap(true);
    m_tree->setModel(m_model);
    m_tree->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // Columns as wide as their contents, each header over its column (right-aligned over figures); a stretched last
    // column put the waiting share about 1 000 px right of its left-aligned header.
    m_tree->header()->setStretchLastSection(false);
    m_tree->setToolTip(tr("Latency: the shortest member's duration (the last arrival's, without waiting). Bus "
                          "bandwidth: message size / mean latency × the nccl-tests factor (2(n−1)/n all-reduce, "
                          "(n−1)/n all-gather, reduce-scatter, all-to-all, 1 otherwise). Waiting: share of the "
                          "members' time spent before the last member arrived."));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_tree, 1);
    setTrace(nullptr, nullptr);
}

void CollectivesPanel::setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const CollectiveMatch> match,
    std::shared_ptr<const Analysis> analysis)
{
    m_analysis = std::move(analysis);
    if (!trace || !match || trace->ranks.size() < 2 || match->processGroups.empty()) {
        m_model->clear();
        m_summary->setText(tr("No communication kernels on several ranks."));
        return;
    }
    m_model->setMatch(*trace, *match, m_analysis.get());
    // Group, mismatch and straggler lines span the columns; every group is open.
    for (int g = 0; g < m_model->rowCount(); ++g) {
        const QModelIndex group = m_model->index(g, 0);
        m_tree->setFirstColumnSpanned(g, {}, true);
        for (int row = 0; row < m_model->rowCount(group); ++row)
            if (m_model->isSpanned(m_model->index(row, 0, group)))
                m_tree->setFirstColumnSpanned(row, group, true);
    }
    m_tree->expandAll();
    fitFirstColumn();
    // The time fallback is no process group: it is said apart (a pseudo-group counted as a group misled users).
    const auto identified = std::count_if(match->processGroups.begin(), match->processGroups.end(),
        [](const ProcessGroupMatch& pg) { return pg.method != MatchMethod::Time; });
    const bool byTime = std::size_t(identified) < match->processGroups.size();
    m_summary->setText((identified == 1 ? tr("1 process group") : tr("%1 process groups").arg(identified))
        + tr(", %1 collectives matched").arg(match->groups.size())
        + (byTime ? tr(" (some kernels matched by time, without group identity)") : QString()));
}

void CollectivesPanel::fitFirstColumn()
{
    // Column 0 as wide as its own cells and header, not as the group and straggler texts spanned over every column
    // (sized to those, it pushed the other columns about 1 000 px away from their headers).
    const QFontMetrics fm(m_tree->font());
    int width = fm.horizontalAdvance(m_model->headerData(CollectivesModel::Type, Qt::Horizontal).toString()) + 16;
    for (int g = 0; g < m_model->rowCount(); ++g) {
        const QModelIndex group = m_model->index(g, 0);
        for (int row = 0; row < m_model->rowCount(group); ++row)
            if (const QModelIndex i = m_model->index(row, 0, group); !m_model->isSpanned(i))
                width = std::max(width, m_tree->indentation() + fm.horizontalAdvance(i.data().toString()) + 16);
    }
    m_tree->header()->setSectionResizeMode(CollectivesModel::Type, QHeaderView::Interactive);
    m_tree->header()->resizeSection(CollectivesModel::Type, width);
}

QString CollectivesPanel::summary() const
{
    return m_summary->text();
}

} // namespace exposure
