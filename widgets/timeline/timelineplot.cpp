// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/timelineplot.h"

#include "common/labels.h"
#include "model/timeformat.h"
#include "timeline/timeaxisticker.h"
#include "timeline/timelinelegend.h"
#include "timeline/timelineoverlay.h"
#include "view/hittest.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QScrollBar>
#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace exposure {

TimelinePlot::TimelinePlot(QWidget* parent)
    : QCustomPlot(parent)
{
    qRegisterMetaType<exposure::TimelineHit>();
    qRegisterMetaType<exposure::TimeRange>();
    setAutoAddPlottableToLegend(false);
    setNoAntialiasingOnDrag(true);
    setPlottingHints(QCP::phCacheLabels | QCP::phImmediateRefresh);
    setPlottingHint(QCP::phImmediateRefresh, false);

    m_plottable = new TimelinePlottable(xAxis, yAxis, &m_scene);

    addLayer(QStringLiteral("highlight"), layer(QStringLiteral("main")), QCustomPlot::limAbove);
    layer(QStringLiteral("highlight"))->setMode(QCPLayer::lmBuffered);
    m_overlay = new TimelineOverlay(this);

    m_ticker = QSharedPointer<TimeAxisTicker>::create(xAxis);
    xAxis->setTicker(m_ticker);
    m_rowTicker = QSharedPointer<QCPAxisTickerText>::create();
    yAxis->setTicker(m_rowTicker);
    yAxis->setRangeReversed(true);
    yAxis->setSubTicks(false);
    yAxis->setTickLength(0, 0);
    yAxis->grid()->setVisible(false);
    yAxis->setBasePen(Qt::NoPen);
    xAxis->grid()->setSubGridVisible(false);

    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    axisRect()->setRangeDrag(Qt::Horizontal);
    axisRect()->setRangeZoom(Qt::Horizontal);
    axisRect()->setRangeZoomFactor(0.8);
    setSelectionRectMode(QCP::srmNone);
    connect(selectionRect(), &QCPSelectionRect::accepted, this, [this](const QRect& rect, QMouseEvent*) {
        const double a = xAxis->pixelToCoord(rect.left());
        const double b = xAxis->pixelToCoord(rect.right());
        if (std::abs(rect.width()) >= 3)
            setVisibleRange({ TimeNs(std::llround(std::min(a, b))), TimeNs(std::llround(std::max(a, b))) });
    });
    connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, &TimelinePlot::onKeyRangeChanged);

    m_commitTimer.setSingleShot(true);
    m_commitTimer.setInterval(300);
    connect(&m_commitTimer, &QTimer::timeout, this, &TimelinePlot::commitRange);

    // Holds a horizontal legend on the left of its row; the empty cell takes the spare width so
    // legend entries stay packed instead of spreading over the whole plot width.
    m_legendHolder = new QCPLayoutGrid;
    plotLayout()->insertRow(0); // adopting it once gives it (and later children) the parent plot
    plotLayout()->addElement(0, 0, m_legendHolder);
    m_legendHolder->addElement(0, 1, new QCPLayoutElement(this));
    plotLayout()->take(m_legendHolder);
    plotLayout()->simplify();
    m_legendHolder->setColumnStretchFactor(1, 1.0);
    m_legendHolder->setMargins(QMargins(0, 0, 0, 0));
    // Same for a legend right of the plot: the empty cell below takes the spare height.
    m_sideHolder = new QCPLayoutGrid;
    plotLayout()->addElement(plotLayout()->rowCount(), 0, m_sideHolder);
    m_sideHolder->addElement(1, 0, new QCPLayoutElement(this));
    plotLayout()->take(m_sideHolder);
    plotLayout()->simplify();
    m_sideHolder->setRowStretchFactor(1, 1.0);
    m_sideHolder->setMargins(QMargins(0, 0, 0, 0));
    m_title = new QCPTextElement(this);
    m_title->setVisible(false);
    legend->setVisible(true);
    legend->setBorderPen(Qt::NoPen);
    legend->setBrush(Qt::NoBrush);
    legend->setIconSize(QSize(14, 10));
    legend->setRowSpacing(2);
    legend->setColumnSpacing(12);
    m_rowScroll = new QScrollBar(Qt::Vertical, this);
    m_rowScroll->setObjectName(QStringLiteral("rowScroll"));
    m_rowScroll->hide();
    connect(m_rowScroll, &QScrollBar::valueChanged, this, &TimelinePlot::setFirstRow);
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setMinimumSize(200, 120);
    applyStyle();
    applyLayout();
}

