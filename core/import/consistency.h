// SPDX-License-Identifier: GPL-3.0-or-later
// Readable but inconsistent data: what a trace's timestamps say that cannot be true of real hardware. Each finding
// is counted and reported as a warning in Trace::warnings (shown by info, stats and the GUI); a number changes only
// where one reading is clearly right, and the warning then says what was changed and by how much.
#pragma once

#include "model/trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace exposure {

struct ConsistencyReport
{
    // A kernel or copy that began before the previous one on its stream ended. Kept as recorded: a GPU may
    // legitimately start the next kernel early (programmatic dependent launch), and the analysis takes unions.
    std::uint64_t streamOverlaps = 0;
    TimeNs longestStreamOverlap = 0;
    // A kernel or copy whose end lies past the end of a later one on the same stream (a serial stream cannot
    // finish a later kernel first): a timing glitch that inflates maxima to seconds. Its end is clipped to the
    // start of the next one.
    std::uint64_t clippedEnds = 0;
    TimeNs clippedNs = 0; // total time removed
    TimeNs longestClippedNs = 0; // the largest single clip
    // Gaps of more than kClockJumpNs between consecutive events on one lane: the clock most likely jumped.
    std::uint64_t clockJumps = 0;
    TimeNs largestJumpNs = 0;
    // Ranks (of several) whose events do not overlap in time with any other rank's.
    std::uint64_t disjointRanks = 0;
    // checkLaneConsistency: each rank's rankSpan after the clipping, in rank order (its pass reads every interval).
    std::vector<TimeRange> rankSpans;
};

// A pause of an hour between two events on one lane of a training trace is taken for a jump of the clock.
inline constexpr TimeNs kClockJumpNs = 3600LL * 1'000'000'000LL;

// Checks every lane of a finalized trace, clips what has a sane reading, and appends one warning per lane and
// kind of finding (naming the archive or file, the lane, the count and the extent) to trace.warnings; then one
// warning per rank whose events overlap no other rank's (checkRankAlignment).
ConsistencyReport checkConsistency(Trace& trace);

// The two passes of checkConsistency, for a trace read in parts (exposure-mpi): the lane pass needs only the
// lane, the cross-rank pass only each rank's time span.
// checkLaneConsistency leaves disjointRanks 0; warningsPerRank (if given) gets the number of warnings it added for
// each rank, in rank order.
// Ranks are checked on `threads` threads (0: one per hardware thread), with the same result whatever their number.
ConsistencyReport checkLaneConsistency(
    Trace& trace, std::vector<std::size_t>* warningsPerRank = nullptr, int threads = 0);
// Returns the number of ranks warned about; `spans` (each rank's rankSpan, as checkLaneConsistency gives them) saves
// a pass over every interval.
std::uint64_t checkRankAlignment(Trace& trace, const std::vector<TimeRange>* spans = nullptr);
// First start to last end of a rank's intervals; start > end when it has none.
TimeRange rankSpan(const Rank& rank);
// Every rank's rankSpan, in rank order: `given` where it holds one per rank (checkLaneConsistency's), else computed
// (a pass over every interval, on all cores) into `computed`. Returns the one used.
const std::vector<TimeRange>& rankSpans(
    const Trace& trace, const std::vector<TimeRange>* given, std::vector<TimeRange>& computed);
// Indexes of the spans (ranks of a run, in order) that overlap no other non-empty span (none with fewer than two).
std::vector<std::size_t> unalignedRanks(const std::vector<TimeRange>& spans);
// The warning checkRankAlignment gives such a rank.
std::string unalignedRankWarning(const std::string& file, const std::string& rankLabel);

} // namespace exposure
