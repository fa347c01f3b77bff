// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/launchlist.h"

#include <algorithm>

namespace exposure {

std::size_t LaunchList::runOf(std::size_t k) const
{
    const auto it = std::upper_bound(
        m_runs.begin(), m_runs.end(), k, [](std::size_t index, const Run& r) { return index < r.first; });
    return std::size_t(it - m_runs.begin()) - 1;
}

void LaunchList::set(std::size_t k, LaunchRef l)
{
    m_interval.at(k) = l.interval;
    const std::size_t r = runOf(k);
    if (m_runs[r].cpuLane == l.cpuLane)
        return;
    // Split the run around k: [first, k) keeps its lane, k gets the new one, (k, end) the old one again.
    const std::uint32_t old = m_runs[r].cpuLane;
    const std::size_t end = r + 1 < m_runs.size() ? m_runs[r + 1].first : m_interval.size();
    std::vector<Run> insert;
    if (k + 1 < end)
        insert.push_back({ std::uint32_t(k + 1), old });
    if (m_runs[r].first == k) {
        m_runs[r].cpuLane = l.cpuLane;
    } else {
        insert.insert(insert.begin(), Run { std::uint32_t(k), l.cpuLane });
    }
    m_runs.insert(m_runs.begin() + std::ptrdiff_t(r + 1), insert.begin(), insert.end());
    // Merge neighbours with the same lane: only the runs around r can have become equal.
    const std::size_t lo = r > 0 ? r - 1 : 0;
    const std::size_t hi = std::min(m_runs.size(), r + 4);
    for (std::size_t i = hi - 1; i > lo; --i)
        if (m_runs[i].cpuLane == m_runs[i - 1].cpuLane)
            m_runs.erase(m_runs.begin() + std::ptrdiff_t(i));
}

void LaunchList::resize(std::size_t n, LaunchRef fill)
{
    if (n <= size()) {
        m_interval.resize(n);
        while (!m_runs.empty() && m_runs.back().first >= n)
            m_runs.pop_back();
        return;
    }
    while (size() < n)
        push_back(fill);
}

void LaunchList::clear()
{
    m_interval.clear();
    m_runs.clear();
}

bool LaunchList::operator==(const LaunchList& o) const
{
    return std::equal(begin(), end(), o.begin(), o.end());
}

} // namespace exposure
