// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <algorithm>
#include <cstdint>

namespace exposure {

// All times in the model are integer nanoseconds relative to the earliest event of the whole
// trace folder (so that they stay exact when converted to double for plotting).
using TimeNs = std::int64_t;

// Half-open [start, end) in nanoseconds.
struct TimeRange
{
    TimeNs start = 0;
    TimeNs end = 0;

    constexpr TimeNs duration() const { return end - start; }
    constexpr bool isEmpty() const { return end <= start; }
    constexpr bool contains(TimeNs t) const { return t >= start && t < end; }
    constexpr bool intersects(const TimeRange& o) const { return start < o.end && o.start < end; }
    constexpr TimeRange intersected(const TimeRange& o) const
    {
        return { std::max(start, o.start), std::max(std::max(start, o.start), std::min(end, o.end)) };
    }
    constexpr bool operator==(const TimeRange&) const = default;
};

} // namespace exposure