TimelinePlot::~TimelinePlot()
{
    if (!m_legendHolder->layout()) // not owned by the plot layout while the legend is elsewhere
        delete m_legendHolder;
    if (!m_sideHolder->layout())
        delete m_sideHolder;
}

void TimelinePlot::setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis,
    std::shared_ptr<const ViewIndex> index)
{
    m_selection.reset();
    m_links.clear();
    m_search.reset();
    m_legendLine = 0;
    m_hover.reset();
    m_highlightName = kInvalidString;
    m_scene.trace = std::move(trace);
    m_scene.analysis = std::move(analysis);
    m_scene.collectives.reset();
    m_scene.waiting.reset();
    m_scene.index = index ? std::move(index)
                          : (m_scene.trace ? ViewIndex::build(*m_scene.trace, m_scene.analysis.get())
                                           : std::shared_ptr<const ViewIndex>());
    rebuildColors();
    rebuildRows();
    rebuildLegend();
    applyLayout();
    m_firstRow = 0;
    m_history.reset(fitRange());
    setVisibleRange(fitRange(), false);
    replot(rpQueuedReplot);
}

void TimelinePlot::setCollectives(std::shared_ptr<const CollectiveMatch> collectives)
{
    m_scene.collectives = std::move(collectives);
    m_scene.waiting
        = m_scene.collectives && m_scene.index ? WaitingOverlap::build(*m_scene.index, *m_scene.collectives) : nullptr;
    ++m_scene.generation;
    rebuildLegend();
    applyLayout();
    replot(rpQueuedReplot);
}

void TimelinePlot::clearTrace()
{
    setTrace(nullptr, nullptr, nullptr);
}

void TimelinePlot::setOptions(const TimelineOptions& options)
{
    const bool paletteChanged = options.palette != m_scene.options.palette;
    m_scene.options = options;
    m_scene.options.range.reset();
    if (paletteChanged) {
        applyStyle();
        rebuildColors();
    }
    m_ticker->setUnit(options.timeUnit);
    m_ticker->setOrigin(double(options.timeOrigin));
    rebuildRows();
    applyStyle();
    rebuildLegend();
    applyLayout();
    if (options.range)
        setVisibleRange(*options.range);
    replot(rpQueuedReplot);
}

TimelineOptions TimelinePlot::options() const
{
    TimelineOptions o = m_scene.options;
    o.range = visibleRange();
    return o;
}

QStringList TimelinePlot::rowLabels() const
{
    QStringList out;
    for (const auto& r : m_scene.rows)
        out << QString::fromStdString(r.label);
    return out;
}

