// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "model/trace.h" // TimeNs, TimeRange (a bare "time.h" would find the C header)

#include <string>
#include <vector>

namespace exposure {

enum class TimeUnit { Auto, Nanoseconds, Microseconds, Milliseconds, Seconds };

// Tick placement and labels for a time axis in trace-relative nanoseconds.
namespace timeaxis {

// A "nice" step (1, 2 or 5 × 10^k ns, at least 1 ns) giving about targetTicks ticks over span.
double niceStep(double spanNs, int targetTicks);
// Tick positions (multiples of step) inside [from, to].
std::vector<double> ticks(double fromNs, double toNs, double stepNs);
// Unit used to label ticks spaced by stepNs (the largest unit in which the step is >= 0.1).
TimeUnit unitForStep(double stepNs);
const char* unitSuffix(TimeUnit unit); // "ns", "µs" (UTF-8), "ms", "s"
double unitScale(TimeUnit unit); // ns per unit
// Label of a tick: value in `unit` (Auto: chosen from the step) with just enough decimals for
// neighbouring ticks to differ, e.g. "0", "2.5 ms", "12.25 ms", "1.5 s".
std::string label(double tNs, double stepNs, TimeUnit unit = TimeUnit::Auto, bool withSuffix = true);

} // namespace timeaxis
} // namespace exposure
