// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "model/timerange.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace exposure {

// The start column of an IntervalTable in 4 bytes per entry: a 64-bit base for each block of 1024 entries and a 32-bit
// offset from it per entry. A block whose entries do not all lie in [base, base + 2^32 ns) — a gap of more than 4.29 s
// inside 1024 intervals, or an entry appended below the block's first one — keeps its entries in full in a side array
// (8 bytes more per entry, that block only). Sorted dense lanes therefore cost 4 bytes per start plus 16 bytes per
// block. Appending is O(1) amortised; reading an entry is two loads and one well-predicted branch.
class StartColumn
{
public:
    static constexpr unsigned kBlockShift = 10;
    static constexpr std::size_t kBlockSize = std::size_t(1) << kBlockShift;

    std::size_t size() const { return m_low.size(); }
    bool empty() const { return m_low.empty(); }
    TimeNs operator[](std::size_t i) const
    {
        const Block& b = m_blocks[i >> kBlockShift];
        return b.wide < 0 ? b.base + TimeNs(m_low[i]) : m_wide[(std::size_t(b.wide) << kBlockShift) | (i & kMask)];
    }
    void push_back(TimeNs t)
    {
        const std::size_t i = m_low.size();
        if ((i & kMask) == 0) {
            m_blocks.push_back({ t, -1 });
            m_low.push_back(0);
            return;
        }
        Block& b = m_blocks.back();
        const TimeNs d = t - b.base;
        if (b.wide < 0 && d >= 0 && d <= TimeNs(UINT32_MAX)) {
            m_low.push_back(std::uint32_t(d));
            return;
        }
        if (b.wide < 0)
            widenLastBlock();
        m_wide.push_back(t);
        m_low.push_back(0);
    }
    void reserve(std::size_t n);
    std::size_t capacity() const { return m_low.capacity(); }
    void clear();
    void shrinkToFit();
    // Adds delta to every entry.
    void shift(TimeNs delta);
    // Every entry, decoded (for sorting and tests).
    std::vector<TimeNs> decoded() const;
    std::size_t capacityBytes() const;
    // Blocks kept in full (for tests and the memory report).
    std::size_t wideBlocks() const { return m_wide.size() / kBlockSize + (m_wide.size() % kBlockSize != 0); }

private:
    static constexpr std::size_t kMask = kBlockSize - 1;
    struct Block
    {
        TimeNs base;
        std::int64_t wide; // -1, or the index of this block's entries in m_wide (in blocks of kBlockSize)
    };
    void widenLastBlock();

    std::vector<std::uint32_t> m_low;
    std::vector<Block> m_blocks;
    std::vector<TimeNs> m_wide;
};

} // namespace exposure