void TimelinePlot::rebuildRows()
{
    ++m_scene.generation;
    m_plottable->invalidate();
    if (!m_scene.trace || !m_scene.index) {
        m_scene.rows.clear();
        m_scene.groups.clear();
    } else {
        m_scene.groups = groupRanks(*m_scene.trace, m_scene.options.grouping);
        RowFilter filter = m_scene.options.rowFilter();
        filter.groups = m_scene.groups;
        m_scene.rows = buildRows(*m_scene.trace, *m_scene.index, filter);
    }
    QMap<double, QString> ticks;
    for (std::size_t i = 0; i < m_scene.rows.size(); ++i) {
        const auto& row = m_scene.rows[i];
        QString label = QString::fromStdString(row.label);
        const bool group = row.kind == TimelineRow::Kind::Group;
        // A disclosure mark: clicking the label collapses / expands the rank or the group.
        const bool collapsed = group ? m_scene.options.collapsedGroups.count(row.group) > 0
                                     : m_scene.options.collapsedRanks.count(row.rank) > 0;
        if (row.firstOfRank && m_scene.options.disclosureMarks)
            label = (collapsed ? QStringLiteral("\u25B8 ") : QStringLiteral("\u25BE ")) + label;
        if (!group && row.group >= 0) // a rank inside an expanded group: indented under its header
            label = QStringLiteral("   ") + label;
        ticks.insert(double(i), label + QLatin1Char(' '));
    }
    m_rowLabels = ticks;
    updateRowTicks();
    yAxis->setRange(-0.5, std::max<double>(0.5, double(m_scene.rows.size()) - 0.5)); // refined in updateLayout()
    if (m_selection && m_scene.rowOf(m_selection->rank, m_selection->lane) < 0) {
        m_selection.reset();
        m_links.clear();
    }
    m_hover.reset();
}

void TimelinePlot::updateLayout()
{
    // The row height cap depends on the axis rect's final height, known only after the layout pass;
    // redo the pass when it changes the value range, so that every render of a given size is identical.
    QCustomPlot::updateLayout();
    if (updateRowRange())
        QCustomPlot::updateLayout();
    // Fewer or more row labels change the left margin: lay out again until the choice holds.
    for (int pass = 0; pass < 2 && updateRowTicks(); ++pass) {
        QCustomPlot::updateLayout();
        updateRowRange();
    }
}

bool TimelinePlot::updateRowTicks()
{
    const double rows = yAxis->range().size();
    const double rowPx = rows > 0 ? double(axisRect()->height()) / rows : 0;
    const QFontMetricsF fm(yAxis->tickLabelFont());
    const double linePx = fm.height();
    // Rows thinner than a line: one label per rank, in the middle of its band (see below).
    const bool headers = rowPx > 0 && rowPx < linePx;
    const int maxPx = m_scene.options.maxRowLabelPixels;
    auto fit = [&](const QString& text) {
        return maxPx > 0 && fm.horizontalAdvance(text) > maxPx ? fm.elidedText(text, Qt::ElideMiddle, maxPx) : text;
    };
    QMap<double, QString> ticks;
    auto apply = [&] {
        if (ticks == m_rowTicker->ticks())
            return false;
        m_rowTicker->setTicks(ticks);
        return true;
    };
    if (!headers) {
        // One row per rank (the overlap rows, say): the rank names them.
        const auto bands = rankBands();
        const bool rankRows = !m_scene.options.disclosureMarks && !bands.empty()
            && std::all_of(bands.begin(), bands.end(), [](const auto& b) { return b.second == 1; });
        for (auto it = m_rowLabels.begin(); it != m_rowLabels.end(); ++it)
            ticks.insert(it.key(), fit(rankRows ? rankLabel(int(it.key())) + QLatin1Char(' ') : it.value()));
        return apply();
    }
    // A label's line stays inside the rows (at the top and the bottom it moves inwards), and a label is left out
    // where it would come closer than a line to the previous one.
    const double halfLine = linePx / 2 / rowPx;
    const QCPRange shown = yAxis->range();
    double previous = -1e9;
    for (const auto& [first, count] : rankBands()) {
        double at = first + (count - 1) / 2.0;
        if (shown.size() > 2 * halfLine)
            at = std::clamp(at, shown.lower + halfLine, shown.upper - halfLine);
        if ((at - previous) * rowPx < linePx)
            continue;
        ticks.insert(at, fit(rankLabel(first) + QLatin1Char(' ')));
        previous = at;
    }
    return apply();
}

