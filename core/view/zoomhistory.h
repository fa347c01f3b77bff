// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "model/trace.h" // TimeNs, TimeRange (a bare "time.h" would find the C header)

#include <cstddef>
#include <vector>

namespace exposure {

// Browser-like history of committed view ranges: push() drops the forward part; back()/forward()
// move within it. Pushing the current range again is a no-op so that repeated commits of the
// same range (e.g. a click without a drag) do not fill the history.
class ZoomHistory
{
public:
    explicit ZoomHistory(std::size_t limit = 200)
        : m_limit(limit)
    { }

    void reset(TimeRange initial);
    void push(TimeRange range);
    bool canGoBack() const { return m_pos > 0; }
    bool canGoForward() const { return m_pos + 1 < m_entries.size(); }
    TimeRange back(); // returns the new current range (unchanged if there is none)
    TimeRange forward();
    TimeRange current() const { return m_entries.empty() ? TimeRange {} : m_entries[m_pos]; }
    std::size_t size() const { return m_entries.size(); }
    std::size_t position() const { return m_pos; }

private:
    std::vector<TimeRange> m_entries;
    std::size_t m_pos = 0;
    std::size_t m_limit;
};

} // namespace exposure
