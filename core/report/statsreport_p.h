// SPDX-License-Identifier: GPL-3.0-or-later
// Internal to the stats report's writers (statsreport.cpp, commsections.cpp, ranksummarysections.cpp): the parts
// on hybrid parallelism and on many ranks.
#pragma once

#include "analysis/commops.h"
#include "model/trace.h"

#include <string>

namespace exposure {

struct StatsReport;
struct RankSummary;
class JsonWriter;

// "comm_by_op": the rank's communication by the operation the program called.
void writeCommByOp(JsonWriter& j, const CommOps& ops);
// "parallel": the rank's coordinates in the parallel grid, those that are known ({} where none is).
void writeParallel(JsonWriter& j, const ParallelCoords& c);
// "comm_by_role": {ROLE: {count, busy_ns, exposed_ns, wait_ns, transfer_ns}}.
void writeCommByRole(JsonWriter& j, const CommOps& ops);
// "rank_summary": the distributions of the per-rank metrics and the ranks and steps that stand out.
void writeRankSummary(JsonWriter& j, const StatsReport& report, const RankSummary& summary);
// The text report's summary of many ranks (distributions, outliers).
std::string rankSummaryText(const StatsReport& report, const RankSummary& summary);
// The text report's sections: per rank, or summed over the ranks when the report summarises; the pipeline stages.
std::string commByOpSection(const StatsReport& report, bool summarise);
std::string commByRoleSection(const StatsReport& report, bool summarise);
std::string pipelineSection(const StatsReport& report);

} // namespace exposure