QString TimelinePlot::rankLabel(int row) const
{
    const TimelineRow& r = m_scene.rows[std::size_t(row)];
    if (r.kind == TimelineRow::Kind::Group && std::size_t(r.group) < m_scene.groups.size())
        return QString::fromStdString(m_scene.groups[std::size_t(r.group)].label);
    const int rank = r.rank;
    return m_scene.trace && std::size_t(rank) < m_scene.trace->ranks.size()
        ? QString::fromStdString(m_scene.trace->ranks[std::size_t(rank)].label)
        : QString::number(rank);
}

std::vector<std::pair<int, int>> TimelinePlot::rankBands() const
{
    std::vector<std::pair<int, int>> bands; // (first row, row count) per rank, in row order
    for (std::size_t i = 0; i < m_scene.rows.size(); ++i) {
        if (m_scene.rows[i].firstOfRank || bands.empty())
            bands.emplace_back(int(i), 0);
        ++bands.back().second;
    }
    return bands;
}

bool TimelinePlot::updateRowRange()
{
    // Rows fill the height, but never grow taller than maxRowPixels: with few rows they stay at the top
    // instead of becoming huge slabs; nor thinner than minRowPixels: then a window of rows scrolls.
    const double maxRowPx = m_scene.options.maxRowPixels;
    const double minRowPx = m_scene.options.minRowPixels;
    const int rowCount = std::max(1, int(m_scene.rows.size()));
    const double height = axisRect()->height();
    int shown = rowCount;
    if (minRowPx > 0 && height > 0 && rowCount * minRowPx > height)
        shown = std::max(1, int(std::floor(height / minRowPx)));
    m_shownRows = shown;
    m_firstRow = std::clamp(m_firstRow, 0, rowCount - shown);
    double fit = maxRowPx > 0 ? std::max(double(shown), height / maxRowPx) : double(shown);
    // Whole pixels per row (the spare pixels stay empty below the last row): rows doing the same work look alike.
    if (height > 0 && std::floor(height / fit) >= 1)
        fit = height / std::floor(height / fit);
    const QCPRange wanted(m_firstRow - 0.5, m_firstRow + fit - 0.5);
    updateRowScrollBar();
    if (yAxis->range() == wanted)
        return false;
    yAxis->setRange(wanted);
    return true;
}

void TimelinePlot::updateRowScrollBar()
{
    const int rowCount = int(m_scene.rows.size());
    const bool needed = m_shownRows < rowCount;
    const int w = m_rowScroll->sizeHint().width();
    const QMargins margins(0, 0, needed ? w : 0, 0);
    if (plotLayout()->margins() != margins)
        plotLayout()->setMargins(margins);
    m_rowScroll->setVisible(needed && isVisible());
    if (!needed)
        return;
    const QRect ar = axisRect()->rect();
    m_rowScroll->setGeometry(width() - w, ar.top(), w, ar.height());
    const QSignalBlocker block(m_rowScroll);
    m_rowScroll->setRange(0, rowCount - m_shownRows);
    m_rowScroll->setPageStep(m_shownRows);
    m_rowScroll->setValue(m_firstRow);
}

void TimelinePlot::setFirstRow(int row)
{
    const int rowCount = int(m_scene.rows.size());
    const int first = std::clamp(row, 0, std::max(0, rowCount - m_shownRows));
    if (first == m_firstRow)
        return;
    m_firstRow = first;
    updateRowRange();
    m_plottable->invalidate();
    replot(rpQueuedReplot);
}

void TimelinePlot::ensureRowVisible(int row)
{
    if (row < m_firstRow)
        setFirstRow(row);
    else if (row >= m_firstRow + m_shownRows)
        setFirstRow(row - m_shownRows + 1);
}

namespace {
// The rules the analysis classified with, whose "colours" the palette paints (null: the built-in ones).
std::shared_ptr<const Rules> rulesOf(const std::shared_ptr<const Analysis>& analysis)
{
    return analysis ? std::shared_ptr<const Rules>(analysis, &analysis->rules) : nullptr;
}
} // namespace

