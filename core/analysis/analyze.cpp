// SPDX-License-Identifier: GPL-3.0-or-later
// analyze(): classify every distinct name once, then per rank decide the phase and step of each GPU kernel
// and build the rank's activity map (Boost.ICL) from which all window statistics are read.
#include "analysis/analysis_p.h"
#include "model/enumnames.h"
#include "model/parallelfor.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <thread>

namespace exposure {

namespace {

using detail::isKernel;

// Optimizer beats backward beats forward beats unknown: the enum is declared in that order.
static_assert(
    Phase::Unknown < Phase::Forward && Phase::Forward < Phase::Backward && Phase::Backward < Phase::Optimizer);

// The phase a CPU interval's enclosing regions give to work launched inside it. When regions of several
// phases enclose a launch, optimizer beats backward beats forward: a forward recomputation inside backward
// (activation checkpointing) is backward work.
std::vector<Phase> regionPhases(const IntervalTable& t, const std::vector<NameClass>& names)
{
    std::vector<Phase> eff(t.size(), Phase::Unknown);
    struct Open
    {
        TimeNs end;
        Phase phase;
    };
    std::vector<Open> stack;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const TimeNs s = t.start(i), e = t.end(i);
        // Sorted by start, so an open region encloses i exactly when it has not ended before i ends.
        while (!stack.empty() && (stack.back().end < e || (stack.back().end <= s && e > s)))
            stack.pop_back();
        const Phase parent = stack.empty() ? Phase::Unknown : stack.back().phase;
        const Phase own = names[t.name(i)].regionPhase;
        eff[i] = std::max(own, parent);
        stack.push_back({ e, eff[i] });
    }
    return eff;
}

// Step regions far shorter than the time between them (a region of a few us at the start of each iteration, as
// some tools write) are markers, not iterations: each step then runs from its marker to the next one, the last to the
// end of the rank's recorded work, at most twice the median spacing after its marker.
void stepsFromMarkers(const Trace& trace, const Rank& rank, RankAnalysis& ra)
{
    std::vector<StepWindow>& steps = ra.steps;
    if (steps.size() < 2)
        return;
    std::vector<TimeNs> lengths, spacings;
    for (std::size_t k = 0; k < steps.size(); ++k) {
        lengths.push_back(steps[k].range.duration());
        if (k + 1 < steps.size())
            spacings.push_back(steps[k + 1].range.start - steps[k].range.start);
    }
    auto median = [](std::vector<TimeNs> v) {
        std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
        return v[v.size() / 2];
    };
    const TimeNs spacing = median(spacings);
    if (median(lengths) * 10 >= spacing)
        return;
    TimeNs workEnd = std::numeric_limits<TimeNs>::min();
    for (const Lane& lane : rank.lanes)
        for (std::size_t i = 0; i < lane.intervals.size(); ++i)
            workEnd = std::max(workEnd, lane.intervals.end(i));
    workEnd = std::min(workEnd, trace.activity.isEmpty() ? workEnd : trace.activity.end);
    for (std::size_t k = 0; k < steps.size(); ++k) {
        const TimeNs end = k + 1 < steps.size()
            ? steps[k + 1].range.start
            : std::max(steps[k].range.end, std::min(workEnd, steps[k].range.start + 2 * spacing));
        steps[k].range = steps[k].hostRange = { steps[k].range.start, end };
    }
    ra.stepSource = StepSource::Markers;
}

void stepsFromRegions(const Trace& trace, const Analysis& a, const Rank& rank, RankAnalysis& ra)
{
    struct Cand
    {
        TimeNs s, e;
        StringId name;
        int rule;
    };
    std::vector<Cand> cands;
    for (const Lane& lane : rank.lanes) {
        if (lane.isGpu())
            continue;
        const auto& t = lane.intervals;
        for (std::size_t i = 0; i < t.size(); ++i) {
            const NameClass& nc = a.names[t.name(i)];
            if (nc.stepRegion)
                cands.push_back({ t.start(i), t.end(i), t.name(i), nc.stepRule });
        }
    }
    if (cands.empty())
        return;
    // Only the first step rule (in rule order) that occurs: ProfilerStep#N wins over a user "train_step".
    int best = std::numeric_limits<int>::max();
    for (const auto& c : cands)
        best = std::min(best, c.rule);
    std::erase_if(cands, [&](const Cand& c) { return c.rule != best; });
    // A numbered step name (ProfilerStep#15) names one iteration: where it occurs more than once (the CPU region and
    // a GPU-side copy of a few us, or two threads), the longest occurrence is the step.
    auto numbered = [&](StringId n) {
        const std::string& text = trace.name(n);
        return !text.empty() && text.back() >= '0' && text.back() <= '9';
    };
    std::map<StringId, std::size_t> longest;
    for (std::size_t k = 0; k < cands.size(); ++k)
        if (numbered(cands[k].name)) {
            auto [it, fresh] = longest.try_emplace(cands[k].name, k);
            if (!fresh && cands[k].e - cands[k].s > cands[it->second].e - cands[it->second].s)
                it->second = k;
        }
    for (std::size_t k = cands.size(); k-- > 0;)
        if (numbered(cands[k].name) && longest[cands[k].name] != k)
            cands.erase(cands.begin() + std::ptrdiff_t(k));
    std::sort(
        cands.begin(), cands.end(), [](const Cand& x, const Cand& y) { return x.s != y.s ? x.s < y.s : x.e > y.e; });
    TimeNs lastEnd = std::numeric_limits<TimeNs>::min();
    for (const auto& c : cands) {
        if (c.s < lastEnd)
            continue; // nested in or overlapping the previous step (e.g. the same region on two threads)
        StepWindow w;
        w.index = int(ra.steps.size());
        w.name = trace.name(c.name);
        w.range = { c.s, c.e };
        w.hostRange = w.range;
        ra.steps.push_back(std::move(w));
        lastEnd = c.e;
    }
    ra.stepSource = StepSource::Regions;
    stepsFromMarkers(trace, rank, ra);
}

// Without step regions: every training iteration ends with its optimizer kernels. Optimizer kernels close
// together (few other kernels between them) form one optimizer run; a run ends a step. The gap that separates
// runs is the forward + backward of a step, far larger than any gap inside a run, so a run boundary is a gap
// (counted in other compute kernels) above a quarter of the largest gap.
void stepsFromPattern(const Rank& rank, const Analysis& a, RankAnalysis& ra)
{
    struct K
    {
        TimeNs s, e;
        bool opt;
    };
    std::vector<K> ks;
    TimeNs firstActivity = std::numeric_limits<TimeNs>::max();
    detail::forEachGpuLane(rank, [&](std::size_t li, const Lane& lane) {
        const auto& t = lane.intervals;
        for (std::size_t i = 0; i < t.size(); ++i) {
            const NameClass& nc = a.names[t.name(i)];
            if (nc.category == Category::Idle || nc.category == Category::Host)
                continue;
            firstActivity = std::min(firstActivity, t.start(i));
            if (nc.category != Category::Compute)
                continue;
            const bool opt = ra.phases[li][i] == Phase::Optimizer || nc.subgroupPhase == Phase::Optimizer;
            ks.push_back({ t.start(i), t.end(i), opt });
        }
    });
    std::stable_sort(ks.begin(), ks.end(), [](const K& x, const K& y) { return x.s < y.s; });
    std::vector<std::size_t> optIdx;
    for (std::size_t i = 0; i < ks.size(); ++i)
        if (ks[i].opt)
            optIdx.push_back(i);
    if (optIdx.empty())
        return;
    std::size_t maxGap = 0;
    for (std::size_t j = 1; j < optIdx.size(); ++j)
        maxGap = std::max(maxGap, optIdx[j] - optIdx[j - 1] - 1);
    const std::size_t threshold = maxGap / 4;
    std::vector<TimeNs> runEnds;
    TimeNs runEnd = ks[optIdx[0]].e;
    for (std::size_t j = 1; j < optIdx.size(); ++j) {
        const std::size_t gap = optIdx[j] - optIdx[j - 1] - 1;
        if (gap > threshold && maxGap > 0) {
            runEnds.push_back(runEnd);
            runEnd = ks[optIdx[j]].e;
        } else {
            runEnd = std::max(runEnd, ks[optIdx[j]].e);
        }
    }
    runEnds.push_back(runEnd);
    std::vector<TimeRange> windows;
    TimeNs begin = firstActivity;
    for (TimeNs end : runEnds) {
        if (end <= begin)
            continue;
        windows.push_back({ begin, end });
        begin = end;
    }
    // A recording that starts inside an iteration shows its tail (typically the optimizer kernels) as a
    // first window with far fewer kernels than the others: that partial step is not a step.
    if (windows.size() >= 3) {
        auto kernelsIn = [&](TimeRange w) {
            auto lo = std::lower_bound(ks.begin(), ks.end(), w.start, [](const K& k, TimeNs t) { return k.s < t; });
            auto hi = std::lower_bound(ks.begin(), ks.end(), w.end, [](const K& k, TimeNs t) { return k.s < t; });
            return std::size_t(hi - lo);
        };
        std::vector<std::size_t> counts;
        for (const auto& w : windows)
            counts.push_back(kernelsIn(w));
        std::vector<std::size_t> sorted = counts;
        std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(sorted.size() / 2), sorted.end());
        const std::size_t median = sorted[sorted.size() / 2];
        if (counts.front() * 2 < median)
            windows.erase(windows.begin());
    }
    for (const TimeRange& r : windows) {
        StepWindow w;
        w.index = int(ra.steps.size());
        w.name = "step " + std::to_string(w.index);
        w.range = r;
        w.hostRange = r;
        ra.steps.push_back(std::move(w));
    }
    if (!ra.steps.empty())
        ra.stepSource = StepSource::KernelPattern;
}

