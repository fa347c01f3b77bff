// SPDX-License-Identifier: GPL-3.0-or-later
// What a report of many ranks says instead of one row per rank: the distribution of each per-rank value (minimum,
// median, 90th percentile and maximum, with the ranks at the extremes), the ranks and steps that stand out, and the
// trace warnings that repeat across files folded into one line each.
#pragma once

#include "analysis/statsparts.h"

#include <cstdint>
#include <string>
#include <vector>

namespace exposure {

// Above this many ranks the text report summarises (stats --summary forces it, --all-ranks turns it off).
inline constexpr std::size_t kSummaryRankThreshold = 16;

// The nearest-rank percentile of `sorted` (ascending, not empty): the value at position ceil(p/100 × n) (1-based),
// so p50 of {1, 2, 3, 4} is 2 and p90 of ten values is the 9th. Exact: every value is one of the inputs.
double nearestRankPercentile(const std::vector<double>& sorted, double p);

struct Distribution
{
    std::string key; // JSON key: "span_ns", "mean_step_ns", …, "overlap_ratio"
    std::string label; // table label: "span", "mean step", …
    bool ratio = false; // a share in [0, 1] rather than nanoseconds
    std::size_t count = 0; // ranks with a value (a rank without steps has no mean step)
    double min = 0, p50 = 0, p90 = 0, max = 0;
    int minRank = -1, maxRank = -1; // report rank indexes of the extremes (the first such rank)
};

// A value far from the median of its peers: robust z-score 0.6745 × (x − median) / MAD beyond ±3.5 (Iglewicz and
// Hoaglin); where the MAD is 0, the mean absolute deviation × 1.2533 stands in for it, and where that is 0 too,
// nothing stands out.
struct Outlier
{
    int rankIndex = 0; // into StatsReport::ranks
    std::string metric; // Distribution::label
    int step = -1; // a step's number (StepReport::index) for a step outlier; -1 for a rank's value
    double value = 0, median = 0, z = 0;
};

struct RankSummary
{
    std::vector<Distribution> metrics;
    std::vector<Outlier> rankOutliers; // by |z|, largest first
    std::vector<Outlier> stepOutliers; // step lengths against the same step on the other ranks, by |z|
};

RankSummary summarizeRanks(const StatsReport& report);

// Robust z-scores: robustZ() of analysis/heatmap.h (the heat map marks its cells by the same rule).

// Warnings that differ only in a file path and numbers ("/r/rank7.json: 3 events ...") folded into one line each:
// "N× <first> (also: <second>)" for a repeated one, the text itself otherwise; in the order of first appearance.
std::vector<std::string> foldRepeatedWarnings(const std::vector<std::string>& warnings);

// The table report's summary sections and the "rank_summary" JSON object are written in core/report
// (ranksummarysections.cpp).

} // namespace exposure
