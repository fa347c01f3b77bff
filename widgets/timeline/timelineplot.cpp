// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/timelineplot.h"

#include "common/labels.h"
#include "model/timeformat.h"
#include "timeline/timeaxisticker.h"
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

namespace {

// A colour swatch and a text; the legend lists categories, not plottables.
class SwatchLegendItem : public QCPAbstractLegendItem
{
public:
    SwatchLegendItem(QCPLegend* legend, QBrush brush, QString text, bool outlined = false, QColor base = Qt::white)
        : QCPAbstractLegendItem(legend)
        , m_brush(std::move(brush))
        , m_text(std::move(text))
        , m_outlined(outlined)
        , m_base(std::move(base))
    {
        setSelectable(false);
        // An item is laid out exactly one text line tall and QCustomPlot clips it to that: without some air the
        // descenders of g, p, y are cut (as figure export found first).
        setMargins(QMargins(0, 1, 0, 2));
    }

protected:
    void draw(QCPPainter* painter) override
    {
        const QSize icon = mParentLegend->iconSize();
        const QRect r = mRect;
        const QRect swatch(r.left(), r.top() + (r.height() - icon.height()) / 2, icon.width(), icon.height());
        painter->setPen(m_outlined ? QPen(mParentLegend->textColor(), 1) : QPen(Qt::NoPen));
        painter->setBrush(m_brush);
        painter->fillRect(swatch, m_brush.style() == Qt::SolidPattern ? m_brush : QBrush(m_base));
        if (m_brush.style() != Qt::SolidPattern)
            painter->fillRect(swatch, m_brush);
        if (m_outlined) {
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(swatch.adjusted(0, 0, -1, -1));
        }
        painter->setFont(mParentLegend->font());
        painter->setPen(mParentLegend->textColor());
        // Not clipped to the line: scaled for print, glyph descenders can reach below the font's nominal height.
        painter->drawText(QRect(swatch.right() + 1 + mParentLegend->iconTextPadding(), r.top(), r.width(), r.height()),
            Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip, m_text);
    }
    QSize minimumOuterSizeHint() const override
    {
        const QFontMetrics fm(mParentLegend->font());
        const QSize icon = mParentLegend->iconSize();
        const int w = icon.width() + mParentLegend->iconTextPadding() + fm.horizontalAdvance(m_text) + 4;
        const int h = std::max(icon.height(), fm.height());
        return QSize(w + mMargins.left() + mMargins.right(), h + mMargins.top() + mMargins.bottom());
    }

public:
    const QString& text() const { return m_text; }

protected:
    // Legend items clip to their outer rect; a line of text scaled for print may reach a little past it.
    QRect clipRect() const override { return mOuterRect.adjusted(0, -2, 0, 3); }

private:
    QBrush m_brush;
    QString m_text;
    bool m_outlined;
    QColor m_base; // under a pattern brush
};

} // namespace

// Hover, selection and highlighted instances live on their own buffered layer so that moving
// the mouse repaints only this layer, never the millions of boxes below.
class TimelineOverlay : public QCPLayerable
{
public:
    explicit TimelineOverlay(TimelinePlot* plot)
        : QCPLayerable(plot, QStringLiteral("highlight"))
        , m_plot(plot)
    { }

protected:
    void applyDefaultAntialiasingHint(QCPPainter* painter) const override { painter->setAntialiasing(false); }
    QRect clipRect() const override { return m_plot->axisRect()->rect(); }
    void draw(QCPPainter* painter) override
    {
        const TimelinePlottable* p = m_plot->m_plottable;
        const TimelineScene& s = m_plot->m_scene;
        if (!s.trace)
            return;
        painter->setBrush(Qt::NoBrush);
        if (m_plot->m_highlightName != kInvalidString) {
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
    }

private:
    TimelinePlot* m_plot;
};

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
    } else {
        m_scene.rows = buildRows(*m_scene.trace, *m_scene.index, m_scene.options.rowFilter());
    }
    QMap<double, QString> ticks;
    for (std::size_t i = 0; i < m_scene.rows.size(); ++i) {
        const auto& row = m_scene.rows[i];
        QString label = QString::fromStdString(row.label);
        if (row.firstOfRank
            && m_scene.options.disclosureMarks) // a disclosure mark: clicking the label collapses / expands the rank
            label = (m_scene.options.collapsedRanks.count(row.rank) ? QStringLiteral("\u25B8 ")
                                                                    : QStringLiteral("\u25BE "))
                + label;
        ticks.insert(double(i), label + QLatin1Char(' '));
    }
    m_rowLabels = ticks;
    updateRowTicks();
    yAxis->setRange(-0.5, std::max<double>(0.5, double(m_scene.rows.size()) - 0.5)); // refined in updateLayout()
    if (m_selection && m_scene.rowOf(m_selection->rank, m_selection->lane) < 0)
        m_selection.reset();
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
    const int rank = m_scene.rows[std::size_t(row)].rank;
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

