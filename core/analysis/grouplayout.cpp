// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/grouplayout.h"

#include "analysis/commops.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace exposure {

std::vector<int> groupRankList(const std::string& text)
{
    std::vector<int> ranks;
    for (std::size_t i = 0; i < text.size();) {
        if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
            ++i;
            continue;
        }
        int v = 0;
        for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i)
            v = std::min(v * 10 + (text[i] - '0'), 1 << 24);
        ranks.push_back(v);
    }
    std::sort(ranks.begin(), ranks.end());
    return ranks;
}

namespace {

const std::string& nameOf(const CollectiveArgs& args)
{
    return args.groupName.empty() ? args.processGroup : args.groupName;
}

// The key of GroupLayout::byText: the group's ranks as recorded, '\x1f', its name.
std::string textKey(std::string_view ranks, std::string_view name)
{
    std::string key;
    key.reserve(ranks.size() + 1 + name.size());
    key.append(ranks).append(1, '\x1f').append(name);
    return key;
}

// The stride of a group's ranks where they are evenly spaced (two ranks or more), else 0.
int strideOf(const std::vector<int>& ranks)
{
    if (ranks.size() < 2 || ranks[1] <= ranks[0])
        return 0;
    const int s = ranks[1] - ranks[0];
    for (std::size_t k = 2; k < ranks.size(); ++k)
        if (ranks[k] - ranks[k - 1] != s)
            return 0;
    return s;
}

bool pointToPointOnly(const LayoutGroup& g)
{
    return !g.ops.empty()
        && std::all_of(g.ops.begin(), g.ops.end(), [](const std::string& op) { return op == "send" || op == "recv"; });
}

bool carriesAny(const LayoutGroup& g, std::initializer_list<const char*> ops)
{
    return std::any_of(ops.begin(), ops.end(), [&](const char* op) { return g.ops.count(op) > 0; });
}

// The tensor / data parallel grid of `collective` (the groups that carry collectives, the whole job's group aside) and
// the pipeline groups `p2p`: t and d, or {0, 0} where the groups are not exactly Megatron's blocks and strides.
std::pair<int, int> megatronGrid(
    const std::vector<LayoutGroup*>& collective, const std::vector<LayoutGroup*>& p2p, int worldSize)
{
    int t = 0;
    for (const LayoutGroup* g : collective)
        if (strideOf(g->ranks) == 1)
            t = t == 0 || t == int(g->ranks.size()) ? int(g->ranks.size()) : -1;
    if (t < 2)
        return { 0, 0 };
    int d = 0;
    bool tpSeen = false, dpSeen = false;
    for (const LayoutGroup* g : collective) {
        const int n = int(g->ranks.size()), s = strideOf(g->ranks);
        if (s == 1 && g->ranks.front() % t == 0 && carriesAny(*g, { "all_reduce" })) {
            tpSeen = true;
        } else if (s == t && (d == 0 || d == n) && carriesAny(*g, { "all_reduce", "all_gather", "reduce_scatter" })) {
            d = n;
            dpSeen = true;
        } else {
            return { 0, 0 };
        }
    }
    if (!tpSeen || !dpSeen || worldSize % (t * d) != 0)
        return { 0, 0 };
    for (const LayoutGroup* g : collective)
        if (strideOf(g->ranks) == t && g->ranks.front() % (t * d) >= t)
            return { 0, 0 };
    for (const LayoutGroup* g : p2p)
        if (strideOf(g->ranks) != t * d)
            return { 0, 0 };
    return { t, d };
}

} // namespace

