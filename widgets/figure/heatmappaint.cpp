// SPDX-License-Identifier: GPL-3.0-or-later
#include "figure/heatmappaint.h"

#include "whatif/whatif.h"

#include <QFontInfo>
#include <QFontMetricsF>
#include <QPainter>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <limits>

namespace exposure {

namespace {

constexpr double kPad = 2; // canvas margin
constexpr double kGap = 3; // between a label and what it labels
constexpr double kBarGap = 6; // between the cells and the colour bar
constexpr double kBarWidth = 8;

// A 1-2-5 step of at least `raw`.
double niceStep(double raw)
{
    if (!(raw > 0))
        return 1;
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double m : { 1.0, 2.0, 5.0, 10.0 })
        if (m * p >= raw * (1 - 1e-9))
            return m * p;
    return 10 * p;
}

QString msText(double ms, double step)
{
    const int decimals = std::clamp(int(std::ceil(-std::log10(step) - 1e-9)), 0, 6);
    return QString::number(ms, 'f', decimals);
}

// Every k-th of n items at `spacing` apart gets a label when labels need `need` of room: k from 1, 2, 5, 10, ...
int labelEvery(double spacing, double need)
{
    if (spacing <= 0)
        return std::numeric_limits<int>::max(); // no room: the first label only
    return int(std::max(1.0, niceStep(need / spacing)));
}

PlotText textBox(const QFontMetricsF& fm, const QFont& font, QPointF topLeft, const QString& text, PlotText::Role role)
{
    return { QRectF(topLeft, QSizeF(fm.horizontalAdvance(text), fm.height())), text, font.pointSizeF(), role };
}

void layOutBar(const HeatMapScene& scene, HeatMapLayout& l, const QFontMetricsF& fm, const QFont& font)
{
    const double line = fm.height();
    const double lo = double(scene.matrix.minValue) / 1e6, hi = double(scene.matrix.maxValue) / 1e6;
    std::vector<double> values;
    double step = 1;
    if (hi > lo) {
        const int wanted = std::max(1, int(l.bar.height() / (2 * line)));
        step = niceStep((hi - lo) / wanted);
        for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
            values.push_back(v);
        if (values.size() < 2) { // a short bar: its two ends, so that the scale can be read
            step = niceStep((hi - lo) / 100); // decimals for about 1 % of the range
            values = { lo, hi };
        }
    } else {
        step = lo > 0 ? niceStep(lo / 10) : 1;
        values.push_back(lo);
    }
    for (const double v : values) {
        const double t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
        const double y = l.bar.bottom() - t * l.bar.height();
        const QString label = msText(v, step);
        l.barTicks.emplace_back(y, label);
        l.texts.push_back(
            textBox(fm, font, QPointF(l.bar.right() + kGap, y - line / 2), label, PlotText::Role::TickLabel));
    }
}

} // namespace

QColor heatColour(double t)
{
    static const QColor stops[] = { QColor(0x44, 0x01, 0x54), QColor(0x47, 0x2d, 0x7b), QColor(0x3b, 0x52, 0x8b),
        QColor(0x2c, 0x72, 0x8e), QColor(0x21, 0x91, 0x8c), QColor(0x28, 0xae, 0x80), QColor(0x5e, 0xc9, 0x62),
        QColor(0xad, 0xdc, 0x30), QColor(0xfd, 0xe7, 0x25) };
    constexpr int n = int(std::size(stops)) - 1;
    const double x = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * n;
    const int i = std::min(n - 1, int(std::floor(x)));
    const double f = x - i;
    const QColor& a = stops[i];
    const QColor& b = stops[i + 1];
    auto mix = [f](int u, int v) { return int(std::lround(u + (v - u) * f)); };
    return QColor(mix(a.red(), b.red()), mix(a.green(), b.green()), mix(a.blue(), b.blue()));
}

QColor heatAbsentColour()
{
    return QColor(0xdd, 0xdd, 0xdd);
}

