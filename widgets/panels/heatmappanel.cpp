// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/heatmappanel.h"

#include "common/labels.h"
#include "whatif/whatif.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>

namespace exposure {

HeatMapView::HeatMapView(QWidget* parent)
    : QWidget(parent)
    , m_emptyText(tr("Open a trace to see its heat map."))
{
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void HeatMapView::setEmptyText(const QString& text)
{
    m_emptyText = text;
    update();
}

void HeatMapView::setScene(HeatMapScene scene)
{
    m_scene = std::move(scene);
    update();
}

HeatMapLayout HeatMapView::currentLayout() const
{
    return layOutHeatMap(m_scene, QSizeF(size()), font());
}

std::optional<QPoint> HeatMapView::cellCentre(int rank, std::size_t column) const
{
    const auto it = std::find(m_scene.order.begin(), m_scene.order.end(), rank);
    const std::size_t columns = m_scene.isGrid() ? m_scene.columnCount()
        : m_scene.map                            ? m_scene.map->columns.size()
                                                 : 0;
    if (!m_scene.map || it == m_scene.order.end() || column >= columns)
        return std::nullopt;
    const QRectF cell = currentLayout().cellRect(int(it - m_scene.order.begin()), int(column));
    return QPoint(int(std::floor(cell.center().x())), int(std::floor(cell.center().y())));
}

void HeatMapView::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Base));
    if (!m_scene.map || m_scene.map->columns.empty() || m_scene.order.empty()) {
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
            m_scene.map ? tr("No training steps: nothing to show per step.") : m_emptyText);
        return;
    }
    paintHeatMap(painter, m_scene, currentLayout(), font(), palette().color(QPalette::Text));
}

void HeatMapView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton || !m_scene.map)
        return QWidget::mousePressEvent(event);
    if (const auto cell = currentLayout().cellAt(event->position())) {
        const auto [row, column] = *cell;
        if (row >= 0 && std::size_t(row) < m_scene.order.size())
            emit cellClicked(m_scene.order[std::size_t(row)], column);
    }
}

bool HeatMapView::event(QEvent* event)
{
    if (event->type() != QEvent::ToolTip || !m_scene.map)
        return QWidget::event(event);
    auto* help = static_cast<QHelpEvent*>(event);
    const auto cell = currentLayout().cellAt(QPointF(help->pos()));
    if (!cell || std::size_t(cell->first) >= m_scene.order.size()) {
        QToolTip::hideText();
        return true;
    }
    const int rank = m_scene.order[std::size_t(cell->first)];
    const std::size_t column = std::size_t(cell->second);
    const HeatMatrix& m = m_scene.matrix;
    if (m_scene.isGrid()) {
        const std::size_t i = m.at(std::size_t(rank), column);
        QToolTip::showText(help->globalPos(),
            m.present[i]
                ? tr("DP rank %1, stage %2: the mean step %3 longer with only these ranks as recorded")
                      .arg(m_scene.rowLabel(rank), m_scene.columnLabel(column), durationText(m.values[i]))
                : tr("DP rank %1, stage %2: no such rank").arg(m_scene.rowLabel(rank), m_scene.columnLabel(column)),
            this);
        return true;
    }
    const std::size_t i = m.at(std::size_t(rank), column);
    const QString where = tr("%1, %2").arg(QString::fromStdString(m_scene.trace->ranks[std::size_t(rank)].label),
        QString::fromStdString(m_scene.map->columns[column].name));
    QString text = m.present[i]
        ? tr("%1\n%2: %3 (robust z %4)%5\nClick to show it in the timeline")
              .arg(where, QString::fromLatin1(heatMetricTitle(m.metric)), durationText(m.values[i]))
              .arg(m.z[i], 0, 'f', 1)
              .arg(m.outlier[i] ? tr(": an outlier") : QString())
        : tr("%1: no such step on this rank").arg(where);
    QToolTip::showText(help->globalPos(), text, this);
    return true;
}

