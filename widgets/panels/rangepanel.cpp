// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/rangepanel.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

namespace exposure {

RangePanel::RangePanel(TableModel* model, QWidget* parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_model(model)
    , m_table(new QTableView(this))
    , m_jobs(new JobSlot(this))
{
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_model->setParent(this);
    m_table->setModel(m_model);
    // No sort until a column is clicked (a panel that enables sorting shows its rows in their order first).
    m_table->horizontalHeader()->setSortIndicator(-1, Qt::DescendingOrder);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->setWordWrap(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_table, 1);
}

void RangePanel::setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis)
{
    m_trace = std::move(trace);
    m_analysis = std::move(analysis);
    m_jobs->cancel();
    clear();
    if (m_trace)
        m_range = activityRange(*m_trace);
    if (m_trace && m_analysis)
        recompute();
}

void RangePanel::setVisibleRange(TimeRange range)
{
    if (range == m_range)
        return;
    m_range = range;
    if (m_trace && m_analysis)
        recompute();
}

} // namespace exposure
