// SPDX-License-Identifier: GPL-3.0-or-later
#include "view/drawlist.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace exposure {

namespace {

bool isLow(const std::vector<std::uint8_t>* low, StringId name)
{
    return low && name < low->size() && (*low)[name] != 0;
}

// Does candidate (duration, low priority) beat the current representative? Strictly, so that the
// earliest of equals stays, exactly as the linear walk does.
bool beats(TimeNs candDur, bool candLow, TimeNs curDur, bool curLow)
{
    if (candLow != curLow)
        return !candLow;
    return candDur > curDur;
}

} // namespace

void LodIndex::build(const IntervalTable& table, const std::vector<std::uint8_t>* lowPriority)
{
    m_levels.clear();
    m_count = table.size();
    m_lowPriority = lowPriority;
    const std::size_t n = table.size();
    if (n < kBaseBlock)
        return;
    // Level 0 straight from the table.
    std::vector<Node> level(n / kBaseBlock);
    for (std::size_t b = 0; b < level.size(); ++b) {
        const std::size_t first = b * kBaseBlock;
        Node node { table.end(first), table.duration(first), std::uint32_t(first) };
        TimeNs bestDur = node.maxDuration;
        bool bestLow = isLow(lowPriority, table.name(first));
        for (std::size_t i = first + 1; i < first + kBaseBlock; ++i) {
            const TimeNs d = table.duration(i);
            node.maxEnd = std::max(node.maxEnd, table.start(i) + d);
            node.maxDuration = std::max(node.maxDuration, d);
            const bool low = isLow(lowPriority, table.name(i));
            if (beats(d, low, bestDur, bestLow)) {
                bestDur = d;
                bestLow = low;
                node.longest = std::uint32_t(i);
            }
        }
        level[b] = node;
    }
    m_levels.push_back(std::move(level));
    // Higher levels pair up the blocks below.
    while (m_levels.back().size() >= 2) {
        const auto& below = m_levels.back();
        std::vector<Node> up(below.size() / 2);
        for (std::size_t b = 0; b < up.size(); ++b) {
            const Node& l = below[2 * b];
            const Node& r = below[2 * b + 1];
            up[b].maxEnd = std::max(l.maxEnd, r.maxEnd);
            up[b].maxDuration = std::max(l.maxDuration, r.maxDuration);
            up[b].longest = beats(table.duration(r.longest), isLow(lowPriority, table.name(r.longest)),
                                table.duration(l.longest), isLow(lowPriority, table.name(l.longest)))
                ? r.longest
                : l.longest;
        }
        m_levels.push_back(std::move(up));
    }
}

std::size_t LodIndex::residentBytes() const
{
    std::size_t n = 0;
    for (const auto& l : m_levels)
        n += l.capacity() * sizeof(Node);
    return n;
}

namespace {

// Number of LOD levels whose blocks start exactly at interval i (0 when i is not block aligned).
std::size_t alignedLevels(const LodIndex& lod, std::size_t i)
{
    if (i % LodIndex::kBaseBlock != 0)
        return 0;
    const std::size_t block = i / LodIndex::kBaseBlock;
    if (block == 0)
        return lod.levelCount();
    return std::min<std::size_t>(lod.levelCount(), std::size_t(std::countr_zero(block)) + 1);
}

} // namespace

std::size_t DrawListBuilder::firstVisible(const IntervalTable& table, const LodIndex* lod, TimeNs t0)
{
    const std::size_t n = table.size();
    // Nothing that starts before t0 - maxDuration can still be running at t0.
    std::size_t i = table.lowerBoundStart(t0 - table.maxDuration());
    while (i < n) {
        if (table.start(i) >= t0)
            return i;
        // Skip whole blocks that end by t0 (only matters when one very long interval makes the
        // maxDuration bound useless, e.g. a CPU "main" region).
        bool skipped = false;
        if (lod && lod->intervalCount() == n) {
            for (std::size_t level = alignedLevels(*lod, i); level-- > 0;) {
                const std::size_t size = lod->blockSize(level);
                if (i + size > n)
                    continue;
                const auto& node = lod->node(level, i / size);
                if (node.maxEnd <= t0 && table.start(i + size - 1) < t0) {
                    i += size;
                    skipped = true;
                    break;
                }
            }
        }
        if (skipped)
            continue;
        if (table.end(i) > t0)
            return i;
        ++i;
    }
    return n;
}

