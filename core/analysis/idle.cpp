// SPDX-License-Identifier: GPL-3.0-or-later
// The idle-time breakdown of a rank (see IdleBreakdown in analysis/statistics.h).
#include "analysis/analysis.h"
#include "model/timeformat.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace exposure {

namespace {

// Merged, sorted [start, end) spans of the regions of one CPU lane whose names satisfy `pick`.
template <typename Pick>
std::vector<std::pair<TimeNs, TimeNs>> spansOf(const IntervalTable& t, const Analysis& analysis, Pick pick)
{
    std::vector<std::pair<TimeNs, TimeNs>> out;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const StringId id = t.name(i);
        if (id >= analysis.names.size() || !pick(analysis.names[id]))
            continue;
        const TimeNs s = t.start(i), e = t.end(i);
        if (!out.empty() && s <= out.back().second)
            out.back().second = std::max(out.back().second, e);
        else
            out.emplace_back(s, e);
    }
    return out;
}

bool inside(const std::vector<std::pair<TimeNs, TimeNs>>& spans, TimeNs t)
{
    auto it = std::upper_bound(
        spans.begin(), spans.end(), t, [](TimeNs v, const std::pair<TimeNs, TimeNs>& s) { return v < s.first; });
    return it != spans.begin() && t < std::prev(it)->second;
}

TimeNs overlapWith(const std::vector<std::pair<TimeNs, TimeNs>>& spans, TimeNs a, TimeNs b)
{
    TimeNs sum = 0;
    auto it = std::upper_bound(
        spans.begin(), spans.end(), a, [](TimeNs v, const std::pair<TimeNs, TimeNs>& s) { return v < s.first; });
    if (it != spans.begin())
        --it;
    for (; it != spans.end() && it->first < b; ++it)
        sum += std::max<TimeNs>(0, std::min(b, it->second) - std::max(a, it->first));
    return sum;
}

} // namespace

namespace {

// Splits the gaps of one rank's GPU activity by cause (see IdleBreakdown).
class GapCauses
{
public:
    GapCauses(const Trace& trace, const Analysis& analysis, int rankIndex)
        : m_analysis(analysis)
        , m_rank(trace.ranks.at(std::size_t(rankIndex)))
        , m_ra(analysis.ranks.at(std::size_t(rankIndex)))
    { }

    // The gap [g0, g1) before the activity segment that starts at `next`, counted over its part `cut` (inside it).
    IdleGap attribute(TimeNs g0, TimeNs g1, TimeNs next, TimeRange cut)
    {
        IdleGap g;
        g.range = cut;
        const LaunchRef* l = launchAt(next);
        if (!l) {
            g.unattributedNs = cut.duration();
            return g;
        }
        g.launch = *l;
        const IntervalTable& t = m_rank.lanes[l->cpuLane].intervals;
        // [g0, hostEnd): the launching call had not returned yet; the rest of the gap the work was queued.
        const TimeNs hostEnd = g0 + std::clamp<TimeNs>(t.end(l->interval) - g0, 0, g1 - g0);
        const TimeNs host = TimeRange { g0, hostEnd }.intersected(cut).duration();
        g.queuedNs = cut.duration() - host;
        if (host > 0) {
            const CpuSpans& spans = spansFor(l->cpuLane);
            if (inside(spans.sync, g0)) {
                g.syncWaitNs = host;
            } else {
                g.hostBoundNs = host;
                g.dataLoadingNs = overlapWith(spans.loader, std::max(g0, cut.start), std::min(hostEnd, cut.end));
            }
        }
        g.cpuRegion = regionAt(l->cpuLane, g0);
        return g;
    }

private:
    struct CpuSpans
    {
        std::vector<std::pair<TimeNs, TimeNs>> sync, loader;
        // The enclosing interval of each (kNoParent at depth 0), where the lane is properly nested and its depths
        // are the nesting depths (every importer's CPU lanes are); empty otherwise.
        std::vector<std::uint32_t> parent;
    };
    static constexpr std::uint32_t kNoParent = 0xFFFFFFFFu;

