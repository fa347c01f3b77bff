// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/rulespanel.h"

#include "common/labels.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

namespace exposure {

RulesPanel::RulesPanel(QWidget* parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_model(new TableModel({ tr("#"), tr("Rule"), tr("Pattern"), tr("Applies to"), tr("Category"), tr("Sub-group"),
                                 tr("Matched"), tr("Time") },
          this))
    , m_table(new QTableView(this))
{
    m_table->setModel(m_model);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
    m_table->setSortingEnabled(false);
    m_summary->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_table, 1);
    setRules(nullptr, {});
}

void RulesPanel::setRules(const Rules* rules, const std::vector<RuleUsage>& usage)
{
    m_model->clear();
    m_unclassified = 0;
    if (!rules) {
        m_summary->setText(tr("No trace loaded."));
        return;
    }
    const auto& list = rules->rules();
    std::vector<RuleUsage> byRule(list.size());
    RuleUsage none;
    for (const auto& u : usage) {
        if (u.rule >= 0 && std::size_t(u.rule) < list.size())
            byRule[u.rule] = u;
        else
            none = u;
    }
    m_unclassified = none.timeNs;
    std::vector<TableModel::Row> rows;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto& r = list[i];
        if (r.catchAll)
            m_unclassified += byRule[i].timeNs;
        const QString cells[] = { QString::number(i), QString::fromStdString(r.id), QString::fromStdString(r.pattern),
            QLatin1String(ruleTargetName(r.target)),
            QString::fromStdString(r.category) + (r.catchAll ? tr(" (catch-all)") : QString()),
            QString::fromStdString(r.subgroup), groupDigits(byRule[i].count), durationText(byRule[i].timeNs) };
        TableModel::Row row(8);
        for (int c = 0; c < 8; ++c) {
            TableCell& cell = row[std::size_t(c)];
            cell.text = cells[c];
            if (c == 6 || c == 7 || c == 0)
                cell.alignment = Qt::AlignRight | Qt::AlignVCenter;
            if (byRule[i].count == 0)
                cell.foreground = palette().color(QPalette::Disabled, QPalette::Text);
        }
        rows.push_back(std::move(row));
    }
    m_model->setRows(std::move(rows));
    m_summary->setText(
        tr("%1 rules from %2. Unclassified time (catch-all or no rule): %3 in %4 regions without a rule.")
            .arg(list.size())
            .arg(QString::fromStdString(rules->source()))
            .arg(durationText(m_unclassified))
            .arg(groupDigits(none.count)));
}

} // namespace exposure