void TimelinePlot::rebuildColors()
{
    ++m_scene.generation;
    m_scene.palette = Palette(m_scene.options.palette, palette());
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

std::vector<TimelinePlot::LegendEntry> TimelinePlot::legendEntries() const
{
    std::vector<LegendEntry> out;
    if (!m_scene.trace)
        return out;
    const auto& o = m_scene.options;
    const Palette& pal = m_scene.palette;
    // Rows painted by other processes (exposure-mpi render) have no intervals here: their processes tell what they
    // draw (the drawn-classes source), else the legend names the classes the trace has.
    DrawnClasses drawn;
    if (o.legendDrawnOnly && !m_plottable->hasPaintSource())
        drawn = drawnClasses(visibleRange());
    else if (o.legendDrawnOnly && m_drawnClassesSource)
        drawn = m_drawnClassesSource(visibleRange());
    else
        drawn = presentClasses();
    for (const auto& key : drawn.blocks) {
        // Short names keep the legend narrow enough for several columns in a one-column figure: the sub-group
        // (gemm, AllReduce, HtoD), else the category.
        const auto cat = Category(key.first);
        QString text = categoryLabel(cat);
        if (key.second == "other")
            text = cat == Category::Compute ? tr("other compute") : tr("other %1").arg(text);
        else if (!key.second.empty())
            text = QString::fromStdString(key.second);
        out.push_back({ QBrush(pal.block(cat, key.second)), text, false, Qt::white });
    }
    if (drawn.hidden)
        out.push_back({ pal.hiddenBrush(), tr("hidden comm."), false, Qt::white });
    if (drawn.exposed)
        out.push_back({ pal.exposedBrush(), tr("exposed comm."), false, Qt::white });
    // The waiting states of overlap rows: a solid colour, hatched over it in greyscale.
    auto state = [&](OverlapState st, const QString& text) {
        const QBrush pattern = pal.overlapPattern(st);
        if (pattern.style() == Qt::NoBrush)
            out.push_back({ QBrush(pal.overlap(st)), text, false, Qt::white });
        else
            out.push_back({ pattern, text, false, pal.overlap(st) });
    };
    if (drawn.waitingExposed)
        state(OverlapState::WaitingExposed, tr("waiting for peers"));
    if (drawn.waitingHidden)
        state(OverlapState::WaitingHidden, tr("hidden waiting"));
    if (drawn.computeOnly)
        out.push_back({ QBrush(pal.overlap(OverlapState::ComputeOnly)), tr("compute only"), false, Qt::white });
    if (drawn.otherGpu)
        out.push_back({ QBrush(pal.overlap(OverlapState::Other)), tr("other GPU"), false, Qt::white });
    if (drawn.idle && !drawn.idleBlocks)
        out.push_back({ QBrush(pal.idle()), tr("idle"), false, Qt::white });
    const bool comm = drawn.hidden || drawn.exposed || drawn.waitingExposed || drawn.waitingHidden;
    if (drawn.waitingBlocks && drawn.communication) {
        const QColor base = pal.block(Category::Communication, std::string());
        out.push_back(
            { waitingBrush(pal), drawn.waitingExposed ? tr("waiting (hatch)") : tr("waiting for peers"), false, base });
    }
    if (comm && drawn.compute && o.outlineBackwardOverlap)
        out.push_back({ QBrush(pal.block(Category::Compute, "gemm")), tr("overlaps comm."), true, Qt::white });
    return out;
}

DrawnClasses TimelinePlot::presentClasses() const
{
    // Everything the trace contains on the kinds of rows shown, in a fixed order.
    DrawnClasses d;
    const auto& trace = *m_scene.trace;
    const Analysis* a = m_scene.analysis.get();
    const auto& o = m_scene.options;
    for (std::size_t id = 0; id < trace.strings.size(); ++id) {
        if (!m_scene.index || id >= m_scene.index->nameStats.size() || m_scene.index->nameStats[id].count == 0)
            continue;
        const Category c = categoryOf(trace, a, StringId(id));
        if (c == Category::Host && !o.showCpu)
            continue;
        d.blocks.insert(legendKey(c, a && id < a->names.size() ? a->names[id].subgroup : std::string(), o.palette));
        d.compute = d.compute || c == Category::Compute;
        d.communication = d.communication || c == Category::Communication;
        d.idleBlocks = d.idleBlocks || c == Category::Idle;
    }
    const bool hasOverlap = m_scene.index
        && std::any_of(m_scene.index->overlap.begin(), m_scene.index->overlap.end(),
            [](const IntervalTable& t) { return !t.empty(); });
    if (!hasOverlap)
        return d;
    for (const IntervalTable& t : m_scene.index->overlap)
        for (std::size_t i = 0; i < t.size(); ++i) { // hidden / exposed only with communication
            d.hidden = d.hidden || t.name(i) == StringId(OverlapState::Hidden);
            d.exposed = d.exposed || t.name(i) == StringId(OverlapState::Exposed);
        }
    for (const IntervalTable& t : m_scene.index->overlap)
        for (std::size_t i = 0; i < t.size(); ++i)
            d.otherGpu = d.otherGpu || t.name(i) == StringId(OverlapState::Other);
    if (m_scene.waiting)
        for (const IntervalTable& t : m_scene.waiting->tables)
            for (std::size_t i = 0; i < t.size(); ++i) {
                d.waitingExposed = d.waitingExposed || t.name(i) == StringId(OverlapState::WaitingExposed);
                d.waitingHidden = d.waitingHidden || t.name(i) == StringId(OverlapState::WaitingHidden);
            }
    d.waitingExposed = d.waitingExposed && o.showOverlap;
    d.waitingHidden = d.waitingHidden && o.showOverlap;
    d.waitingBlocks = m_scene.waiting && d.communication;
    d.computeOnly = true;
    d.idle = o.showOverlap; // overlap rows show idle time as a grey band
    return d;
}

DrawnClasses TimelinePlot::drawnClasses(TimeRange range) const
{
    // What the shown rows paint inside `range`: a figure's legend names exactly what the figure shows.
    std::vector<int> rows(m_scene.rows.size());
    std::iota(rows.begin(), rows.end(), 0);
    return exposure::drawnClasses(m_scene, rows, range);
}

void TimelinePlot::rebuildLegend()
{
    legend->clearItems();
    // Horizontal legends fill row by row, wrapped to the plot width; vertical ones are one column.
    const auto pos = m_scene.options.legendPosition;
    const bool horizontal = pos == LegendPosition::Top || pos == LegendPosition::Bottom;
    legend->setFillOrder(horizontal ? QCPLayoutGrid::foColumnsFirst : QCPLayoutGrid::foRowsFirst, false);
    legend->setWrap(0);
    if (!m_scene.options.legend || !m_scene.trace) {
        legend->setVisible(false);
        return;
    }
    legend->setVisible(true);
    m_legendEntries = legendEntries();
    fillLegend(horizontal);
}

void TimelinePlot::fillLegend(bool horizontal)
{
    legend->clearItems();
    for (const LegendEntry& e : m_legendEntries)
        legend->addItem(new SwatchLegendItem(legend, e.brush, e.text, e.outlined, e.base));
    m_legendWrap = horizontal ? wrapLegend(width()) : 0;
    // On screen the legend takes at most a fifth of the plot's height: the entries that do not fit give way to
    // "+N more" (a figure checks its legend instead, see FigureRenderer).
    if (!horizontal || m_scene.options.legendDrawnOnly || legend->itemCount() == 0 || height() <= 0)
        return;
    const int line = legend->item(0)->minimumOuterSizeHint().height() + legend->rowSpacing();
    const int rows
        = std::max(1, (height() / 5 - legend->margins().top() - legend->margins().bottom()) / std::max(1, line));
    const int fit = rows * std::max(1, m_legendWrap);
    if (int(m_legendEntries.size()) <= fit)
        return;
    legend->clearItems();
    const int shown = std::max(0, fit - 1);
    for (int i = 0; i < shown; ++i) {
        const LegendEntry& e = m_legendEntries[std::size_t(i)];
        legend->addItem(new SwatchLegendItem(legend, e.brush, e.text, e.outlined, e.base));
    }
    legend->addItem(new SwatchLegendItem(legend, QBrush(Qt::NoBrush),
        tr("+%1 more").arg(int(m_legendEntries.size()) - shown), false, QColor(Qt::transparent)));
    m_legendWrap = wrapLegend(width());
}

int TimelinePlot::wrapLegend(int availableWidth)
{
    // As many columns as fit the width (entries fill row by row, so column c holds entries c, c + n, ...
    // and is as wide as its widest entry).
    std::vector<int> widths;
    for (int i = 0; i < legend->itemCount(); ++i)
        if (QCPAbstractLegendItem* item = legend->item(i))
            widths.push_back(item->minimumOuterSizeHint().width());
    const QMargins lm = legend->margins();
    const int columns = legendColumnsThatFit(widths, availableWidth - lm.left() - lm.right(), legend->columnSpacing());
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, false);
    legend->setWrap(columns);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    return columns;
}