HeatMapScene HeatMapScene::make(
    std::shared_ptr<const Trace> trace, std::shared_ptr<const StepHeatMap> map, HeatMetric metric, RankOrder order)
{
    HeatMapScene s;
    s.trace = std::move(trace);
    s.map = std::move(map);
    if (s.trace && s.map) {
        s.matrix = heatMatrix(*s.map, metric);
        s.order = orderRanks(*s.trace, s.matrix, order);
    }
    return s;
}

HeatMapScene HeatMapScene::makeSlowdownGrid(
    std::shared_ptr<const Trace> trace, std::shared_ptr<const StepHeatMap> map, const whatif::EvenResult& even)
{
    HeatMapScene s;
    s.trace = std::move(trace);
    s.map = std::move(map);
    const auto& grid = even.grid;
    HeatMatrix& m = s.matrix;
    m.metric = HeatMetric::Slowdown;
    m.rows = std::size_t(grid.dpCount);
    m.columns = std::size_t(grid.ppCount);
    m.values.assign(m.rows * m.columns, 0);
    m.present.assign(m.values.size(), 0);
    m.z.assign(m.values.size(), 0.0);
    m.outlier.assign(m.values.size(), 0);
    bool any = false;
    for (std::size_t i = 0; i < m.values.size() && i < grid.cells.size(); ++i) {
        if (!grid.present[i])
            continue;
        m.present[i] = 1;
        m.values[i] = grid.cells[i].meanStep - even.evenedMean;
        m.minValue = any ? std::min(m.minValue, m.values[i]) : m.values[i];
        m.maxValue = any ? std::max(m.maxValue, m.values[i]) : m.values[i];
        any = true;
    }
    for (int d = 0; d < grid.dpCount; ++d) {
        s.order.push_back(d);
        s.rowLabels.push_back(QString::number(d));
    }
    for (int p = 0; p < grid.ppCount; ++p)
        s.columnLabels.push_back(QString::number(p));
    s.rowTitle = QStringLiteral("DP rank");
    s.columnTitle = QStringLiteral("Pipeline stage");
    return s;
}

QString HeatMapScene::rowLabel(int row) const
{
    if (isGrid())
        return row >= 0 && std::size_t(row) < rowLabels.size() ? rowLabels[std::size_t(row)] : QString();
    return QString::number(trace->ranks[std::size_t(row)].rank);
}

QString HeatMapScene::columnLabel(std::size_t column) const
{
    if (!columnLabels.empty())
        return column < columnLabels.size() ? columnLabels[column] : QString();
    const StepHeatMap::Column& c = map->columns[column];
    static const QRegularExpression trailing(QStringLiteral("(\\d+)\\s*$"));
    const auto m = trailing.match(QString::fromStdString(c.name));
    return m.hasMatch() ? m.captured(1) : QString::number(c.stepIndex);
}

double HeatMapScene::scaleOf(TimeNs value) const
{
    if (matrix.maxValue <= matrix.minValue)
        return 0.5;
    return double(value - matrix.minValue) / double(matrix.maxValue - matrix.minValue);
}

QString HeatMapScene::unitTitle() const
{
    return QStringLiteral("%1 (ms)").arg(QString::fromLatin1(heatMetricTitle(matrix.metric)));
}

QRectF HeatMapLayout::cellRect(int row, int column) const
{
    return QRectF(cells.left() + column * cellW, cells.top() + row * cellH, cellW, cellH);
}

std::optional<std::pair<int, int>> HeatMapLayout::cellAt(QPointF p) const
{
    if (!cells.contains(p) || cellW <= 0 || cellH <= 0)
        return std::nullopt;
    const int rows = int(std::lround(cells.height() / cellH)), columns = int(std::lround(cells.width() / cellW));
    const int row = std::min(rows - 1, int((p.y() - cells.top()) / cellH));
    const int column = std::min(columns - 1, int((p.x() - cells.left()) / cellW));
    return std::make_pair(row, column);
}

