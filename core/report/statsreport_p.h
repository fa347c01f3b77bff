// SPDX-License-Identifier: GPL-3.0-or-later
// Internal to the stats report's writers (statsreport.cpp, commsections.cpp): the parts on hybrid parallelism.
#pragma once

#include "analysis/commops.h"
#include "model/trace.h"

#include <string>

namespace exposure {

struct StatsReport;

// "comm_by_op": the rank's communication by the operation the program called.
std::string commByOpJson(const CommOps& ops);
// "parallel": the rank's coordinates in the parallel grid, those that are known ({} where none is).
std::string parallelJson(const ParallelCoords& c);
// "comm_by_role": {ROLE: {count, busy_ns, exposed_ns, wait_ns, transfer_ns}}.
std::string commByRoleJson(const CommOps& ops);
// The text report's sections: per rank, or summed over the ranks when the report summarises; the pipeline stages.
std::string commByOpSection(const StatsReport& report, bool summarise);
std::string commByRoleSection(const StatsReport& report, bool summarise);
std::string pipelineSection(const StatsReport& report);

} // namespace exposure
