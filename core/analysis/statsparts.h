// SPDX-License-Identifier: GPL-3.0-or-later
// The statistics report (statsreport.h) split into the part computed where a rank's data lives and a merge:
//  * RankReport: everything the report says about one rank (its statistics, steps, idle breakdown, launch
//    diagnosis, warnings); computed from that rank alone.
//  * KernelParts: the per-name kernel accumulations of some ranks, keyed by name (not StringId: string ids differ
//    between traces that hold different ranks); merged by name.
//  * Collective candidates: the communication kernel instances of some ranks (rank index, lane, interval, start,
//    end, an index into a name table); matched over all ranks at once (collectives.h), after which each rank's
//    exposed waiting is computed where its activity lives.
// The serial report (statsJson / statsCsv / statsTable of a whole Trace) is built through the same parts, so a
// report assembled from parts computed in several processes is byte-identical to it by construction.
// exposure-mpi sends the parts between its processes as flat byte strings (app/mpi/wire.h).
#pragma once

#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "analysis/commops.h"
#include "report/statsreport.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace exposure {

struct StepReport
{
    int index = 0;
    int number = 0; // StepWindow::number
    std::string name;
    TimeRange range; // the step's window on the GPU's time axis (StepWindow::range)
    TimeRange hostRange; // its CPU region
    WindowStats stats; // the step's window clipped to the report window (computeStepWindowStats)
    IdleBreakdown idle; // over the same window, by idleGapsCut (JSON only; zero when not computed)
    // Filled in by the merge with the collectives: the rank's matched communication kernels' waiting and transfer
    // parts clipped to the same window (collectiveSplitInWindow).
    TimeNs waitNs = 0, transferNs = 0;
    // The job's window of this step (the hull of the step's window over all ranks, clipped to the report window)
    // minus the rank's compute busy time inside it (commops.h); filled in by the merge.
    TimeNs bubbleNs = 0;
};

struct RankReport
{
    int rank = 0; // Rank::rank
    std::string label;
    std::string host;
    int device = -1; // first device, -1 = none
    WindowStats stats;
    PhaseSource phaseSource = PhaseSource::None;
    std::uint64_t phaseFromLaunch = 0, phaseFromName = 0, phaseFromHeuristic = 0, phaseUnknown = 0;
    LaunchPairing launchPairing = LaunchPairing::None;
    std::uint64_t kernelsPaired = 0, kernelsUnpaired = 0;
    // Calls that launched kernels, by how many each launched (whole rank): (kernels, calls), ascending.
    std::vector<std::pair<std::uint32_t, std::uint64_t>> kernelsPerCall;
    IdleBreakdown idle;
    LaunchDiagnosis launches;
    StepSource stepSource = StepSource::None;
    bool stepsByLaunch = false;
    StepAxis stepAxis = StepAxis::None;
    std::uint64_t stepCount = 0; // all steps of the rank
    std::vector<StepReport> steps; // the steps that intersect the window
    RankCollectiveStats collectives; // filled in by the merge (whole trace)
    CommOps commOps; // communication by operation; waiting and transfer filled in by the merge
    ParallelCoords coords; // Rank::coords (dp, pp, tp, ep, cp where known)
    PeerWait peers; // filled in by the merge: the rank's waiting for peers in the report window (fillPeerWaits)
    std::vector<std::string> warnings;
};

// Sets each step's bubbleNs of rank `rankIndex` of `trace` (report rank r) from the job windows.
void fillStepBubbles(RankReport& r, const Trace& trace, const Analysis& analysis, int rankIndex,
    const std::map<int, TimeRange>& jobWindows, TimeRange window);

// Fills in each step's waitNs and transferNs of `rank` (the global index of r in the match) from the matching,
// over each step's window clipped to `window`.
void fillStepCollectives(RankReport& r, const CollectiveMatch& match, int rank, TimeRange window);

struct StatsReport;
// Fills in every rank's peers (its waiting in `window` and the rank it waited for most, by the report's labels).
void fillPeerWaits(StatsReport& report, const CollectiveMatch& match, TimeRange window);

