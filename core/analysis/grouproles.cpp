// SPDX-License-Identifier: GPL-3.0-or-later
// The rules file's "process_groups": the role each rule gives the process groups it matches (analysis/rules.h).
#include "analysis/grouproles_p.h"

#include <QJsonArray>
#include <QJsonObject>
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>

namespace exposure::detail {

// "process_groups": [{"id", "name", "desc", "ranks", "size", "role"}, ...] (GroupRoleRule): the role of the process
// groups each rule matches. Patterns must compile, ranks and sizes be counts, the role a known one, and a rule must
// give at least one condition.
void parseGroupRoles(const QJsonValue& value, std::vector<GroupRoleRule>& rules,
    std::vector<GroupRolePatterns>& patterns, const std::function<std::runtime_error(const std::string&)>& fail)
{
    if (value.isUndefined())
        return;
    if (!value.isArray())
        throw fail("\"process_groups\" must be an array of process group rules");
    std::set<std::string> ids;
    for (const QJsonValue& v : value.toArray()) {
        std::string where = "process_groups rule " + std::to_string(rules.size() + 1);
        if (!v.isObject())
            throw fail(where + " is not an object");
        const QJsonObject o = v.toObject();
        static const std::array<const char*, 8> keys
            = { "id", "name", "desc", "ranks", "size", "role", "description", "comment" };
        for (auto it = o.begin(); it != o.end(); ++it)
            if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return it.key() == QLatin1String(k); }))
                throw fail(where + ": unknown key \"" + it.key().toStdString()
                    + "\" (expected id, name, desc, ranks, size, role, description)");
        auto str = [&](const char* key) {
            const QJsonValue x = o.value(QLatin1String(key));
            if (!x.isUndefined() && !x.isString())
                throw fail(where + ": \"" + key + "\" must be a string");
            return x.toString().toStdString();
        };
        GroupRoleRule r;
        r.id = str("id");
        if (r.id.empty() || !ids.insert(r.id).second)
            throw fail(where + ": \"id\" missing, empty or used twice");
        where += " (\"" + r.id + "\")";
        r.name = str("name");
        r.desc = str("desc");
        r.role = str("role");
        // A count: a whole number from 0 (ranks) or 1 (size) to 2^24.
        auto count = [&](const QJsonValue& x, int least, const std::string& what) {
            const double d = x.toDouble(-1);
            if (!x.isDouble() || d != std::floor(d) || d < least || d > double(1 << 24))
                throw fail(where + ": " + what);
            return int(d);
        };
        const QJsonValue ranks = o.value(QLatin1String("ranks"));
        if (!ranks.isUndefined()) {
            if (!ranks.isArray() || ranks.toArray().isEmpty())
                throw fail(where + ": \"ranks\" must be a non-empty array of global rank numbers");
            for (const QJsonValue& x : ranks.toArray())
                r.ranks.push_back(count(x, 0, "\"ranks\" must be a non-empty array of global rank numbers"));
            std::sort(r.ranks.begin(), r.ranks.end());
        }
        const QJsonValue size = o.value(QLatin1String("size"));
        if (!size.isUndefined())
            r.size = count(size, 1, "\"size\" must be a number of ranks (1 or more)");
        static const std::array<const char*, 6> roles = { "dp", "tp", "pp", "ep", "cp", "other" };
        if (std::none_of(roles.begin(), roles.end(), [&](const char* k) { return r.role == k; }))
            throw fail(where + ": \"role\" must be dp, tp, pp, ep, cp or other, not \"" + r.role + "\"");
        if (r.name.empty() && r.desc.empty() && r.ranks.empty() && r.size == 0)
            throw fail(where + ": no condition (give name, desc, ranks or size)");
        GroupRolePatterns compiled;
        for (auto [pattern, re] : { std::pair { &r.name, &compiled.name }, std::pair { &r.desc, &compiled.desc } }) {
            *re = QRegularExpression(QString::fromStdString(*pattern), QRegularExpression::CaseInsensitiveOption);
            if (!re->isValid())
                throw fail(where + ": bad pattern \"" + *pattern + "\": " + re->errorString().toStdString());
        }
        rules.push_back(std::move(r));
        patterns.push_back(std::move(compiled));
    }
}

QJsonArray groupRolesJson(const std::vector<GroupRoleRule>& rules)
{
    QJsonArray arr;
    for (const GroupRoleRule& r : rules) {
        QJsonObject o;
        o.insert(QLatin1String("id"), QString::fromStdString(r.id));
        if (!r.name.empty())
            o.insert(QLatin1String("name"), QString::fromStdString(r.name));
        if (!r.desc.empty())
            o.insert(QLatin1String("desc"), QString::fromStdString(r.desc));
        if (!r.ranks.empty()) {
            QJsonArray ranks;
            for (const int k : r.ranks)
                ranks.append(k);
            o.insert(QLatin1String("ranks"), ranks);
        }
        if (r.size > 0)
            o.insert(QLatin1String("size"), r.size);
        o.insert(QLatin1String("role"), QString::fromStdString(r.role));
        arr.append(o);
    }
    return arr;
}

std::string matchGroupRole(
    const std::vector<GroupRoleRule>& rules, const std::vector<GroupRolePatterns>& patterns, const CollectiveArgs& args)
{
    if (rules.empty())
        return {};
    // The description alone: processGroup is "name (description)" where both were recorded.
    std::string desc;
    const std::string prefix = args.groupName + " (";
    if (args.groupName.empty())
        desc = args.processGroup;
    else if (args.processGroup.size() > prefix.size() && args.processGroup.compare(0, prefix.size(), prefix) == 0
        && args.processGroup.back() == ')')
        desc = args.processGroup.substr(prefix.size(), args.processGroup.size() - prefix.size() - 1);
    const std::string& name = args.groupName.empty() ? args.processGroup : args.groupName;
    // The recorded ranks ("[0, 1]"), sorted.
    std::vector<int> ranks;
    for (std::size_t i = 0; i < args.groupRanks.size();) {
        if (!std::isdigit(static_cast<unsigned char>(args.groupRanks[i]))) {
            ++i;
            continue;
        }
        long long v = 0;
        for (; i < args.groupRanks.size() && std::isdigit(static_cast<unsigned char>(args.groupRanks[i])); ++i)
            v = std::min<long long>(v * 10 + (args.groupRanks[i] - '0'), 1ll << 31);
        ranks.push_back(int(std::min<long long>(v, std::numeric_limits<int>::max())));
    }
    std::sort(ranks.begin(), ranks.end());
    const int size = args.groupSize > 0 ? args.groupSize : int(ranks.size());
    for (std::size_t k = 0; k < rules.size(); ++k) {
        const GroupRoleRule& r = rules[k];
        const QRegularExpression &namePattern = patterns[k].name, &descPattern = patterns[k].desc;
        if ((!r.name.empty() && (name.empty() || !namePattern.match(QString::fromStdString(name)).hasMatch()))
            || (!r.desc.empty() && (desc.empty() || !descPattern.match(QString::fromStdString(desc)).hasMatch()))
            || (!r.ranks.empty() && r.ranks != ranks) || (r.size > 0 && r.size != size))
            continue;
        return r.role;
    }
    return {};
}

} // namespace exposure::detail