int stepAt(const std::vector<StepWindow>& steps, TimeNs t)
{
    auto it = std::upper_bound(
        steps.begin(), steps.end(), t, [](TimeNs v, const StepWindow& w) { return v < w.hostRange.start; });
    if (it == steps.begin())
        return -1;
    --it;
    return t < it->hostRange.end ? int(it - steps.begin()) : -1;
}

// The CPU interval that launched GPU interval i of lane li, if the pairing knows it.
const LaunchRef* launchOfInterval(const detail::LaunchPairs& pairing, std::size_t li, std::size_t i)
{
    const auto& of = pairing.launchOf[li];
    return i < of.size() && of[i].cpuLane != detail::kNoLane ? &of[i] : nullptr;
}

// Stage 1: the launch pairing, and the phase each CPU region gives to the work launched inside it.
std::vector<std::vector<Phase>> launchPhases(
    const Analysis& a, const Rank& rank, const detail::LaunchPairs& pairing, RankAnalysis& ra)
{
    const std::size_t nl = rank.lanes.size();
    ra.launchPairing = pairing.method;
    ra.kernelsPaired = pairing.kernelsPaired;
    ra.kernelsUnpaired = pairing.kernelsUnpaired;
    for (const auto& w : pairing.warnings)
        ra.warnings.push_back(w);
    std::vector<char> cpuNeeded(nl, 0);
    for (std::size_t li = 0; li < nl; ++li)
        for (const LaunchRef& l : pairing.launchOf[li])
            if (l.cpuLane != detail::kNoLane)
                cpuNeeded[l.cpuLane] = 1;
    std::vector<std::vector<Phase>> cpuPhase(nl);
    for (std::size_t li = 0; li < nl; ++li)
        if (cpuNeeded[li] && !rank.lanes[li].isGpu())
            cpuPhase[li] = regionPhases(rank.lanes[li].intervals, a.names);
    return cpuPhase;
}

