// SPDX-License-Identifier: GPL-3.0-or-later
#include "view/rankgroups.h"

#include "model/enumnames.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace exposure {

namespace {

constexpr EnumName<RankGrouping> kGroupingNames[] = { { RankGrouping::None, "none" }, { RankGrouping::Auto, "auto" },
    { RankGrouping::Host, "host" }, { RankGrouping::Stage, "stage" }, { RankGrouping::DataParallel, "dp" },
    { RankGrouping::Blocks, "blocks" }, { RankGrouping::Stage, "pp" }, { RankGrouping::Host, "node" } };

// Groups keyed by a value of each rank, in the order of their first rank.
template <typename Key, typename KeyOf, typename LabelOf>
std::vector<RankGroup> groupBy(const Trace& trace, KeyOf keyOf, LabelOf labelOf)
{
    std::vector<RankGroup> groups;
    std::map<Key, std::size_t> at;
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const Key key = keyOf(trace.ranks[r]);
        auto [it, added] = at.emplace(key, groups.size());
        if (added)
            groups.push_back({ labelOf(key), {} });
        groups[it->second].ranks.push_back(int(r));
    }
    return groups;
}

using DpKey = std::tuple<int, int, int, int>; // pp, tp, cp, ep: the coordinates a DP group shares

DpKey dpKeyOf(const Rank& r)
{
    return { r.coords.pp, r.coords.tp, r.coords.cp, r.coords.ep };
}

std::string dpLabel(const DpKey& key)
{
    std::string label = "dp group";
    const auto [pp, tp, cp, ep] = key;
    for (const auto& [name, v] : { std::pair { "pp", pp }, { "tp", tp }, { "cp", cp }, { "ep", ep } })
        if (v >= 0)
            label += std::string(label.size() == 8 ? " " : " \xC2\xB7 ") + name + " " + std::to_string(v);
    return label;
}

bool hostsNamed(const Trace& trace)
{
    return std::all_of(trace.ranks.begin(), trace.ranks.end(), [](const Rank& r) { return !r.host.empty(); });
}

// Groups that tell ranks apart: more than one, fewer than the ranks.
bool telling(std::size_t groups, std::size_t ranks)
{
    return groups > 1 && groups < ranks;
}

std::vector<RankGroup> blocks(const Trace& trace)
{
    const std::size_t n = trace.ranks.size();
    std::size_t size = kBlockRanks;
    while ((n + size - 1) / size > std::size_t(kMaxBlockGroups))
        size *= 2;
    std::vector<RankGroup> groups;
    for (std::size_t first = 0; first < n; first += size) {
        const std::size_t last = std::min(n, first + size) - 1;
        RankGroup g;
        g.label = "ranks " + std::to_string(trace.ranks[first].rank)
            + (last > first ? "\xE2\x80\x93" + std::to_string(trace.ranks[last].rank) : std::string());
        for (std::size_t r = first; r <= last; ++r)
            g.ranks.push_back(int(r));
        groups.push_back(std::move(g));
    }
    return groups;
}

} // namespace

const char* rankGroupingName(RankGrouping g)
{
    return nameIn(kGroupingNames, g, "none");
}

std::optional<RankGrouping> rankGroupingFromName(std::string_view name)
{
    return valueIn(kGroupingNames, name);
}

RankGrouping resolveGrouping(const Trace& trace, RankGrouping grouping)
{
    if (grouping != RankGrouping::Auto)
        return grouping;
    const std::size_t n = trace.ranks.size();
    if (hostsNamed(trace) && telling(groupRanks(trace, RankGrouping::Host).size(), n))
        return RankGrouping::Host;
    const bool ppKnown
        = std::any_of(trace.ranks.begin(), trace.ranks.end(), [](const Rank& r) { return r.coords.pp >= 0; });
    if (ppKnown && telling(groupRanks(trace, RankGrouping::Stage).size(), n))
        return RankGrouping::Stage;
    const bool dpKnown
        = std::any_of(trace.ranks.begin(), trace.ranks.end(), [](const Rank& r) { return r.coords.dp >= 0; });
    if (dpKnown && telling(groupRanks(trace, RankGrouping::DataParallel).size(), n))
        return RankGrouping::DataParallel;
    return RankGrouping::Blocks;
}

