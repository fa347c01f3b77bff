// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "model/trace.h"

#include <cstdint>
#include <vector>

namespace exposure {

// Per-lane max-end / argmax-duration mipmap over an IntervalTable (the idea of Perfetto's
// implicit segment forest, flattened into power-of-two levels of fixed blocks).
// Level k summarises aligned blocks of kBaseBlock << k consecutive intervals: the largest end
// and the index of the (earliest) longest interval in the block. It lets DrawListBuilder swallow
// whole blocks of sub-pixel intervals in one step, so a zoomed-out lane costs
// O(width · log n) instead of O(n). Memory: about 16 bytes per 16 intervals.
class LodIndex
{
public:
    static constexpr std::size_t kBaseBlock = 32;

    struct Node
    {
        TimeNs maxEnd = 0;
        TimeNs maxDuration = 0;
        std::uint32_t longest = 0; // the block's representative: its longest interval, preferring
                                   // intervals whose name is not low priority (see DrawListParams)
    };

    LodIndex() = default;
    explicit LodIndex(const IntervalTable& table, const std::vector<std::uint8_t>* lowPriority = nullptr)
    {
        build(table, lowPriority);
    }
    // lowPriority must be the same vector later passed in DrawListParams.
    void build(const IntervalTable& table, const std::vector<std::uint8_t>* lowPriority = nullptr);
    const std::vector<std::uint8_t>* lowPriority() const { return m_lowPriority; }

    std::size_t levelCount() const { return m_levels.size(); }
    std::size_t blockSize(std::size_t level) const { return kBaseBlock << level; }
    const Node& node(std::size_t level, std::size_t block) const { return m_levels[level][block]; }
    std::size_t intervalCount() const { return m_count; }
    std::size_t residentBytes() const;

private:
    std::vector<std::vector<Node>> m_levels;
    std::size_t m_count = 0;
    const std::vector<std::uint8_t>* m_lowPriority = nullptr;
};

// One rectangle of a lane's draw list, in integer pixel columns relative to the view start.
// count == 1: the interval `first`; count > 1: a fold of `count` consecutive sub-pixel
// intervals starting at `first`, of which `largest` is the longest (it gives the colour).
struct DrawItem
{
    int x0 = 0; // first pixel column covered
    int x1 = 0; // one past the last column (x1 > x0)
    std::uint32_t first = 0;
    std::uint32_t count = 0;
    std::uint32_t largest = 0;
    TimeNs start = 0; // time extent of the item (the run for folds)
    TimeNs end = 0;

    bool folded() const { return count > 1; }
};

struct DrawListParams
{
    TimeNs t0 = 0; // visible range start (pixel column 0 starts here)
    TimeNs t1 = 0; // visible range end
    double nsPerPixel = 1; // > 0
    double minPixels = 2; // intervals narrower than this fold into runs
    // By StringId, non-zero for names that should not represent a fold (e.g. "COMPUTE IDLE" between
    // kernels): a fold shows its longest interval among the others, if it has any.
    const std::vector<std::uint8_t>* lowPriority = nullptr;
};

// Builds the bounded list of rectangles that represent one lane in a visible range.
//
// Folding rule (exact; the unit tests check it row by row):
//  * an interval is "narrow" when its duration < minPixels · nsPerPixel, else "wide";
//  * a wide interval is emitted on its own (count 1);
//  * a narrow interval opens a run; following intervals join the run while they are narrow and
//    start less than minPixels · nsPerPixel after the run's current end (the largest end so far);
//  * a run of one interval is emitted as that interval, a longer run as one fold item whose
//    `largest` is its longest interval (the earliest of equals), intervals with a low-priority name
//    counting only when the run has nothing else;
//  * intervals that end at or before t0, or start at or after t1, are not drawn.
//  Pixel columns: x0 = floor((start - t0) / nsPerPixel), x1 = max(x0 + 1, floor((end - t0) / nsPerPixel)),
//  both clamped to [-1, ceil(width) + 1].
// Without a LodIndex every visible interval is visited; with one, runs swallow whole blocks, so the
// work is O(items · log n) and the result is identical.
class DrawListBuilder
{
public:
    static void build(
        const IntervalTable& table, const LodIndex* lod, const DrawListParams& params, std::vector<DrawItem>& out);
    static std::vector<DrawItem> build(const IntervalTable& table, const LodIndex* lod, const DrawListParams& params)
    {
        std::vector<DrawItem> out;
        build(table, lod, params, out);
        return out;
    }
    // Index of the first interval that may be visible at t0 (end > t0 or start >= t0).
    static std::size_t firstVisible(const IntervalTable& table, const LodIndex* lod, TimeNs t0);
};

} // namespace exposure
