// SPDX-License-Identifier: GPL-3.0-or-later
// The text of TimelinePlot: where its labels lie (textBoxes), tooltips and the composition of folded blocks.
#include "common/labels.h"
#include "model/timeformat.h"
#include "timeline/timelinelegend.h"
#include "timeline/timelineplot.h"

#include <QFontMetricsF>
#include <algorithm>
#include <cmath>
#include <numeric>

namespace exposure {

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
    // Where it ran: the rank's host, where the trace names it.
    const Rank& rank = trace.ranks[std::size_t(h.rank)];
    const QString where = rank.host.empty() ? QString()
                                            : QStringLiteral("\n")
            + tr("%1 on %2").arg(QString::fromStdString(rank.label), QString::fromStdString(rank.host));
    return tr("%1\n%2 · %3").arg(name, durationText(table.duration(h.largest)), catText) + where;
}

QString TimelinePlot::groupTooltipAt(const QPoint& pos) const
{
    if (!m_scene.trace || !axisRect()->rect().contains(pos))
        return {};
    const int row = m_plottable->rowAtPixel(pos.y());
    if (row < 0 || m_scene.rows[std::size_t(row)].kind != TimelineRow::Kind::Group)
        return {};
    const TimelineRow& r = m_scene.rows[std::size_t(row)];
    const ColumnGrid grid = m_plottable->currentGrid();
    const int x = int(std::floor(pos.x() - std::floor(m_plottable->xOrigin())));
    const TimeRange span { grid.edge(x - 2), std::max(grid.edge(x + 3), grid.edge(x - 2) + 1) };
    const auto members = m_scene.groupMembers(r.group);
    const auto times = groupStateTimes(members, span, m_scene.trace->extent);
    const TimeNs total = std::accumulate(times.begin(), times.end(), TimeNs(0));
    if (total <= 0)
        return {};
    std::vector<int> order(kGroupStateCount);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(
        order.begin(), order.end(), [&](int a, int b) { return times[std::size_t(a)] > times[std::size_t(b)]; });
    QStringList parts;
    for (const int st : order)
        if (times[std::size_t(st)] > 0)
            parts << QStringLiteral("%1 %2 %").arg(m_scene.classLabel(row, std::uint8_t(st)),
                QString::number(100.0 * double(times[std::size_t(st)]) / double(total), 'f', 1));
    return tr("%1 \u00B7 %2 ranks, %3 around the cursor\n%4")
        .arg(QString::fromStdString(m_scene.groups[std::size_t(r.group)].label), QString::number(members.size()),
            durationText(span.duration()), parts.join(QStringLiteral(", ")));
}

} // namespace exposure
