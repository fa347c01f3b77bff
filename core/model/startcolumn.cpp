// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/startcolumn.h"

namespace exposure {

void StartColumn::widenLastBlock()
{
    const std::size_t block = m_blocks.size() - 1;
    const std::size_t first = block << kBlockShift;
    Block& b = m_blocks[block];
    b.wide = std::int64_t(m_wide.size() >> kBlockShift); // earlier wide blocks are complete: a multiple of kBlockSize
    for (std::size_t i = first; i < m_low.size(); ++i)
        m_wide.push_back(b.base + TimeNs(m_low[i]));
}

void StartColumn::reserve(std::size_t n)
{
    m_low.reserve(n);
    m_blocks.reserve((n + kMask) >> kBlockShift);
}

void StartColumn::clear()
{
    m_low.clear();
    m_blocks.clear();
    m_wide.clear();
}

void StartColumn::shrinkToFit()
{
    m_low.shrink_to_fit();
    m_blocks.shrink_to_fit();
    m_wide.shrink_to_fit();
}

void StartColumn::shift(TimeNs delta)
{
    for (Block& b : m_blocks)
        b.base += delta;
    for (TimeNs& t : m_wide)
        t += delta;
}

std::vector<TimeNs> StartColumn::decoded() const
{
    std::vector<TimeNs> out(size());
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = (*this)[i];
    return out;
}

std::size_t StartColumn::capacityBytes() const
{
    return m_low.capacity() * sizeof(std::uint32_t) + m_blocks.capacity() * sizeof(Block)
        + m_wide.capacity() * sizeof(TimeNs);
}

} // namespace exposure