    // Parents by a stack over the intervals in start order (parents first); empty if some interval outlasts the one
    // it starts in, or its depth is not the number of intervals around it (capped at 255 as the importers do).
    static std::vector<std::uint32_t> nestingParents(const IntervalTable& t)
    {
        std::vector<std::uint32_t> parent(t.size(), kNoParent);
        std::vector<std::uint32_t> open;
        for (std::size_t i = 0; i < t.size(); ++i) {
            while (!open.empty() && t.end(open.back()) <= t.start(i))
                open.pop_back();
            if ((!open.empty() && t.end(i) > t.end(open.back()))
                || t.depth(i) != std::min<std::size_t>(open.size(), 255))
                return {};
            parent[i] = open.empty() ? kNoParent : open.back();
            open.push_back(std::uint32_t(i));
        }
        return parent;
    }
    const CpuSpans& spansFor(std::uint32_t lane) // built for the launching threads only
    {
        auto it = m_cpu.find(lane);
        if (it == m_cpu.end()) {
            const IntervalTable& t = m_rank.lanes[lane].intervals;
            CpuSpans spans;
            spans.sync = spansOf(t, m_analysis, [](const NameClass& nc) { return nc.syncCall; });
            spans.loader = spansOf(t, m_analysis, [](const NameClass& nc) { return nc.dataLoader; });
            spans.parent = nestingParents(t);
            it = m_cpu.emplace(lane, std::move(spans)).first;
        }
        return it->second;
    }
    // The launch of the GPU work that starts at `t` (the end of a gap), if known.
    const LaunchRef* launchAt(TimeNs t) const
    {
        for (std::size_t li = 0; li < m_rank.lanes.size(); ++li) {
            if (!m_rank.lanes[li].isGpu() || li >= m_ra.launchOf.size())
                continue;
            const auto& tab = m_rank.lanes[li].intervals;
            for (std::size_t i = tab.lowerBoundStart(t); i < tab.size() && tab.start(i) == t; ++i)
                if (i < m_ra.launchOf[li].size() && m_ra.launchOf[li][i].cpuLane != kUnknownLaunch)
                    return &m_ra.launchOf[li][i];
        }
        return nullptr;
    }
    // The innermost region of a CPU lane that contains t: the deepest, the latest of equally deep ones.
    LaunchRef regionAt(std::uint32_t lane, TimeNs t)
    {
        const IntervalTable& tab = m_rank.lanes[lane].intervals;
        // Nested lane: every region that contains t encloses the last one that starts at or before t, so the
        // innermost is the first of that one's enclosing chain that ends after t (a walk of at most the depth).
        // Scanning back from t less the lane's longest region instead visited every region of a long step for each
        // gap, the largest cost of `stats` at 1 024 ranks.
        const std::vector<std::uint32_t>& parent = spansFor(lane).parent;
        if (!parent.empty()) {
            std::size_t i = tab.lowerBoundStart(t + 1);
            for (std::uint32_t k = i == 0 ? kNoParent : std::uint32_t(i - 1); k != kNoParent; k = parent[k])
                if (tab.end(k) > t)
                    return { lane, k };
            return { kUnknownLaunch, 0 };
        }
        LaunchRef best { kUnknownLaunch, 0 };
        int depth = -1;
        const TimeNs md = tab.maxDuration();
        for (std::size_t i = tab.lowerBoundStart(t - md); i < tab.size() && tab.start(i) <= t; ++i)
            if (tab.end(i) > t && int(tab.depth(i)) >= depth) {
                depth = tab.depth(i);
                best = { lane, std::uint32_t(i) };
            }
        return best;
    }

    const Analysis& m_analysis;
    const Rank& m_rank;
    const RankAnalysis& m_ra;
    std::map<std::uint32_t, CpuSpans> m_cpu;
};

// A rank's activity segments (sorted, disjoint), the first of them that ends after a window's start, and the causes
// of the gaps between them.
struct Activity
{
    Activity(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window)
        : causes(trace, analysis, rankIndex)
        , start(analysis.ranks.at(std::size_t(rankIndex)).activityStart)
        , end(analysis.ranks.at(std::size_t(rankIndex)).activityEnd)
        , mask(analysis.ranks.at(std::size_t(rankIndex)).activityMask)
        , first(std::size_t(std::upper_bound(end.begin(), end.end(), window.start) - end.begin()))
    { }

    GapCauses causes;
    const std::vector<TimeNs>& start;
    const std::vector<TimeNs>& end;
    const std::vector<std::uint8_t>& mask;
    std::size_t first;
};

} // namespace

