// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/heatmap.h"

#include "analysis/collectives.h"
#include "analysis/commops.h"
#include "analysis/statistics.h"
#include "model/enumnames.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

namespace exposure {

namespace {

constexpr EnumName<HeatMetric> kMetricNames[] = {
    { HeatMetric::Step, "step" },
    { HeatMetric::Compute, "compute" },
    { HeatMetric::Exposed, "exposed" },
    { HeatMetric::Waiting, "waiting" },
    { HeatMetric::Idle, "idle" },
    { HeatMetric::Bubble, "bubble" },
    { HeatMetric::Slowdown, "slowdown" },
};

constexpr EnumName<HeatMetric> kMetricTitles[] = {
    { HeatMetric::Step, "Step time" },
    { HeatMetric::Compute, "Compute" },
    { HeatMetric::Exposed, "Exposed communication" },
    { HeatMetric::Waiting, "Waiting for peers" },
    { HeatMetric::Idle, "Idle" },
    { HeatMetric::Bubble, "Pipeline bubble" },
    { HeatMetric::Slowdown, "Slowdown" },
};

constexpr EnumName<RankOrder> kOrderNames[] = {
    { RankOrder::Number, "number" },
    { RankOrder::Host, "host" },
    { RankOrder::Stage, "stage" },
    { RankOrder::Value, "value" },
};

double medianOf(std::vector<double> v)
{
    const std::size_t n = v.size();
    const auto mid = v.begin() + std::ptrdiff_t(n / 2);
    std::nth_element(v.begin(), mid, v.end());
    const double hi = *mid;
    if (n % 2 == 1)
        return hi;
    const double lo = *std::max_element(v.begin(), mid);
    return (lo + hi) / 2;
}

// The columns: every step index any rank has, ascending, each with its name and the union of its windows.
std::vector<StepHeatMap::Column> stepColumns(const Analysis& analysis)
{
    std::vector<StepHeatMap::Column> columns;
    for (const RankAnalysis& ra : analysis.ranks)
        for (const StepWindow& w : ra.steps)
            columns.push_back({ w.index, w.name, w.range });
    std::stable_sort(columns.begin(), columns.end(),
        [](const StepHeatMap::Column& a, const StepHeatMap::Column& b) { return a.stepIndex < b.stepIndex; });
    std::vector<StepHeatMap::Column> merged;
    for (const StepHeatMap::Column& c : columns) {
        if (merged.empty() || merged.back().stepIndex != c.stepIndex) {
            merged.push_back(c);
            continue;
        }
        TimeRange& u = merged.back().window;
        u = { std::min(u.start, c.window.start), std::max(u.end, c.window.end) };
    }
    return merged;
}

std::size_t columnOf(const std::vector<StepHeatMap::Column>& columns, int stepIndex)
{
    const auto it = std::lower_bound(columns.begin(), columns.end(), stepIndex,
        [](const StepHeatMap::Column& c, int index) { return c.stepIndex < index; });
    return std::size_t(it - columns.begin());
}

} // namespace

const char* heatMetricName(HeatMetric m)
{
    return nameIn(kMetricNames, m, "step");
}

std::optional<HeatMetric> heatMetricFromName(std::string_view name)
{
    return valueIn(kMetricNames, name);
}

const char* heatMetricTitle(HeatMetric m)
{
    return nameIn(kMetricTitles, m, "Step time");
}

const char* rankOrderName(RankOrder o)
{
    return nameIn(kOrderNames, o, "number");
}

std::optional<RankOrder> rankOrderFromName(std::string_view name)
{
    return valueIn(kOrderNames, name);
}

TimeNs stepBubbleNs(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange jobWindow)
{
    return jobWindow.isEmpty()
        ? 0
        : jobWindow.duration() - computeStats(trace, analysis, rankIndex, jobWindow).computeBusyNs;
}

std::optional<int> rankStage(const Trace& trace, int rankIndex)
{
    const int pp = trace.ranks.at(std::size_t(rankIndex)).coords.pp;
    return pp >= 0 ? std::optional<int>(pp) : std::nullopt;
}

StepHeatMap computeStepHeatMap(
    const Trace& trace, const Analysis& analysis, const CollectiveMatch* collectives, const std::atomic<bool>* cancel)
{
    StepHeatMap map;
    map.columns = stepColumns(analysis);
    map.rankCount = trace.ranks.size();
    map.cells.resize(map.rankCount * map.columns.size());
    map.hasWaiting = collectives != nullptr;
    std::vector<std::vector<StepWindow>> allSteps;
    for (const RankAnalysis& ra : analysis.ranks)
        allSteps.push_back(ra.steps);
    const std::map<int, TimeRange> jobWindows = jobStepWindows(allSteps);
    for (std::size_t r = 0; r < map.rankCount && r < analysis.ranks.size(); ++r) {
        if (cancel && cancel->load())
            break;
        const auto& steps = analysis.ranks[r].steps;
        const std::vector<WindowStats> stats = computeStepStats(trace, analysis, int(r));
        std::optional<RankCollectiveParts> parts;
        if (collectives)
            parts.emplace(*collectives, int(r));
        for (std::size_t k = 0; k < steps.size(); ++k) {
            const StepWindow& w = steps[k];
            StepHeatMap::Cell& c = map.cells[r * map.columns.size() + columnOf(map.columns, w.index)];
            if (c.present)
                continue; // a repeated step index: the first step holds the cell
            c.present = true;
            c.window = w.range;
            auto set = [&c](HeatMetric m, TimeNs v) { c.values[std::size_t(m)] = v; };
            set(HeatMetric::Step, w.range.duration());
            set(HeatMetric::Compute, stats[k].computeBusyNs);
            set(HeatMetric::Exposed, stats[k].exposedNs);
            set(HeatMetric::Idle, stats[k].idleNs);
            if (parts)
                set(HeatMetric::Waiting, parts->in(w.range).waitNs);
            if (const auto job = jobWindows.find(w.index); job != jobWindows.end()) {
                set(HeatMetric::Bubble, stepBubbleNs(trace, analysis, int(r), job->second));
                map.hasBubble = true;
            }
        }
    }
    return map;
}

std::vector<double> robustZ(const std::vector<double>& xs)
{
    std::vector<double> z(xs.size(), 0.0);
    if (xs.empty())
        return z;
    const double median = medianOf(xs);
    std::vector<double> dev(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i)
        dev[i] = std::abs(xs[i] - median);
    const double mad = medianOf(dev);
    if (mad > 0) {
        for (std::size_t i = 0; i < xs.size(); ++i)
            z[i] = 0.6745 * (xs[i] - median) / mad;
        return z;
    }
    const double meanAd = std::accumulate(dev.begin(), dev.end(), 0.0) / double(dev.size());
    if (meanAd > 0)
        for (std::size_t i = 0; i < xs.size(); ++i)
            z[i] = (xs[i] - median) / (1.2533 * meanAd);
    return z;
}

std::size_t HeatMatrix::outlierCount() const
{
    return std::size_t(std::count(outlier.begin(), outlier.end(), std::uint8_t(1)));
}

HeatMatrix heatMatrix(const StepHeatMap& map, HeatMetric metric)
{
    HeatMatrix m;
    m.metric = metric;
    m.rows = map.rankCount;
    m.columns = map.columns.size();
    const std::size_t n = m.rows * m.columns;
    m.values.assign(n, 0);
    m.present.assign(n, 0);
    m.z.assign(n, 0.0);
    m.outlier.assign(n, 0);
    if (!map.available(metric))
        return m;
    bool any = false;
    for (std::size_t i = 0; i < n; ++i) {
        const StepHeatMap::Cell& c = map.cells[i];
        if (!c.present)
            continue;
        const TimeNs v = c.values[std::size_t(metric)];
        m.values[i] = v;
        m.present[i] = 1;
        m.minValue = any ? std::min(m.minValue, v) : v;
        m.maxValue = any ? std::max(m.maxValue, v) : v;
        any = true;
    }
    std::vector<double> xs;
    std::vector<std::size_t> at;
    for (std::size_t col = 0; col < m.columns; ++col) {
        xs.clear();
        at.clear();
        for (std::size_t r = 0; r < m.rows; ++r)
            if (m.present[m.at(r, col)]) {
                xs.push_back(double(m.values[m.at(r, col)]));
                at.push_back(m.at(r, col));
            }
        const std::vector<double> z = robustZ(xs);
        for (std::size_t k = 0; k < at.size(); ++k) {
            m.z[at[k]] = z[k];
            m.outlier[at[k]] = std::abs(z[k]) > kOutlierZ ? 1 : 0;
        }
    }
    return m;
}

std::vector<int> orderRanks(const Trace& trace, const HeatMatrix& matrix, RankOrder order)
{
    std::vector<int> ranks(trace.ranks.size());
    std::iota(ranks.begin(), ranks.end(), 0);
    std::vector<double> mean(ranks.size(), 0.0);
    for (std::size_t r = 0; r < ranks.size() && r < matrix.rows; ++r) {
        double sum = 0;
        std::size_t count = 0;
        for (std::size_t c = 0; c < matrix.columns; ++c)
            if (matrix.present[matrix.at(r, c)]) {
                sum += double(matrix.values[matrix.at(r, c)]);
                ++count;
            }
        mean[r] = count ? sum / double(count) : -1;
    }
    auto number = [&](int r) { return std::make_tuple(trace.ranks[std::size_t(r)].rank, r); };
    std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) {
        switch (order) {
        case RankOrder::Host:
            if (trace.ranks[std::size_t(a)].host != trace.ranks[std::size_t(b)].host)
                return trace.ranks[std::size_t(a)].host < trace.ranks[std::size_t(b)].host;
            break;
        case RankOrder::Stage: {
            const int sa = rankStage(trace, a).value_or(0), sb = rankStage(trace, b).value_or(0);
            if (sa != sb)
                return sa < sb;
            break;
        }
        case RankOrder::Value:
            if (mean[std::size_t(a)] != mean[std::size_t(b)])
                return mean[std::size_t(a)] > mean[std::size_t(b)];
            break;
        case RankOrder::Number:
            break;
        }
        return number(a) < number(b);
    });
    return ranks;
}