namespace {

struct PixelMap
{
    TimeNs t0;
    double nsPerPixel;
    double maxColumn;
    int column(TimeNs t) const
    {
        const double x = std::floor(double(t - t0) / nsPerPixel);
        return int(std::clamp(x, -1.0, maxColumn));
    }
};

} // namespace

void DrawListBuilder::build(
    const IntervalTable& table, const LodIndex* lod, const DrawListParams& p, std::vector<DrawItem>& out)
{
    out.clear();
    const std::size_t n = table.size();
    if (n == 0 || p.t1 <= p.t0 || !(p.nsPerPixel > 0))
        return;
    if (lod && (lod->intervalCount() != n || lod->lowPriority() != p.lowPriority))
        lod = nullptr; // stale or differently built index: fall back to the exact linear walk
    const double threshold = p.minPixels * p.nsPerPixel;
    const PixelMap map { p.t0, p.nsPerPixel, std::ceil(double(p.t1 - p.t0) / p.nsPerPixel) + 1 };

    auto emit = [&](std::size_t first, std::size_t count, std::size_t largest, TimeNs start, TimeNs end) {
        DrawItem item;
        item.x0 = map.column(start);
        item.x1 = std::max(item.x0 + 1, map.column(end));
        item.first = std::uint32_t(first);
        item.count = std::uint32_t(count);
        item.largest = std::uint32_t(largest);
        item.start = start;
        item.end = end;
        out.push_back(item);
    };

    std::size_t i = firstVisible(table, lod, p.t0);
    while (i < n && table.start(i) < p.t1) {
        const TimeNs s = table.start(i);
        const TimeNs d = table.duration(i);
        const TimeNs e = s + d;
        if (e <= p.t0 && s < p.t0) { // nested leftovers that ended before the view
            ++i;
            continue;
        }
        if (double(d) >= threshold) {
            emit(i, 1, i, s, e);
            ++i;
            continue;
        }
        // A run of narrow intervals.
        const std::size_t first = i;
        std::size_t count = 1;
        std::size_t largest = i;
        TimeNs largestDur = d;
        bool largestLow = isLow(p.lowPriority, table.name(i));
        TimeNs runEnd = e;
        ++i;
        while (i < n) {
            if (lod) {
                // Swallow the largest aligned block whose intervals are all narrow and all start
                // close enough to the run: the linear walk would take every one of them.
                bool took = false;
                for (std::size_t level = alignedLevels(*lod, i); level-- > 0;) {
                    const std::size_t size = lod->blockSize(level);
                    if (i + size > n)
                        continue;
                    const TimeNs lastStart = table.start(i + size - 1);
                    if (lastStart >= p.t1 || double(lastStart - runEnd) >= threshold)
                        continue;
                    const auto& node = lod->node(level, i / size);
                    if (double(node.maxDuration) >= threshold)
                        continue;
                    runEnd = std::max(runEnd, node.maxEnd);
                    const TimeNs repDur = table.duration(node.longest);
                    const bool repLow = isLow(p.lowPriority, table.name(node.longest));
                    if (beats(repDur, repLow, largestDur, largestLow)) {
                        largestDur = repDur;
                        largestLow = repLow;
                        largest = node.longest;
                    }
                    count += size;
                    i += size;
                    took = true;
                    break;
                }
                if (took)
                    continue;
            }
            const TimeNs s2 = table.start(i);
            if (s2 >= p.t1 || double(s2 - runEnd) >= threshold)
                break;
            const TimeNs d2 = table.duration(i);
            if (double(d2) >= threshold)
                break;
            runEnd = std::max(runEnd, s2 + d2);
            const bool low2 = isLow(p.lowPriority, table.name(i));
            if (beats(d2, low2, largestDur, largestLow)) {
                largestDur = d2;
                largestLow = low2;
                largest = i;
            }
            ++count;
            ++i;
        }
        emit(first, count, largest, s, runEnd);
    }
}

} // namespace exposure
