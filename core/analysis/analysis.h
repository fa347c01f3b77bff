// SPDX-License-Identifier: GPL-3.0-or-later
// Contract between the analysis (implemented in core/analysis) and its users (CLI, widgets, figures).
// Add to it freely; do not rename or remove members without updating every caller.
#pragma once

#include "model/trace.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exposure {

enum class Category : std::uint8_t {
    Compute,       // every GPU kernel that is not one of the below
    Communication, // NCCL / RCCL kernels
    Memcpy,        // copies and memsets
    Idle,          // sync / idle ("COMPUTE IDLE", "DEVICE SYNCHRONIZE", ...): never compute
    Host,          // CPU-side regions
};
inline constexpr int kCategoryCount = 5;
const char* categoryName(Category c);

enum class Phase : std::uint8_t { Unknown, Forward, Backward, Optimizer };
const char* phaseName(Phase p);

// How the phases of a rank's kernels were decided (best source that applied).
enum class PhaseSource : std::uint8_t { None, Launch, KernelName, StepHeuristic };
const char* phaseSourceName(PhaseSource s);

// Classification of one distinct name; computed once per StringId.
struct NameClass
{
    Category category = Category::Host;
    std::string subgroup;       // compute: gemm|attention|elementwise|reduction|normalization|optimizer|other;
                                // communication: the collective; memcpy: direction (HtoD, DtoH, DtoD, memset)
    bool unclassified = false;  // only a catch-all rule matched
    int rule = -1;              // index into Rules::rules() of the rule that matched
    std::string collective;     // AllReduce, Broadcast, ReduceScatter, AllGather, SendRecv, ... ("" if none)
    std::string algorithm;      // RING, TREE, ...
    std::string protocol;       // LL, LL128, SIMPLE
    std::string dataType;       // float, f32, bf16, ...
    std::string displayName;    // demangled when the name was mangled, else the name
    Phase namePhase = Phase::Unknown; // phase suggested by the name alone

    // Added by the analysis implementation (additive):
    std::string reduction;            // NCCL reduction operator from the name (Sum, Max, ...), "" if none
    int phaseRule = -1;               // rule that gave namePhase (GPU names) or regionPhase (CPU regions)
    Phase regionPhase = Phase::Unknown; // CPU regions: the phase of the kernels launched inside this region
    bool stepRegion = false;          // CPU regions: this region delimits one training step
    int stepRule = -1;                // rule that made it a step region
    bool kernelLaunch = false;        // CPU regions: a kernel-launch API call (cuLaunchKernel, hipLaunchKernel ...)
};

// Ordered regex rules over region names (default set compiled in from resources/rules.json).
class Rules
{
public:
    struct Rule
    {
        std::string id;        // short unique label shown in the GUI
        std::string pattern;   // regular expression (case-insensitive), searched in the name
        std::string target;    // "kernel" (GPU kernel names), "region" (CPU region names), "any"
        std::string category;  // compute|communication|memcpy|idle|phase|step
        std::string subgroup;  // see NameClass::subgroup; for category "phase": forward|backward|optimizer
        bool catchAll = false;
    };

    static Rules defaults();
    // Reads a rules file; throws std::runtime_error("<file>: <problem>") on bad input.
    // With extend=true the file's rules are tried before the defaults; otherwise they replace them.
    static Rules fromFile(const std::string& path, bool extend);
    static Rules fromJson(const std::string& json, const std::string& sourceName);
    std::string toJson() const;

    const std::vector<Rule>& rules() const;
    NameClass classify(std::string_view name, RegionKind kind) const;

    // Added by the analysis implementation (additive):
    // The text of resources/rules.json compiled into the library.
    static const char* defaultJson();
    // Where the rules came from ("built-in defaults", a file name, or "file + built-in defaults").
    const std::string& source() const;
    const std::string& description() const;

    Rules();
    ~Rules();
    Rules(const Rules&);
    Rules& operator=(const Rules&);
    Rules(Rules&&) noexcept;
    Rules& operator=(Rules&&) noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

struct StepWindow
{
    int index = 0;
    std::string name;  // "ProfilerStep#4", "step 3"
    TimeRange range;
};

enum class OverlapState : std::uint8_t {
    ComputeOnly, // compute, no communication
    Hidden,      // communication while compute runs
    Exposed,     // communication with no compute
    Other,       // only memcpy / other GPU activity
};
struct OverlapSegment
{
    TimeNs start = 0;
    TimeNs end = 0;
    OverlapState state = OverlapState::ComputeOnly;
};

struct RankAnalysis
{
    std::vector<std::vector<Phase>> phases; // [lane][interval]; empty vector for CPU lanes
    PhaseSource phaseSource = PhaseSource::None;
    std::uint64_t phaseFromLaunch = 0, phaseFromName = 0, phaseFromHeuristic = 0, phaseUnknown = 0;
    std::vector<StepWindow> steps;
    std::string stepSource;  // "regions" | "kernel pattern" | "none"
    bool stepsByLaunch = false; // kernels were assigned to steps by their launch time
    std::vector<OverlapSegment> overlap; // sorted, non-overlapping; gaps are idle

