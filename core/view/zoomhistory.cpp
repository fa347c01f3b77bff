// SPDX-License-Identifier: GPL-3.0-or-later
#include "view/zoomhistory.h"

namespace exposure {

void ZoomHistory::reset(TimeRange initial)
{
    m_entries.assign(1, initial);
    m_pos = 0;
}

void ZoomHistory::push(TimeRange range)
{
    if (!m_entries.empty() && m_entries[m_pos] == range)
        return;
    if (!m_entries.empty())
        m_entries.resize(m_pos + 1);
    m_entries.push_back(range);
    if (m_entries.size() > m_limit)
        m_entries.erase(m_entries.begin());
    m_pos = m_entries.size() - 1;
}

TimeRange ZoomHistory::back()
{
    if (canGoBack())
        --m_pos;
    return current();
}

TimeRange ZoomHistory::forward()
{
    if (canGoForward())
        ++m_pos;
    return current();
}

} // namespace exposure
