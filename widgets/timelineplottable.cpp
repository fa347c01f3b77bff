// SPDX-License-Identifier: GPL-3.0-or-later
#include "timelineplottable.h"

#include <QFontMetrics>

#include <algorithm>
#include <cmath>

namespace exposure {

const ViewIndex::DepthTables* TimelineScene::depthTables(int row) const
{
    if (!index || row < 0 || std::size_t(row) >= rows.size())
        return nullptr;
    const TimelineRow& r = rows[row];
    if (r.kind != TimelineRow::Kind::Lane || r.depth < 0 || std::size_t(r.rank) >= index->depth.size()
        || std::size_t(r.lane) >= index->depth[r.rank].size())
        return nullptr;
    const auto& d = index->depth[r.rank][r.lane];
    return std::size_t(r.depth) < d.tables.size() ? &d : nullptr;
}

const IntervalTable* TimelineScene::table(int row) const
{
    if (!trace || row < 0 || std::size_t(row) >= rows.size())
        return nullptr;
    const TimelineRow& r = rows[row];
    if (r.kind == TimelineRow::Kind::Overlap)
        return index && std::size_t(r.rank) < index->overlap.size() ? &index->overlap[r.rank] : nullptr;
    if (const auto* d = depthTables(row))
        return &d->tables[std::size_t(r.depth)];
    return &trace->ranks[r.rank].lanes[r.lane].intervals;
}

std::uint32_t TimelineScene::laneInterval(int row, std::uint32_t i) const
{
    if (const auto* d = depthTables(row))
        return d->original[std::size_t(rows[row].depth)][i];
    return i;
}

int TimelineScene::rowOf(int rank, int lane, std::uint32_t interval) const
{
    const int first = rowOf(rank, lane);
    if (first < 0 || lane < 0)
        return first;
    const auto* d = depthTables(first);
    if (!d || interval >= d->rowOfInterval.size())
        return first;
    // Sub-rows of a lane are consecutive, depth 0 first.
    const int row = first + d->rowOfInterval[interval];
    return std::size_t(row) < rows.size() && rows[row].lane == lane && rows[row].rank == rank ? row : first;
}

const LodIndex* TimelineScene::lod(int row) const
{
    if (!index || row < 0 || std::size_t(row) >= rows.size())
        return nullptr;
    const TimelineRow& r = rows[row];
    if (r.kind == TimelineRow::Kind::Overlap)
        return std::size_t(r.rank) < index->overlapLod.size() ? &index->overlapLod[r.rank] : nullptr;
    if (const auto* d = depthTables(row))
        return &d->lods[std::size_t(r.depth)];
    if (std::size_t(r.rank) < index->lod.size() && std::size_t(r.lane) < index->lod[r.rank].size())
        return &index->lod[r.rank][r.lane];
    return nullptr;
}

int TimelineScene::rowOf(int rank, int lane) const
{
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        if (r.rank == rank && (lane < 0 ? r.kind == TimelineRow::Kind::Overlap : r.lane == lane))
            return int(i);
    }
    return -1;
}

QColor TimelineScene::colorOf(int row, std::uint32_t interval) const
{
    const IntervalTable* t = table(row);
    if (!t || interval >= t->size())
        return palette.idle();
    const StringId id = t->name(interval);
    if (rows[row].kind == TimelineRow::Kind::Overlap)
        return palette.overlap(OverlapState(std::min<StringId>(id, 3)));
    return id < nameColors.size() ? nameColors[id] : palette.idle();
}

QBrush waitingBrush(const QColor& block)
{
    // Darker diagonal lines over the block colour: still reads as "communication", but busy-waiting.
    return QBrush(block.darker(block.lightness() > 100 ? 190 : 60), Qt::BDiagPattern);
}

TimelinePlottable::TimelinePlottable(QCPAxis* keyAxis, QCPAxis* valueAxis, const TimelineScene* scene)
    : QCPAbstractPlottable(keyAxis, valueAxis)
    , m_scene(scene)
{
    setSelectable(QCP::stNone);
    setAntialiasedFill(false);
    setAntialiased(false);
}

double TimelinePlottable::selectTest(const QPointF&, bool, QVariant*) const
{
    return -1; // clicks are handled by TimelinePlot through HitTester
}