int legendColumnsThatFit(const std::vector<int>& widths, int available, int spacing)
{
    for (int n = int(widths.size()); n > 1; --n) {
        int total = (n - 1) * spacing;
        for (int c = 0; c < n; ++c) {
            int w = 0;
            for (std::size_t i = std::size_t(c); i < widths.size(); i += std::size_t(n))
                w = std::max(w, widths[i]);
            total += w;
        }
        if (total <= available)
            return n;
    }
    return 1;
}

void TimelinePlot::applyLayout()
{
    // Take title and legend out of wherever they are, then put them where the options say.
    if (m_title->layout())
        m_title->layout()->take(m_title);
    if (legend->layout())
        legend->layout()->take(legend);
    if (m_legendHolder->layout())
        m_legendHolder->layout()->take(m_legendHolder);
    if (m_sideHolder->layout())
        m_sideHolder->layout()->take(m_sideHolder);
    plotLayout()->simplify();
    auto* grid = plotLayout();
    const auto& o = m_scene.options;
    const bool legendShown = o.legend && legend->itemCount() > 0;
    if (legendShown) {
        switch (o.legendPosition) {
        case LegendPosition::Top:
            grid->insertRow(0);
            grid->addElement(0, 0, m_legendHolder);
            m_legendHolder->addElement(0, 0, legend);
            break;
        case LegendPosition::Bottom:
            grid->insertRow(grid->rowCount());
            grid->addElement(grid->rowCount() - 1, 0, m_legendHolder);
            m_legendHolder->addElement(0, 0, legend);
            break;
        case LegendPosition::Right: {
            int axisRow = 0;
            for (int r = 0; r < grid->rowCount(); ++r)
                if (grid->hasElement(r, 0) && grid->element(r, 0) == axisRect())
                    axisRow = r;
            grid->insertColumn(grid->columnCount());
            grid->addElement(axisRow, grid->columnCount() - 1, m_sideHolder);
            m_sideHolder->addElement(0, 0, legend);
            m_sideHolder->setRowStretchFactor(0, 0.001);
            break;
        }
        case LegendPosition::InsideTopRight:
            axisRect()->insetLayout()->addElement(legend, Qt::AlignTop | Qt::AlignRight);
            break;
        }
        legend->setMargins(QMargins(8, 4, 8, 2));
    }
    legend->setVisible(legendShown);
    if (!o.title.isEmpty()) {
        m_title->setText(o.title);
        grid->insertRow(0);
        grid->addElement(0, 0, m_title);
        m_title->setVisible(true);
    } else {
        m_title->setVisible(false);
    }
    // The axis rect takes all the remaining space.
    for (int r = 0; r < grid->rowCount(); ++r)
        grid->setRowStretchFactor(r, grid->element(r, 0) == axisRect() ? 1.0 : 0.001);
    if (m_legendHolder->layout())
        m_legendHolder->setColumnStretchFactor(0, 0.001);
    for (int c = 0; c < grid->columnCount(); ++c) {
        bool side = false;
        for (int r = 0; r < grid->rowCount(); ++r)
            side = side || (grid->hasElement(r, c) && grid->element(r, c) == m_sideHolder);
        grid->setColumnStretchFactor(c, side ? 0.001 : 1.0);
    }
}

