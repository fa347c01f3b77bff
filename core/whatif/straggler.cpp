// SPDX-License-Identifier: GPL-3.0-or-later
// The straggler what-if (whatif.h: EvenResult): typical durations for every operation, and which rank, stage or
// operation type the job would gain most from.
#include "analysis/heatmap.h"
#include "model/parallelfor.h"
#include "model/timeformat.h"
#include "report/jsonwriter.h"
#include "whatif/whatif.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <unordered_map>

namespace exposure::whatif {

namespace {

TimeNs anchorTime(const Replay& r, const Anchor& a, TimeNs recorded)
{
    return a.event == kNone ? recorded : r.time[a.event] + a.offset;
}

// Per GPU node: its kind (the interval's name), whether it is communication, its rank; kNone for other nodes.
struct NodeTypes
{
    std::vector<std::uint32_t> type; // by node: index into names, or kNone
    std::vector<std::string> names;
    std::vector<bool> comm; // by type
    std::vector<int> rank; // by node (-1: none)
};

NodeTypes nodeTypes(const Trace& trace, const Analysis& analysis, const Graph& g)
{
    NodeTypes t;
    t.type.assign(g.nodeCount(), kNone);
    t.rank.assign(g.nodeCount(), -1);
    std::unordered_map<StringId, std::uint32_t> index;
    for (const LaneNodes& ln : g.lanes) {
        if (ln.rank < 0 || ln.lane < 0)
            continue;
        const Lane& lane = trace.ranks[std::size_t(ln.rank)].lanes[std::size_t(ln.lane)];
        for (std::uint32_t n = ln.first; n < ln.first + ln.count; ++n) {
            t.rank[n] = ln.rank;
            if (g.kind[n] != NodeKind::Gpu || g.owner[n] >= lane.intervals.size())
                continue;
            const StringId name = lane.intervals.name(g.owner[n]);
            const Category c = analysis.classOf(name).category;
            if (c != Category::Compute && c != Category::Communication)
                continue;
            auto [it, fresh] = index.try_emplace(name, std::uint32_t(t.names.size()));
            if (fresh) {
                t.names.push_back(trace.name(name));
                t.comm.push_back(c == Category::Communication);
            }
            t.type[n] = it->second;
        }
    }
    return t;
}

// The typical work of each type: the mean for compute, the median for communication (its transfer).
std::vector<TimeNs> typicalWork(const Graph& g, const NodeTypes& t)
{
    std::vector<std::vector<TimeNs>> samples(t.names.size());
    for (std::size_t n = 0; n < g.nodeCount(); ++n)
        if (t.type[n] != kNone)
            samples[t.type[n]].push_back(g.work[n]);
    std::vector<TimeNs> out(t.names.size(), 0);
    for (std::size_t k = 0; k < samples.size(); ++k) {
        std::vector<TimeNs>& v = samples[k];
        if (v.empty())
            continue;
        if (t.comm[k]) {
            std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
            out[k] = v[v.size() / 2];
        } else {
            long double sum = 0;
            for (const TimeNs x : v)
                sum += x;
            out[k] = TimeNs(std::llround(sum / v.size()));
        }
    }
    return out;
}

TimeNs meanOf(const std::map<int, TimeNs>& steps)
{
    if (steps.empty())
        return 0;
    long double sum = 0;
    for (const auto& [index, t] : steps)
        sum += t;
    return TimeNs(std::llround(sum / steps.size()));
}

// The graph's work with every typed node at its type's typical work.
std::vector<TimeNs> withTypicalWork(const Graph& g, const NodeTypes& types, const std::vector<TimeNs>& typical)
{
    std::vector<TimeNs> work = g.work;
    for (std::size_t n = 0; n < g.nodeCount(); ++n)
        if (types.type[n] != kNone)
            work[n] = typical[types.type[n]];
    return work;
}

} // namespace

std::vector<TimeNs> evenedWork(const Trace& trace, const Analysis& analysis, const Graph& graph)
{
    const NodeTypes types = nodeTypes(trace, analysis, graph);
    return withTypicalWork(graph, types, typicalWork(graph, types));
}

std::map<int, TimeNs> WhatIfModel::jobSteps(const Replay& r) const
{
    std::map<int, TimeNs> out;
    for (std::size_t rank = 0; rank < m_anchors.size(); ++rank) {
        const RankAnalysis& ra = m_analysis->ranks[rank];
        for (std::size_t k = 0; k < m_anchors[rank].size() && k < ra.steps.size(); ++k) {
            const TimeNs start = anchorTime(r, m_anchors[rank][k].start, ra.steps[k].hostRange.start);
            const TimeNs end = anchorTime(r, m_anchors[rank][k].end, ra.steps[k].hostRange.end);
            TimeNs& job = out[ra.steps[k].index];
            job = std::max(job, end - start);
        }
    }
    return out;
}

namespace {

// The groups of one dimension of the attribution: each typed node's group.
struct Dimension
{
    std::string name;
    std::vector<std::string> groups;
    std::vector<std::vector<std::uint32_t>> members; // by group: its nodes, ascending
};

// The groups of `key(node)` over the typed nodes (an empty key: in no group), in order of first appearance.
template <typename Key> Dimension dimension(const char* name, const NodeTypes& types, Key&& key)
{
    Dimension d { name, {}, {} };
    std::map<std::string, std::size_t> index;
    for (std::uint32_t n = 0; n < types.type.size(); ++n) {
        if (types.type[n] == kNone)
            continue;
        const std::string k = key(n);
        if (k.empty())
            continue;
        auto [it, fresh] = index.try_emplace(k, d.groups.size());
        if (fresh) {
            d.groups.push_back(k);
            d.members.emplace_back();
        }
        d.members[it->second].push_back(n);
    }
    return d;
}

// The dimensions of the attribution (those with more than one group): a node's rank, its rank's coordinates, its
// type (the 20 types with the most recorded time: attributing hundreds of kernel names one by one says nothing more).
std::vector<Dimension> dimensions(const Trace& trace, const Graph& graph, const NodeTypes& types)
{
    std::vector<Dimension> dims;
    auto add = [&](Dimension d) {
        if (d.groups.size() > 1)
            dims.push_back(std::move(d));
    };
    auto coord = [&](int ParallelCoords::*field) {
        return [&, field](std::uint32_t n) {
            const int c = trace.ranks[std::size_t(types.rank[n])].coords.*field;
            return c >= 0 ? std::to_string(c) : std::string();
        };
    };
    add(dimension(
        "rank", types, [&](std::uint32_t n) { return std::to_string(trace.ranks[std::size_t(types.rank[n])].rank); }));
    add(dimension("dp", types, coord(&ParallelCoords::dp)));
    add(dimension("pp", types, coord(&ParallelCoords::pp)));
    add(dimension("tp", types, coord(&ParallelCoords::tp)));
    std::vector<TimeNs> typeTotal(types.names.size(), 0);
    for (std::size_t n = 0; n < graph.nodeCount(); ++n)
        if (types.type[n] != kNone)
            typeTotal[types.type[n]] += graph.work[n];
    std::vector<std::uint32_t> topTypes(types.names.size());
    for (std::uint32_t k = 0; k < topTypes.size(); ++k)
        topTypes[k] = k;
    std::sort(topTypes.begin(), topTypes.end(), [&](auto a, auto b) { return typeTotal[a] > typeTotal[b]; });
    topTypes.resize(std::min<std::size_t>(topTypes.size(), 20));
    std::vector<bool> top(types.names.size(), false);
    for (const auto k : topTypes)
        top[k] = true;
    add(dimension(
        "op", types, [&](std::uint32_t n) { return top[types.type[n]] ? types.names[types.type[n]] : std::string(); }));
    return dims;
}

// The DP rank × stage cells ("dp,pp") where every rank has both coordinates and there is more than one cell; the
// grid's size in dpCount/ppCount.
std::optional<Dimension> gridDimension(const Trace& trace, const NodeTypes& types, int& dpCount, int& ppCount)
{
    dpCount = ppCount = 0;
    for (const Rank& r : trace.ranks) {
        if (r.coords.dp < 0 || r.coords.pp < 0)
            return std::nullopt;
        dpCount = std::max(dpCount, r.coords.dp + 1);
        ppCount = std::max(ppCount, r.coords.pp + 1);
    }
    // A grid far larger than the ranks (coordinates out of all proportion, e.g. from a damaged file): none.
    const std::int64_t cells = std::int64_t(dpCount) * ppCount;
    if (cells < 2 || cells > 4 * std::int64_t(trace.ranks.size()) + 64)
        return std::nullopt;
    return dimension("dp-pp", types, [&](std::uint32_t n) {
        const ParallelCoords& c = trace.ranks[std::size_t(types.rank[n])].coords;
        return std::to_string(c.dp) + "," + std::to_string(c.pp);
    });
}

} // namespace

EvenResult WhatIfModel::even(const EvenOptions& options) const
{
    EvenResult out;
    const NodeTypes types = nodeTypes(*m_trace, *m_analysis, m_graph);
    const std::vector<TimeNs> typical = typicalWork(m_graph, types);
    Plan evenedPlan = editablePlan(m_graph);
    evenedPlan.work = withTypicalWork(m_graph, types, typical);
    // The evened replay, kept as the baseline every attribution replay changes a group of nodes of.
    const IncrementalReplay baseline(m_graph, std::move(evenedPlan));
    const Plan& evened = baseline.basePlan();
    const std::map<int, TimeNs> recordedSteps = jobSteps(m_recorded);
    const std::map<int, TimeNs> evenedSteps = jobSteps(baseline.base());
    out.evenedSteps = evenedSteps;
    out.recordedMean = meanOf(recordedSteps);
    out.evenedMean = meanOf(evenedSteps);
    out.slowdown = out.evenedMean > 0 ? double(out.recordedMean) / double(out.evenedMean) : 1.0;
    for (const auto& [index, t] : recordedSteps) {
        const auto e = evenedSteps.find(index);
        const TimeNs ev = e == evenedSteps.end() ? 0 : e->second;
        out.steps.push_back({ index, t, ev, ev > 0 ? double(t) / double(ev) : 1.0 });
    }
    out.replays = 2;

    std::vector<Dimension> dims = dimensions(*m_trace, m_graph, types);
    const std::size_t attributed = dims.size();
    int dpCount = 0, ppCount = 0;
    if (options.grid)
        if (std::optional<Dimension> grid = gridDimension(*m_trace, types, dpCount, ppCount))
            dims.push_back(std::move(*grid));

    // Every group's replay is independent: all of them on every core, each from the shared evened baseline.
    struct Job
    {
        std::size_t dim;
        std::size_t group;
    };
    std::vector<Job> jobs;
    for (std::size_t d = 0; d < dims.size(); ++d)
        for (std::size_t g = 0; g < dims[d].groups.size(); ++g)
            jobs.push_back({ d, g });
    std::vector<EvenResult::Group> results(jobs.size());
    std::vector<std::size_t> computed(jobs.size(), 2 * m_graph.nodeCount());
    parallelFor(jobs.size(), workerCount(jobs.size(), options.threads), [&](std::size_t j) {
        const std::vector<std::uint32_t>& members = dims[jobs[j].dim].members[jobs[j].group];
        TimeNs own = 0, typicalOwn = 0;
        for (const std::uint32_t n : members)
            if (!types.comm[types.type[n]]) {
                own += m_graph.work[n];
                typicalOwn += typical[types.type[n]];
            }
        EvenResult::Group& g = results[j];
        g.name = dims[jobs[j].dim].groups[jobs[j].group];
        if (options.incremental) { // the members at their recorded work, everything else as evened
            g.steps = jobSteps(baseline.replayChanged(members, m_graph.work.data(), &computed[j]));
        } else {
            Plan plan = evened;
            for (const std::uint32_t n : members)
                plan.work[n] = m_graph.work[n];
            g.steps = jobSteps(replay(m_graph, plan));
        }
        g.meanStep = meanOf(g.steps);
        g.slowdown = out.evenedMean > 0 ? double(g.meanStep) / double(out.evenedMean) : 1.0;
        g.ownRatio = typicalOwn > 0 ? double(own) / double(typicalOwn) : 1.0;
    });
    std::size_t j = 0;
    for (std::size_t d = 0; d < attributed; ++d) {
        std::vector<EvenResult::Group> groups(
            results.begin() + std::ptrdiff_t(j), results.begin() + std::ptrdiff_t(j + dims[d].groups.size()));
        j += dims[d].groups.size();
        std::stable_sort(
            groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.slowdown > b.slowdown; });
        out.by.emplace_back(dims[d].name, std::move(groups));
    }
    out.replays += results.size();
    out.graphEvents = 2 * m_graph.nodeCount();
    for (const std::size_t c : computed)
        out.replayedEvents += c;
    if (dims.size() > attributed) {
        out.grid.dpCount = dpCount;
        out.grid.ppCount = ppCount;
        out.grid.cells.resize(std::size_t(dpCount * ppCount));
        out.grid.present.assign(out.grid.cells.size(), 0);
        for (; j < results.size(); ++j) {
            const std::string& name = results[j].name;
            const std::size_t comma = name.find(',');
            const std::size_t cell
                = std::size_t(std::stoi(name.substr(0, comma)) * ppCount + std::stoi(name.substr(comma + 1)));
            out.grid.cells[cell] = std::move(results[j]);
            out.grid.present[cell] = 1;
        }
    }
    return out;
}