// The report of one rank of `trace`. stepIdle: also each step's idle breakdown (the JSON lists it).
// `layout`: the trace's process-group layout, shared by the calls for its ranks (inferred by each call without it).
RankReport rankReport(const Trace& trace, const Analysis& analysis, int rankIndex, const StatsReportOptions& options,
    bool stepIdle, const SharedGroupLayout* layout = nullptr);

struct KernelPart
{
    std::string name; // the trace's name of the kernel (the sort key for ties)
    std::string displayName; // NameClass::displayName
    Category category = Category::Compute;
    std::string subgroup;
    std::array<std::uint64_t, 4> phaseCount {}; // by Phase
    std::uint64_t count = 0;
    TimeNs totalNs = 0, minNs = 0, maxNs = 0;
};

struct KernelParts
{
    TimeNs gpuTotalNs = 0; // all GPU kernel and memcpy time of the window on these ranks
    std::vector<KernelPart> rows; // sorted by name, one per name
};

// Per-name accumulations of the GPU intervals of the given ranks (all when empty) that start in the window.
KernelParts kernelParts(
    const Trace& trace, const Analysis& analysis, TimeRange window, const std::vector<int>& rankIndexes = {});
// Adds `other` into `into` (by name; the result stays sorted by name).
void mergeKernelParts(KernelParts& into, const KernelParts& other);

// One row of the report's kernel table (kernelTable() with names instead of string ids).
struct KernelReportRow
{
    std::string name;
    std::string displayName;
    Category category = Category::Compute;
    std::string subgroup;
    Phase phase = Phase::Unknown;
    std::uint64_t count = 0;
    TimeNs totalNs = 0, minNs = 0, maxNs = 0;
    double meanNs = 0;
    double gpuShare = 0;
};
// Rows sorted by total time (largest first), ties by name, as kernelTable() sorts them.
std::vector<KernelReportRow> kernelRows(const KernelParts& parts);

// Communication kernel instances of some ranks for matchCollectives(); `rank` is the global rank index and `name`
// an index into `names` (the distinct kernel names of these candidates).
struct CollectiveCandidates
{
    std::vector<std::string> names;
    std::vector<CollectiveCandidate> items;
};
// globalIndexOf[k] is the global index of local rank k (empty: the same as the local index).
CollectiveCandidates collectiveCandidates(
    const Trace& trace, const Analysis& analysis, const std::vector<int>& globalIndexOf = {});

// Everything the report prints, assembled from the parts.
struct StatsReport
{
    std::string tracePath;
    std::string rulesSource;
    std::vector<std::string> traceWarnings; // Trace::warnings of the whole run, in the serial loader's order
    std::vector<RankReport> ranks; // in trace order
    std::vector<KernelReportRow> kernels;
    bool anyCollectiveGroup = false; // matchCollectives() found at least one group
    bool multipleHosts = false;
    ClockAlignment clocks; // Trace::clocks (indexes are trace rank indexes)
    std::string clockLine; // clockSummaryLine()
    std::vector<ProcessGroupMatch> processGroups; // members as rank numbers
    std::vector<CollectiveSummaryRow> collectiveSummary;
    std::vector<StragglerRow> stragglers; // ranks as trace rank indexes
};

// Fills the cross-rank parts of a report (groups, summary, stragglers) from the match of all its ranks; the
// match's keys table also names its kernels (CollectiveCandidates::names), which `rules` classify.
void addCrossRank(StatsReport& report, const CollectiveMatch& match, const Rules& rules);
// The job windows of the report's steps (by step index; jobStepWindows over every rank's steps).
std::map<int, TimeRange> reportJobWindows(const StatsReport& report);

// The whole report of a trace in one process.
StatsReport buildStatsReport(
    const Trace& trace, const Analysis& analysis, const StatsReportOptions& options, bool stepIdle = true);

std::string statsJson(const StatsReport& report, const StatsReportOptions& options);
std::string statsCsv(const StatsReport& report, const StatsReportOptions& options);
std::string statsTable(const StatsReport& report, const StatsReportOptions& options);

} // namespace exposure
