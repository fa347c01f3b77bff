// SPDX-License-Identifier: GPL-3.0-or-later
// TimelinePlot's launch links: where each arrow lies, which one is under the mouse, following one.
#include "timeline/timelineplot.h"
#include "timeline/tracesearch.h"

#include <algorithm>
#include <cmath>

namespace exposure {

std::optional<QLineF> TimelinePlot::linkLine(const LaunchLink& link) const
{
    if (!m_scene.trace)
        return std::nullopt;
    const int callRow = m_scene.rowOf(link.call);
    const int workRow = m_scene.rowOf(link.work);
    if (callRow < 0 || workRow < 0)
        return std::nullopt;
    auto boxOf = [&](int row, IntervalRef ref) {
        const auto& t = m_scene.trace->ranks[std::size_t(ref.rank)].lanes[std::size_t(ref.lane)].intervals;
        return m_plottable->boxRect(row, t.start(ref.interval), t.end(ref.interval));
    };
    const QRect call = boxOf(callRow, link.call);
    const QRect work = boxOf(workRow, link.work);
    // From the call's edge that faces the work's row to the work's start, on its facing edge.
    const bool up = callRow > workRow;
    const QPointF from(call.left() + std::min(call.width() / 2.0, 6.0), up ? call.top() : call.bottom() + 1);
    const QPointF to(work.left(), up ? work.bottom() + 1 : work.top());
    return QLineF(from, to);
}

std::optional<LaunchLink> TimelinePlot::linkAt(const QPoint& pos) const
{
    std::optional<LaunchLink> best;
    double bestDistance = 4.5; // pixels
    for (const LaunchLink& link : m_links) {
        const auto line = linkLine(link);
        if (!line || line->length() < 1)
            continue;
        // Distance from pos to the segment.
        const QPointF d = line->p2() - line->p1();
        const QPointF p = QPointF(pos) - line->p1();
        const double t = std::clamp((p.x() * d.x() + p.y() * d.y()) / (d.x() * d.x() + d.y() * d.y()), 0.0, 1.0);
        const QPointF nearest = line->p1() + t * d;
        const double distance = std::hypot(pos.x() - nearest.x(), pos.y() - nearest.y());
        if (distance < bestDistance) {
            bestDistance = distance;
            best = link;
        }
    }
    return best;
}

void TimelinePlot::followLink(const LaunchLink& link)
{
    const bool atWork = m_selection && *m_selection == link.work;
    select(atWork ? link.call : link.work, true);
}

void TimelinePlot::setSearchResults(std::shared_ptr<const SearchResults> results)
{
    m_search = std::move(results);
    refreshOverlay();
}

} // namespace exposure
