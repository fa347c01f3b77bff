// SPDX-License-Identifier: GPL-3.0-or-later
// TimelinePlot's view range: zoom, pan, history, steps and collapsed ranks.
#include "timeline/timelineplot.h"

#include <algorithm>
#include <cmath>

namespace exposure {

TimeRange TimelinePlot::visibleRange() const
{
    const QCPRange r = xAxis->range();
    return { TimeNs(std::llround(r.lower)), TimeNs(std::llround(r.upper)) };
}

TimeRange TimelinePlot::fullRange() const
{
    if (!m_scene.trace || m_scene.trace->extent.isEmpty())
        return { 0, 1000 };
    return m_scene.trace->extent;
}

void TimelinePlot::onKeyRangeChanged(const QCPRange& range)
{
    if (m_settingRange)
        return;
    // Keep the view on the trace: no panning into the void, no zooming below 10 ns.
    const TimeRange full = fullRange();
    const double margin = 0.02 * double(full.duration());
    const double lo = double(full.start) - margin, hi = double(full.end) + margin;
    QCPRange r = range;
    if (r.size() < 10)
        r = QCPRange(r.center() - 5, r.center() + 5);
    if (r.size() > hi - lo)
        r = QCPRange(lo, hi);
    if (r.lower < lo)
        r = QCPRange(lo, lo + r.size());
    if (r.upper > hi)
        r = QCPRange(hi - r.size(), hi);
    if (r != range) {
        m_settingRange = true;
        xAxis->setRange(r);
        m_settingRange = false;
    }
    m_commitTimer.start(); // a gesture in progress: commit once it settles
}

void TimelinePlot::commitRange()
{
    m_commitTimer.stop();
    const TimeRange r = visibleRange();
    if (m_history.current() == r)
        return;
    m_history.push(r);
    emit visibleRangeChanged(r);
}

void TimelinePlot::setVisibleRange(TimeRange range, bool pushHistory)
{
    if (range.end <= range.start)
        range.end = range.start + 10;
    m_settingRange = true;
    xAxis->setRange(double(range.start), double(range.end));
    m_settingRange = false;
    m_commitTimer.stop();
    if (m_scene.options.legendDrawnOnly) { // the legend names what this range shows
        rebuildLegend();
        applyLayout();
    }
    if (pushHistory)
        m_history.push(visibleRange());
    emit visibleRangeChanged(visibleRange());
    replot(rpQueuedReplot);
}

void TimelinePlot::zoomIn()
{
    const TimeRange r = visibleRange();
    const TimeNs quarter = r.duration() / 4;
    setVisibleRange({ r.start + quarter, r.end - quarter });
}

void TimelinePlot::zoomOut()
{
    const TimeRange r = visibleRange();
    const TimeRange full = fullRange();
    const TimeNs half = r.duration() / 2;
    TimeRange n { r.start - half, r.end + half };
    if (n.duration() >= full.duration()) {
        n = full;
    } else if (n.start < full.start) {
        n = { full.start, full.start + n.duration() };
    } else if (n.end > full.end) {
        n = { full.end - n.duration(), full.end };
    }
    setVisibleRange(n);
}

TimeRange TimelinePlot::fitRange() const
{
    if (!m_scene.trace || m_scene.trace->extent.isEmpty())
        return fullRange();
    return activityRange(*m_scene.trace);
}

void TimelinePlot::zoomToFit()
{
    setVisibleRange(fitRange());
}

void TimelinePlot::panLeft()
{
    const TimeRange r = visibleRange();
    const TimeNs step = std::max<TimeNs>(1, r.duration() / 5);
    const TimeNs shift = std::min(step, std::max<TimeNs>(0, r.start - fullRange().start));
    setVisibleRange({ r.start - shift, r.end - shift });
}

void TimelinePlot::panRight()
{
    const TimeRange r = visibleRange();
    const TimeNs step = std::max<TimeNs>(1, r.duration() / 5);
    const TimeNs shift = std::min(step, std::max<TimeNs>(0, fullRange().end - r.end));
    setVisibleRange({ r.start + shift, r.end + shift });
}

bool TimelinePlot::back()
{
    if (!m_history.canGoBack())
        return false;
    setVisibleRange(m_history.back(), false);
    return true;
}

bool TimelinePlot::forward()
{
    if (!m_history.canGoForward())
        return false;
    setVisibleRange(m_history.forward(), false);
    return true;
}

bool TimelinePlot::zoomToSelection()
{
    if (!m_selection || !m_scene.trace)
        return false;
    const auto& t = m_scene.trace->ranks[m_selection->rank].lanes[m_selection->lane].intervals;
    const TimeNs s = t.start(m_selection->interval), e = t.end(m_selection->interval);
    const TimeNs pad = std::max<TimeNs>(50, (e - s) / 5);
    setVisibleRange({ s - pad, e + pad });
    return true;
}

bool TimelinePlot::zoomToStep(int stepIndex)
{
    if (!m_scene.analysis)
        return false;
    // The step window of all ranks together: steps are aligned by index.
    TimeRange r { 0, 0 };
    bool found = false;
    for (const auto& ra : m_scene.analysis->ranks) {
        for (const auto& st : ra.steps) {
            if (st.index != stepIndex)
                continue;
            r = found ? TimeRange { std::min(r.start, st.range.start), std::max(r.end, st.range.end) } : st.range;
            found = true;
        }
    }
    if (!found || r.isEmpty())
        return false;
    setVisibleRange(r);
    return true;
}

bool TimelinePlot::toggleRankCollapsed(int rank)
{
    if (!m_scene.trace || rank < 0 || std::size_t(rank) >= m_scene.trace->ranks.size())
        return false;
    auto& c = m_scene.options.collapsedRanks;
    const bool collapsed = !c.count(rank);
    if (collapsed)
        c.insert(rank);
    else
        c.erase(rank);
    rebuildRows();
    replot(rpQueuedReplot);
    emit rankCollapseToggled(rank, collapsed);
    return true;
}

bool TimelinePlot::toggleGroupCollapsed(int group)
{
    if (group < 0 || std::size_t(group) >= m_scene.groups.size())
        return false;
    auto& c = m_scene.options.collapsedGroups;
    const bool collapsed = !c.count(group);
    if (collapsed)
        c.insert(group);
    else
        c.erase(group);
    rebuildRows();
    replot(rpQueuedReplot);
    emit groupCollapseToggled(group, collapsed);
    return true;
}

void TimelinePlot::setGrouping(RankGrouping grouping, bool collapseAll)
{
    m_scene.options.grouping = grouping;
    m_scene.options.collapsedGroups.clear();
    m_firstRow = 0;
    rebuildRows();
    if (collapseAll)
        setAllGroupsCollapsed(true);
    else
        replot(rpQueuedReplot);
}

bool TimelinePlot::expandGroupOf(int rank)
{
    for (std::size_t g = 0; g < m_scene.groups.size(); ++g) {
        const auto& ranks = m_scene.groups[g].ranks;
        if (std::find(ranks.begin(), ranks.end(), rank) != ranks.end())
            return m_scene.options.collapsedGroups.count(int(g)) && toggleGroupCollapsed(int(g));
    }
    return false;
}

void TimelinePlot::setAllGroupsCollapsed(bool collapsed)
{
    auto& c = m_scene.options.collapsedGroups;
    c.clear();
    for (std::size_t g = 0; collapsed && g < m_scene.groups.size(); ++g)
        c.insert(int(g));
    rebuildRows();
    replot(rpQueuedReplot);
}

} // namespace exposure