// Stage 2: phases from (a) the launch's regions, else (b) the kernel's name.
void phasesFromLaunchAndName(const Analysis& a, const Rank& rank, const detail::LaunchPairs& pairing,
    const std::vector<std::vector<Phase>>& cpuPhase, RankAnalysis& ra)
{
    ra.phases.resize(rank.lanes.size());
    detail::forEachGpuLane(rank, [&](std::size_t li, const Lane& lane) {
        const auto& t = lane.intervals;
        auto& ph = ra.phases[li];
        ph.assign(t.size(), Phase::Unknown);
        for (std::size_t i = 0; i < t.size(); ++i) {
            const NameClass& nc = a.names[t.name(i)];
            if (!isKernel(nc.category))
                continue;
            if (const LaunchRef* l = launchOfInterval(pairing, li, i)) {
                const Phase p = cpuPhase[l->cpuLane][l->interval];
                if (p != Phase::Unknown) {
                    ph[i] = p;
                    ++ra.phaseFromLaunch;
                    continue;
                }
            }
            if (nc.namePhase != Phase::Unknown) {
                ph[i] = nc.namePhase;
                ++ra.phaseFromName;
            }
        }
    });
}

// Stage 3: the host step of each GPU interval: the step whose host window holds its launch (when known and the
// steps are CPU regions), else its start.
void assignHostSteps(const Analysis& a, const Rank& rank, const detail::LaunchPairs& pairing, RankAnalysis& ra)
{
    if (ra.steps.empty())
        return;
    const bool useLaunch = ra.stepSource == StepSource::Regions || ra.stepSource == StepSource::Markers;
    ra.stepOf.resize(rank.lanes.size());
    detail::forEachGpuLane(rank, [&](std::size_t li, const Lane& lane) {
        const auto& t = lane.intervals;
        auto& so = ra.stepOf[li];
        so.assign(t.size(), -1);
        for (std::size_t i = 0; i < t.size(); ++i) {
            const NameClass& nc = a.names[t.name(i)];
            if (nc.category == Category::Idle || nc.category == Category::Host)
                continue;
            TimeNs when = t.start(i);
            if (useLaunch) {
                if (const LaunchRef* l = launchOfInterval(pairing, li, i)) {
                    when = rank.lanes[l->cpuLane].intervals.start(l->interval);
                    ra.stepsByLaunch = true;
                }
            }
            so[i] = stepAt(ra.steps, when);
        }
    });
}

