// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"
#include "common/tablemodel.h"

#include <QWidget>
#include <vector>

class QLabel;
class QTableView;

namespace exposure {

// The "Rules" dock: the classification rules in effect, how often and how long each matched,
// and the time only catch-all rules (or nothing) matched.
class RulesPanel : public QWidget
{
    Q_OBJECT
public:
    explicit RulesPanel(QWidget* parent = nullptr);
    void setRules(const Rules* rules, const std::vector<RuleUsage>& usage);
    QTableView* table() const { return m_table; }
    TableModel* model() const { return m_model; }
    TimeNs unclassifiedNs() const { return m_unclassified; }

private:
    QLabel* m_summary;
    TableModel* m_model;
    QTableView* m_table;
    TimeNs m_unclassified = 0;
};

} // namespace exposure
