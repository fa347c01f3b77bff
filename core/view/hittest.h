// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "view/drawlist.h"

#include <cstddef>
#include <optional>
#include <vector>

namespace exposure {

// Finds what the user pointed at. Both functions are pure so that mouse handling is testable.
class HitTester
{
public:
    // Index into `items` of the item under pixel column `x` (relative to the view start), or the
    // nearest item whose edge lies within `tolerancePx`; ties go to the later (top-most drawn) item.
    static std::optional<std::size_t> itemAt(const std::vector<DrawItem>& items, double x, double tolerancePx);

    // Interval of `table` at time t: the deepest interval containing t, else the nearest one whose
    // edge is within toleranceNs. O(log n + overlapping intervals).
    static std::optional<std::size_t> intervalAt(const IntervalTable& table, TimeNs t, TimeNs toleranceNs);
};

} // namespace exposure
