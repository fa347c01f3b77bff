// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "model/timerange.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exposure {

// Parses "1.5ms", "2s", "350us", "350µs", "120ns", "120" (ns), "-3ms". Returns nullopt on bad input.
std::optional<TimeNs> parseDuration(std::string_view text);

// Formats a duration with a unit chosen by magnitude: "812 ns", "3.25 µs", "12.5 ms", "1.204 s".
// `precision` is the number of significant digits kept (at least 3).
std::string formatDuration(TimeNs ns, int precision = 4);

// `v` with exactly `decimals` digits after the point ("%.*f"): the reports' ratios, shares and rates.
std::string formatFixed(double v, int decimals);

// {0, 1, 2, 3, 5} -> "0-3,5".
std::string formatRankList(std::vector<int> ranks);

} // namespace exposure
