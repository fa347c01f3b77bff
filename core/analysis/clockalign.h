// SPDX-License-Identifier: GPL-3.0-or-later
// Clock alignment across hosts: ranks recorded on different hosts carry different clocks (NTP keeps them
// milliseconds apart; unsynchronised TSCs can be hours apart). The transfer of a collective that releases its members
// together (all-reduce, all-gather, reduce-scatter, all-to-all) begins on every member when the last one arrives, so
// the difference of two members' transfer starts is their clocks' offset. A transfer start is the last arrival's own
// start, or a member's end minus its own transfer time for that kind of collective (its duration where it arrived
// last). Where a member never arrived last, only end differences are left; they hold the members' systematic end
// skew (their places in the ring) as well as the offset, and the two cannot be told apart: the output says so. The
// estimate per pair of clock domains is the median (chained from the reference rank's domain along the
// best-supported pairs), its uncertainty the median's standard error from the median absolute deviation. Ranks of one
// recorded host share a clock and are never shifted against each other; an offset is applied when it exceeds 3
// uncertainties and the threshold (kSignificantOffsetNs, or kUnknownHostsOffsetNs where hosts are not recorded).
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

// Offsets below this are within the end jitter of collectives on one clock and are left as recorded (hosts known:
// ranks of one host share a clock and are never shifted against each other).
inline constexpr TimeNs kSignificantOffsetNs = 10'000;
// Where hosts are not recorded, each rank is its own clock domain, and an estimate is applied only beyond the end
// skew that the members of one collective show on one clock: on the real one-host H200 pairs, one rank ends up to
// 30 us after the other in every all-reduce (its place in the ring), which end times alone cannot tell from an
// offset. 100 us is three times that.
inline constexpr TimeNs kUnknownHostsOffsetNs = 100'000;

// The clock domains of the trace's ranks: one where a single file holds every rank, hosts where every rank records
// one, else one per rank. estimateClockOffsets uses the collectives only where there are two or more.
int clockDomainCount(const Trace& trace);

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

// The warning alignClocks gives where some ranks' clocks could not be tied to the reference rank's (empty if none).
std::string clockWarning(const Trace& trace);

// "clocks aligned across 2 hosts (offsets up to 5.00 ms, ±3 µs)" / "clocks as recorded (...)": one line for the
// text report and the GUI's status bar; empty for one rank.
std::string clockSummaryLine(const Trace& trace);

} // namespace exposure