QCPRange TimelinePlottable::getKeyRange(bool& foundRange, QCP::SignDomain) const
{
    foundRange = m_scene->trace != nullptr;
    if (!foundRange)
        return QCPRange(0, 1);
    return QCPRange(double(m_scene->trace->extent.start), double(std::max(m_scene->trace->extent.end,
                                                                         m_scene->trace->extent.start + 1)));
}

QCPRange TimelinePlottable::getValueRange(bool& foundRange, QCP::SignDomain, const QCPRange&) const
{
    foundRange = !m_scene->rows.empty();
    return QCPRange(-0.5, std::max<double>(0.5, double(m_scene->rows.size()) - 0.5));
}

DrawListParams TimelinePlottable::currentParams() const
{
    DrawListParams p;
    const QCPRange range = keyAxis()->range();
    const double width = std::max(1, keyAxis()->axisRect()->width());
    p.t0 = TimeNs(std::floor(range.lower));
    p.t1 = TimeNs(std::ceil(range.upper));
    p.nsPerPixel = std::max(1e-6, range.size() / width);
    p.minPixels = m_scene->options.minFoldPixels;
    return p;
}

double TimelinePlottable::xOrigin() const
{
    return keyAxis()->coordToPixel(double(currentParams().t0));
}

QRect TimelinePlottable::rowBand(int row) const
{
    const double a = valueAxis()->coordToPixel(row - 0.5);
    const double b = valueAxis()->coordToPixel(row + 0.5);
    const QRect ar = keyAxis()->axisRect()->rect();
    const int top = int(std::lround(std::min(a, b)));
    const int bottom = int(std::lround(std::max(a, b)));
    return QRect(ar.left(), top, ar.width(), std::max(1, bottom - top));
}

QRect TimelinePlottable::boxRect(int row, const DrawItem& item) const
{
    const QRect band = rowBand(row);
    const int h = std::max(1, int(band.height() * 0.78));
    const int top = band.top() + (band.height() - h) / 2;
    const int x = int(std::floor(xOrigin())) + item.x0;
    return QRect(x, top, item.x1 - item.x0, h);
}

QRect TimelinePlottable::boxRect(int row, TimeNs start, TimeNs end) const
{
    const QRect band = rowBand(row);
    const int h = std::max(1, int(band.height() * 0.78));
    const int top = band.top() + (band.height() - h) / 2;
    const int x0 = int(std::floor(keyAxis()->coordToPixel(double(start))));
    const int x1 = std::max(x0 + 1, int(std::floor(keyAxis()->coordToPixel(double(end)))));
    return QRect(x0, top, x1 - x0, h);
}

int TimelinePlottable::rowAtPixel(double y) const
{
    const double v = valueAxis()->pixelToCoord(y);
    const int row = int(std::lround(v));
    if (row < 0 || std::size_t(row) >= m_scene->rows.size())
        return -1;
    return row;
}

void TimelinePlottable::ensureLists() const
{
    const DrawListParams p = currentParams();
    const QCPRange vr = valueAxis()->range();
    if (m_cacheValid && m_cacheGeneration == m_scene->generation && p.t0 == m_cacheParams.t0 && p.t1 == m_cacheParams.t1
        && p.nsPerPixel == m_cacheParams.nsPerPixel && p.minPixels == m_cacheParams.minPixels
        && vr == m_cacheValueRange)
        return;
    m_cacheParams = p;
    m_cacheGeneration = m_scene->generation;
    m_cacheValueRange = vr;
    m_cacheValid = true;
    const std::size_t rowCount = m_scene->rows.size();
    m_lists.resize(rowCount);
    for (std::size_t row = 0; row < rowCount; ++row) {
        auto& list = m_lists[row];
        const double lo = std::min(vr.lower, vr.upper) - 0.5, hi = std::max(vr.lower, vr.upper) + 0.5;
        const IntervalTable* t = m_scene->table(int(row));
        if (!t || double(row) < lo || double(row) > hi) { // culled: outside the visible value range
            list.clear();
            continue;
        }
        DrawListParams rp = p;
        if (m_scene->index && m_scene->rows[row].kind == TimelineRow::Kind::Lane)
            rp.lowPriority = &m_scene->index->lowPriority;
        DrawListBuilder::build(*t, m_scene->lod(int(row)), rp, list);
    }
    const std::size_t rankCount = m_scene->trace ? m_scene->trace->ranks.size() : 0;
    m_overlapLists.resize(rankCount);
    for (std::size_t r = 0; r < rankCount; ++r) {
        m_overlapLists[r].clear();
        if (m_scene->index && r < m_scene->index->overlap.size() && !m_scene->index->overlap[r].empty()) {
            // Overlap segments are split at one pixel so two-tone blocks follow them closely.
            DrawListParams op = p;
            op.minPixels = 1;
            DrawListBuilder::build(m_scene->index->overlap[r], &m_scene->index->overlapLod[r], op, m_overlapLists[r]);
        }
    }
}

