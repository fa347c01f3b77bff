// SPDX-License-Identifier: GPL-3.0-or-later
// The legend of TimelinePlot: which classes it names, how it wraps, and where it and the title sit.
#include "timeline/timelinelegend.h"

#include "common/labels.h"
#include "timeline/timelineplot.h"

#include <algorithm>
#include <numeric>

namespace exposure {

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
        out.push_back({ pal.hiddenBrush(), overlapStateShortLabel(OverlapState::Hidden), false, Qt::white });
    if (drawn.exposed)
        out.push_back({ pal.exposedBrush(), overlapStateShortLabel(OverlapState::Exposed), false, Qt::white });
    // The waiting states of overlap rows: a solid colour, hatched over it in greyscale.
    auto state = [&](OverlapState st, const QString& text) {
        const QBrush pattern = pal.overlapPattern(st);
        if (pattern.style() == Qt::NoBrush)
            out.push_back({ QBrush(pal.overlap(st)), text, false, Qt::white });
        else
            out.push_back({ pattern, text, false, pal.overlap(st) });
    };
    if (drawn.waitingExposed)
        state(OverlapState::WaitingExposed, overlapStateShortLabel(OverlapState::WaitingExposed));
    if (drawn.waitingHidden)
        state(OverlapState::WaitingHidden, overlapStateShortLabel(OverlapState::WaitingHidden));
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
    // Overlap rows and group rows (which paint their ranks' overlap states) show the states.
    const bool states = o.showOverlap
        || std::any_of(m_scene.rows.begin(), m_scene.rows.end(),
            [](const TimelineRow& r) { return r.kind == TimelineRow::Kind::Group; });
    d.waitingExposed = d.waitingExposed && states;
    d.waitingHidden = d.waitingHidden && states;
    d.waitingBlocks = m_scene.waiting && d.communication;
    d.computeOnly = true;
    d.idle = states; // overlap rows show idle time as a grey band, group rows as their ranks' idle share
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
    // On screen the legend takes at most a fifth of the plot's height: beyond that it shows a window of its lines and
    // scrolls (the wheel over it; the last entry says where it is), so that no entry is out of reach. A figure checks
    // its legend instead (FigureRenderer).
    m_legendLines = m_legendShownLines = 0;
    if (!horizontal || m_scene.options.legendDrawnOnly || legend->itemCount() == 0 || height() <= 0)
        return;
    const int columns = std::max(1, m_legendWrap);
    const int line = legend->item(0)->minimumOuterSizeHint().height() + legend->rowSpacing();
    const int fit
        = std::max(1, (height() / 5 - legend->margins().top() - legend->margins().bottom()) / std::max(1, line));
    const int entries = int(m_legendEntries.size());
    const int lines = (entries + columns - 1) / columns;
    if (lines <= fit)
        return;
    // `fit` lines of which the last slot is the scroll note: `shown` entries from line m_legendLine on.
    m_legendLines = (entries + 1 + columns - 1) / columns;
    m_legendShownLines = fit;
    m_legendLine = std::clamp(m_legendLine, 0, m_legendLines - fit);
    const int first = m_legendLine * columns;
    const int shown = std::min(entries - first, fit * columns - 1);
    legend->clearItems();
    for (int i = first; i < first + shown; ++i) {
        const LegendEntry& e = m_legendEntries[std::size_t(i)];
        legend->addItem(new SwatchLegendItem(legend, e.brush, e.text, e.outlined, e.base));
    }
    legend->addItem(new SwatchLegendItem(legend, QBrush(Qt::NoBrush),
        tr("↕ %1–%2 of %3").arg(first + 1).arg(first + shown).arg(entries), false, QColor(Qt::transparent)));
    m_legendWrap = wrapLegend(width());
}

bool TimelinePlot::scrollLegend(int lines)
{
    if (m_legendLines <= m_legendShownLines)
        return false;
    const int line = std::clamp(m_legendLine + lines, 0, m_legendLines - m_legendShownLines);
    if (line == m_legendLine)
        return true;
    m_legendLine = line;
    fillLegend(true);
    applyLayout();
    replot(rpQueuedReplot);
    return true;
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

} // namespace exposure