// Calls f(laneIndex, interval, step) for each GPU interval of `rank` that stage 3 placed in a step.
template <class F> void forEachStepInterval(const Rank& rank, const RankAnalysis& ra, const F& f)
{
    detail::forEachGpuLane(rank, [&](std::size_t li, const Lane& lane) {
        for (std::size_t i = 0; i < lane.intervals.size(); ++i)
            if (const int k = ra.stepOf[li][i]; k >= 0)
                f(li, i, std::size_t(k));
    });
}

// Stage 4: within each step, before the first backward kernel is forward; from it up to the first optimizer kernel
// is backward. Only kernels that stage 2 left unknown are decided this way.
void phasesFromStepHeuristic(const Analysis& a, const Rank& rank, RankAnalysis& ra)
{
    if (ra.steps.empty())
        return;
    const TimeNs none = std::numeric_limits<TimeNs>::max();
    std::vector<TimeNs> firstBwd(ra.steps.size(), none), firstOpt(ra.steps.size(), none);
    forEachStepInterval(rank, ra, [&](std::size_t li, std::size_t i, std::size_t k) {
        const TimeNs s = rank.lanes[li].intervals.start(i);
        if (ra.phases[li][i] == Phase::Backward)
            firstBwd[k] = std::min(firstBwd[k], s);
        else if (ra.phases[li][i] == Phase::Optimizer)
            firstOpt[k] = std::min(firstOpt[k], s);
    });
    forEachStepInterval(rank, ra, [&](std::size_t li, std::size_t i, std::size_t k) {
        const auto& t = rank.lanes[li].intervals;
        if (ra.phases[li][i] != Phase::Unknown || !isKernel(a.names[t.name(i)].category) || firstBwd[k] == none)
            return;
        const TimeNs s = t.start(i);
        if (s < firstBwd[k]) {
            ra.phases[li][i] = Phase::Forward;
            ++ra.phaseFromHeuristic;
        } else if (s < firstOpt[k]) {
            ra.phases[li][i] = Phase::Backward;
            ++ra.phaseFromHeuristic;
        }
    });
}

