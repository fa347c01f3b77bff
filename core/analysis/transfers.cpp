// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/transfers.h"

#include "analysis/analysis.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace exposure {

std::vector<TransferRow> transfers(const Trace& trace, const Analysis& analysis, TimeRange window)
{
    std::vector<TransferRow> out;
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        forEachGpuInterval(trace.ranks[r], window, [&](std::size_t l, const Lane& lane, std::size_t i) {
            const auto& t = lane.intervals;
            const StringId id = t.name(i);
            if (id >= analysis.names.size() || analysis.names[id].category != Category::Memcpy)
                return;
            TransferRow row;
            row.ref = { int(r), int(l), std::uint32_t(i) };
            row.direction = analysis.names[id].subgroup.empty() ? std::string("copy") : analysis.names[id].subgroup;
            auto it = std::lower_bound(
                lane.copyBytes.begin(), lane.copyBytes.end(), std::make_pair(std::uint32_t(i), std::uint64_t(0)));
            if (it != lane.copyBytes.end() && it->first == i)
                row.bytes = it->second;
            row.start = t.start(i);
            row.durationNs = t.duration(i);
            row.step = stepOfInterval(trace, analysis, row.ref);
            out.push_back(std::move(row));
        });
    }
    return out;
}

std::vector<TransferSum> sumTransfers(const std::vector<TransferRow>& rows, bool perStep)
{
    std::map<std::tuple<int, int, std::string>, TransferSum> sums;
    for (const TransferRow& row : rows) {
        const int rank = perStep ? row.ref.rank : -1;
        const int step = perStep ? row.step : -1;
        TransferSum& s = sums[{ rank, step, row.direction }];
        s.rank = rank;
        s.step = step;
        s.direction = row.direction;
        ++s.count;
        s.bytes += row.bytes;
        s.timeNs += row.durationNs;
    }
    std::vector<TransferSum> out;
    out.reserve(sums.size());
    for (auto& [key, s] : sums)
        out.push_back(std::move(s));
    return out;
}

} // namespace exposure