const std::vector<DrawItem>& TimelinePlottable::items(int row) const
{
    static const std::vector<DrawItem> empty;
    ensureLists();
    if (row < 0 || std::size_t(row) >= m_lists.size())
        return empty;
    return m_lists[row];
}

const std::vector<DrawItem>& TimelinePlottable::overlapItems(int rank) const
{
    static const std::vector<DrawItem> empty;
    if (rank < 0 || std::size_t(rank) >= m_overlapLists.size())
        return empty;
    return m_overlapLists[rank];
}

void TimelinePlottable::drawCommunicationSplit(QCPPainter* painter, int row, const DrawItem& item,
                                                const QRect& box) const
{
    // The lower half of a communication block shows, column by column, whether the rank was
    // computing at the same time (hidden, green) or not (exposed, warning colour).
    const auto& segs = overlapItems(m_scene->rows[row].rank);
    if (segs.empty())
        return;
    const IntervalTable& ot = m_scene->index->overlap[m_scene->rows[row].rank];
    const int half = std::max(1, box.height() / 2);
    const QRect lower(box.left(), box.bottom() - half + 1, box.width(), half);
    auto it = std::lower_bound(segs.begin(), segs.end(), item.x0,
                               [](const DrawItem& s, int x) { return s.x1 <= x; });
    const int xo = int(std::floor(xOrigin()));
    const QBrush hidden = m_scene->palette.hiddenBrush();
    const QBrush exposed = m_scene->palette.exposedBrush();
    for (; it != segs.end() && it->x0 < item.x1; ++it) {
        const auto state = OverlapState(ot.name(it->largest));
        if (state != OverlapState::Hidden && state != OverlapState::Exposed)
            continue;
        const int a = std::max(it->x0, item.x0), b = std::min(it->x1, item.x1);
        if (b <= a)
            continue;
        painter->fillRect(QRect(xo + a, lower.top(), b - a, lower.height()),
                          state == OverlapState::Hidden ? hidden : exposed);
    }
}

void TimelinePlottable::drawWaiting(QCPPainter* painter, int row, const DrawItem& item, const QRect& box,
                                    const QColor& color) const
{
    const TimelineRow& info = m_scene->rows[row];
    const CollectiveMember* m
        = m_scene->collectives->member(info.rank, info.lane, m_scene->laneInterval(row, item.largest));
    if (!m || m->waitNs <= 0)
        return;
    QRect wait = boxRect(row, m->start, m->start + m->waitNs).intersected(box);
    // With the two-tone split the lower half already says hidden / exposed: hatch the upper half only.
    if (m_scene->options.twoToneCommunication)
        wait.setBottom(box.bottom() - std::max(1, box.height() / 2));
    if (!wait.isEmpty())
        painter->fillRect(wait, waitingBrush(color));
}

bool TimelinePlottable::overlapsHidden(int rank, const DrawItem& item) const
{
    const auto& segs = overlapItems(rank);
    if (segs.empty())
        return false;
    const IntervalTable& ot = m_scene->index->overlap[rank];
    auto it = std::lower_bound(segs.begin(), segs.end(), item.x0,
                               [](const DrawItem& s, int x) { return s.x1 <= x; });
    for (; it != segs.end() && it->x0 < item.x1; ++it)
        if (OverlapState(ot.name(it->largest)) == OverlapState::Hidden)
            return true;
    return false;
}

