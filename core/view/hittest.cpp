// SPDX-License-Identifier: GPL-3.0-or-later
#include "view/hittest.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace exposure {

std::optional<std::size_t> HitTester::itemAt(const std::vector<DrawItem>& items, double x, double tolerancePx)
{
    if (items.empty())
        return std::nullopt;
    // Items are in start order; x0 is non-decreasing except for nested intervals, so scan from the
    // first item that could reach x. Draw lists are bounded by ~2 × width, so this is cheap.
    auto it = std::lower_bound(items.begin(), items.end(), x - tolerancePx - 1,
        [](const DrawItem& item, double v) { return double(item.x1) < v; });
    // lower_bound on x1 is only a hint (x1 is not sorted with nesting); step back a little.
    std::size_t from = std::size_t(it - items.begin());
    from = from > 64 ? from - 64 : 0;
    std::optional<std::size_t> best;
    double bestDist = std::numeric_limits<double>::max();
    for (std::size_t k = from; k < items.size(); ++k) {
        const DrawItem& item = items[k];
        if (double(item.x0) > x + tolerancePx)
            break;
        double dist = 0;
        if (x < item.x0)
            dist = item.x0 - x;
        else if (x >= item.x1)
            dist = x - item.x1 + 1; // pixel column x1 - 1 is the last covered one
        if (dist > tolerancePx)
            continue;
        if (dist <= bestDist) {
            bestDist = dist;
            best = k;
        }
    }
    return best;
}

std::optional<std::size_t> HitTester::intervalAt(const IntervalTable& table, TimeNs t, TimeNs toleranceNs)
{
    const std::size_t n = table.size();
    if (n == 0)
        return std::nullopt;
    std::size_t lo = table.lowerBoundStart(t - table.maxDuration() - toleranceNs);
    const std::size_t hi = table.lowerBoundStart(t + toleranceNs + 1);
    std::optional<std::size_t> best;
    TimeNs bestDist = std::numeric_limits<TimeNs>::max();
    int bestDepth = -1;
    for (std::size_t i = lo; i < hi; ++i) {
        const TimeNs s = table.start(i);
        const TimeNs e = table.end(i);
        TimeNs dist = 0;
        if (t < s)
            dist = s - t;
        else if (t >= e && !(s == e && t == s))
            dist = t - e + 1;
        if (dist > toleranceNs)
            continue;
        const int depth = table.depth(i);
        if (dist < bestDist || (dist == bestDist && depth >= bestDepth)) {
            bestDist = dist;
            bestDepth = depth;
            best = i;
        }
    }
    return best;
}

} // namespace exposure
