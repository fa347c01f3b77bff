// SPDX-License-Identifier: GPL-3.0-or-later
// Which CPU call launched each GPU interval of a rank: by identity where the trace has correlation ids
// (torch.profiler), else by the order of the launches that reference each stream (Score-P), one kernel per launch.
// Then the same pairing by call (LaunchTable): what each call launched.
#include "analysis/analysis_p.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <tuple>

namespace exposure {

namespace detail {

namespace {

// The in-order pairing of a rank whose trace carries no correlation ids.
struct InOrder
{
    const Trace& trace;
    const Analysis& analysis;
    const Rank& rank;
    LaunchPairs& out;

    std::size_t laneCount() const { return rank.lanes.size(); }

    bool validCall(const LaunchRef& l) const
    {
        return l.cpuLane < laneCount() && !rank.lanes[l.cpuLane].isGpu()
            && l.interval < rank.lanes[l.cpuLane].intervals.size();
    }
    bool isKernelLaunch(const LaunchRef& l) const
    {
        if (!validCall(l))
            return false;
        const StringId id = rank.lanes[l.cpuLane].intervals.name(l.interval);
        return id < analysis.names.size() && analysis.names[id].kernelLaunch;
    }
    std::size_t kernelCount(const Lane& lane) const
    {
        std::size_t n = 0;
        for (std::size_t i = 0; i < lane.intervals.size(); ++i)
            n += isKernel(analysis.names[lane.intervals.name(i)].category) ? 1 : 0;
        return n;
    }
    TimeNs launchStartOf(const LaunchRef& l) const { return rank.lanes[l.cpuLane].intervals.start(l.interval); }

    // Pairs the lane's kernels with `launches` in order. With equal counts, one to one. Otherwise a kernel takes the
    // next launch only if that launch began before the kernel started: kernels launched before the trace began and
    // launches whose kernels never ran (the trace ended first) stay unpaired. Returns how many kernels were paired.
    std::size_t pairLane(std::size_t li, const std::vector<LaunchRef>& launches)
    {
        const auto& t = rank.lanes[li].intervals;
        auto& v = out.launchOf[li];
        v.assign(t.size(), LaunchRef { kNoLane, 0 });
        const bool exact = launches.size() == kernelCount(rank.lanes[li]);
        std::size_t k = 0, paired = 0;
        for (std::size_t i = 0; i < t.size() && k < launches.size(); ++i) {
            if (!isKernel(analysis.names[t.name(i)].category))
                continue;
            const LaunchRef& l = launches[k];
            if (!exact && l.cpuLane != kNoLane && launchStartOf(l) > t.start(i))
                continue; // this kernel began before the next launch: its own launch is not in the trace
            v[i] = l;
            ++k;
            paired += l.cpuLane != kNoLane ? 1 : 0;
        }
        return paired;
    }

    // Copies and memsets take the copy calls (NameClass::copyCall: cudaMemcpy*, cuMemcpy*, cudaMemset* ...) that
    // reference their stream, in order, each only a call that began before it; what they feed is what the idle
    // breakdown attributes gaps to.
    void pairCopies()
    {
        for (std::size_t li = 0; li < laneCount(); ++li) {
            const Lane& lane = rank.lanes[li];
            if (!lane.isGpu() || lane.launches.empty())
                continue;
            std::vector<LaunchRef> calls;
            for (const LaunchRef& l : lane.launches) {
                if (l.cpuLane == kUnknownLaunch || !validCall(l))
                    continue;
                if (analysis.names[rank.lanes[l.cpuLane].intervals.name(l.interval)].copyCall)
                    calls.push_back(l);
            }
            if (calls.empty())
                continue;
            const auto& t = lane.intervals;
            auto& v = out.launchOf[li];
            if (v.empty())
                v.assign(t.size(), LaunchRef { kNoLane, 0 });
            std::size_t k = 0;
            for (std::size_t i = 0; i < t.size() && k < calls.size(); ++i) {
                if (analysis.names[t.name(i)].category != Category::Memcpy)
                    continue;
                if (launchStartOf(calls[k]) > t.start(i))
                    continue; // copied before its call was recorded
                v[i] = calls[k++];
            }
        }
    }

    struct LaneTally
    {
        std::size_t withKernels = 0, lastKernelLane = 0, paired = 0, partly = 0, unpaired = 0;
    };