HeatMapLayout layOutHeatMap(const HeatMapScene& scene, QSizeF canvas, const QFont& font)
{
    HeatMapLayout l;
    const QFontMetricsF fm(font);
    const double line = fm.height();
    const int rows = int(scene.order.size());
    const int columns = scene.isGrid() ? int(scene.columnCount()) : scene.map ? int(scene.map->columns.size()) : 0;
    double top = kPad;
    if (!scene.title.isEmpty()) {
        const double w = fm.horizontalAdvance(scene.title);
        l.texts.push_back(
            textBox(fm, font, QPointF((canvas.width() - w) / 2, top), scene.title, PlotText::Role::Title));
        top += line + kGap;
    }
    // The header line: the rank axis's title on the left, the colour bar's title (metric and unit) on the right.
    const QString rowTitle = scene.rowTitle.isEmpty() ? QStringLiteral("Rank") : scene.rowTitle;
    l.texts.push_back(textBox(fm, font, QPointF(kPad, top), rowTitle, PlotText::Role::AxisLabel));
    const QString unit = scene.unitTitle();
    // Right-aligned with room for fonts whose glyphs run wider than this one's (an SVG viewer may substitute one).
    const double unitW = std::max(fm.horizontalAdvance(unit), 0.53 * QFontInfo(font).pixelSize() * unit.size());
    l.texts.push_back(textBox(fm, font, QPointF(canvas.width() - kPad - unitW, top), unit, PlotText::Role::AxisLabel));
    // Half a line under the header: the colour bar's top tick label is centred on the cells' top edge.
    top += line + std::max(kGap, line / 2);
    const double bottom = canvas.height() - kPad - 2 * line - kGap;
    l.textHeight = top + (canvas.height() - bottom);
    double rankW = 0;
    for (const int r : scene.order)
        rankW = std::max(rankW, fm.horizontalAdvance(scene.rowLabel(r)));
    // The colour bar's tick labels: the widest the range can give (its ends, with the decimals of a fine step).
    const double hiMs = double(scene.matrix.maxValue) / 1e6;
    const double loMs = double(scene.matrix.minValue) / 1e6;
    const double endStep = niceStep(std::max(hiMs - loMs, 1e-6) / 100); // a short bar's end labels (layOutBar)
    const double tickW = std::max({ fm.horizontalAdvance(msText(hiMs, niceStep(std::max(hiMs, 1e-6) / 50))),
        fm.horizontalAdvance(msText(hiMs, endStep)), fm.horizontalAdvance(msText(loMs, endStep)) });
    const double left = kPad + rankW + kGap;
    const double right = canvas.width() - kPad - tickW - kGap - kBarWidth - kBarGap;
    l.cellW = columns > 0 ? std::max(0.0, right - left) / columns : 0;
    l.cellH = rows > 0 ? std::max(0.0, bottom - top) / rows : 0;
    // Whole pixels where cells are large enough, so that every cell covers the same number of screen pixels.
    if (l.cellW >= 4)
        l.cellW = std::floor(l.cellW);
    if (l.cellH >= 4)
        l.cellH = std::floor(l.cellH);
    l.cells = QRectF(left, top, l.cellW * columns, l.cellH * rows);
    l.bar = QRectF(l.cells.right() + kBarGap, l.cells.top(), kBarWidth, l.cells.height());
    layOutBar(scene, l, fm, font);
    // Rank labels, right-aligned, every k-th row so that they never come closer than a line.
    const int everyRow = labelEvery(l.cellH, line);
    for (int row = 0; row<rows; row = row> rows - everyRow ? rows : row + everyRow) {
        const double y = l.cells.top() + (row + 0.5) * l.cellH;
        const QString label = scene.rowLabel(scene.order[std::size_t(row)]);
        l.rankTicks.emplace_back(row, y);
        l.texts.push_back(textBox(fm, font, QPointF(left - kGap - fm.horizontalAdvance(label), y - line / 2), label,
            PlotText::Role::RowLabel));
    }
    // Step labels below the cells, centred, every k-th column so that there is a space between two; the axis title.
    double stepW = 0;
    for (int c = 0; c < columns; ++c)
        stepW = std::max(stepW, fm.horizontalAdvance(scene.columnLabel(std::size_t(c))));
    const int everyColumn = labelEvery(l.cellW, stepW + fm.horizontalAdvance(QStringLiteral("  ")));
    for (int c = 0; c<columns; c = c> columns - everyColumn ? columns : c + everyColumn) {
        const QString label = scene.columnLabel(std::size_t(c));
        const double x = l.cells.left() + (c + 0.5) * l.cellW;
        l.stepTicks.emplace_back(c, x);
        l.texts.push_back(textBox(fm, font, QPointF(x - fm.horizontalAdvance(label) / 2, l.cells.bottom() + kGap),
            label, PlotText::Role::TickLabel));
    }
    const QString stepTitle = scene.columnTitle.isEmpty() ? QStringLiteral("Step") : scene.columnTitle;
    l.texts.push_back(textBox(fm, font,
        QPointF(l.cells.center().x() - fm.horizontalAdvance(stepTitle) / 2, l.cells.bottom() + kGap + line), stepTitle,
        PlotText::Role::AxisLabel));
    return l;
}