// Stage 5: the steps on the GPU's time axis (StepWindow::range, see steps.h). Only GPU work with a known launch
// places the windows: its launch call lies in a host step (that step's work), before the first host step, or
// between steps (neither). On a stream with known launches, a kernel without one that starts before the stream's first
// work launched inside the steps was launched before recording began (the pairing leaves exactly those unpaired):
// like work launched before the first step, it belongs to no step, and the first window starts after it. Copies
// without a known call are not taken as such (their calls often name no stream): they count where they run.
void placeStepsOnGpu(const Analysis& a, const Rank& rank, const detail::LaunchPairs& pairing, RankAnalysis& ra)
{
    if (ra.steps.empty())
        return;
    // Launches of copies alone (no kernel paired) do not say where the steps' GPU work ends.
    if (ra.stepSource == StepSource::KernelPattern || !ra.stepsByLaunch || ra.kernelsPaired == 0) {
        ra.stepAxis = ra.stepSource == StepSource::KernelPattern ? StepAxis::KernelPattern : StepAxis::Host;
        return;
    }
    ra.stepAxis = StepAxis::GpuByLaunch;
    const TimeNs none = std::numeric_limits<TimeNs>::min();
    const TimeNs firstHost = ra.steps.front().hostRange.start;
    std::vector<TimeNs> ownEnd(ra.steps.size(), none);
    TimeNs before = firstHost; // the first window's start
    for (std::size_t li = 0; li < rank.lanes.size(); ++li) {
        if (!rank.lanes[li].isGpu())
            continue;
        const auto& t = rank.lanes[li].intervals;
        auto isWork = [&](std::size_t i) { return detail::activityBits(a.names[t.name(i)], Phase::Unknown) != 0; };
        auto launchStart = [&](const LaunchRef* l) { return rank.lanes[l->cpuLane].intervals.start(l->interval); };
        TimeNs firstInSteps = std::numeric_limits<TimeNs>::max(); // start of the lane's first work launched in steps
        for (std::size_t i = 0; i < t.size(); ++i)
            if (const LaunchRef* l = launchOfInterval(pairing, li, i); l && isWork(i) && launchStart(l) >= firstHost) {
                firstInSteps = t.start(i);
                break;
            }
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (!isWork(i))
                continue;
            if (const LaunchRef* l = launchOfInterval(pairing, li, i)) {
                if (launchStart(l) < firstHost)
                    before = std::max(before, t.end(i));
                else if (const int k = ra.stepOf[li][i]; k >= 0)
                    ownEnd[std::size_t(k)] = std::max(ownEnd[std::size_t(k)], t.end(i));
            } else if (isKernel(a.names[t.name(i)].category) && firstInSteps != std::numeric_limits<TimeNs>::max()
                && t.start(i) < firstInSteps) {
                before = std::max(before, t.end(i)); // launched before recording began
            }
        }
    }
    TimeNs start = before;
    for (std::size_t k = 0; k < ra.steps.size(); ++k) {
        StepWindow& w = ra.steps[k];
        const TimeNs end = std::max(start, ownEnd[k] != none ? ownEnd[k] : w.hostRange.end);
        w.range = { start, end };
        start = end;
    }
}

// Stage 6: the rank's activity map over all its GPU lanes (Boost.ICL, fed in time chunks: see buildActivity) and
// the overlap segments read from it.
void buildRankActivity(const Analysis& a, const Rank& rank, RankAnalysis& ra)
{
    std::vector<detail::LaneSource> sources;
    detail::forEachGpuLane(rank, [&](std::size_t li, const Lane& lane) {
        const auto& t = lane.intervals;
        sources.push_back({ &t, li, nullptr, t.size() });
        for (std::size_t i = 0; i < t.size(); ++i)
            if (isKernel(a.names[t.name(i)].category) && ra.phases[li][i] == Phase::Unknown)
                ++ra.phaseUnknown;
    });
    // The mask of a name without its phase, looked up per interval (a NameClass is large; this is a byte).
    std::vector<std::uint8_t> nameBits(a.names.size());
    for (std::size_t id = 0; id < a.names.size(); ++id)
        nameBits[id] = detail::activityBits(a.names[id], Phase::Unknown);
    detail::Segments seg;
    std::size_t gpuIntervals = 0;
    for (const auto& src : sources)
        gpuIntervals += src.count;
    seg.start.reserve(gpuIntervals);
    seg.end.reserve(gpuIntervals);
    seg.mask.reserve(gpuIntervals);
    detail::buildActivity(
        sources,
        [&](std::size_t li, std::size_t i) {
            const std::uint8_t b = nameBits[rank.lanes[li].intervals.name(i)];
            return std::uint8_t(
                (b & ActivityCompute) && ra.phases[li][i] == Phase::Backward ? b | ActivityBackward : b);
        },
        { std::numeric_limits<TimeNs>::min(), std::numeric_limits<TimeNs>::max() }, seg);
    ra.activityStart = std::move(seg.start);
    ra.activityEnd = std::move(seg.end);
    ra.activityMask = std::move(seg.mask);
    ra.overlap.reserve(ra.activityStart.size());
    for (std::size_t k = 0; k < ra.activityStart.size(); ++k) {
        const TimeNs s = ra.activityStart[k], e = ra.activityEnd[k];
        const std::uint8_t mask = ra.activityMask[k];
        OverlapState st = OverlapState::Other;
        if ((mask & ActivityComm) && (mask & ActivityCompute))
            st = OverlapState::Hidden;
        else if (mask & ActivityComm)
            st = OverlapState::Exposed;
        else if (mask & ActivityCompute)
            st = OverlapState::ComputeOnly;
        if (!ra.overlap.empty() && ra.overlap.back().end == s && ra.overlap.back().state == st)
            ra.overlap.back().end = e;
        else
            ra.overlap.push_back({ s, e, st });
    }
}

