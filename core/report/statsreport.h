// SPDX-License-Identifier: GPL-3.0-or-later
// The statistics report behind `exposure-cli stats`: JSON (stable shape), CSV and a readable table.
// Kept in the core so that tests (and the GUI's "export statistics") produce exactly what the CLI prints.
#pragma once

#include "analysis/analysis.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace exposure {

struct StatsReportOptions
{
    TimeRange window; // trace-relative; usually trace.extent
    bool windowGiven = false; // --from/--to were used (the table says so)
    bool perStep = false; // table and CSV: add one row per step (JSON always lists the steps)
    int topKernels = 15; // table: how many kernel rows to print
    // Table: one row per rank, or distributions over the ranks (analysis/ranksummary.h); Auto summarises above
    // kSummaryRankThreshold ranks.
    enum class RankDetail : std::uint8_t { Auto, Summary, AllRanks };
    RankDetail rankDetail = RankDetail::Auto;
};

// {"trace": …, "rules": …, "window": {…}, "ranks": [{"rank", "label", "host", "device", <stats>, "phase_source",
//  "phase_counts", "step_source", "step_assignment", "step_windows", "step_mean": {"mean_ns", "steps_used",
//  "first_step", "last_step", "startup_steps", "covers"} (analysis/stepmean.h), "steps": [{"index", "name",
//  "start_ns", "end_ns" (the GPU window), "host_start_ns", "host_end_ns", "startup", <stats>, "idle_breakdown",
//  "collectives": {"wait_ns", "transfer_ns"}}],
//  "warnings"}], "total": {<stats>}, "kernels": [{"name", "category", "subgroup", "phase", "count", "total_ns",
//  "mean_ns", "min_ns", "max_ns", "gpu_share"}]}
// Integers are written exactly (no double rounding); overlap_ratio is null without communication.
std::string statsJson(const Trace& trace, const Analysis& analysis, const StatsReportOptions& options);
// One header line, then one row per rank (and per step with perStep), then the total.
std::string statsCsv(const Trace& trace, const Analysis& analysis, const StatsReportOptions& options);
// Human-readable tables with units.
std::string statsTable(const Trace& trace, const Analysis& analysis, const StatsReportOptions& options);

// `s` as a JSON string literal, written by JsonWriter (report/jsonwriter.h), the one JSON writer: quotes, RapidJSON's
// escapes, always valid UTF-8 (an ill-formed sequence in `s` becomes U+FFFD, model/utf8.h).
std::string jsonQuoted(std::string_view s);
// `s` as a CSV field (RFC 4180 quoting where needed), valid UTF-8 like jsonQuoted.
std::string csvQuoted(std::string_view s);

// Names of the WindowStats fields in JSON/CSV order ("kernel_count", …, "unclassified_ns").
const std::vector<std::string>& statsFieldNames();

} // namespace exposure