void TimelinePlot::rebuildColors()
{
    ++m_scene.generation;
    m_scene.palette = Palette(m_scene.options.palette, palette(), rulesOf(m_scene.analysis));
    m_scene.nameColors.clear();
    m_scene.classColors.clear();
    if (!m_scene.trace)
        return;
    const auto& trace = *m_scene.trace;
    const Analysis* a = m_scene.analysis.get();
    m_scene.nameColors.resize(trace.strings.size());
    for (std::size_t id = 0; id < trace.strings.size(); ++id) {
        const Category c = categoryOf(trace, a, StringId(id));
        const std::string sg = a && id < a->names.size() ? a->names[id].subgroup : std::string();
        m_scene.nameColors[id] = m_scene.palette.block(c, sg);
    }
    if (m_scene.index)
        for (const PaintClass& pc : m_scene.index->paintClasses)
            m_scene.classColors.push_back(m_scene.palette.block(pc.category, pc.subgroup));
}

void TimelinePlot::applyStyle()
{
    m_scene.palette = Palette(m_scene.options.palette, palette(), rulesOf(m_scene.analysis));
    const Palette& pal = m_scene.palette;
    const auto& o = m_scene.options;
    QFont font = QApplication::font();
    if (!o.fontFamily.isEmpty())
        font.setFamily(o.fontFamily);
    if (o.fontPointSize > 0)
        font.setPointSizeF(o.fontPointSize);
    setBackground(pal.background());
    for (QCPAxis* axis : { xAxis, yAxis }) {
        axis->setTickLabelFont(font);
        axis->setLabelFont(font);
        axis->setTickLabelColor(pal.text());
        axis->setLabelColor(pal.text());
        axis->setBasePen(axis == yAxis ? QPen(Qt::NoPen) : QPen(pal.text(), 0));
        axis->setTickPen(axis == yAxis ? QPen(Qt::NoPen) : QPen(pal.text(), 0));
        axis->setSubTickPen(QPen(pal.text(), 0));
        axis->grid()->setPen(QPen(pal.grid(), 0, Qt::DotLine));
        axis->grid()->setZeroLinePen(QPen(pal.grid(), 0, Qt::DotLine));
    }
    xAxis->setLabel(o.timeAxisLabel);
    legend->setFont(font);
    legend->setTextColor(pal.text());
    QFont titleFont = font;
    titleFont.setPointSizeF(font.pointSizeF() * 1.3);
    titleFont.setBold(true);
    m_title->setFont(titleFont);
    m_title->setTextColor(pal.text());
}

std::optional<TimelineHit> TimelinePlot::hitAt(const QPoint& pos) const
{
    if (!m_scene.trace || !axisRect()->rect().contains(pos))
        return std::nullopt;
    const int row = m_plottable->rowAtPixel(pos.y());
    if (row < 0)
        return std::nullopt;
    const QRect band = m_plottable->rowBand(row);
    if (!band.contains(QPoint(band.left(), pos.y())))
        return std::nullopt;
    const auto& items = m_plottable->items(row);
    const double x = pos.x() - std::floor(m_plottable->xOrigin());
    const auto k = HitTester::itemAt(items, x, 3);
    if (!k)
        return std::nullopt;
    const DrawItem& item = items[*k];
    TimelineHit h;
    h.row = row;
    h.rank = m_scene.rows[row].rank;
    h.lane = m_scene.rows[row].lane;
    h.overlapRow = m_scene.rows[row].kind == TimelineRow::Kind::Overlap;
    // Depth sub-rows draw their own tables: report indexes into the lane's table.
    h.first = m_scene.laneInterval(row, item.first);
    h.count = item.count;
    h.largest = m_scene.laneInterval(row, item.largest);
    h.start = item.start;
    h.end = item.end;
    return h;
}