    // 1. Each stream's kernels with the kernel-launch records that reference it, in order.
    LaneTally byStreamReferences()
    {
        LaneTally n;
        for (std::size_t li = 0; li < laneCount(); ++li) {
            const Lane& lane = rank.lanes[li];
            const std::size_t kernels = lane.isGpu() ? kernelCount(lane) : 0;
            if (kernels == 0)
                continue;
            ++n.withKernels;
            n.lastKernelLane = li;
            // Placeholders for kernels whose launch is unknown keep the others in place (kNoLane: left unpaired).
            std::vector<LaunchRef> launches;
            for (const LaunchRef& l : lane.launches)
                if (l.cpuLane == kUnknownLaunch)
                    launches.push_back(LaunchRef { kNoLane, 0 });
                else if (isKernelLaunch(l))
                    launches.push_back(l);
            if (launches.empty()) {
                ++n.unpaired; // a trace without launch records for this stream
                continue;
            }
            const std::size_t paired = pairLane(li, launches);
            out.kernelsPaired += paired;
            out.kernelsUnpaired += kernels - paired;
            if (paired == kernels) {
                ++n.paired;
            } else {
                ++n.partly;
                out.warnings.push_back(lane.name + ": " + std::to_string(paired) + " of " + std::to_string(kernels)
                    + " kernels paired with one of the " + std::to_string(launches.size())
                    + " launches that reference this stream");
            }
        }
        return n;
    }

    // 2. A single stream whose launches are not all referenced (Score-P writes no reference on cuLaunchKernelEx):
    // every kernel-launch call of the rank, in time order. False when that does not apply.
    bool byLaunchOrder(const LaneTally& n)
    {
        if (n.withKernels != 1 || (n.unpaired != 1 && n.partly != 1))
            return false;
        std::vector<LaunchRef> all;
        for (std::size_t li = 0; li < laneCount(); ++li) {
            const Lane& lane = rank.lanes[li];
            for (std::size_t i = 0; !lane.isGpu() && i < lane.intervals.size(); ++i)
                if (analysis.names[lane.intervals.name(i)].kernelLaunch)
                    all.push_back({ std::uint32_t(li), std::uint32_t(i) });
        }
        const std::size_t kernels = kernelCount(rank.lanes[n.lastKernelLane]);
        if (all.empty() || (n.unpaired != 1 && all.size() != kernels))
            return false;
        std::stable_sort(all.begin(), all.end(),
            [&](const LaunchRef& x, const LaunchRef& y) { return launchStartOf(x) < launchStartOf(y); });
        out.warnings.clear();
        const std::size_t paired = pairLane(n.lastKernelLane, all);
        out.kernelsPaired = paired;
        out.kernelsUnpaired = kernels - paired;
        out.method = exposure::LaunchPairing::LaunchOrder;
        if (paired < kernels)
            out.warnings.push_back(rank.lanes[n.lastKernelLane].name + ": " + std::to_string(paired) + " of "
                + std::to_string(kernels) + " kernels paired with the rank's " + std::to_string(all.size())
                + " kernel-launch calls in time order");
        return true;
    }