// torch.nn.DataParallel's signature: copies between the GPUs of one process in (almost) every step, as it scatters
// the inputs and gathers the outputs; DistributedDataParallel has no such traffic.
void warnDataParallel(const Rank& rank, RankAnalysis& ra)
{
    if (ra.steps.size() < 2)
        return;
    std::vector<char> stepHasP2P(ra.steps.size(), 0);
    std::set<int> peers;
    for (std::size_t li = 0; li < rank.lanes.size() && li < ra.stepOf.size(); ++li)
        for (const auto& [interval, device] : rank.lanes[li].copyPeers) {
            peers.insert(device);
            peers.insert(rank.lanes[li].device);
            if (interval < ra.stepOf[li].size() && ra.stepOf[li][interval] >= 0)
                stepHasP2P[std::size_t(ra.stepOf[li][interval])] = 1;
        }
    const auto withP2P = std::size_t(std::count(stepHasP2P.begin(), stepHasP2P.end(), 1));
    if (peers.size() >= 2 && withP2P * 5 >= ra.steps.size() * 4)
        ra.warnings.push_back("peer-to-peer copies between " + std::to_string(peers.size()) + " GPUs in "
            + std::to_string(withP2P) + " of " + std::to_string(ra.steps.size())
            + " steps: the pattern of torch.nn.DataParallel (inputs scattered, outputs gathered "
              "every step); DistributedDataParallel avoids this traffic");
}

RankAnalysis analyzeRank(const Trace& trace, const Analysis& a, const Rank& rank)
{
    RankAnalysis ra;
    ra.stepSource = StepSource::None;
    detail::LaunchPairs pairing = detail::pairLaunches(trace, a, rank);
    const auto cpuPhase = launchPhases(a, rank, pairing, ra);
    phasesFromLaunchAndName(a, rank, pairing, cpuPhase, ra);
    // Steps: from step regions, else from the optimizer-kernel pattern.
    stepsFromRegions(trace, a, rank, ra);
    if (ra.steps.empty())
        stepsFromPattern(rank, a, ra);
    numberSteps(ra.steps);
    assignHostSteps(a, rank, pairing, ra);
    phasesFromStepHeuristic(a, rank, ra);
    placeStepsOnGpu(a, rank, pairing, ra);
    buildRankActivity(a, rank, ra);
    if (ra.phaseFromLaunch > 0)
        ra.phaseSource = PhaseSource::Launch;
    else if (ra.phaseFromName > 0)
        ra.phaseSource = PhaseSource::KernelName;
    else if (ra.phaseFromHeuristic > 0)
        ra.phaseSource = PhaseSource::StepHeuristic;
    warnDataParallel(rank, ra);
    ra.launchOf = std::move(pairing.launchOf);
    ra.launchCalls = detail::launchTable(a, rank, int(&rank - trace.ranks.data()), ra.launchOf);
    return ra;
}

} // namespace

std::shared_ptr<const Analysis> analyze(const Trace& trace, Rules rules)
{
    auto a = analyzeRanks(trace, std::move(rules));
    // A data-parallel run without a single recognised communication kernel is almost always a renamed NCCL kernel
    // counted as compute: say so loudly, with the rules in effect.
    if (trace.ranks.size() > 1 && !hasCommunicationKernel(trace, *a))
        warnNoCommunication(*a, trace.ranks.size());
    return a;
}

bool hasCommunicationKernel(const Trace& trace, const Analysis& analysis)
{
    for (const Rank& rank : trace.ranks)
        for (const Lane& lane : rank.lanes)
            for (std::size_t i = 0; lane.isGpu() && i < lane.intervals.size(); ++i)
                if (analysis.names[lane.intervals.name(i)].category == Category::Communication)
                    return true;
    return false;
}

void warnNoCommunication(Analysis& analysis, std::size_t runRanks)
{
    for (auto& ra : analysis.ranks)
        ra.warnings.push_back("no communication kernel recognised on any of the " + std::to_string(runRanks)
            + " ranks with " + analysis.rules.source()
            + ": if the NCCL/RCCL kernels have other names, add a rule (--extend-rules FILE)");
}

