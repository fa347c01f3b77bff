// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "model/trace.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace exposure {

// Pixel columns of a visible range: column x covers the integer times [edge(x), edge(x + 1)), where
// edge(x) = t0 + ceil(x · nsPerPixel). A time t lies in column floor((t - t0) / nsPerPixel), the same
// mapping the draw list uses for block edges.
struct ColumnGrid
{
    TimeNs t0 = 0;
    double nsPerPixel = 1; // > 0
    int width = 0; // number of columns

    TimeNs edge(int x) const;
    // First column whose span ends after t (may be < 0 or >= width).
    int columnOf(TimeNs t) const;
};

// Exact time per paint class of one interval table, at any zoom, in O(log n + kBlock) per query.
//
// A paint class is what one colour stands for: (category, sub-group) for lanes, the overlap state for
// overlap rows. classOfName maps a StringId to its class (nullptr: the name is the class, as in the overlap
// tables). The index keeps, per block of kBlock intervals, the cumulative duration of each class present in
// the table (classCount() · 8 / kBlock bytes per interval). Time in [a, b) is then two cumulative lookups:
// a block prefix, a partial scan inside the block and the clipped part of the interval that straddles the
// boundary.
//
// Tables whose intervals overlap each other (nested CPU regions drawn in one row) are first flattened so that
// every nanosecond belongs to the innermost (latest-started) interval covering it; the index then answers for
// the flattened table, whose total time is the union of the intervals. Disjoint tables (GPU streams, overlap
// segments, the per-depth CPU rows) are indexed in place.
class ShareIndex
{
public:
    static constexpr std::size_t kBlock = 64;
    static constexpr std::uint8_t kAbsent = 0xFF;

    ShareIndex() = default;
    ShareIndex(const IntervalTable& table, const std::vector<std::uint8_t>* classOfName) { build(table, classOfName); }
    ShareIndex(ShareIndex&&) noexcept = default;
    ShareIndex& operator=(ShareIndex&&) noexcept = default;

    void build(const IntervalTable& table, const std::vector<std::uint8_t>* classOfName);

    // Classes present in the table, in increasing class id. Queries report time per local index.
    std::size_t classCount() const { return m_classes.size(); }
    std::uint8_t classAt(std::size_t local) const { return m_classes[local]; }
    // Local index of a class, or kAbsent.
    std::uint8_t localOf(std::uint8_t cls) const { return cls < m_localOf.size() ? m_localOf[cls] : kAbsent; }
    bool flattened() const { return m_flat != nullptr; }
    std::size_t intervalCount() const { return m_count; }
    std::size_t residentBytes() const;

    // Cumulative time per class in (-inf, t): out[local] for every local class (out has classCount() entries).
    void cumulative(const IntervalTable& table, TimeNs t, TimeNs* out) const;
    // Time per class inside [a, b); out has classCount() entries and is overwritten.
    void timeIn(const IntervalTable& table, TimeNs a, TimeNs b, TimeNs* out) const;
    // Time per class in every column of the grid: out[x · classCount() + local], exact integer ns.
    void columns(const IntervalTable& table, const ColumnGrid& grid, std::vector<TimeNs>& out) const;

private:
    const IntervalTable& source(const IntervalTable& table) const { return m_flat ? *m_flat : table; }
    std::uint8_t localOfName(StringId name) const;

    const std::vector<std::uint8_t>* m_classOfName = nullptr; // nullptr: identity (also for the flat table)
    std::unique_ptr<IntervalTable> m_flat; // names are class ids
    std::vector<std::uint8_t> m_classes; // local -> class
    std::vector<std::uint8_t> m_localOf; // class -> local (kAbsent)
    std::vector<TimeNs> m_prefix; // [(block) · classCount() + local], blocks + 1 rows
    std::size_t m_count = 0;
};

// Integer pixel heights of stacked shares in one column, with error diffusion across columns: the painted
// pixel count of each class over any run of columns stays within one pixel (per class) of its exact area
// share · height, so small shares spread over many columns are neither dropped nor inflated.
class ColumnStacker
{
public:
    // classes: number of stacked classes; height: pixels available in a column.
    ColumnStacker(std::size_t classes, int height);
    // times[k]: time of class k in the column; span: the column's duration. Writes heights[k] (sum <= height).
    void stack(const TimeNs* times, TimeNs span, int* heights) { stack(times, span, heights, m_height); }
    // The same with this column's own height (a segment of another stack).
    void stack(const TimeNs* times, TimeNs span, int* heights, int height);
    int height() const { return m_height; }

private:
    std::vector<double> m_carry;
    std::vector<double> m_want;
    int m_height;
};

} // namespace exposure