HeatMapPanel::HeatMapPanel(QWidget* parent)
    : QWidget(parent)
    , m_metric(new QComboBox(this))
    , m_order(new QComboBox(this))
    , m_grid(new QComboBox(this))
    , m_summary(new QLabel(this))
    , m_view(new HeatMapView(this))
    , m_stragglers(new TableModel(
          { tr("Rank"), tr("Arrived last"), tr("Others waited"), tr("Steps over median"), tr("Slow steps") }, this))
    , m_table(new QTableView(this))
    , m_jobs(new JobSlot(this))
{
    for (std::size_t k = 0; k < kHeatMetricCount; ++k)
        m_metric->addItem(QString::fromLatin1(heatMetricTitle(HeatMetric(k))), int(k));
    for (const RankOrder o : { RankOrder::Number, RankOrder::Host, RankOrder::Stage, RankOrder::Value })
        m_order->addItem(tr("by %1").arg(QString::fromLatin1(rankOrderName(o))), int(o));
    m_order->setItemData(2, tr("Pipeline stages are not known yet: the same as by number"), Qt::ToolTipRole);
    m_grid->addItem(tr("rank × step"), false);
    m_grid->addItem(tr("DP rank × stage"), true);
    m_metric->setToolTip(tr("Outlined cells lie more than 3.5 robust z-scores from the median of their step"));
    m_summary->setWordWrap(true);
    m_stragglers->setColumnToolTip(ArrivedLast, tr("Collectives in which this rank arrived last while others waited"));
    m_stragglers->setColumnToolTip(CausedWait, tr("The other members' waiting in those collectives"));
    m_stragglers->setColumnToolTip(
        ExcessStep, tr("Σ over its steps of how much longer each was than the step's median"));
    m_stragglers->setColumnToolTip(SlowSteps, tr("Steps whose step time is an outlier above the median"));
    m_table->setModel(m_stragglers);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(ArrivedLast, Qt::DescendingOrder); // the ranking's own order (ties: caused waiting, ...)
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);

    auto* controls = new QHBoxLayout;
    controls->addWidget(m_metric);
    controls->addWidget(m_order);
    controls->addWidget(m_grid);
    controls->addWidget(m_summary, 1);
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(m_view);
    splitter->addWidget(m_table);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(controls);
    layout->addWidget(splitter, 1);

    connect(m_metric, &QComboBox::currentIndexChanged, this, [this] { updateScene(); });
    connect(m_order, &QComboBox::currentIndexChanged, this, [this] { updateScene(); });
    connect(m_grid, &QComboBox::currentIndexChanged, this, [this] {
        const bool grid = dpPpGrid();
        m_order->setEnabled(!grid);
        if (grid && metric() != HeatMetric::Slowdown)
            setMetric(HeatMetric::Slowdown); // updates the scene
        else
            updateScene();
    });
    connect(m_metric, &QComboBox::currentIndexChanged, this, [this] {
        if (metric() != HeatMetric::Slowdown && dpPpGrid())
            setDpPpGrid(false);
    });
    connect(m_view, &HeatMapView::cellClicked, this, [this](int rank, int column) {
        if (!m_map || m_view->scene().isGrid() || column < 0 || std::size_t(column) >= m_map->columns.size())
            return;
        const StepHeatMap::Column& c = m_map->columns[std::size_t(column)];
        emit cellActivated(rank, c.stepIndex, c.window);
    });
    setTrace(nullptr, nullptr, nullptr);
}

HeatMetric HeatMapPanel::metric() const
{
    return HeatMetric(m_metric->currentData().toInt());
}

RankOrder HeatMapPanel::order() const
{
    return RankOrder(m_order->currentData().toInt());
}

void HeatMapPanel::setMetric(HeatMetric metric)
{
    m_metric->setCurrentIndex(m_metric->findData(int(metric)));
}

void HeatMapPanel::setOrder(RankOrder order)
{
    m_order->setCurrentIndex(m_order->findData(int(order)));
}

void HeatMapPanel::setDpPpGrid(bool grid)
{
    m_grid->setCurrentIndex(m_grid->findData(grid));
}

bool HeatMapPanel::dpPpGrid() const
{
    return m_grid->currentData().toBool();
}

bool HeatMapPanel::dpPpGridAvailable() const
{
    if (!m_trace || m_trace->ranks.size() < 2)
        return false;
    for (const auto& r : m_trace->ranks)
        if (r.coords.dp < 0 || r.coords.pp < 0)
            return false;
    return true;
}

void HeatMapPanel::setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis,
    std::shared_ptr<const CollectiveMatch> collectives)
{
    m_trace = trace;
    m_analysis = analysis;
    m_collectives = collectives;
    m_map.reset();
    m_even.reset();
    setDpPpGrid(false);
    m_grid->setEnabled(dpPpGridAvailable());
    m_grid->setToolTip(m_grid->isEnabled()
            ? tr("The straggler what-if's slowdown per DP rank and pipeline stage: the job's mean step with only that "
                 "cell's ranks as recorded and every other operation at its typical duration, less the evened one")
            : tr("The ranks have no data- and pipeline-parallel coordinates"));
    m_stragglers->clear();
    m_view->setScene({});
    if (!trace || !analysis) {
        m_jobs->cancel();
        m_summary->setText(tr("Open a trace to see its steps per rank."));
        m_view->setEmptyText(tr("Open a trace to see its heat map."));
        return;
    }
    m_summary->setText(tr("Computing…"));
    m_view->setEmptyText(trace->ranks.size() == 1 ? tr("Computing the heat map of the rank…")
                                                  : tr("Computing the heat map of %1 ranks…").arg(trace->ranks.size()));
    m_jobs->start<Result>(
        [trace, analysis, collectives](const JobContext& job) {
            Result r;
            r.map = std::make_shared<const StepHeatMap>(
                computeStepHeatMap(*trace, *analysis, collectives.get(), job.cancelFlag()));
            r.stragglers = rankStragglers(*r.map, collectives.get());
            return r;
        },
        [this](const Result& r) { showResult(r); });
}