GroupLayout inferGroupLayout(const Trace& trace)
{
    GroupLayout out;
    std::map<std::pair<std::vector<int>, std::string>, LayoutGroup> byKey;
    // Each distinct (ranks text, name) is read once; its operations are gathered by text first. The texts are hashed
    // by their ends (a rank list of 1 024 ranks is 5 KB, and every collective repeats it), compared whole.
    struct EndsHash
    {
        std::size_t operator()(std::string_view s) const
        {
            const std::size_t n = std::min<std::size_t>(s.size(), 64);
            return std::hash<std::string_view> {}(s.substr(0, n)) * 31
                + std::hash<std::string_view> {}(s.substr(s.size() - n)) + s.size();
        }
    };
    std::unordered_map<std::string_view, std::map<std::string_view, std::set<std::string>>, EndsHash> opsByText;
    for (const CollectiveArgs& args : trace.collectiveArgs) {
        if (args.groupRanks.empty())
            continue;
        std::set<std::string>& ops = opsByText[args.groupRanks][nameOf(args)];
        if (std::string op = normaliseCommOp(args.collective); !op.empty())
            ops.insert(std::move(op));
    }
    struct TextGroup
    {
        std::string text; // GroupLayout::byText's key
        const std::pair<std::vector<int>, std::string>* key; // in byKey
    };
    std::vector<TextGroup> textGroups;
    for (const auto& [ranksText, names] : opsByText) {
        const std::vector<int> ranks = groupRankList(std::string(ranksText));
        if (ranks.size() < 2 || std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end())
            continue;
        out.worldSize = std::max(out.worldSize, ranks.back() + 1);
        for (const auto& [name, ops] : names) {
            auto [it, fresh] = byKey.try_emplace({ ranks, std::string(name) });
            LayoutGroup& g = it->second;
            if (fresh) {
                g.name = std::string(name);
                g.ranks = ranks;
            }
            g.ops.insert(ops.begin(), ops.end());
            textGroups.push_back({ textKey(ranksText, name), &it->first });
        }
    }
    for (const Rank& r : trace.ranks)
        out.worldSize = std::max(out.worldSize, r.rank + 1);
    for (auto& [key, g] : byKey)
        out.groups.push_back(std::move(g));
    for (const TextGroup& tg : textGroups) { // byKey's order is the groups' order
        const auto it = std::lower_bound(
            out.groups.begin(), out.groups.end(), *tg.key, [](const LayoutGroup& g, const auto& key) {
                return std::tie(g.ranks, g.name) < std::tie(key.first, key.second);
            });
        out.byText.emplace(tg.text, std::size_t(it - out.groups.begin()));
    }
    std::vector<LayoutGroup*> collective, p2p;
    LayoutGroup* world = nullptr;
    for (LayoutGroup& g : out.groups) {
        g.role = "other";
        if (pointToPointOnly(g)) {
            g.role = "pp";
            p2p.push_back(&g);
        } else if (int(g.ranks.size()) == out.worldSize) {
            world = world ? world : &g;
        } else if (!g.ops.empty()) {
            collective.push_back(&g);
        }
    }
    // N ranks 0 .. N-1, every rank the trace holds among them: the whole job, data parallel where it is the only group
    // with a known operation.
    if (world && collective.empty() && p2p.empty() && !world->ops.empty())
        world->role = "dp";
    const auto [t, d] = megatronGrid(collective, p2p, out.worldSize);
    if (t > 0) {
        for (LayoutGroup* g : collective)
            g->role = strideOf(g->ranks) == 1 ? "tp" : "dp";
        out.tp = t;
        out.dp = d;
        const int p = out.worldSize / (t * d);
        const bool pipelineKnown = !p2p.empty()
            && std::all_of(p2p.begin(), p2p.end(), [&](const LayoutGroup* g) { return int(g->ranks.size()) == p; });
        out.pp = pipelineKnown ? p : 0;
    }
    return out;
}

std::string GroupLayout::roleOf(const CollectiveArgs& args) const
{
    if (const auto known = byText.find(textKey(args.groupRanks, nameOf(args))); known != byText.end())
        return groups[known->second].role;
    const std::vector<int> ranks = groupRankList(args.groupRanks);
    const std::string& name = nameOf(args);
    const auto it = std::lower_bound(
        groups.begin(), groups.end(), std::make_pair(&ranks, &name), [](const LayoutGroup& g, const auto& key) {
            return std::tie(g.ranks, g.name) < std::tie(*key.first, *key.second);
        });
    return it != groups.end() && it->ranks == ranks && it->name == name ? it->role : std::string();
}

ParallelCoords GroupLayout::coordsOf(int rank) const
{
    ParallelCoords c;
    if (tp <= 0 || dp <= 0 || rank < 0 || rank >= worldSize)
        return c;
    c.tp = rank % tp;
    c.dp = rank / tp % dp;
    if (pp > 0)
        c.pp = rank / (tp * dp);
    return c;
}

} // namespace exposure