std::vector<IdleGap> idleGaps(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window)
{
    std::vector<IdleGap> out;
    Activity a(trace, analysis, rankIndex, window);
    const auto& st = a.start;
    const auto& en = a.end;
    bool any = false;
    TimeNs busyEnd = 0;
    for (std::size_t k = a.first; k < st.size() && st[k] < window.end; ++k) {
        const TimeNs s = std::max(st[k], window.start), e = std::min(en[k], window.end);
        if (e <= s || a.mask[k] == 0)
            continue;
        if (any && s > busyEnd)
            out.push_back(a.causes.attribute(busyEnd, s, st[k], { busyEnd, s }));
        busyEnd = any ? std::max(busyEnd, e) : e;
        any = true;
    }
    return out;
}

std::vector<IdleGap> idleGapsCut(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window)
{
    std::vector<IdleGap> out;
    Activity a(trace, analysis, rankIndex, window);
    const auto& st = a.start;
    const auto& en = a.end;
    // The last busy segment that ends at or before the window's start bounds a gap reaching into the window.
    std::size_t before = a.first;
    while (before > 0 && a.mask[before - 1] == 0)
        --before;
    bool any = before > 0;
    TimeNs busyEnd = any ? en[before - 1] : 0;
    for (std::size_t k = a.first; k < st.size(); ++k) {
        if (a.mask[k] == 0)
            continue;
        if (any && st[k] > busyEnd) {
            const TimeRange part = TimeRange { busyEnd, st[k] }.intersected(window);
            if (!part.isEmpty())
                out.push_back(a.causes.attribute(busyEnd, st[k], st[k], part));
        }
        if (st[k] >= window.end)
            break;
        busyEnd = en[k];
        any = true;
    }
    return out;
}

IdleBreakdown sumIdleGaps(const std::vector<IdleGap>& gaps)
{
    IdleBreakdown out;
    for (const IdleGap& g : gaps) {
        ++out.gaps;
        out.hostBoundNs += g.hostBoundNs;
        out.syncWaitNs += g.syncWaitNs;
        out.queuedNs += g.queuedNs;
        out.unattributedNs += g.unattributedNs;
        out.dataLoadingNs += g.dataLoadingNs;
    }
    return out;
}

IdleBreakdown computeIdleBreakdown(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window)
{
    return sumIdleGaps(idleGaps(trace, analysis, rankIndex, window));
}

namespace {

// Counts one kernel of call `c` (first: the first of its kernels seen) into the diagnosis' call counts.
void countCall(LaunchDiagnosis& d, const LaunchCall& c, bool first)
{
    if (first) {
        ++d.calls;
        d.multiKernelCalls += c.kernels > 1 ? 1 : 0;
        d.graphLaunches += c.graph ? 1 : 0;
        d.maxKernelsPerCall = std::max(d.maxKernelsPerCall, c.kernels);
    }
    d.multiKernelKernels += c.kernels > 1 ? 1 : 0;
    d.graphKernels += c.graph ? 1 : 0;
}

} // namespace

LaunchDiagnosis diagnoseLaunches(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window)
{
    LaunchDiagnosis d;
    const Rank& rank = trace.ranks.at(std::size_t(rankIndex));
    const RankAnalysis& ra = analysis.ranks.at(std::size_t(rankIndex));
    std::vector<TimeNs> kernels, launches;
    std::uint64_t shorter = 0;
    std::vector<char> seen(ra.launchCalls.calls.size(), 0);
    for (std::size_t li = 0; li < rank.lanes.size() && li < ra.launchOf.size(); ++li) {
        const auto& t = rank.lanes[li].intervals;
        const auto& of = ra.launchOf[li];
        for (std::size_t i = t.lowerBoundStart(window.start); i < t.size() && i < of.size() && t.start(i) < window.end;
             ++i) {
            const Category cat = analysis.names[t.name(i)].category;
            if (of[i].cpuLane == kUnknownLaunch || (cat != Category::Compute && cat != Category::Communication))
                continue; // copies have calls too, but the diagnosis is about kernels
            if (const LaunchCall* c = ra.launchCalls.find(of[i])) {
                char& once = seen[std::size_t(c - ra.launchCalls.calls.data())];
                countCall(d, *c, once == 0);
                once = 1;
                if (c->graph)
                    continue; // replayed from a graph: its launch overhead is the graph's
            }
            const TimeNs k = t.duration(i);
            const TimeNs l = rank.lanes[of[i].cpuLane].intervals.duration(of[i].interval);
            kernels.push_back(k);
            launches.push_back(l);
            shorter += k < l ? 1 : 0;
        }
    }
    d.kernels = kernels.size();
    if (kernels.empty())
        return d;
    auto quantile = [](std::vector<TimeNs>& v, double q) {
        const std::size_t k = std::min(v.size() - 1, std::size_t(q * double(v.size())));
        std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(k), v.end());
        return v[k];
    };
    d.medianKernelNs = quantile(kernels, 0.5);
    d.p90KernelNs = quantile(kernels, 0.9);
    d.medianLaunchNs = quantile(launches, 0.5);
    d.p90LaunchNs = quantile(launches, 0.9);
    d.shorterThanLaunch = double(shorter) / double(d.kernels);
    if (window.duration() > 0)
        d.launchesPerSecond = double(d.kernels) / (double(window.duration()) / 1e9);
    return d;
}