void TimelinePlot::select(const TimelineSelection& sel, bool ensureVisible)
{
    if (!m_scene.trace || sel.rank < 0 || std::size_t(sel.rank) >= m_scene.trace->ranks.size())
        return;
    const auto& lanes = m_scene.trace->ranks[sel.rank].lanes;
    if (sel.lane < 0 || std::size_t(sel.lane) >= lanes.size() || sel.interval >= lanes[sel.lane].intervals.size())
        return;
    m_selection = sel;
    m_links = m_scene.analysis ? launchLinksOf(*m_scene.trace, *m_scene.analysis, sel) : std::vector<LaunchLink> {};
    if (ensureVisible) {
        // Scroll (keeping the zoom) so that the whole instance is in view, centred; one wider than the view is
        // shown whole, with a margin. Its row scrolls into view too.
        const auto& t = lanes[sel.lane].intervals;
        const TimeRange v = visibleRange();
        const TimeNs s = t.start(sel.interval), e = t.end(sel.interval);
        if (e - s > v.duration()) {
            const TimeNs pad = (e - s) / 10;
            setVisibleRange({ s - pad, e + pad });
        } else if (s < v.start || e > v.end) {
            const TimeNs mid = s + (e - s) / 2;
            setVisibleRange({ mid - v.duration() / 2, mid - v.duration() / 2 + v.duration() });
        }
        if (const int row = m_scene.rowOf(sel); row >= 0)
            ensureRowVisible(row);
    }
    refreshOverlay();
    emit intervalSelected(sel);
}

void TimelinePlot::clearSelection()
{
    if (!m_selection)
        return;
    m_selection.reset();
    m_links.clear();
    refreshOverlay();
    emit selectionCleared();
}

std::optional<QPoint> TimelinePlot::pixelOf(IntervalRef ref) const
{
    const int row = m_scene.rowOf(ref);
    if (row < 0 || !m_scene.trace)
        return std::nullopt;
    const auto& t = m_scene.trace->ranks[std::size_t(ref.rank)].lanes[std::size_t(ref.lane)].intervals;
    const QRect box
        = m_plottable->boxRect(row, t.start(ref.interval), t.end(ref.interval)).intersected(axisRect()->rect());
    if (box.isEmpty())
        return std::nullopt;
    return box.center();
}

void TimelinePlot::setHighlightedName(StringId name)
{
    m_highlightName = name;
    refreshOverlay();
}

void TimelinePlot::refreshOverlay()
{
    // Only the buffered overlay layer is redrawn.
    if (auto* l = layer(QStringLiteral("highlight")))
        l->replot();
}

void TimelinePlot::mousePressEvent(QMouseEvent* event)
{
    m_pressPos = event->pos();
    m_dragged = false;
    setFocus(Qt::MouseFocusReason);
    if (event->button() == Qt::LeftButton && event->pos().x() < axisRect()->left()
        && event->pos().y() >= axisRect()->top() && event->pos().y() <= axisRect()->bottom()) {
        // Clicking a rank's label collapses / expands the rank.
        const int row = m_plottable->rowAtPixel(event->pos().y());
        if (row >= 0 && m_scene.rows[row].kind == TimelineRow::Kind::Group)
            toggleGroupCollapsed(m_scene.rows[row].group);
        else if (row >= 0 && m_scene.rows[row].firstOfRank)
            toggleRankCollapsed(m_scene.rows[row].rank);
        return;
    }
    m_rubberBand = event->modifiers() & (Qt::ShiftModifier | Qt::ControlModifier);
    setSelectionRectMode(m_rubberBand ? QCP::srmCustom : QCP::srmNone);
    QCustomPlot::mousePressEvent(event);
}

