// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The rules file's "process_groups" (GroupRoleRule, analysis/rules.h): reading, writing and matching them; used by
// Rules alone.
#include "analysis/rules.h"

#include <QJsonArray>
#include <QJsonValue>
#include <QRegularExpression>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace exposure::detail {

// A rule's compiled patterns (an empty pattern matches anything and is not tried).
struct GroupRolePatterns
{
    QRegularExpression name, desc;
};

// Reads the "process_groups" array (`value` undefined: none) into `rules` and `patterns`; throws fail(problem)
// naming the rule: patterns must compile, ranks and sizes be counts, the role one of dp, tp, pp, ep, cp, other, and a
// rule must give at least one condition.
void parseGroupRoles(const QJsonValue& value, std::vector<GroupRoleRule>& rules,
    std::vector<GroupRolePatterns>& patterns, const std::function<std::runtime_error(const std::string&)>& fail);
// The array as a rules file writes it.
QJsonArray groupRolesJson(const std::vector<GroupRoleRule>& rules);
// The role of the first rule that the process group of `args` meets; empty when none does.
std::string matchGroupRole(const std::vector<GroupRoleRule>& rules, const std::vector<GroupRolePatterns>& patterns,
    const CollectiveArgs& args);

} // namespace exposure::detail
