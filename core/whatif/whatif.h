// SPDX-License-Identifier: GPL-3.0-or-later
// What would a change gain? Edits of a trace's work, their replay through the dependency graph, and per rank the
// measured, replayed and predicted mean step time with the critical path of the steps (pure C++, no Qt GUI).
#pragma once

#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "model/trace.h"
#include "whatif/graph.h"
#include "whatif/replay.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace exposure {
struct StepHeatMap;
}

namespace exposure::whatif {

struct Edits
{
    struct Scale
    {
        std::string pattern;
        double factor = 1.0; // the work takes factor × its recorded time (0 removes it)
    };
    enum class Comm : std::uint8_t {
        Measured, // as recorded
        Hidden, // communication takes no time and waits for no peer
        Faster, // the transfer part takes 1/commFactor of its time
        NoWait, // no member of a collective waits for a peer that started after the median member
    };

    // Host regions whose name matches a regular expression (case-insensitive, searched): they and everything in
    // them (nested regions, the time between) scaled.
    std::vector<Scale> regions;
    // GPU work: the pattern is a category ("compute", "communication", "memcpy"), a sub-group ("gemm",
    // "attention", ...) or else a regular expression searched in the kernel name.
    std::vector<Scale> gpu;
    Comm comm = Comm::Measured;
    double commFactor = 1.0;
    bool noSync = false; // synchronising calls removed: they take no time and wait for nothing
    double launchFactor = 1.0; // kernel-launch calls take 1/launchFactor of their time
    // Every compute and communication operation at its typical duration first (the straggler what-if's evened job,
    // `whatif --even`); the other edits then scale that.
    bool even = false;

