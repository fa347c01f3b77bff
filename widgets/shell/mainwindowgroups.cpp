// SPDX-License-Identifier: GPL-3.0-or-later
// View ▸ Group Ranks: ranks grouped by host, pipeline stage, DP group or blocks; groups collapsed to one row each.
#include "shell/mainwindow.h"
#include "timeline/timelineplot.h"

#include <QAction>
#include <QActionGroup>
#include <QMenu>

namespace exposure {

void MainWindow::createGroupMenu()
{
    QMenu* menu = m_viewMenu->addMenu(tr("&Group Ranks"));
    auto* exclusive = new QActionGroup(this);
    const std::pair<RankGrouping, QString> kinds[] = { { RankGrouping::None, tr("&None (every rank)") },
        { RankGrouping::Auto, tr("&Automatic") }, { RankGrouping::Host, tr("By &Host") },
        { RankGrouping::Stage, tr("By Pipeline &Stage") }, { RankGrouping::DataParallel, tr("By &DP Group") },
        { RankGrouping::Blocks, tr("In &Blocks of Consecutive Ranks") } };
    for (const auto& [grouping, text] : kinds) {
        QAction* a = menu->addAction(text);
        a->setCheckable(true);
        a->setData(int(grouping));
        a->setChecked(grouping == RankGrouping::None);
        exclusive->addAction(a);
        m_groupingActions << a;
        m_traceActions << a;
        connect(a, &QAction::triggered, this, [this, g = grouping] { setRankGrouping(g, true); });
    }
    menu->addSeparator();
    m_collapseGroupsAction
        = menu->addAction(tr("&Collapse All Groups"), this, [this] { m_timeline->setAllGroupsCollapsed(true); });
    m_expandGroupsAction
        = menu->addAction(tr("&Expand All Groups"), this, [this] { m_timeline->setAllGroupsCollapsed(false); });
    m_traceActions << m_collapseGroupsAction << m_expandGroupsAction;
    m_collapseGroupsAction->setToolTip(tr("Each group of ranks as one row: per pixel column, the share of its ranks "
                                          "computing, communicating (exposed, hidden, waiting) and idle"));
}

void MainWindow::setRankGrouping(RankGrouping grouping, bool collapseAll)
{
    m_timeline->setGrouping(grouping, collapseAll);
    syncGroupActions();
}

void MainWindow::syncGroupActions()
{
    const RankGrouping now = m_timeline->options().grouping;
    for (QAction* a : std::as_const(m_groupingActions))
        a->setChecked(RankGrouping(a->data().toInt()) == now);
}

void MainWindow::applyDefaultGrouping(std::size_t ranks)
{
    // Many ranks: one row per group (32 for 256 ranks on 8-GPU hosts), so that the first paint reads at a glance
    // and costs the group rows only; fewer: every rank's rows. A preview is grouped as its whole run will be.
    if (ranks == 0 && m_current.trace)
        ranks = m_current.trace->ranks.size();
    const bool many = ranks > kGroupRanksAbove;
    setRankGrouping(many ? RankGrouping::Auto : RankGrouping::None, many);
}

} // namespace exposure