void TimelinePlot::mouseMoveEvent(QMouseEvent* event)
{
    QCustomPlot::mouseMoveEvent(event);
    if (event->buttons() != Qt::NoButton) {
        if ((event->pos() - m_pressPos).manhattanLength() > 3)
            m_dragged = true;
        return;
    }
    if (axisRect()->rect().contains(event->pos()))
        emit cursorTimeChanged(qint64(std::llround(xAxis->pixelToCoord(event->pos().x()))));
    const auto hit = hitAt(event->pos());
    if (const QString group = hit ? QString() : groupTooltipAt(event->pos()); !group.isEmpty()) {
        if (m_hover) {
            m_hover.reset();
            refreshOverlay();
        }
        QToolTip::showText(event->globalPosition().toPoint(), group, this);
        return;
    }
    const bool changed = hit.has_value() != m_hover.has_value()
        || (hit && (hit->row != m_hover->row || hit->first != m_hover->first || hit->count != m_hover->count));
    if (!changed)
        return;
    m_hover = hit;
    refreshOverlay();
    if (hit)
        QToolTip::showText(event->globalPosition().toPoint(), tooltipFor(*hit), this);
    else
        QToolTip::hideText();
}

void TimelinePlot::mouseReleaseEvent(QMouseEvent* event)
{
    QCustomPlot::mouseReleaseEvent(event);
    if (event->button() != Qt::LeftButton)
        return;
    if (m_rubberBand) {
        m_rubberBand = false;
        setSelectionRectMode(QCP::srmNone);
        return;
    }
    if (m_dragged || (event->pos() - m_pressPos).manhattanLength() > 3) {
        commitRange();
        return;
    }
    if (const auto link = linkAt(event->pos())) {
        followLink(*link);
        return;
    }
    const auto hit = hitAt(event->pos());
    if (!hit) {
        clearSelection();
        return;
    }
    if (hit->overlapRow)
        return;
    if (hit->count > 1) {
        select({ hit->rank, hit->lane, hit->largest });
        emit foldClicked(*hit);
        return;
    }
    select({ hit->rank, hit->lane, hit->first });
}

void TimelinePlot::wheelEvent(QWheelEvent* event)
{
    // Over a legend that does not show every line: scroll its lines.
    if (legend->visible() && legendScrolls() && legend->outerRect().contains(event->position().toPoint())) {
        const QPoint d = event->angleDelta();
        scrollLegend((d.y() != 0 ? d.y() : d.x()) > 0 ? -1 : 1);
        event->accept();
        return;
    }
    // Shift + wheel scrolls the rows when they do not all fit; the plain wheel zooms time.
    if ((event->modifiers() & Qt::ShiftModifier) && m_shownRows < int(m_scene.rows.size())) {
        const QPoint d = event->angleDelta();
        const int delta = d.y() != 0 ? d.y() : d.x();
        setFirstRow(m_firstRow - delta / 40);
        event->accept();
        return;
    }
    QCustomPlot::wheelEvent(event); // zooms around the cursor; onKeyRangeChanged commits when it settles
}

void TimelinePlot::leaveEvent(QEvent* event)
{
    QCustomPlot::leaveEvent(event);
    if (m_hover) {
        m_hover.reset();
        refreshOverlay();
    }
}

void TimelinePlot::changeEvent(QEvent* event)
{
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange) {
        applyStyle();
        rebuildColors();
        rebuildLegend();
        replot(rpQueuedReplot);
    }
}

void TimelinePlot::resizeEvent(QResizeEvent* event)
{
    QCustomPlot::resizeEvent(event);
    // A legend above or below the plot, wrapped to the width.
    if (m_scene.options.legend && legend->itemCount() > 0
        && (m_scene.options.legendPosition == LegendPosition::Top
            || m_scene.options.legendPosition == LegendPosition::Bottom)) {
        const int before = legend->itemCount() * 1000 + m_legendWrap;
        fillLegend(true);
        if (legend->itemCount() * 1000 + m_legendWrap != before) {
            applyLayout();
            replot(rpQueuedReplot);
        }
    }
}

} // namespace exposure
