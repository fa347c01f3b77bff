// SPDX-License-Identifier: GPL-3.0-or-later
// The stats report's parts on many ranks (statsreport_p.h): the distributions of the per-rank metrics and the ranks
// and steps that stand out (analysis/ranksummary.h), in the text report and in JSON.
#include "analysis/ranksummary.h"
#include "analysis/statsparts.h"
#include "model/timeformat.h"
#include "report/jsonwriter.h"
#include "report/statsreport_p.h"
#include "report/texttable.h"

#include <cmath>
#include <cstdio>

namespace exposure {

namespace {

std::string valueText(const Distribution& d, double v)
{
    if (d.ratio) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1f %%", v * 100.0);
        return buf;
    }
    return formatDuration(TimeNs(std::llround(v)));
}

std::string rankLabelOf(const StatsReport& report, int index)
{
    return index >= 0 && std::size_t(index) < report.ranks.size() ? report.ranks[std::size_t(index)].label : "-";
}

} // namespace

std::string rankSummaryText(const StatsReport& report, const RankSummary& summary)
{
    std::string out = "Ranks: " + std::to_string(report.ranks.size())
        + ", summarised (--all-ranks prints one row per rank; --json lists every rank)\n";
    std::vector<std::vector<std::string>> rows;
    rows.push_back({ "", "min", "(rank)", "p50", "p90", "max", "(rank)" });
    for (const Distribution& d : summary.metrics) {
        if (d.count == 0)
            continue;
        rows.push_back({ d.label, valueText(d, d.min), rankLabelOf(report, d.minRank), valueText(d, d.p50),
            valueText(d, d.p90), valueText(d, d.max), rankLabelOf(report, d.maxRank) });
    }
    out += renderTable(rows, 1, true);
    auto outlierLine = [&](const Outlier& o) {
        const Distribution* d = nullptr;
        for (const Distribution& m : summary.metrics)
            if (m.label == o.metric)
                d = &m;
        const Distribution plain;
        const Distribution& fmt = d ? *d : plain;
        char z[32];
        std::snprintf(z, sizeof z, "%+.1f", o.z);
        return "  " + rankLabelOf(report, o.rankIndex) + ": "
            + (o.step >= 0 ? "step " + std::to_string(o.step) : o.metric) + " " + valueText(fmt, o.value) + " (median "
            + valueText(fmt, o.median) + ", robust z " + z + ")\n";
    };
    constexpr std::size_t kShown = 8;
    if (summary.rankOutliers.empty() && summary.stepOutliers.empty()) {
        out += "No rank or step stands out (robust z-score within ±3.5 of the median).\n";
        return out;
    }
    if (!summary.rankOutliers.empty()) {
        out += "Ranks that stand out (robust z-score beyond ±3.5 against the median of all ranks):\n";
        for (std::size_t i = 0; i < summary.rankOutliers.size() && i < kShown; ++i)
            out += outlierLine(summary.rankOutliers[i]);
        if (summary.rankOutliers.size() > kShown)
            out += "  (" + std::to_string(summary.rankOutliers.size() - kShown)
                + " more; see rank_summary in --json)\n";
    }
    if (!summary.stepOutliers.empty()) {
        out += "Steps that stand out (step length against the same step on the other ranks):\n";
        for (std::size_t i = 0; i < summary.stepOutliers.size() && i < kShown; ++i)
            out += outlierLine(summary.stepOutliers[i]);
        if (summary.stepOutliers.size() > kShown)
            out += "  (" + std::to_string(summary.stepOutliers.size() - kShown)
                + " more; see rank_summary in --json)\n";
    }
    return out;
}

void writeRankSummary(JsonWriter& j, const StatsReport& report, const RankSummary& summary)
{
    auto rankNumber = [&](int index) {
        return index >= 0 && std::size_t(index) < report.ranks.size() ? report.ranks[std::size_t(index)].rank : -1;
    };
    j.beginObject().key("metrics").beginObject();
    for (const Distribution& d : summary.metrics) {
        j.key(d.key);
        if (d.count == 0) {
            j.null();
            continue;
        }
        j.beginObject()
            .field("count", d.count)
            .fixedField("min", d.min, 6)
            .field("min_rank", rankNumber(d.minRank))
            .fixedField("p50", d.p50, 6)
            .fixedField("p90", d.p90, 6)
            .fixedField("max", d.max, 6)
            .field("max_rank", rankNumber(d.maxRank))
            .endObject();
    }
    auto outliers = [&](const std::vector<Outlier>& v) {
        j.beginArray();
        for (const Outlier& o : v) {
            j.beginObject().field("rank", rankNumber(o.rankIndex)).field("metric", o.metric);
            if (o.step >= 0)
                j.field("step", o.step);
            else
                j.nullField("step");
            j.fixedField("value", o.value, 6).fixedField("median", o.median, 6).fixedField("z", o.z, 6).endObject();
        }
        j.endArray();
    };
    j.endObject().key("rank_outliers");
    outliers(summary.rankOutliers);
    j.key("step_outliers");
    outliers(summary.stepOutliers);
    j.endObject();
}

} // namespace exposure
