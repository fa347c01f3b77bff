// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/consistency.h"

#include "model/parallelfor.h"
#include "model/timeformat.h"

#include <algorithm>
#include <limits>
#include <string>

namespace exposure {

namespace {

bool isStreamWork(const Trace& trace, StringId name)
{
    const RegionKind k = trace.regionKind(name);
    return k == RegionKind::Kernel || k == RegionKind::Memcpy || k == RegionKind::Unknown;
}

std::string where(const Trace& trace, const Rank& rank, const Lane& lane)
{
    const std::string& file = rank.archivePath.empty() ? trace.sourcePath : rank.archivePath;
    return file + ": " + rank.label + " " + lane.name + ": ";
}

void add(ConsistencyReport& total, const ConsistencyReport& local)
{
    total.streamOverlaps += local.streamOverlaps;
    total.longestStreamOverlap = std::max(total.longestStreamOverlap, local.longestStreamOverlap);
    total.clippedEnds += local.clippedEnds;
    total.clippedNs += local.clippedNs;
    total.longestClippedNs = std::max(total.longestClippedNs, local.longestClippedNs);
    total.clockJumps += local.clockJumps;
    total.largestJumpNs = std::max(total.largestJumpNs, local.largestJumpNs);
}

// One rank's lanes: clips, counts and warns (into `warnings`); touches nothing of the trace but the rank's lanes.
ConsistencyReport checkRankLanes(const Trace& trace, Rank& rank, std::vector<std::string>& warnings, TimeRange& span)
{
    ConsistencyReport total;
    span = { std::numeric_limits<TimeNs>::max(), std::numeric_limits<TimeNs>::min() }; // rankSpan, after the clips
    for (auto& lane : rank.lanes) {
        auto& t = lane.intervals;
        ConsistencyReport local;
        if (lane.isGpu()) {
            // Walk the stream's work in start order, with the latest end seen so far.
            std::size_t open = t.size(); // the interval whose end is `reach`
            TimeNs reach = std::numeric_limits<TimeNs>::min();
            for (std::size_t i = 0; i < t.size(); ++i) {
                if (!isStreamWork(trace, t.name(i)))
                    continue;
                const TimeNs s = t.start(i), e = t.end(i);
                if (open < t.size() && s < reach) {
                    if (e <= reach && e > s) {
                        // `open` also covers all of i: no serial stream finishes a later kernel first.
                        const TimeNs cut = reach - s;
                        t.setEnd(open, s);
                        ++local.clippedEnds;
                        local.clippedNs += cut;
                        local.longestClippedNs = std::max(local.longestClippedNs, cut);
                        open = i;
                        reach = e;
                        continue;
                    }
                    if (e > reach) {
                        ++local.streamOverlaps;
                        local.longestStreamOverlap = std::max(local.longestStreamOverlap, reach - s);
                    }
                }
                if (open == t.size() || e > reach) {
                    open = i;
                    reach = e;
                }
            }
        }
        // Clock jumps: a gap of more than an hour between consecutive events of one lane.
        TimeNs lastEnd = std::numeric_limits<TimeNs>::min();
        for (std::size_t i = 0; i < t.size(); ++i) {
            const TimeNs start = t.start(i);
            if (lastEnd != std::numeric_limits<TimeNs>::min() && start - lastEnd > kClockJumpNs) {
                ++local.clockJumps;
                local.largestJumpNs = std::max(local.largestJumpNs, start - lastEnd);
            }
            span.start = std::min(span.start, start);
            lastEnd = std::max(lastEnd, t.end(i));
        }
        span.end = std::max(span.end, lastEnd);
        const std::string at = where(trace, rank, lane);
        if (local.clippedEnds)
            warnings.push_back(at + std::to_string(local.clippedEnds)
                + " kernels or copies end after a later one on the same stream has ended "
                  "(a timing glitch); their ends were clipped to the next one's start, "
                  "removing "
                + formatDuration(local.clippedNs) + " (the longest clip " + formatDuration(local.longestClippedNs)
                + ")");
        if (local.streamOverlaps)
            warnings.push_back(at + std::to_string(local.streamOverlaps)
                + " kernels or copies start before the previous one on the same stream "
                  "ended (by up to "
                + formatDuration(local.longestStreamOverlap) + "); kept as recorded");
        if (local.clockJumps)
            warnings.push_back(at + "the clock jumps forward " + std::to_string(local.clockJumps)
                + (local.clockJumps == 1 ? " time" : " times") + " (by up to " + formatDuration(local.largestJumpNs)
                + " between two events); times after a jump may not be comparable");
        add(total, local);
    }
    return total;
}

} // namespace

ConsistencyReport checkLaneConsistency(Trace& trace, std::vector<std::size_t>* warningsPerRank, int threads)
{
    // Ranks on several threads (serial, this was the largest serial stage of a 16-thread OTF2 load and 0.3-0.5 s at
    // 1 024 torch.profiler ranks); warnings and totals gathered in rank order, so nothing depends on the threads.
    const std::size_t ranks = trace.ranks.size();
    std::vector<ConsistencyReport> perRank(ranks);
    std::vector<std::vector<std::string>> warnings(ranks);
    std::vector<TimeRange> spans(ranks);
    parallelFor(ranks, workerCount(ranks, threads),
        [&](std::size_t r) { perRank[r] = checkRankLanes(trace, trace.ranks[r], warnings[r], spans[r]); });
    ConsistencyReport total;
    if (warningsPerRank)
        warningsPerRank->clear();
    for (std::size_t r = 0; r < ranks; ++r) {
        add(total, perRank[r]);
        trace.warnings.insert(trace.warnings.end(), warnings[r].begin(), warnings[r].end());
        if (warningsPerRank)
            warningsPerRank->push_back(warnings[r].size());
    }

    if (total.clippedEnds) {
        TimeNs last = trace.extent.start;
        for (const auto& rank : trace.ranks)
            for (const auto& lane : rank.lanes)
                for (std::size_t i = 0; i < lane.intervals.size(); ++i)
                    last = std::max(last, lane.intervals.end(i));
        trace.extent.end = last;
    }
    total.rankSpans = std::move(spans);
    return total;
}

TimeRange rankSpan(const Rank& rank)
{
    TimeRange r { std::numeric_limits<TimeNs>::max(), std::numeric_limits<TimeNs>::min() };
    for (const auto& lane : rank.lanes)
        for (std::size_t i = 0; i < lane.intervals.size(); ++i) {
            r.start = std::min(r.start, lane.intervals.start(i));
            r.end = std::max(r.end, lane.intervals.end(i));
        }
    return r;
}

std::vector<std::size_t> unalignedRanks(const std::vector<TimeRange>& spans)
{
    std::vector<std::size_t> out;
    if (spans.size() < 2)
        return out;
    for (std::size_t a = 0; a < spans.size(); ++a) {
        if (spans[a].start > spans[a].end)
            continue;
        bool overlapsAny = false, anyOther = false;
        for (std::size_t b = 0; b < spans.size() && !overlapsAny; ++b) {
            if (a == b || spans[b].start > spans[b].end)
                continue;
            anyOther = true;
            overlapsAny = spans[a].start < spans[b].end && spans[b].start < spans[a].end;
        }
        if (anyOther && !overlapsAny)
            out.push_back(a);
    }
    return out;
}

std::string unalignedRankWarning(const std::string& file, const std::string& rankLabel)
{
    return file + ": " + rankLabel
        + ": its events do not overlap in time with any other rank's; its clock "
          "is probably not aligned with theirs (timeline positions and collective "
          "matching across ranks are unreliable)";
}

const std::vector<TimeRange>& rankSpans(
    const Trace& trace, const std::vector<TimeRange>* given, std::vector<TimeRange>& computed)
{
    if (given && given->size() == trace.ranks.size())
        return *given;
    computed.assign(trace.ranks.size(), TimeRange {});
    parallelFor(
        computed.size(), workerCount(computed.size()), [&](std::size_t r) { computed[r] = rankSpan(trace.ranks[r]); });
    return computed;
}

std::uint64_t checkRankAlignment(Trace& trace, const std::vector<TimeRange>* given)
{
    std::vector<TimeRange> computed;
    const auto unaligned = unalignedRanks(rankSpans(trace, given, computed));
    for (const std::size_t a : unaligned) {
        const auto& rank = trace.ranks[a];
        trace.warnings.push_back(
            unalignedRankWarning(rank.archivePath.empty() ? trace.sourcePath : rank.archivePath, rank.label));
    }
    return unaligned.size();
}

ConsistencyReport checkConsistency(Trace& trace)
{
    ConsistencyReport total = checkLaneConsistency(trace);
    total.disjointRanks = checkRankAlignment(trace, &total.rankSpans);
    return total;
}

} // namespace exposure