void addSlowdown(StepHeatMap& map, const Trace& trace, const EvenResult& even)
{
    // A run of one rank has no "rank" dimension (one group): its replay as recorded is the unedited replay.
    std::map<std::string, const std::map<int, TimeNs>*> byRank;
    std::map<int, TimeNs> recorded;
    for (const EvenResult::Step& s : even.steps)
        recorded[s.index] = s.recorded;
    for (const auto& [dim, groups] : even.by)
        if (dim == "rank")
            for (const EvenResult::Group& g : groups)
                byRank[g.name] = &g.steps;
    const auto slowdown = std::size_t(HeatMetric::Slowdown);
    for (std::size_t r = 0; r < map.rankCount && r < trace.ranks.size(); ++r) {
        const auto it = byRank.find(std::to_string(trace.ranks[r].rank));
        const std::map<int, TimeNs>* steps
            = it != byRank.end() ? it->second : (trace.ranks.size() == 1 ? &recorded : nullptr);
        for (std::size_t c = 0; c < map.columns.size(); ++c) {
            StepHeatMap::Cell& cell = map.cells[r * map.columns.size() + c];
            const int index = map.columns[c].stepIndex;
            const auto kept = steps ? steps->find(index) : recorded.end();
            const auto evened = even.evenedSteps.find(index);
            if (!steps || kept == steps->end() || evened == even.evenedSteps.end()) {
                cell.values[slowdown] = 0;
                continue;
            }
            cell.values[slowdown] = kept->second - evened->second;
        }
    }
    map.hasSlowdown = true;
}