namespace {

// "waits for Rank 1 in 65 % of its NCCL time (280.1 ms)" when waiting is the largest use of the rank's NCCL time
// (at least half of it: the rest is transfer), else "".
std::string peerWaitText(const WindowStats& stats, const PeerWait* peers)
{
    if (!peers || stats.commKernelSumNs <= 0 || peers->waitNs <= 0 || peers->waitNs * 2 < stats.commKernelSumNs)
        return {};
    const auto share = int(std::lround(100.0 * double(peers->waitNs) / double(stats.commKernelSumNs)));
    return "waits for " + (peers->mostWaitedFor.empty() ? std::string("peers") : peers->mostWaitedFor) + " in "
        + std::to_string(share) + " % of its NCCL time (" + formatDuration(peers->waitNs)
        + ": the rank that arrives last at the collectives; look at what delays it)";
}

} // namespace

std::string idleFinding(
    const WindowStats& stats, const IdleBreakdown& idle, const LaunchDiagnosis& launches, const PeerWait* peers)
{
    auto pct = [](double v) { return std::to_string(int(std::lround(v * 100))) + " %"; };
    if (stats.spanNs <= 0)
        return "no GPU activity in the window";
    const double idleShare = double(stats.idleNs) / double(stats.spanNs);
    const TimeNs total = std::max<TimeNs>(1, idle.totalNs());
    const std::string waiting = peerWaitText(stats, peers);
    if (idleShare < 0.05)
        return waiting.empty() ? "GPU idle " + pct(idleShare) + ": the GPU is kept busy (not launch-bound)"
                               : "GPU busy (idle " + pct(idleShare) + "), but it " + waiting;
    // Waiting for a peer longer than the GPU is idle is the finding; the idle causes follow without their hints.
    const bool waitFirst = !waiting.empty() && peers->waitNs >= stats.idleNs;
    std::string out = waitFirst ? "GPU " + waiting + "; idle " + pct(idleShare) : "GPU idle " + pct(idleShare);
    const std::pair<TimeNs, const char*> causes[] = { { idle.hostBoundNs, "waiting for the CPU to launch" },
        { idle.syncWaitNs, "waiting while the CPU blocked in a synchronising call" },
        { idle.queuedNs, "with work queued but not started" },
        { idle.unattributedNs, "before work without a known launch" } };
    const auto* top = &causes[0];
    for (const auto& c : causes)
        if (c.first > top->first)
            top = &c;
    out += ": " + pct(double(top->first) / double(total)) + " of it " + top->second;
    if (waitFirst)
        return out;
    if (top == &causes[0] && idle.dataLoadingNs * 2 > idle.hostBoundNs)
        out += " (mostly inside the data loader: more loader workers or pinned-memory prefetching usually help)";
    else if (top == &causes[0] && launches.graphKernels > 0) {
        // Graph replays already launch their kernels at once: the host is late between replays.
        out += "; " + std::to_string(launches.graphLaunches) + " CUDA graph launches replay "
            + pct(double(launches.graphKernels) / double(launches.graphKernels + launches.kernels))
            + " of the kernels (hint: the CPU is late between graph replays: eager work outside the graphs, "
              "e.g. the optimizer or input preparation, keeps the GPU waiting)";
    } else if (top == &causes[0]) {
        if (launches.kernels > 0)
            out += "; " + pct(launches.shorterThanLaunch) + " of kernels run shorter than their launch";
        out += " (hint: larger batches, CUDA graphs or torch.compile, i.e. fewer and larger kernels, usually help)";
    } else if (top == &causes[1]) {
        out += " (hint: avoid .item(), synchronize and blocking copies inside the training loop)";
    } else if (top == &causes[2]) {
        out += " (hint: look for dependencies between streams and event waits)";
    }
    if (!waiting.empty())
        out += "; it also " + waiting;
    return out;
}

} // namespace exposure