std::vector<RankGroup> groupRanks(const Trace& trace, RankGrouping grouping)
{
    switch (resolveGrouping(trace, grouping)) {
    case RankGrouping::None:
    case RankGrouping::Auto:
        return {};
    case RankGrouping::Host:
        return groupBy<std::string>(
            trace, [](const Rank& r) { return r.host; },
            [](const std::string& host) { return host.empty() ? std::string("host ?") : host; });
    case RankGrouping::Stage:
        return groupBy<int>(
            trace, [](const Rank& r) { return r.coords.pp; },
            [](int pp) { return pp >= 0 ? "stage " + std::to_string(pp) : std::string("stage ?"); });
    case RankGrouping::DataParallel:
        return groupBy<DpKey>(trace, dpKeyOf, dpLabel);
    case RankGrouping::Blocks:
        return blocks(trace);
    }
    return {};
}

TimeRange columnSpan(const ColumnGrid& grid, int x)
{
    const TimeNs a = grid.edge(x), b = grid.edge(x + 1);
    return { a, b > a ? b : a + 1 };
}

void groupStateColumns(
    const std::vector<GroupMember>& members, const ColumnGrid& grid, TimeRange within, std::vector<TimeNs>& out)
{
    const std::size_t w = std::size_t(std::max(0, grid.width));
    const std::size_t k = kGroupStateCount;
    out.assign(w * k, 0);
    if (w == 0)
        return;
    std::vector<TimeNs> one;
    for (const GroupMember& m : members) {
        if (!m.table || !m.shares || m.shares->intervalCount() != m.table->size())
            continue;
        m.shares->columns(*m.table, grid, one);
        const std::size_t mk = m.shares->classCount();
        for (std::size_t l = 0; l < mk; ++l) {
            const std::size_t state = std::min<std::size_t>(m.shares->classAt(l), kGroupIdle - 1);
            for (std::size_t x = 0; x < w; ++x)
                out[x * k + state] += one[x * mk + l];
        }
    }
    const auto n = TimeNs(members.size());
    for (std::size_t x = 0; x < w; ++x) {
        TimeNs* col = &out[x * k];
        TimeNs busy = 0;
        for (std::size_t s = 0; s < std::size_t(kGroupIdle); ++s)
            busy += col[s];
        const TimeNs inside = columnSpan(grid, int(x)).intersected(within).duration();
        col[kGroupIdle] = std::max<TimeNs>(0, n * inside - busy);
    }
}

std::array<TimeNs, kGroupStateCount> groupStateTimes(
    const std::vector<GroupMember>& members, TimeRange range, TimeRange within)
{
    std::array<TimeNs, kGroupStateCount> out {};
    const TimeRange r = range.intersected(within);
    if (r.isEmpty())
        return out;
    std::vector<TimeNs> times;
    for (const GroupMember& m : members) {
        if (!m.table || !m.shares || m.shares->intervalCount() != m.table->size())
            continue;
        times.assign(m.shares->classCount(), 0);
        m.shares->timeIn(*m.table, r.start, r.end, times.data());
        for (std::size_t l = 0; l < times.size(); ++l)
            out[std::min<std::size_t>(m.shares->classAt(l), kGroupIdle - 1)] += times[l];
    }
    TimeNs busy = 0;
    for (int s = 0; s < kGroupIdle; ++s)
        busy += out[std::size_t(s)];
    out[kGroupIdle] = std::max<TimeNs>(0, TimeNs(members.size()) * r.duration() - busy);
    return out;
}

} // namespace exposure
