// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/ranksummary.h"

#include "analysis/heatmap.h"
#include "analysis/stepmean.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace exposure {

double nearestRankPercentile(const std::vector<double>& sorted, double p)
{
    if (sorted.empty())
        return 0;
    const double n = double(sorted.size());
    std::size_t k = std::size_t(std::ceil(p / 100.0 * n));
    k = std::clamp<std::size_t>(k, 1, sorted.size());
    return sorted[k - 1];
}

namespace {

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0.0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The per-rank values a summary describes; NaN where a rank has none (no steps: no mean step).
struct MetricDef
{
    const char* key;
    const char* label;
    bool ratio;
    double (*value)(const RankReport&);
};

double meanStepOf(const RankReport& r)
{
    std::vector<StepWindow> steps;
    for (const StepReport& s : r.steps)
        steps.push_back({ s.index, s.name, s.range, s.hostRange });
    const StepMean m = stepMean(steps);
    return m.used.empty() ? std::nan("") : double(m.meanNs);
}

const std::vector<MetricDef>& metricDefs()
{
    static const std::vector<MetricDef> defs = {
        { "span_ns", "span", false, [](const RankReport& r) { return double(r.stats.spanNs); } },
        { "mean_step_ns", "mean step", false, meanStepOf },
        { "compute_busy_ns", "compute", false, [](const RankReport& r) { return double(r.stats.computeBusyNs); } },
        { "comm_busy_ns", "comm busy", false, [](const RankReport& r) { return double(r.stats.commBusyNs); } },
        { "overlapped_ns", "hidden", false, [](const RankReport& r) { return double(r.stats.overlappedNs); } },
        { "exposed_ns", "exposed", false, [](const RankReport& r) { return double(r.stats.exposedNs); } },
        { "overlap_ratio", "overlap", true,
            [](const RankReport& r) { return r.stats.overlapRatio ? *r.stats.overlapRatio : std::nan(""); } },
        { "wait_ns", "waiting", false, [](const RankReport& r) { return double(r.collectives.waitNs); } },
        { "transfer_ns", "transfer", false, [](const RankReport& r) { return double(r.collectives.transferNs); } },
        { "idle_ns", "idle", false, [](const RankReport& r) { return double(r.stats.idleNs); } },
    };
    return defs;
}

// Metrics whose outliers are listed (a rank far from the others in these slows or idles the job).
bool outlierMetric(const std::string& key)
{
    return key == "mean_step_ns" || key == "exposed_ns" || key == "wait_ns" || key == "idle_ns"
        || key == "compute_busy_ns";
}

void sortByMagnitude(std::vector<Outlier>& v)
{
    std::stable_sort(
        v.begin(), v.end(), [](const Outlier& a, const Outlier& b) { return std::abs(a.z) > std::abs(b.z); });
}

} // namespace

RankSummary summarizeRanks(const StatsReport& report)
{
    RankSummary out;
    for (const MetricDef& def : metricDefs()) {
        Distribution d;
        d.key = def.key;
        d.label = def.label;
        d.ratio = def.ratio;
        std::vector<double> values;
        std::vector<int> ranks;
        for (std::size_t r = 0; r < report.ranks.size(); ++r) {
            const double v = def.value(report.ranks[r]);
            if (std::isnan(v))
                continue;
            values.push_back(v);
            ranks.push_back(int(r));
        }
        d.count = values.size();
        if (!values.empty()) {
            std::vector<double> sorted = values;
            std::sort(sorted.begin(), sorted.end());
            d.min = sorted.front();
            d.max = sorted.back();
            d.p50 = nearestRankPercentile(sorted, 50);
            d.p90 = nearestRankPercentile(sorted, 90);
            d.minRank = ranks[std::size_t(std::find(values.begin(), values.end(), d.min) - values.begin())];
            d.maxRank = ranks[std::size_t(std::find(values.begin(), values.end(), d.max) - values.begin())];
            if (outlierMetric(d.key)) {
                const std::vector<double> z = robustZ(values);
                const double med = median(values);
                for (std::size_t i = 0; i < z.size(); ++i)
                    if (std::abs(z[i]) > kOutlierZ)
                        out.rankOutliers.push_back({ ranks[i], d.label, -1, values[i], med, z[i] });
            }
        }
        out.metrics.push_back(std::move(d));
    }
    // Step lengths against the same step on the other ranks (steps aligned by their index).
    std::map<int, std::vector<std::pair<int, double>>> byStep;
    for (std::size_t r = 0; r < report.ranks.size(); ++r)
        for (const StepReport& s : report.ranks[r].steps)
            byStep[s.index].push_back({ int(r), double(s.range.duration()) });
    for (const auto& [step, entries] : byStep) {
        std::vector<double> values;
        for (const auto& e : entries)
            values.push_back(e.second);
        const std::vector<double> z = robustZ(values);
        const double med = median(values);
        for (std::size_t i = 0; i < z.size(); ++i)
            if (std::abs(z[i]) > kOutlierZ)
                out.stepOutliers.push_back({ entries[i].first, "step", step, values[i], med, z[i] });
    }
    sortByMagnitude(out.rankOutliers);
    sortByMagnitude(out.stepOutliers);
    return out;
}

namespace {

// The warning with its leading file path ("/a/b/rank7.json: ") and every run of digits replaced: the shape that
// repeats across files.
std::string warningShape(const std::string& w)
{
    std::string s = w;
    const std::size_t colon = s.find(": ");
    if (colon != std::string::npos && s.find('/') < colon)
        s = "FILE" + s.substr(colon);
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] >= '0' && s[i] <= '9') {
            while (i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '9')
                ++i;
            out += '#';
        } else {
            out += s[i];
        }
    }
    return out;
}

} // namespace

std::vector<std::string> foldRepeatedWarnings(const std::vector<std::string>& warnings)
{
    std::vector<std::string> shapes;
    std::map<std::string, std::vector<std::size_t>> members;
    for (std::size_t i = 0; i < warnings.size(); ++i) {
        const std::string shape = warningShape(warnings[i]);
        auto [it, fresh] = members.try_emplace(shape);
        if (fresh)
            shapes.push_back(shape);
        it->second.push_back(i);
    }
    std::vector<std::string> out;
    for (const std::string& shape : shapes) {
        const std::vector<std::size_t>& m = members[shape];
        if (m.size() == 1)
            out.push_back(warnings[m[0]]);
        else
            out.push_back(std::to_string(m.size()) + "× " + warnings[m[0]] + " (also: " + warnings[m[1]]
                + (m.size() > 2 ? ", and " + std::to_string(m.size() - 2) + " more alike" : std::string()) + ")");
    }
    return out;
}

} // namespace exposure