    void run()
    {
        const LaneTally n = byStreamReferences();
        if (!byLaunchOrder(n)) {
            for (std::size_t li = 0; li < laneCount(); ++li)
                if (rank.lanes[li].isGpu() && out.launchOf[li].empty())
                    out.kernelsUnpaired += kernelCount(rank.lanes[li]);
            if (n.paired + n.partly > 0)
                out.method = n.partly > 0 || n.unpaired > 0 ? exposure::LaunchPairing::StreamReferencesPartly
                                                            : exposure::LaunchPairing::StreamReferences;
            else
                out.method = exposure::LaunchPairing::None;
        }
        pairCopies();
    }
};

bool hasCorrelationIds(const Rank& rank)
{
    return std::any_of(
        rank.lanes.begin(), rank.lanes.end(), [](const Lane& l) { return l.isGpu() && !l.launchByInterval.empty(); });
}

// By identity: each GPU interval's call is the one with its correlation id, however many intervals that call
// launched. Kernels without a call in the trace stay unpaired (the importer has said how many).
void byCorrelationIds(const Analysis& analysis, const Rank& rank, LaunchPairs& out)
{
    out.method = exposure::LaunchPairing::CorrelationIds;
    detail::forEachGpuLane(rank, [&](std::size_t li, const Lane& lane) {
        const auto& t = lane.intervals;
        auto& v = out.launchOf[li];
        if (!lane.launchByInterval.empty()) {
            v.assign(t.size(), LaunchRef { kNoLane, 0 });
            for (std::size_t i = 0; i < t.size() && i < lane.launchByInterval.size(); ++i) {
                const LaunchRef& l = lane.launchByInterval[i];
                if (l.cpuLane < rank.lanes.size() && !rank.lanes[l.cpuLane].isGpu()
                    && l.interval < rank.lanes[l.cpuLane].intervals.size())
                    v[i] = l;
            }
        }
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (!isKernel(analysis.names[t.name(i)].category))
                continue;
            const bool paired = !v.empty() && v[i].cpuLane != kNoLane;
            ++(paired ? out.kernelsPaired : out.kernelsUnpaired);
        }
    });
}

} // namespace

LaunchPairs pairLaunches(const Trace& trace, const Analysis& analysis, const Rank& rank)
{
    LaunchPairs out;
    out.launchOf.resize(rank.lanes.size());
    if (hasCorrelationIds(rank))
        byCorrelationIds(analysis, rank, out);
    else
        InOrder { trace, analysis, rank, out }.run();
    return out;
}

LaunchTable launchTable(
    const Analysis& analysis, const Rank& rank, int rankIndex, const std::vector<std::vector<LaunchRef>>& launchOf)
{
    struct Item
    {
        LaunchRef call;
        TimeNs start;
        IntervalRef work;
    };
    std::vector<Item> items;
    for (std::size_t li = 0; li < launchOf.size() && li < rank.lanes.size(); ++li)
        for (std::size_t i = 0; i < launchOf[li].size(); ++i)
            if (launchOf[li][i].cpuLane != kNoLane)
                items.push_back({ launchOf[li][i], rank.lanes[li].intervals.start(i),
                    IntervalRef { rankIndex, int(li), std::uint32_t(i) } });
    auto key = [](const Item& x) {
        return std::make_tuple(x.call.cpuLane, x.call.interval, x.start, x.work.lane, x.work.interval);
    };
    std::sort(items.begin(), items.end(), [&](const Item& x, const Item& y) { return key(x) < key(y); });
    LaunchTable table;
    table.work.reserve(items.size());
    for (const Item& it : items) {
        if (table.calls.empty() || table.calls.back().call.cpuLane != it.call.cpuLane
            || table.calls.back().call.interval != it.call.interval) {
            LaunchCall c;
            c.call = it.call;
            c.firstWork = std::uint32_t(table.work.size());
            const StringId name = rank.lanes[it.call.cpuLane].intervals.name(it.call.interval);
            c.graph = name < analysis.names.size() && analysis.names[name].graphLaunch;
            table.calls.push_back(c);
        }
        LaunchCall& c = table.calls.back();
        ++c.workCount;
        const StringId kname = rank.lanes[std::size_t(it.work.lane)].intervals.name(it.work.interval);
        c.kernels += isKernel(analysis.names[kname].category) ? 1 : 0;
        table.work.push_back(it.work);
    }
    return table;
}

} // namespace detail

const LaunchCall* LaunchTable::find(LaunchRef call) const
{
    auto it = std::lower_bound(calls.begin(), calls.end(), call, [](const LaunchCall& c, const LaunchRef& r) {
        return c.call.cpuLane != r.cpuLane ? c.call.cpuLane < r.cpuLane : c.call.interval < r.interval;
    });
    return it != calls.end() && it->call.cpuLane == call.cpuLane && it->call.interval == call.interval ? &*it : nullptr;
}

std::vector<std::pair<std::uint32_t, std::uint64_t>> LaunchTable::kernelsPerCall() const
{
    std::map<std::uint32_t, std::uint64_t> n;
    for (const LaunchCall& c : calls)
        if (c.kernels > 0)
            ++n[c.kernels];
    return { n.begin(), n.end() };
}

std::optional<WorkLaunch> launchOfWork(const Analysis& analysis, IntervalRef gpu)
{
    if (gpu.rank < 0 || std::size_t(gpu.rank) >= analysis.ranks.size())
        return std::nullopt;
    const RankAnalysis& ra = analysis.ranks[std::size_t(gpu.rank)];
    if (gpu.lane < 0 || std::size_t(gpu.lane) >= ra.launchOf.size()
        || gpu.interval >= ra.launchOf[std::size_t(gpu.lane)].size())
        return std::nullopt;
    const LaunchCall* c = ra.launchCalls.find(ra.launchOf[std::size_t(gpu.lane)][gpu.interval]);
    if (!c)
        return std::nullopt;
    WorkLaunch w;
    w.call = { gpu.rank, int(c->call.cpuLane), c->call.interval };
    w.graph = c->graph;
    w.nodes = c->workCount;
    for (std::uint32_t k = 0; k < c->workCount; ++k)
        if (ra.launchCalls.work[c->firstWork + k] == gpu)
            w.node = k;
    return w;
}

} // namespace exposure