std::vector<StragglerRank> rankStragglers(const StepHeatMap& map, const CollectiveMatch* collectives)
{
    std::vector<StragglerRank> out(map.rankCount);
    for (std::size_t r = 0; r < map.rankCount; ++r) {
        out[r].rank = int(r);
        if (collectives && r < collectives->ranks.size()) {
            out[r].arrivedLast = collectives->ranks[r].causedWaits;
            out[r].causedWaitNs = collectives->ranks[r].causedWaitNs;
        }
    }
    const HeatMatrix steps = heatMatrix(map, HeatMetric::Step);
    for (std::size_t c = 0; c < steps.columns; ++c) {
        std::vector<double> xs;
        for (std::size_t r = 0; r < steps.rows; ++r)
            if (steps.present[steps.at(r, c)])
                xs.push_back(double(steps.values[steps.at(r, c)]));
        if (xs.empty())
            continue;
        const double median = medianOf(xs);
        for (std::size_t r = 0; r < steps.rows; ++r) {
            const std::size_t i = steps.at(r, c);
            if (!steps.present[i])
                continue;
            const double excess = double(steps.values[i]) - median;
            if (excess > 0)
                out[r].excessStepNs += TimeNs(std::llround(excess));
            if (steps.outlier[i] && steps.z[i] > 0)
                ++out[r].slowSteps;
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const StragglerRank& a, const StragglerRank& b) {
        return std::make_tuple(b.arrivedLast, b.causedWaitNs, b.excessStepNs, a.rank)
            < std::make_tuple(a.arrivedLast, a.causedWaitNs, a.excessStepNs, b.rank);
    });
    return out;
}

} // namespace exposure