    bool empty() const;
    std::string describe() const; // "remove 'inject'; kernels attention ×0.5; communication hidden" or "none"
};

// Parses "PATTERN=F" (F a non-negative number); returns false on a malformed text.
bool parseScale(const std::string& text, Edits::Scale& out);
// Parses a --comm argument: "hidden", "no-wait" or "xF" / "×F" with F > 0; returns false if malformed.
bool parseComm(const std::string& text, Edits& out);

// Builds the plan of `edits` on `graph`. Throws std::invalid_argument("<pattern>: <problem>") on a bad regular
// expression.
Plan makePlan(const Trace& trace, const Analysis& analysis, const Graph& graph, const Edits& edits);
// The work of every node with each compute operation at the mean of its kind (its name) and each communication
// operation at the median transfer of its kind, over all ranks and steps; other nodes as recorded.
std::vector<TimeNs> evenedWork(const Trace& trace, const Analysis& analysis, const Graph& graph);

struct StepTimes
{
    int index = 0; // StepWindow::index
    int number = 0; // StepWindow::number (ProfilerStep#N: N)
    TimeNs measured = 0, replay = 0, predicted = 0;
};

struct RankWhatIf
{
    int rank = 0; // the rank's number
    std::string label;
    std::vector<StepTimes> steps; // the steps the mean step time covers (stats' rule: start-up steps left out)
    TimeNs measuredMean = 0, replayMean = 0, predictedMean = 0;
    PathSums replayPath, predictedPath; // critical path, mean per step
    double maxStepErrorPercent = 0; // largest |replay - measured| / measured over the steps, in percent
};

struct WhatIfResult
{
    std::vector<RankWhatIf> ranks;
    std::size_t nodes = 0, edges = 0, groups = 0;
    std::size_t forcedEvents = 0;
    std::vector<std::string> warnings;
};

// A recorded moment expressed in replayed time: the time of `event` plus `offset` (event kNone: not in the graph).
struct Anchor
{
    std::uint32_t event = kNone;
    TimeNs offset = 0;
};
struct StepAnchors
{
    Anchor start, end;
};

// "How long would a step take if every operation took its typical time?" (whatif --even): every compute kernel (or
// op) takes the mean duration of its kind (its name) over all ranks and steps, every communication kernel the median
// of its kind's time after its group completed (its transfer; waiting is what the replay then gives), the rest is
// replayed as recorded. The job's step time is the longest rank's replayed step; the slowdown is the mean step time
// as recorded (the unedited replay) over the mean evened. Attribution: for each group of a dimension (rank, dp, pp,
// tp, op), the replay with that group kept as recorded and everything else evened, over the evened mean.
struct EvenResult
{
    TimeNs recordedMean = 0, evenedMean = 0;
    double slowdown = 1.0;
    struct Step
    {
        int index = 0; // StepWindow::index
        TimeNs recorded = 0, evened = 0;
        double slowdown = 1.0;
    };
    std::vector<Step> steps;
    struct Group
    {
        std::string name; // "3" (a rank number or coordinate), or an op's name
        TimeNs meanStep = 0; // mean job step with this group as recorded
        double slowdown = 1.0; // meanStep / evenedMean
        double ownRatio = 1.0; // the group's recorded compute time over the same work at its typical durations
        std::map<int, TimeNs> steps; // StepWindow::index -> the job's step time with this group as recorded
    };
    std::map<int, TimeNs> evenedSteps; // StepWindow::index -> the job's step time with every operation evened
    std::vector<std::pair<std::string, std::vector<Group>>> by; // dimension -> groups, largest slowdown first
    // The DP rank × pipeline stage grid (EvenOptions::grid, for a job whose every rank has dp and pp coordinates):
    // cell (dp, pp) is the replay with only the ranks of that cell as recorded (all their TP ranks) and everything
    // else evened. Empty (dpCount 0) when not asked for or when the ranks lack the coordinates.
    struct Grid
    {
        int dpCount = 0, ppCount = 0;
        std::vector<Group> cells; // [dp * ppCount + pp]; Group::name "dp,pp"
        std::vector<std::uint8_t> present; // 0 where no rank has those coordinates
        bool empty() const { return cells.empty(); }
        const Group& cell(int dp, int pp) const { return cells[std::size_t(dp * ppCount + pp)]; }
    };
    Grid grid;
    std::size_t replays = 0;
    // Events the attribution (and grid) replays computed, and the events of one full replay of the graph: a full
    // replay per group computes replays × graphEvents; the incremental ones only what their group moves.
    std::uint64_t replayedEvents = 0, graphEvents = 0;
};

struct EvenOptions
{
    int threads = 0; // the replays run on this many threads (0: every core)
    // Each attribution replay recomputes only what its group changes from the shared evened replay
    // (IncrementalReplay); false replays each in full, the reference it equals exactly.
    bool incremental = true;
    bool grid = false; // also EvenResult::grid (one more replay per DP rank × stage cell)
};

// The Slowdown metric of a heat map (analysis/heatmap.h) from the attribution of dimension "rank": the cell of rank r
// and step s is the job's step time s with rank r's operations as recorded and every other operation evened, minus
// the job's step time s with every operation evened (both replays of even()); 0 where a replay lacks the step. Sets
// map.hasSlowdown (for a run of one rank too, whose replay with that rank as recorded is the unedited replay).
void addSlowdown(StepHeatMap& map, const Trace& trace, const EvenResult& even);

std::string evenJson(const EvenResult& result);
std::string evenTable(const EvenResult& result);

// A trace prepared for what-if questions: its graph and its unedited replay, computed once.
class WhatIfModel
{
public:
    // `collectives`: the cross-rank matching of the trace's communication kernels if already computed (openRun's
    // collectives stage); computed here when null.
    WhatIfModel(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis,
        std::shared_ptr<const CollectiveMatch> collectives = {});

    const Trace& trace() const { return *m_trace; }
    const Graph& graph() const { return m_graph; }
    const Replay& recordedReplay() const { return m_recorded; }

    // Replays `edits`; the result compares it with the recording and the unedited replay.
    WhatIfResult evaluate(const Edits& edits) const;
    // The replay of `edits` as a trace: every interval at its predicted times (for drawing it like a recording).
    std::shared_ptr<Trace> predictedTrace(const Edits& edits) const;
    // The straggler what-if (see EvenResult); the replays run on `threads` threads (0: every core).
    EvenResult even(int threads = 0) const
    {
        EvenOptions o;
        o.threads = threads;
        return even(o);
    }
    EvenResult even(const EvenOptions& options) const;

private:
    // Replayed [start, end) of every step of `rank` (RankAnalysis::steps) under `edits`.
    std::vector<TimeRange> stepWindows(int rank, const Edits& edits) const;

private:
    // The job's step time of every step index: the longest rank's step window in replay `r`.
    std::map<int, TimeNs> jobSteps(const Replay& r) const;
    PathSums stepPath(int rank, std::size_t step, const Plan& plan, const Replay& r) const;

    std::shared_ptr<const Trace> m_trace;
    std::shared_ptr<const Analysis> m_analysis;
    Graph m_graph;
    Plan m_recordedPlan;
    Replay m_recorded;
    std::vector<std::vector<StepAnchors>> m_anchors; // by rank, by step
};

std::string whatIfJson(const WhatIfResult& result, const Edits& edits);
std::string whatIfTable(const WhatIfResult& result, const Edits& edits);

} // namespace exposure::whatif