std::string evenJson(const EvenResult& r)
{
    std::string out;
    JsonWriter j(out);
    j.beginObject()
        .fixedField("slowdown", r.slowdown, 6)
        .field("recorded_mean_step_ns", r.recordedMean)
        .field("evened_mean_step_ns", r.evenedMean)
        .field("replays", r.replays)
        .breakBefore(1)
        .key("steps")
        .beginArray();
    for (const auto& step : r.steps)
        j.beginObject()
            .field("number", step.index)
            .field("recorded_ns", step.recorded)
            .field("evened_ns", step.evened)
            .fixedField("slowdown", step.slowdown, 6)
            .endObject();
    j.endArray().breakBefore(1).key("slowdown_by").beginObject();
    for (const auto& [dimension, groups] : r.by) {
        j.key(dimension).beginObject();
        for (const EvenResult::Group& g : groups)
            j.fixedField(g.name, g.slowdown, 6);
        j.endObject();
    }
    j.endObject().endObject();
    return out + "\n";
}

std::string evenTable(const EvenResult& r)
{
    auto percent = [](double ratio) { return formatFixed((ratio - 1.0) * 100.0, 1) + " %"; };
    std::string out = "Straggler what-if: every operation at its typical duration (compute: the mean of its kind, "
                      "communication: the median transfer of its kind)\n";
    out += "mean step as recorded " + formatDuration(r.recordedMean) + ", evened " + formatDuration(r.evenedMean)
        + ": slowdown " + formatFixed(r.slowdown, 3) + " (" + std::to_string(r.replays) + " replays)\n";
    for (const auto& [dim, groups] : r.by) {
        out += "\n" + dim + ": ";
        for (std::size_t g = 0; g < groups.size() && g < 3; ++g) {
            const EvenResult::Group& x = groups[g];
            const std::string name = x.name.size() > 60 ? x.name.substr(0, 57) + "..." : x.name;
            out += (g ? "; " : "") + (dim == "op" ? "'" + name + "'" : dim + " " + name) + " alone costs "
                + percent(x.slowdown);
            if (x.ownRatio > 1.005 || x.ownRatio < 0.995)
                out += " (its compute takes " + formatFixed(x.ownRatio, 2) + "× the typical time)";
        }
        out += "\n";
    }
    return out;
}

} // namespace exposure::whatif
