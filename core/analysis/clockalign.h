// SPDX-License-Identifier: GPL-3.0-or-later
// Clock alignment across hosts: ranks recorded on different hosts carry different clocks (NTP keeps them
// milliseconds apart; unsynchronised TSCs can be hours apart). A collective ends at nearly the same moment on all
// of its members (the last arrival releases everyone), so the end-time differences of matched collectives measure
// the clock offset between two members' hosts. The estimate is the median of those differences (per pair of
// clock domains, chained from the reference rank's domain along the best-supported pairs), its uncertainty the
// median's standard error from the median absolute deviation. An offset is applied (subtracted from the rank's
// recorded times) when it exceeds both 3 uncertainties and kSignificantOffsetNs.
#pragma once

#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "model/trace.h"

#include <memory>

namespace exposure {

enum class ClockMode : std::uint8_t {
    Recorded, // keep the recorded times (offsets are still estimated and reported, not applied)
    Aligned, // apply significant offsets
};

// Offsets below this are within the end jitter of collectives on one clock and are left as recorded.
inline constexpr TimeNs kSignificantOffsetNs = 10'000;

// The offsets of every rank against the reference rank (index 0) from the collectives matched by identity
// (process group or stream); nothing is applied. Ranks on one recorded host share a clock.
ClockAlignment estimateClockOffsets(const Trace& trace, const CollectiveMatch& match, ClockMode mode);

// Subtracts each rank's offsetNs from all its times, rebases the trace to start at 0 and stores `clocks` in
// trace.clocks. Per-rank durations, sums and counts are unchanged.
void applyClockOffsets(Trace& trace, const ClockAlignment& clocks);

struct AlignedRun
{
    std::shared_ptr<const Analysis> analysis; // of the trace as it is now (re-analysed when shifted)
    std::shared_ptr<const CollectiveMatch> collectives; // matched on those times
};

// The loading pipeline's alignment stage: matches the collectives, estimates the offsets, applies them when
// `mode` is Aligned and some offset is significant, re-analyses and re-matches the shifted trace (same rules), and
// appends matchWarning() to trace.warnings when it has something to say. trace.clocks says what was done.
AlignedRun alignClocks(Trace& trace, std::shared_ptr<const Analysis> analysis, ClockMode mode);

// "clocks aligned across 2 hosts (offsets up to 5.00 ms, ±3 µs)" / "clocks as recorded (...)": one line for the
// text report and the GUI's status bar; empty for one rank.
std::string clockSummaryLine(const Trace& trace);

} // namespace exposure