void TimelinePlottable::draw(QCPPainter* painter)
{
    if (!m_scene->trace || m_scene->rows.empty())
        return;
    ensureLists();
    // Straight boxes only: antialiasing would blur edges and cost time.
    painter->setRenderHint(QPainter::Antialiasing, false);
    painter->setPen(Qt::NoPen);
    const QRect ar = keyAxis()->axisRect()->rect();
    const int xo = int(std::floor(xOrigin()));
    const TimelineScene& s = *m_scene;
    const auto& trace = *s.trace;

    // Rank bands: every other rank slightly shaded so the grouping reads at a glance.
    for (std::size_t row = 0; row < s.rows.size(); ++row) {
        if (s.rows[row].rank % 2 == 1)
            painter->fillRect(rowBand(int(row)).intersected(ar), s.palette.rowShade());
    }
    painter->setPen(QPen(s.palette.grid(), 0));
    for (std::size_t row = 1; row < s.rows.size(); ++row) {
        if (s.rows[row].firstOfRank) {
            const int y = rowBand(int(row)).top();
            painter->drawLine(QLineF(ar.left(), y, ar.right(), y));
        }
    }
    painter->setPen(Qt::NoPen);

    QFont labelFont = painter->font();
    if (!s.options.fontFamily.isEmpty())
        labelFont.setFamily(s.options.fontFamily);
    labelFont.setPointSizeF(std::max(6.0, (s.options.fontPointSize > 0 ? s.options.fontPointSize
                                                                       : labelFont.pointSizeF()) - 1));
    const QFontMetrics fm(labelFont);

    for (std::size_t row = 0; row < s.rows.size(); ++row) {
        const auto& list = m_lists[row];
        if (list.empty())
            continue;
        const TimelineRow& info = s.rows[row];
        const IntervalTable& table = *s.table(int(row));
        const bool overlapRow = info.kind == TimelineRow::Kind::Overlap;
        const std::vector<Phase>* phases = nullptr;
        if (!overlapRow && s.analysis && std::size_t(info.rank) < s.analysis->ranks.size()) {
            const auto& ph = s.analysis->ranks[info.rank].phases;
            if (std::size_t(info.lane) < ph.size() && ph[info.lane].size() == table.size())
                phases = &ph[info.lane];
        }
        if (overlapRow) // idle is the absence of segments: show it as a faint band over the trace
            painter->fillRect(boxRect(int(row), trace.extent.start, trace.extent.end).intersected(ar),
                              s.palette.idle());
        for (const DrawItem& item : list) {
            const QRect box = boxRect(int(row), item);
            const StringId id = table.name(item.largest);
            QColor color = overlapRow ? s.palette.overlap(OverlapState(std::min<StringId>(id, 3)))
                                      : (id < s.nameColors.size() ? s.nameColors[id] : s.palette.idle());
            painter->fillRect(box, color);
            if (overlapRow)
                continue;
            const Category cat = categoryOf(trace, s.analysis.get(), id);
            if (s.options.twoToneCommunication && cat == Category::Communication && box.width() >= 2)
                drawCommunicationSplit(painter, int(row), item, box);
            if (s.collectives && cat == Category::Communication && item.count == 1 && box.width() >= 2)
                drawWaiting(painter, int(row), item, box, color);
            if (s.options.outlineBackwardOverlap && phases && cat == Category::Compute && box.width() >= 3
                && (*phases)[item.largest] == Phase::Backward && overlapsHidden(info.rank, item)) {
                painter->setPen(QPen(s.palette.outline(), 0));
                painter->setBrush(Qt::NoBrush);
                painter->drawRect(box.adjusted(0, 0, -1, -1));
                painter->setPen(Qt::NoPen);
            }
            const int textRows = cat == Category::Communication && s.options.twoToneCommunication ? 2 : 1;
            if (s.options.blockLabels && box.width() > 48 && box.height() >= textRows * fm.height() && item.count == 1) {
                const std::string& raw = trace.name(id);
                QString text = s.analysis && id < s.analysis->names.size() && !s.analysis->names[id].displayName.empty()
                    ? QString::fromStdString(s.analysis->names[id].displayName)
                    : QString::fromStdString(raw);
                QRect textBox = box.intersected(ar).adjusted(3, 0, -2, 0);
                if (s.options.twoToneCommunication && cat == Category::Communication) // keep the split visible
                    textBox.setBottom(textBox.top() + box.height() / 2 - 1);
                text = fm.elidedText(text, Qt::ElideRight, textBox.width());
                if (text.size() > 1) {
                    painter->setFont(labelFont);
                    painter->setPen(Palette::textOn(color));
                    painter->drawText(textBox, Qt::AlignVCenter | Qt::AlignLeft, text);
                    painter->setPen(Qt::NoPen);
                }
            }
        }
    }
    (void)xo;
}

void TimelinePlottable::drawLegendIcon(QCPPainter*, const QRectF&) const
{
    // The plottable is not in the legend; TimelinePlot adds one swatch per category instead.
}

} // namespace exposure
