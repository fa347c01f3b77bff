// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/timelineoverlay.h"

#include "timeline/timelineplot.h"
#include "timeline/tracesearch.h"

#include <algorithm>
#include <cmath>

namespace exposure {

TimelineOverlay::TimelineOverlay(TimelinePlot* plot)
    : QCPLayerable(plot, QStringLiteral("highlight"))
    , m_plot(plot)
{ }

QRect TimelineOverlay::clipRect() const
{
    return m_plot->axisRect()->rect();
}

void TimelineOverlay::draw(QCPPainter* painter)
{
    const TimelinePlottable* p = m_plot->m_plottable;
    const TimelineScene& s = m_plot->m_scene;
    if (!s.trace)
        return;
    painter->setBrush(Qt::NoBrush);
    if (m_plot->m_highlightName != kInvalidString)
        drawNameHighlight(painter);
    if (m_plot->m_search && m_plot->m_search->count() > 0)
        drawMatches(painter);
    if (m_plot->m_hover) {
        const auto& h = *m_plot->m_hover;
        painter->setPen(QPen(s.palette.hover(), 1));
        painter->drawRect(p->boxRect(h.row, h.start, h.end).adjusted(-1, -1, 0, 0));
    }
    if (m_plot->m_selection) {
        const auto& sel = *m_plot->m_selection;
        const int row = s.rowOf(sel);
        if (row >= 0) {
            const auto& t = s.trace->ranks[sel.rank].lanes[sel.lane].intervals;
            const QRect box = p->boxRect(row, t.start(sel.interval), t.end(sel.interval));
            painter->setPen(QPen(s.palette.selection(), 3));
            painter->drawRect(box.adjusted(-2, -2, 1, 1));
        }
    }
    if (!m_plot->m_links.empty())
        drawLinks(painter);
}

void TimelineOverlay::drawNameHighlight(QCPPainter* painter) const
{
    const TimelinePlottable* p = m_plot->m_plottable;
    const TimelineScene& s = m_plot->m_scene;
    painter->setPen(QPen(s.palette.selection(), 2));
    for (std::size_t row = 0; row < s.rows.size(); ++row) {
        if (s.rows[row].kind == TimelineRow::Kind::Overlap)
            continue;
        const IntervalTable* t = s.table(int(row));
        for (const DrawItem& item : p->items(int(row))) {
            bool match = t->name(item.largest) == m_plot->m_highlightName;
            for (std::uint32_t k = 0; !match && k < item.count && k < 64; ++k)
                match = t->name(item.first + k) == m_plot->m_highlightName;
            if (match)
                painter->drawRect(p->boxRect(int(row), item).adjusted(-1, -1, 0, 0));
        }
    }
}

namespace {

// Whether an item of a row draws a match: one of the lane's matches starts in the item's span and is drawn in this
// row (nested CPU regions: the row of its depth).
bool itemHasMatch(const TimelineScene& s, int row, const LaneMatches& m, const DrawItem& item)
{
    const TimelineRow& r = s.rows[std::size_t(row)];
    const IntervalTable& t = s.trace->ranks[std::size_t(r.rank)].lanes[std::size_t(r.lane)].intervals;
    auto it = std::partition_point(
        m.intervals.begin(), m.intervals.end(), [&](std::uint32_t i) { return t.start(i) < item.start; });
    const bool subRows = s.depthTables(row) != nullptr;
    for (int checked = 0; it != m.intervals.end() && t.start(*it) < std::max(item.end, item.start + 1);
         ++it, ++checked) {
        if (!subRows || s.rowOf(IntervalRef { r.rank, r.lane, *it }) == row)
            return true;
        if (checked > 64)
            return false;
    }
    return false;
}

} // namespace

void TimelineOverlay::drawMatches(QCPPainter* painter) const
{
    // Every match outlined in the selection colour, over a light fill: dense matches at any zoom stay visible.
    const TimelinePlottable* p = m_plot->m_plottable;
    const TimelineScene& s = m_plot->m_scene;
    const SearchResults& found = *m_plot->m_search;
    QColor fill = s.palette.selection();
    fill.setAlpha(70);
    painter->setPen(QPen(s.palette.selection(), 2));
    for (std::size_t row = 0; row < s.rows.size(); ++row) {
        const TimelineRow& r = s.rows[row];
        if (r.kind == TimelineRow::Kind::Overlap)
            continue;
        const LaneMatches* m = found.lane(r.rank, r.lane);
        if (!m)
            continue;
        for (const DrawItem& item : p->items(int(row)))
            if (itemHasMatch(s, int(row), *m, item)) {
                const QRect box = p->boxRect(int(row), item).adjusted(-1, -1, 0, 0);
                painter->fillRect(box, fill);
                painter->drawRect(box);
            }
    }
}

void TimelineOverlay::drawLinks(QCPPainter* painter) const
{
    // An arrow from each launch call to the work it started, in the text colour so that it reads over every fill.
    const TimelineScene& s = m_plot->m_scene;
    painter->setAntialiasing(true);
    const QColor colour = s.palette.text();
    painter->setPen(QPen(colour, 1.5));
    painter->setBrush(colour);
    for (const LaunchLink& link : m_plot->m_links) {
        const auto line = m_plot->linkLine(link);
        if (!line || line->length() < 1)
            continue;
        painter->drawLine(*line);
        // The head: a small triangle at the work's end.
        const double angle = std::atan2(line->dy(), line->dx());
        const QPointF tip = line->p2();
        const double len = 8, spread = 0.45;
        const QPointF a = tip - QPointF(std::cos(angle - spread), std::sin(angle - spread)) * len;
        const QPointF b = tip - QPointF(std::cos(angle + spread), std::sin(angle + spread)) * len;
        painter->drawPolygon(QPolygonF({ tip, a, b }));
    }
    painter->setAntialiasing(false);
    painter->setBrush(Qt::NoBrush);
}

} // namespace exposure
