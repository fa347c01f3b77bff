// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/timelineplottable.h"

#include "common/labels.h"

#include <QFontMetrics>
#include <algorithm>
#include <cmath>
#include <limits>

namespace exposure {

QBrush waitingBrush(const Palette& palette)
{
    // Dark brown diagonal lines over the block colour: still reads as "communication", but busy-waiting, and
    // differs from every communication fill and from exposed communication (Palette::waitingHatch).
    return QBrush(palette.waitingHatch(), Qt::BDiagPattern);
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
    return QCPRange(double(m_scene->trace->extent.start),
        double(std::max(m_scene->trace->extent.end, m_scene->trace->extent.start + 1)));
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

ColumnGrid TimelinePlottable::currentGrid() const
{
    const DrawListParams p = currentParams();
    ColumnGrid g;
    g.t0 = p.t0;
    g.nsPerPixel = p.nsPerPixel;
    g.width = int(std::min(1e6, std::ceil(double(p.t1 - p.t0) / p.nsPerPixel) + 2));
    return g;
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

QRect TimelinePlottable::rowBox(int row) const
{
    const QRect band = rowBand(row);
    const int h = std::max(1, int(band.height() * 0.78));
    return QRect(band.left(), band.top() + (band.height() - h) / 2, band.width(), h);
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

QRect TimelinePlottable::solidRect(int row, TimeNs start, TimeNs end) const
{
    const QRect band = rowBand(row);
    const int h = std::max(1, int(band.height() * 0.78));
    const int top = band.top() + (band.height() - h) / 2;
    const ColumnGrid g = currentGrid();
    int x0 = g.columnOf(start);
    if (g.edge(x0) < start)
        ++x0;
    const int x1 = g.columnOf(end);
    if (x1 <= x0)
        return QRect();
    return QRect(int(std::floor(xOrigin())) + x0, top, x1 - x0, h);
}

int TimelinePlottable::rowAtPixel(double y) const
{
    const double v = valueAxis()->pixelToCoord(y);
    const int row = int(std::lround(v));
    if (row < 0 || std::size_t(row) >= m_scene->rows.size())
        return -1;
    return row;
}

void buildRowData(const TimelineScene& scene, int row, const DrawListParams& params, const ColumnGrid& grid,
    double valueLower, double valueUpper, std::vector<DrawItem>& list, std::vector<TimeNs>& columns)
{
    const double lo = std::min(valueLower, valueUpper) - 0.5, hi = std::max(valueLower, valueUpper) + 0.5;
    const IntervalTable* t = scene.table(row);
    columns.clear();
    if (scene.rows[std::size_t(row)].kind == TimelineRow::Kind::Group) { // its ranks' states, no draw list
        list.clear();
        if (scene.trace && double(row) >= lo && double(row) <= hi)
            groupStateColumns(
                scene.groupMembers(scene.rows[std::size_t(row)].group), grid, scene.trace->extent, columns);
        return;
    }
    if (!t || double(row) < lo || double(row) > hi) { // culled: outside the visible value range
        list.clear();
        return;
    }
    DrawListParams rp = params;
    if (scene.index && scene.rows[std::size_t(row)].kind == TimelineRow::Kind::Lane)
        rp.lowPriority = &scene.index->lowPriority;
    DrawListBuilder::build(*t, scene.lod(row), rp, list);
    // Exact time per class in every pixel column: what the area-true drawing paints.
    const ShareIndex* si = scene.shares(row);
    if (!si || list.empty() || si->intervalCount() != t->size())
        return;
    si->columns(*t, grid, columns);
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
    m_columns.resize(rowCount);
    const ColumnGrid grid = currentGrid();
    for (std::size_t row = 0; row < rowCount; ++row)
        buildRowData(*m_scene, int(row), p, grid, vr.lower, vr.upper, m_lists[row], m_columns[row]);
    const std::size_t rankCount = m_scene->trace ? m_scene->trace->ranks.size() : 0;
    m_overlapColumns.assign(rankCount, {});
    m_overlapColumnsValid.assign(rankCount, 0);
    m_paintsValid = false;
}

const std::vector<DrawItem>& TimelinePlottable::items(int row) const
{
    static const std::vector<DrawItem> empty;
    ensureLists();
    if (row < 0 || std::size_t(row) >= m_lists.size())
        return empty;
    return m_lists[row];
}

const std::vector<TimeNs>& TimelinePlottable::columnTimes(int row) const
{
    static const std::vector<TimeNs> empty;
    ensureLists();
    if (row < 0 || std::size_t(row) >= m_columns.size())
        return empty;
    return m_columns[std::size_t(row)];
}

const std::vector<TimeNs>& TimelinePlottable::overlapColumns(int rank) const
{
    static const std::vector<TimeNs> empty;
    if (rank < 0 || std::size_t(rank) >= m_overlapColumns.size() || !m_scene->index
        || std::size_t(rank) >= m_scene->index->overlapShares.size())
        return empty;
    if (!m_overlapColumnsValid[rank]) {
        m_overlapColumnsValid[rank] = 1;
        // The rank's overlap row, when shown, has computed exactly these columns already.
        const int row = m_scene->rowOf(rank, -1);
        if (row >= 0 && std::size_t(row) < m_columns.size() && !m_columns[row].empty())
            m_overlapColumns[rank] = m_columns[row];
        else
            m_scene->index->overlapShares[rank].columns(
                m_scene->index->overlap[rank], currentGrid(), m_overlapColumns[rank]);
    }
    return m_overlapColumns[rank];
}

std::vector<RowPaint> TimelinePlottable::computeRowPaints(const std::vector<char>* wanted) const
{
    ensureLists();
    const DrawListParams params = currentParams();
    const ColumnGrid grid = currentGrid();
    std::vector<RowPaint> out(m_scene->rows.size());
    const std::function<const std::vector<TimeNs>&(int)> overlap
        = [this](int rank) -> const std::vector<TimeNs>& { return overlapColumns(rank); };
    for (std::size_t row = 0; row < out.size(); ++row) {
        if (wanted && (row >= wanted->size() || !(*wanted)[row]))
            continue;
        out[row] = makeRowPaint(*m_scene, int(row), params, grid, m_lists[row], m_columns[row], overlap);
    }
    return out;
}

const std::vector<RowPaint>& TimelinePlottable::rowPaints() const
{
    ensureLists();
    if (m_paintSource) {
        const QCPRange vr = valueAxis()->range();
        m_paints = m_paintSource(currentParams(), currentGrid(), vr.lower, vr.upper);
        m_paints.resize(m_scene->rows.size());
        return m_paints;
    }
    if (!m_paintsValid) {
        m_paints = computeRowPaints();
        m_paintsValid = true;
    }
    return m_paints;
}

namespace {

// One solid piece of a column stack, merged with the same piece of the next columns while it keeps its place.
struct Run
{
    int x0 = 0, x1 = 0, y = 0, h = 0;
};

// A class's place in a column's stack.
struct StackSlot
{
    std::size_t local;
    QColor color;
    QBrush pattern = Qt::NoBrush; // drawn over the colour (greyscale hatching)
    bool split = false; // communication: lower half split into exposed / hidden
};

// Stack order, from the bottom: overlap and group rows put exposed communication on the baseline so that it reads like
// a bar chart (group rows: idle on top); lane rows stack busy classes in class order (alike on every rank), idle ones
// last.
std::vector<StackSlot> stackSlotsOf(const TimelineScene& s, TimelineRow::Kind kind, const RowPaint& paint)
{
    std::vector<StackSlot> stackSlots;
    if (kind != TimelineRow::Kind::Lane) {
        for (OverlapState st : { OverlapState::Exposed, OverlapState::WaitingExposed, OverlapState::WaitingHidden,
                 OverlapState::Hidden, OverlapState::ComputeOnly, OverlapState::Other }) {
            const auto it = std::find_if(paint.classes.begin(), paint.classes.end(),
                [st](const RowPaint::Class& c) { return c.kind == std::uint8_t(st); });
            if (it == paint.classes.end())
                continue;
            StackSlot slot { std::size_t(it - paint.classes.begin()), s.palette.overlap(st) };
            slot.pattern = s.palette.overlapPattern(st);
            stackSlots.push_back(slot);
        }
        const auto idle = std::find_if(paint.classes.begin(), paint.classes.end(),
            [](const RowPaint::Class& c) { return c.kind == std::uint8_t(kGroupIdle); });
        if (kind == TimelineRow::Kind::Group && idle != paint.classes.end())
            stackSlots.push_back({ std::size_t(idle - paint.classes.begin()), s.palette.idle() });
        return stackSlots;
    }
    for (int pass = 0; pass < 2; ++pass)
        for (std::size_t l = 0; l < paint.classes.size(); ++l) {
            const Category cat = Category(paint.classes[l].kind);
            if ((cat == Category::Idle) != (pass == 1))
                continue;
            StackSlot slot { l, s.palette.block(cat, paint.classes[l].subgroup) };
            slot.split = s.options.twoToneCommunication && cat == Category::Communication;
            stackSlots.push_back(slot);
        }
    return stackSlots;
}

} // namespace

void TimelinePlottable::drawColumns(QCPPainter* painter, int row, const RowPaint& paint) const
{
    const auto& cols = paint.columns;
    if (cols.empty() || paint.classes.empty())
        return;
    const TimelineScene& s = *m_scene;
    const TimelineRow& info = s.rows[row];
    const std::size_t k = paint.classes.size();
    const QRect band = rowBand(row);
    const int h = std::max(1, int(band.height() * 0.78));
    const int bottom = band.top() + (band.height() - h) / 2 + h; // exclusive
    const int xo = int(std::floor(xOrigin()));
    const ColumnGrid grid = currentGrid();

    const std::vector<StackSlot> stackSlots = stackSlotsOf(s, info.kind, paint);
    // A group row's column holds the time of all its ranks: its stacks are shares of members × the span.
    const TimeNs spanScale = std::max(1, paint.members);
    const std::size_t n = stackSlots.size();
    // Two-tone split: per column, the rank's exposed and hidden communication time.
    const std::vector<TimeNs>* ov = paint.split.empty() ? nullptr : &paint.split;
    const QBrush hiddenBrush = s.palette.hiddenBrush();
    const QBrush exposedBrush = s.palette.exposedBrush();

    // Pieces: per slot 0 = the class colour, 1 = exposed part, 2 = hidden part.
    std::vector<Run> runs(n * 3);
    std::vector<char> open(n * 3, 0);
    auto flush = [&](std::size_t piece) {
        if (!open[piece])
            return;
        open[piece] = 0;
        const Run& r = runs[piece];
        const QRect rect(xo + r.x0, r.y, r.x1 - r.x0, r.h);
        const StackSlot& slot = stackSlots[piece / 3];
        switch (piece % 3) {
        case 0:
            painter->fillRect(rect, slot.color);
            if (slot.pattern.style() != Qt::NoBrush)
                painter->fillRect(rect, slot.pattern);
            break;
        case 1:
            painter->fillRect(rect, exposedBrush);
            break;
        case 2:
            if (hiddenBrush.style() != Qt::SolidPattern)
                painter->fillRect(rect, slot.color);
            painter->fillRect(rect, hiddenBrush);
            break;
        }
    };
    auto put = [&](std::size_t piece, int x, int y, int height) {
        if (height <= 0) {
            flush(piece);
            return;
        }
        Run& r = runs[piece];
        if (open[piece] && r.x1 == x && r.y == y && r.h == height) {
            r.x1 = x + 1;
            return;
        }
        flush(piece);
        r = { x, x + 1, y, height };
        open[piece] = 1;
    };

    ColumnStacker stacker(n, h);
    std::vector<ColumnStacker> splitters(n, ColumnStacker(2, 0));
    std::vector<TimeNs> times(n);
    std::vector<int> heights(n);
    const int width = int(cols.size() / std::max<std::size_t>(1, k));
    for (int x = 0; x < width; ++x) {
        const TimeNs span = spanScale * std::max<TimeNs>(1, grid.edge(x + 1) - grid.edge(x));
        const TimeNs* col = &cols[std::size_t(x) * k];
        for (std::size_t i = 0; i < n; ++i)
            times[i] = col[stackSlots[i].local];
        stacker.stack(times.data(), span, heights.data());
        int y = bottom;
        for (std::size_t i = 0; i < n; ++i) {
            const int hi = heights[i];
            int lowerExposed = 0, lowerHidden = 0;
            if (hi >= 2 && stackSlots[i].split && ov) {
                const TimeNs* split = &(*ov)[std::size_t(x) * 2];
                int sh[2] = { 0, 0 };
                splitters[i].stack(split, split[0] + split[1], sh, hi / 2);
                lowerExposed = sh[0];
                lowerHidden = sh[1];
            }
            put(i * 3 + 1, x, y - lowerExposed, lowerExposed);
            put(i * 3 + 2, x, y - lowerExposed - lowerHidden, lowerHidden);
            put(i * 3, x, y - hi, hi - lowerExposed - lowerHidden);
            y -= hi;
        }
    }
    for (std::size_t piece = 0; piece < runs.size(); ++piece)
        flush(piece);
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
    const TimelineScene& s = *m_scene;
    const auto& trace = *s.trace;

    // Rank bands: every other rank slightly shaded so the grouping reads at a glance.
    for (std::size_t row = 0; row < s.rows.size(); ++row) {
        const TimelineRow& r = s.rows[row];
        if ((r.kind == TimelineRow::Kind::Group ? r.group : r.rank) % 2 == 1)
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
    labelFont.setPointSizeF(
        std::max(6.0, (s.options.fontPointSize > 0 ? s.options.fontPointSize : labelFont.pointSizeF()) - 1));
    const QFontMetrics fm(labelFont);

    const std::vector<RowPaint>& paints = rowPaints();
    m_drawnLabels.clear();
    for (std::size_t row = 0; row < s.rows.size() && row < paints.size(); ++row) {
        const RowPaint& paint = paints[row];
        if (!paint.visible)
            continue;
        // A label is written only right of the previous one of its row: in the last CPU sub-row, deeper regions
        // nest inside each other and their names would overprint.
        int labelsEnd = std::numeric_limits<int>::min();
        const bool overlapRow = s.rows[row].kind != TimelineRow::Kind::Lane; // group rows paint their idle time
        if (s.rows[row].kind
            == TimelineRow::Kind::Overlap) // idle is the absence of segments: show it as a faint band over the trace
            painter->fillRect(
                boxRect(int(row), trace.extent.start, trace.extent.end).intersected(ar), s.palette.idle());
        // Every column painted by time share (area-true at every zoom); blocks wide enough to read get their
        // decorations on the columns they fill completely.
        drawColumns(painter, int(row), paint);
        if (overlapRow)
            continue;
        for (const RowPaint::Block& block : paint.blocks) {
            const QRect box = solidRect(int(row), block.start, block.end);
            if (box.width() < 1)
                continue;
            const QColor color = s.palette.block(block.category, block.subgroup);
            const Category cat = block.category;
            if (block.waitNs > 0 && box.width() >= 2) {
                QRect wait = boxRect(int(row), block.waitStart, block.waitStart + block.waitNs).intersected(box);
                // With the two-tone split the lower half already says hidden / exposed: hatch the upper half only.
                if (s.options.twoToneCommunication)
                    wait.setBottom(box.bottom() - std::max(1, box.height() / 2));
                if (!wait.isEmpty())
                    painter->fillRect(wait, waitingBrush(s.palette));
            }
            if (block.outline && box.width() >= 3) {
                painter->setPen(QPen(s.palette.outline(), 0));
                painter->setBrush(Qt::NoBrush);
                painter->drawRect(box.adjusted(0, 0, -1, -1));
                painter->setPen(Qt::NoPen);
            }
            const int textRows = cat == Category::Communication && s.options.twoToneCommunication ? 2 : 1;
            if (s.options.blockLabels && !block.label.empty() && box.width() > 48
                && box.height() >= textRows * fm.height()) {
                QString text = QString::fromStdString(block.label);
                QRect textBox = box.intersected(ar).adjusted(3, 0, -2, 0);
                if (s.options.twoToneCommunication && cat == Category::Communication) // keep the split visible
                    textBox.setBottom(textBox.top() + box.height() / 2 - 1);
                text = fm.elidedText(text, Qt::ElideRight, textBox.width());
                if (text.size() > 1 && textBox.left() >= labelsEnd) {
                    painter->setFont(labelFont);
                    painter->setPen(Palette::textOn(color));
                    painter->drawText(textBox, Qt::AlignVCenter | Qt::AlignLeft, text);
                    painter->setPen(Qt::NoPen);
                    const QRectF drawn(textBox.left(), textBox.center().y() + 0.5 - fm.height() / 2.0,
                        fm.horizontalAdvance(text), fm.height());
                    m_drawnLabels.push_back({ drawn, text, labelFont.pointSizeF(), PlotText::Role::BlockLabel });
                    labelsEnd = box.right() + 1;
                }
            }
        }
    }
    drawPeerCopies(painter, paints);
}

void TimelinePlottable::drawPeerCopies(QCPPainter* painter, const std::vector<RowPaint>& paints) const
{
    // Peer-to-peer copies: an arrow from the copying stream's row to the first row of the other device, at the copy's
    // start, so that DataParallel-style scatter and gather traffic between GPUs is seen at a glance.
    const TimelineScene& s = *m_scene;
    const ColumnGrid grid = currentGrid();
    const int xo = int(std::floor(xOrigin()));
    const QColor color = s.palette.block(Category::Memcpy, "PtoP").darker(150);
    painter->setRenderHint(QPainter::Antialiasing, false);
    painter->setPen(QPen(color, 0));
    painter->setBrush(color);
    int drawn = 0;
    for (std::size_t row = 0; row < paints.size() && row < s.rows.size() && drawn < kMaxPeerArrows; ++row) {
        for (const RowPaint::Arrow& a : paints[row].arrows) {
            if (drawn >= kMaxPeerArrows)
                break;
            if (a.toRow < 0 || std::size_t(a.toRow) >= s.rows.size())
                continue;
            const int x = xo + grid.columnOf(a.t);
            const QRect from = rowBox(int(row)), to = rowBox(a.toRow);
            const bool down = to.center().y() > from.center().y();
            const int y0 = down ? from.bottom() : from.top();
            const int y1 = down ? to.top() - 1 : to.bottom() + 1;
            painter->drawLine(QPoint(x, y0), QPoint(x, y1));
            const int head = 4 * (down ? 1 : -1);
            const QPoint tip(x, y1);
            const QPolygon arrow({ tip, QPoint(x - 3, y1 - head), QPoint(x + 3, y1 - head) });
            painter->drawPolygon(arrow);
            ++drawn;
        }
    }
    painter->setPen(Qt::NoPen);
    painter->setBrush(Qt::NoBrush);
}

void TimelinePlottable::drawLegendIcon(QCPPainter*, const QRectF&) const
{
    // The plottable is not in the legend; TimelinePlot adds one swatch per category instead.
}

} // namespace exposure