    // Added by the analysis implementation (additive):
    // The rank's GPU activity as disjoint, sorted segments, each with a bit-mask of what runs in it
    // (ActivityBit). Built once with a Boost.ICL interval_map; window statistics are clipped sums over it.
    std::vector<TimeNs> activityStart, activityEnd;
    std::vector<std::uint8_t> activityMask;
    std::vector<std::string> warnings; // e.g. launch/kernel count mismatches on a stream
    // How kernels were paired with their CPU launches: "stream references", "stream references, partly",
    // "launch order" (one stream; every kernel-launch call of the rank, in time order) or "none".
    std::string launchPairing = "none";
    // [lane][interval]: index into steps of the step a GPU interval belongs to, -1 if none (empty when no
    // steps, and for CPU lanes).
    std::vector<std::vector<std::int32_t>> stepOf;
};

// Bits of RankAnalysis::activityMask.
enum ActivityBit : std::uint8_t {
    ActivityComm = 1,          // a communication kernel runs
    ActivityCompute = 2,       // a compute kernel runs
    ActivityBackward = 4,      // a compute kernel of phase Backward runs
    ActivityMemcpy = 8,        // a copy or memset runs
    ActivityUnclassified = 16, // a compute kernel that only a catch-all rule matched runs
};
const char* overlapStateName(OverlapState s);

struct Analysis
{
    Rules rules;
    std::vector<NameClass> names; // by StringId
    std::vector<RankAnalysis> ranks;

    const NameClass& classOf(StringId id) const { return names[id]; }
};

std::shared_ptr<const Analysis> analyze(const Trace& trace, Rules rules);

// Exact statistics of one rank (or all ranks) over a window; see README "Statistics".
struct WindowStats
{
    std::uint64_t kernelCount = 0;
    std::uint64_t commKernelCount = 0;
    TimeNs commKernelSumNs = 0;
    TimeNs commBusyNs = 0;
    TimeNs computeBusyNs = 0;
    TimeNs overlappedNs = 0;
    TimeNs exposedNs = 0;
    std::optional<double> overlapRatio; // overlapped / commBusy; nullopt when no communication
    TimeNs backwardOverlappedNs = 0;
    TimeNs memcpyBusyNs = 0;
    TimeNs gpuBusyNs = 0;
    TimeNs spanNs = 0;
    TimeNs idleNs = 0;
    TimeNs unclassifiedNs = 0;
};

WindowStats computeStats(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window);
// Field-wise sum of per-rank statistics; the ratio is recomputed from the sums.
WindowStats sumStats(const std::vector<WindowStats>& parts);
// Whole-run total: sums of the per-rank values over the window (ratio from the sums).
WindowStats computeTotal(const Trace& trace, const Analysis& analysis, TimeRange window);
// Per-step statistics of a rank (kernels assigned to each step).
std::vector<WindowStats> computeStepStats(const Trace& trace, const Analysis& analysis, int rankIndex);
// Same, with every step's kernels clipped to `window` (added).
std::vector<WindowStats> computeStepStats(const Trace& trace, const Analysis& analysis, int rankIndex,
                                          TimeRange window);
// Index into RankAnalysis::steps of the step that GPU interval `interval` of lane `laneIndex` belongs to,
// -1 if none (added).
int stepOfInterval(const Trace& trace, const Analysis& analysis, int rankIndex, int laneIndex, std::size_t interval);
// The exact definitions of every WindowStats field, as plain text (CLI --help, GUI tool tips) (added).
const char* statisticsDefinitions();

// The part of one communication kernel instance hidden behind compute of the same rank.
struct InstanceOverlap
{
    TimeNs hiddenNs = 0;
    TimeNs exposedNs = 0;
};
InstanceOverlap instanceOverlap(const Trace& trace, const Analysis& analysis, int rankIndex, int laneIndex,
                                std::size_t interval);

struct KernelRow
{
    StringId name = 0;
    Category category = Category::Compute;
    std::string subgroup;
    Phase phase = Phase::Unknown; // the phase most of its instances have
    std::uint64_t count = 0;
    TimeNs totalNs = 0;
    TimeNs minNs = 0;
    TimeNs maxNs = 0;
    double meanNs = 0;
    double gpuShare = 0; // totalNs / sum of all GPU kernel and memcpy time in the window
};
// Kernels (GPU intervals) whose start lies in the window; rankIndex -1 = all ranks.
std::vector<KernelRow> kernelTable(const Trace& trace, const Analysis& analysis, TimeRange window,
                                   int rankIndex = -1);

struct RuleUsage
{
    int rule = -1;  // index into Rules::rules(); -1 = nothing matched
    std::uint64_t count = 0;
    TimeNs timeNs = 0;
};
std::vector<RuleUsage> ruleUsage(const Trace& trace, const Analysis& analysis);

} // namespace exposure