void paintHeatMap(QPainter& painter, const HeatMapScene& scene, const HeatMapLayout& l, const QFont& font, QColor text)
{
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing, false);
    const HeatMatrix& m = scene.matrix;
    for (std::size_t row = 0; row < scene.order.size(); ++row) {
        const std::size_t r = std::size_t(scene.order[row]);
        for (std::size_t c = 0; c < m.columns; ++c) {
            const std::size_t i = m.at(r, c);
            const QColor fill = m.present[i] ? heatColour(scene.scaleOf(m.values[i])) : heatAbsentColour();
            painter.fillRect(l.cellRect(int(row), int(c)), fill);
        }
    }
    // Outliers: a black ring outside a white one, inside the cell (cells keep their size).
    const double ring = std::clamp(std::min(l.cellW, l.cellH) / 6, 0.5, 2.0);
    for (std::size_t row = 0; row < scene.order.size(); ++row) {
        const std::size_t r = std::size_t(scene.order[row]);
        for (std::size_t c = 0; c < m.columns; ++c) {
            if (!m.outlier[m.at(r, c)])
                continue;
            const QRectF cell = l.cellRect(int(row), int(c));
            painter.setBrush(Qt::NoBrush);
            painter.setPen(QPen(Qt::black, ring, Qt::SolidLine, Qt::SquareCap, Qt::MiterJoin));
            painter.drawRect(cell.adjusted(ring / 2, ring / 2, -ring / 2, -ring / 2));
            painter.setPen(QPen(Qt::white, ring, Qt::SolidLine, Qt::SquareCap, Qt::MiterJoin));
            painter.drawRect(cell.adjusted(ring * 1.5, ring * 1.5, -ring * 1.5, -ring * 1.5));
        }
    }
    // The colour bar: one band per bar pixel row (a gradient would not be byte-stable across back ends).
    const int bands = std::max(1, int(std::ceil(l.bar.height())));
    for (int b = 0; b < bands; ++b) {
        const double t = 1.0 - (b + 0.5) / bands;
        const double y0 = l.bar.top() + l.bar.height() * b / bands, y1 = l.bar.top() + l.bar.height() * (b + 1) / bands;
        painter.fillRect(QRectF(l.bar.left(), y0, l.bar.width(), y1 - y0), heatColour(t));
    }
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setPen(QPen(text, 0.75));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(l.bar);
    for (const auto& [y, label] : l.barTicks)
        painter.drawLine(QPointF(l.bar.right(), y), QPointF(l.bar.right() + 2, y));
    for (const auto& [row, y] : l.rankTicks)
        painter.drawLine(QPointF(l.cells.left() - 2, y), QPointF(l.cells.left(), y));
    for (const auto& [column, x] : l.stepTicks)
        painter.drawLine(QPointF(x, l.cells.bottom()), QPointF(x, l.cells.bottom() + 2));
    painter.setFont(font);
    for (const PlotText& t : l.texts)
        painter.drawText(t.rect, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextDontClip, t.text);
    painter.restore();
}

} // namespace exposure
