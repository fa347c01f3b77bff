// SPDX-License-Identifier: GPL-3.0-or-later
// Per-name kernel table and per-rule usage: plain accumulations over the GPU intervals, keyed by StringId.
#include "analysis/analysis_p.h"
#include "analysis/gpuwork_p.h"

#include <algorithm>
#include <array>
#include <limits>
#include <unordered_map>

namespace exposure {

std::vector<KernelRow> kernelTable(const Trace& trace, const Analysis& analysis, TimeRange window, int rankIndex)
{
    struct Acc
    {
        KernelRow row;
        std::array<std::uint64_t, 4> phaseCount {};
    };
    std::unordered_map<StringId, Acc> byName;
    TimeNs gpuTotal = 0;
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        if (rankIndex >= 0 && int(r) != rankIndex)
            continue;
        detail::forEachGpuWork(trace, analysis, r, window, [&](StringId id, const NameClass& nc, TimeNs d, Phase p) {
            gpuTotal += d;
            auto [it, fresh] = byName.try_emplace(id);
            KernelRow& row = it->second.row;
            if (fresh)
                row.name = id;
            detail::addKernelInstance(row, fresh, nc, d);
            ++it->second.phaseCount[std::size_t(p)];
        });
    }
    std::vector<KernelRow> rows;
    rows.reserve(byName.size());
    for (auto& [id, acc] : byName) {
        KernelRow row = std::move(acc.row);
        row.meanNs = double(row.totalNs) / double(row.count);
        row.gpuShare = gpuTotal > 0 ? double(row.totalNs) / double(gpuTotal) : 0.0;
        // The phase most instances have; ties go to the earlier enum value (unknown first).
        const auto best = std::max_element(acc.phaseCount.begin(), acc.phaseCount.end());
        row.phase = Phase(best - acc.phaseCount.begin());
        rows.push_back(std::move(row));
    }
    std::sort(rows.begin(), rows.end(), [&](const KernelRow& a, const KernelRow& b) {
        if (a.totalNs != b.totalNs)
            return a.totalNs > b.totalNs;
        return trace.name(a.name) < trace.name(b.name);
    });
    return rows;
}

std::vector<RuleUsage> ruleUsage(const Trace& trace, const Analysis& analysis)
{
    // One entry per rule (index order) plus a last one for GPU intervals that no classification rule matched.
    // A rule counts the intervals for which it decided something: the category of a GPU interval, the name
    // phase of a kernel, or (for CPU intervals) its region phase, step or launch role.
    const std::size_t n = analysis.rules.rules().size();
    std::vector<RuleUsage> out(n + 1);
    for (std::size_t k = 0; k < n; ++k)
        out[k].rule = int(k);
    out[n].rule = -1;
    auto bump = [&](int rule, TimeNs d) {
        RuleUsage& u = rule >= 0 && std::size_t(rule) < n ? out[std::size_t(rule)] : out[n];
        ++u.count;
        u.timeNs += d;
    };
    for (const Rank& rank : trace.ranks) {
        for (const Lane& lane : rank.lanes) {
            const auto& t = lane.intervals;
            for (std::size_t i = 0; i < t.size(); ++i) {
                const NameClass& nc = analysis.names[t.name(i)];
                const TimeNs d = t.duration(i);
                if (lane.isGpu()) {
                    bump(nc.rule, d);
                    if (nc.phaseRule >= 0 && nc.namePhase != Phase::Unknown)
                        bump(nc.phaseRule, d);
                } else {
                    if (nc.phaseRule >= 0 && nc.regionPhase != Phase::Unknown)
                        bump(nc.phaseRule, d);
                    if (nc.stepRule >= 0)
                        bump(nc.stepRule, d);
                }
            }
        }
    }
    return out;
}

} // namespace exposure
