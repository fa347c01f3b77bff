// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"

#include <QWidget>
#include <vector>

class QLabel;
class QTableWidget;

namespace exposure {

// The "Rules" dock: the classification rules in effect, how often and how long each matched,
// and the time only catch-all rules (or nothing) matched.
class RulesPanel : public QWidget
{
    Q_OBJECT
public:
    explicit RulesPanel(QWidget* parent = nullptr);
    void setRules(const Rules* rules, const std::vector<RuleUsage>& usage);
    QTableWidget* table() const { return m_table; }
    TimeNs unclassifiedNs() const { return m_unclassified; }

private:
    QLabel* m_summary;
    QTableWidget* m_table;
    TimeNs m_unclassified = 0;
};

} // namespace exposure