std::shared_ptr<Analysis> analyzeRanks(const Trace& trace, Rules rules, int threads)
{
    auto a = std::make_shared<Analysis>();
    a->rules = std::move(rules);

    // Classify each distinct name that some interval uses, once (regexes run per name, never per event).
    const std::size_t nNames = trace.strings.size();
    std::vector<char> used(nNames, 0);
    for (const Rank& r : trace.ranks)
        for (const Lane& l : r.lanes)
            for (std::size_t i = 0; i < l.intervals.size(); ++i)
                used[l.intervals.name(i)] = 1;
    a->names.resize(nNames);
    for (StringId id = 0; id < nNames; ++id) {
        if (used[id]) {
            a->names[id] = a->rules.classify(trace.name(id), trace.regionKind(id));
        } else {
            a->names[id].displayName = trace.name(id);
        }
    }

    // Ranks are independent: analyse them on up to hardware_concurrency threads.
    a->ranks.resize(trace.ranks.size());
    parallelFor(trace.ranks.size(), workerCount(trace.ranks.size(), threads),
        [&](std::size_t r) { a->ranks[r] = analyzeRank(trace, *a, trace.ranks[r]); });
    return a;
}

int stepOfInterval(const Trace&, const Analysis& analysis, IntervalRef ref)
{
    const auto& ra = analysis.ranks.at(std::size_t(ref.rank));
    if (std::size_t(ref.lane) >= ra.stepOf.size())
        return -1;
    const auto& so = ra.stepOf[std::size_t(ref.lane)];
    return ref.interval < so.size() ? so[ref.interval] : -1;
}

int stepAtTime(const std::vector<StepWindow>& steps, TimeNs t)
{
    // Ranges are contiguous and in order: the last step that starts at or before t, if t lies inside it.
    auto it = std::upper_bound(
        steps.begin(), steps.end(), t, [](TimeNs v, const StepWindow& w) { return v < w.range.start; });
    while (it != steps.begin()) {
        --it;
        if (it->range.contains(t))
            return int(it - steps.begin());
        if (!it->range.isEmpty())
            break; // an empty step (it launched no GPU work) may sit at the same start as the one holding t
    }
    return -1;
}

int findStep(const std::vector<StepWindow>& steps, std::string_view text)
{
    auto lower = [](std::string_view v) {
        std::string out(v);
        std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        return out;
    };
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    if (text.empty())
        return -1;
    const std::string want = lower(text);
    for (std::size_t k = 0; k < steps.size(); ++k)
        if (lower(steps[k].name) == want)
            return int(k);
    if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }) || text.size() > 9)
        return -1;
    const int number = std::stoi(std::string(text));
    for (std::size_t k = 0; k < steps.size(); ++k)
        if (steps[k].number == number)
            return int(k);
    return -1;
}

void numberSteps(std::vector<StepWindow>& steps)
{
    for (StepWindow& w : steps) {
        // "ProfilerStep#6" -> 6: the number recorded after the last '#', if only digits follow it; "step 6" (the
        // step lane of a Chrome timeline, from its events' `args.step`) -> 6.
        const std::size_t hash = w.name.rfind('#') != std::string::npos ? w.name.rfind('#')
            : w.name.rfind("step ", 0) == 0                             ? std::size_t(4)
                                                                        : std::string::npos;
        const std::size_t digits = hash == std::string::npos ? 0 : w.name.size() - hash - 1;
        const bool recorded = digits > 0 && digits <= 9
            && std::all_of(
                w.name.begin() + std::ptrdiff_t(hash + 1), w.name.end(), [](char c) { return c >= '0' && c <= '9'; });
        w.number = recorded ? std::stoi(w.name.substr(hash + 1)) : w.index;
    }
}

int stepIndexNamed(const Analysis& analysis, std::string_view text)
{
    for (const RankAnalysis& ra : analysis.ranks)
        if (const int k = findStep(ra.steps, text); k >= 0)
            return ra.steps[std::size_t(k)].index;
    return -1;
}

const char* stepAxisName(StepAxis a)
{
    static constexpr EnumName<StepAxis> names[] = { { StepAxis::GpuByLaunch, "gpu by launch" },
        { StepAxis::Host, "host" }, { StepAxis::KernelPattern, "kernel pattern" } };
    return nameIn(names, a, "none");
}

} // namespace exposure