void TimelinePlot::applyStyle()
{
    m_scene.palette = Palette(m_scene.options.palette, palette());
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

std::vector<PlotText> TimelinePlot::textBoxes() const
{
    // Where the plot's text lies after the last layout, measured with the fonts QCustomPlot lays it out with
    // (QCPAxisPainterPrivate places tick labels at the axis base line minus offset, tick length and padding).
    std::vector<PlotText> out;
    const QRect ar = axisRect()->rect();
    auto boundsOf = [](const QFont& f, const QString& text) {
        return QFontMetricsF(f).boundingRect(QRectF(), Qt::TextDontClip, text);
    };
    const QFont rowFont = yAxis->tickLabelFont();
    const double right = ar.left() - yAxis->offset() - std::max(0, yAxis->tickLengthOut()) - yAxis->tickLabelPadding();
    const QMap<double, QString> rowTicks = m_rowTicker->ticks();
    for (auto it = rowTicks.begin(); it != rowTicks.end(); ++it) {
        if (!yAxis->range().contains(it.key()) || it.value().trimmed().isEmpty())
            continue;
        const QRectF b = boundsOf(rowFont, it.value());
        const double y = yAxis->coordToPixel(it.key());
        out.push_back({ QRectF(right - b.width(), y - b.height() / 2, b.width(), b.height()), it.value().trimmed(),
            rowFont.pointSizeF(), PlotText::Role::RowLabel });
    }
    const QFont tickFont = xAxis->tickLabelFont();
    const double top
        = ar.bottom() + 1 + xAxis->offset() + std::max(0, xAxis->tickLengthOut()) + xAxis->tickLabelPadding();
    double tickHeight = 0;
    const QVector<double> ticks = xAxis->tickVector();
    const QVector<QString> labels = xAxis->tickVectorLabels();
    for (int i = 0; i < ticks.size() && i < labels.size(); ++i) {
        if (!xAxis->range().contains(ticks[i]) || labels[i].isEmpty())
            continue;
        const QRectF b = boundsOf(tickFont, labels[i]);
        const double x = xAxis->coordToPixel(ticks[i]);
        out.push_back({ QRectF(x - b.width() / 2, top, b.width(), b.height()), labels[i], tickFont.pointSizeF(),
            PlotText::Role::TickLabel });
        tickHeight = std::max(tickHeight, b.height());
    }
    if (!xAxis->label().isEmpty()) {
        const QRectF b = boundsOf(xAxis->labelFont(), xAxis->label());
        out.push_back(
            { QRectF(ar.center().x() - b.width() / 2, top + tickHeight + xAxis->labelPadding(), b.width(), b.height()),
                xAxis->label(), xAxis->labelFont().pointSizeF(), PlotText::Role::AxisLabel });
    }
    if (legend->visible()) {
        const QFont f = legend->font();
        for (int i = 0; i < legend->itemCount(); ++i) {
            const auto* item = dynamic_cast<const SwatchLegendItem*>(legend->item(i));
            if (!item)
                continue;
            const QRect r = item->rect();
            const QRectF b = boundsOf(f, item->text());
            const double x = r.left() + legend->iconSize().width() + 1 + legend->iconTextPadding();
            out.push_back({ QRectF(x, r.center().y() + 0.5 - b.height() / 2, b.width(), b.height()), item->text(),
                f.pointSizeF(), PlotText::Role::Legend });
        }
    }
    if (m_title->visible() && !m_title->text().isEmpty()) {
        const QRectF b = boundsOf(m_title->font(), m_title->text());
        const QRect r = m_title->rect();
        out.push_back({ QRectF(r.center().x() + 0.5 - b.width() / 2, r.center().y() + 0.5 - b.height() / 2, b.width(),
                            b.height()),
            m_title->text(), m_title->font().pointSizeF(), PlotText::Role::Title });
    }
    for (const PlotText& t : m_plottable->drawnLabels())
        out.push_back(t);
    return out;
}

QString FoldComposition::sharesText(int max) const
{
    QStringList parts;
    for (const auto& [label, ns] : classes) {
        if (parts.size() == max) {
            parts << QStringLiteral("…");
            break;
        }
        parts << QStringLiteral("%1 %2 %").arg(
            label, QString::number(100.0 * double(ns) / double(std::max<TimeNs>(1, span)), 'f', 1));
    }
    return parts.join(QStringLiteral(", "));
}

FoldComposition TimelinePlot::foldComposition(const TimelineHit& h) const
{
    FoldComposition fc;
    fc.span = h.end - h.start;
    for (const auto& [cls, ns] : m_scene.classTimes(h.row, h.start, h.end)) {
        const bool busy = m_scene.classIsBusy(h.row, cls);
        if (busy)
            fc.busy += ns;
        if (busy || h.overlapRow)
            fc.classes.emplace_back(m_scene.classLabel(h.row, cls), ns);
    }
    return fc;
}

QString TimelinePlot::tooltipFor(const TimelineHit& h) const
{
    if (!m_scene.trace)
        return {};
    const auto& trace = *m_scene.trace;
    if (h.overlapRow) {
        const auto& t = m_scene.index->overlap[h.rank];
        const auto state = OverlapState(t.name(h.largest));
        if (h.count > 1) {
            // A fold: the exact time of each state in its span (what its column stacks paint), idle included.
            const FoldComposition fc = foldComposition(h);
            QString text = fc.sharesText();
            const double idle
                = 100.0 * double(std::max<TimeNs>(0, fc.span - fc.busy)) / double(std::max<TimeNs>(1, fc.span));
            if (idle >= 0.05)
                text += QStringLiteral(", %1 %2 %").arg(tr("idle"), QString::number(idle, 'f', 1));
            return tr("%1 overlap segments in %2\n%3").arg(groupDigits(h.count), durationText(h.end - h.start), text);
        }
        return tr("%1\n%2").arg(overlapStateLabel(state), durationText(t.duration(h.largest)));
    }
    const auto& table = trace.ranks[h.rank].lanes[h.lane].intervals;
    const StringId id = table.name(h.largest);
    const Analysis* a = m_scene.analysis.get();
    QString name = QString::fromStdString(displayName(trace, a, id));
    if (name.size() > 120)
        name = name.left(117) + QStringLiteral("…");
    const Category cat = categoryOf(trace, a, id);
    QString catText = categoryLabel(cat);
    if (a && id < a->names.size() && !a->names[id].subgroup.empty())
        catText += QStringLiteral(" · ") + QString::fromStdString(a->names[id].subgroup);
    const bool gpu = trace.ranks[h.rank].lanes[h.lane].isGpu();
    if (h.count > 1) {
        // A fold: how busy its span is and the exact time of each class in it (what its column stacks paint).
        const FoldComposition fc = foldComposition(h);
        return tr("%1 %2 in %3, %4 % busy\n%5\nlongest: %6 (%7, %8)")
            .arg(groupDigits(h.count), gpu ? tr("kernels") : tr("regions"), durationText(h.end - h.start),
                QString::number(100.0 * fc.busy / double(std::max<TimeNs>(1, fc.span)), 'f', 1), fc.sharesText(), name,
                durationText(table.duration(h.largest)), catText);
    }
    return tr("%1\n%2 · %3").arg(name, durationText(table.duration(h.largest)), catText);
}

void TimelinePlot::select(const TimelineSelection& sel, bool ensureVisible)
{
    if (!m_scene.trace || sel.rank < 0 || std::size_t(sel.rank) >= m_scene.trace->ranks.size())
        return;
    const auto& lanes = m_scene.trace->ranks[sel.rank].lanes;
    if (sel.lane < 0 || std::size_t(sel.lane) >= lanes.size() || sel.interval >= lanes[sel.lane].intervals.size())
        return;
    m_selection = sel;
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
        if (row >= 0 && m_scene.rows[row].firstOfRank)
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
