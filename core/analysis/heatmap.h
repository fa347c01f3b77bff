// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The rank × step heat map: per rank and training step the step time, compute, exposed communication, waiting for
// peers and idle time (exact nanoseconds, the per-step statistics of statistics.h and collectives.h), steps aligned
// across ranks by StepWindow::index; per step a robust z-score of each rank against the median of that step, which
// marks the outliers; and the ranking of stragglers (who arrived last in collectives, whose steps ran longest).
#include "analysis/analysis.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exposure {

struct CollectiveMatch;

enum class HeatMetric : std::uint8_t {
    Step, // the step's window (StepWindow::range.duration())
    Compute, // WindowStats::computeBusyNs of the step window
    Exposed, // WindowStats::exposedNs: communication that no compute hides
    Waiting, // the rank's matched communication kernels' waiting for peers (collectiveSplitInWindow().waitNs)
    Idle, // WindowStats::idleNs
    Bubble, // the pipeline bubble of the step: see stepBubbleNs(), the extension point
    // The straggler attribution of the step (whatif::addSlowdown(), core/whatif/straggler.cpp): the job's step time
    // in the replay with only this rank's operations as recorded and every other operation at its typical duration,
    // minus the job's step time with every operation at its typical duration; not computed by computeStepHeatMap.
    Slowdown,
};
inline constexpr std::size_t kHeatMetricCount = 7;
const char* heatMetricName(HeatMetric m); // "step", "compute", "exposed", "waiting", "idle", "bubble", "slowdown"
std::optional<HeatMetric> heatMetricFromName(std::string_view name);
const char* heatMetricTitle(HeatMetric m); // "Step time", "Compute", "Exposed communication", ...

// How the rows (ranks) of a heat map are ordered.
enum class RankOrder : std::uint8_t {
    Number, // Rank::rank
    Host, // Rank::host, then number
    Stage, // pipeline stage, then number (see rankStage(): number order while no stage is known)
    Value, // the rank's mean over its steps, largest first, then number
};
const char* rankOrderName(RankOrder o); // "number", "host", "stage", "value"
std::optional<RankOrder> rankOrderFromName(std::string_view name);

// Every metric of every rank and step, computed once (heatMatrix() then reads one metric without recomputing).
struct StepHeatMap
{
    struct Column
    {
        int stepIndex = 0; // StepWindow::index
        std::string name; // the step's name on the first rank that has it
        TimeRange window; // the union of the ranks' windows of this step (what "show in the timeline" zooms to)
    };
    struct Cell
    {
        bool present = false; // the rank has this step
        TimeRange window; // the rank's StepWindow::range
        std::array<TimeNs, kHeatMetricCount> values {}; // by HeatMetric
    };
    std::vector<Column> columns; // by step index, ascending
    std::size_t rankCount = 0;
    std::vector<Cell> cells; // [rank * columns.size() + column]
    bool hasWaiting = false; // a collective matching was given
    bool hasBubble = false; // stepBubbleNs() gave a value for some step
    bool hasSlowdown = false; // whatif::addSlowdown() filled the Slowdown metric

    const Cell& cell(std::size_t rank, std::size_t column) const { return cells[rank * columns.size() + column]; }
    bool available(HeatMetric m) const
    {
        return m == HeatMetric::Bubble  ? hasBubble
            : m == HeatMetric::Waiting  ? hasWaiting
            : m == HeatMetric::Slowdown ? hasSlowdown
                                        : true;
    }
};

// The heat map of a trace: one row per rank (trace order), one column per step index any rank has. `collectives`
// may be null (then there is no waiting metric). `cancel` is polled between ranks: once it is set, the rest of the
// ranks are left absent (the caller drops such a map).
StepHeatMap computeStepHeatMap(const Trace& trace, const Analysis& analysis, const CollectiveMatch* collectives,
    const std::atomic<bool>* cancel = nullptr);

// The pipeline bubble of one rank's step (analysis/commops.h, as stats' steps[].bubble_ns): the job's window of the
// step (the hull of that step's window over the ranks) minus the rank's compute busy time inside it.
TimeNs stepBubbleNs(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange jobWindow);

// Robust z-scores of a sample against its median: z = 0.6745·(x − median)/MAD with MAD the median absolute
// deviation; where MAD is 0, z = (x − median)/(1.2533·MeanAD) with MeanAD the mean absolute deviation from the
// median (both denominators estimate the standard deviation of a normal sample); where that is 0 too, nothing
// stands out and every z is 0. The median of an even count is the mean of the two middle values.
std::vector<double> robustZ(const std::vector<double>& xs);
inline constexpr double kOutlierZ = 3.5; // |z| > kOutlierZ marks an outlier

// One metric of a heat map, with each present cell's robust z against the present cells of its column.
struct HeatMatrix
{
    HeatMetric metric = HeatMetric::Step;
    std::size_t rows = 0, columns = 0; // rows: ranks in trace order
    std::vector<TimeNs> values; // [rank * columns + column]; 0 where absent
    std::vector<std::uint8_t> present;
    std::vector<double> z; // 0 where absent
    std::vector<std::uint8_t> outlier; // |z| > kOutlierZ
    TimeNs minValue = 0, maxValue = 0; // over the present cells (0, 0 when none)

    std::size_t at(std::size_t rank, std::size_t column) const { return rank * columns + column; }
    std::size_t outlierCount() const;
};
HeatMatrix heatMatrix(const StepHeatMap& map, HeatMetric metric);

// The pipeline stage of a rank: its pp coordinate where the trace gives one (Rank::coords), else nullopt (then the
// Stage order is the number order).
std::optional<int> rankStage(const Trace& trace, int rankIndex);
// The rank indexes in display order (top row first).
std::vector<int> orderRanks(const Trace& trace, const HeatMatrix& matrix, RankOrder order);

// A rank's part in slowing the others down.
struct StragglerRank
{
    int rank = 0; // index into Trace::ranks
    std::uint64_t arrivedLast = 0; // collectives in which it arrived last while others waited (causedWaits)
    TimeNs causedWaitNs = 0; // the others' waiting in those (RankCollectiveStats::causedWaitNs)
    TimeNs excessStepNs = 0; // Σ over its steps of max(0, step time − the step's median over ranks)
    std::uint64_t slowSteps = 0; // steps whose step-time z-score is an outlier above the median
};
// Ranks by how often they arrived last (then by caused waiting, by excess step time, by rank index).
std::vector<StragglerRank> rankStragglers(const StepHeatMap& map, const CollectiveMatch* collectives);

} // namespace exposure