void HeatMapPanel::showResult(const Result& r)
{
    m_map = r.map;
    updateMetricItems();
    std::vector<TableModel::Row> rows;
    for (const StragglerRank& s : r.stragglers) {
        const auto& rank = m_trace->ranks[std::size_t(s.rank)];
        rows.push_back({ keyedCell(QString::fromStdString(rank.label), rank.rank, false),
            keyedCell(groupDigits(s.arrivedLast), qint64(s.arrivedLast), true),
            keyedCell(durationText(s.causedWaitNs), s.causedWaitNs, true),
            keyedCell(durationText(s.excessStepNs), s.excessStepNs, true),
            keyedCell(groupDigits(s.slowSteps), qint64(s.slowSteps), true) });
    }
    std::vector<qint64> tags;
    for (const StragglerRank& s : r.stragglers)
        tags.push_back(s.rank);
    m_stragglers->setRows(std::move(rows), std::move(tags));
    updateScene();
}

void HeatMapPanel::updateMetricItems()
{
    // Metrics the trace does not have stay listed but cannot be chosen (the bubble: not computed by the analysis).
    // The slowdown is computed when chosen: it can be chosen wherever there are steps.
    auto choosable = [this](HeatMetric m) {
        return !m_map || m_map->available(m) || (m == HeatMetric::Slowdown && !m_map->columns.empty());
    };
    for (int i = 0; i < m_metric->count(); ++i) {
        const auto m = HeatMetric(m_metric->itemData(i).toInt());
        const bool available = choosable(m);
        if (auto* model = qobject_cast<QStandardItemModel*>(m_metric->model()))
            if (QStandardItem* item = model->item(i))
                item->setEnabled(available);
        const QString why = m == HeatMetric::Slowdown
            ? (available ? tr("Per rank and step, how much longer the job's step is with only this rank as recorded "
                              "and every other operation at its typical duration (computed when chosen: one replay "
                              "of the job per rank)")
                         : tr("The trace has no steps"))
            : m == HeatMetric::Bubble ? tr("The trace has no steps to measure a pipeline bubble in")
                                      : tr("No matched collectives in this trace");
        m_metric->setItemData(i, available && m != HeatMetric::Slowdown ? QVariant() : QVariant(why), Qt::ToolTipRole);
    }
    if (m_map && !choosable(metric()))
        setMetric(HeatMetric::Step);
}

void HeatMapPanel::computeSlowdown()
{
    m_summary->setText(tr("Computing the straggler attribution (one replay of the job per rank)…"));
    auto map = std::make_shared<StepHeatMap>(*m_map);
    using Both = std::pair<std::shared_ptr<const StepHeatMap>, std::shared_ptr<const whatif::EvenResult>>;
    whatif::EvenOptions options;
    options.grid = dpPpGridAvailable(); // both views from one run
    m_jobs->start<Both>(
        [map, trace = m_trace, analysis = m_analysis, collectives = m_collectives, options](const JobContext&) {
            auto even = std::make_shared<const whatif::EvenResult>(
                whatif::WhatIfModel(trace, analysis, collectives).even(options));
            whatif::addSlowdown(*map, *trace, *even);
            return Both(map, even);
        },
        [this](const Both& withSlowdown) {
            m_map = withSlowdown.first;
            m_even = withSlowdown.second;
            updateScene();
        },
        [this](const QString& message) { m_summary->setText(tr("No slowdown: %1").arg(message)); });
}

void HeatMapPanel::updateScene()
{
    if (!m_trace || !m_map)
        return;
    if (metric() == HeatMetric::Slowdown && !m_map->hasSlowdown) {
        if (!m_map->columns.empty() && m_analysis)
            computeSlowdown();
        return; // the scene shown stays until the slowdown is there
    }
    if (dpPpGrid() && m_even) {
        HeatMapScene scene = HeatMapScene::makeSlowdownGrid(m_trace, m_map, *m_even);
        m_summary->setText(tr("%1 DP ranks × %2 pipeline stages: each cell the mean step with only its ranks as "
                              "recorded, less the evened mean step (%3)")
                               .arg(m_even->grid.dpCount)
                               .arg(m_even->grid.ppCount)
                               .arg(durationText(m_even->evenedMean)));
        m_view->setScene(std::move(scene));
        return;
    }
    HeatMapScene scene = HeatMapScene::make(m_trace, m_map, metric(), order());
    const std::size_t outliers = scene.matrix.outlierCount();
    m_summary->setText(tr("%1 ranks × %2 steps; %3 outlined (|robust z| > 3.5 against the step's median)")
                           .arg(m_map->rankCount)
                           .arg(m_map->columns.size())
                           .arg(outliers == 1 ? tr("1 cell") : tr("%1 cells").arg(outliers)));
    m_view->setScene(std::move(scene));
}

} // namespace exposure
