// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/whatifpanel.h"

#include "common/labels.h"
#include "figure/exportfiguredialog.h"
#include "timeline/timelineplot.h"
#include "view/viewindex.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <stdexcept>

namespace exposure {

namespace {

QString pathText(const whatif::PathSums& p)
{
    QStringList parts;
    for (int i = 0; i < whatif::kPathPartCount; ++i)
        if (p.ns[std::size_t(i)] != 0)
            parts << QStringLiteral("%1 %2").arg(
                QString::fromLatin1(whatif::pathPartName(whatif::PathPart(i))), durationText(p.ns[std::size_t(i)]));
    return parts.join(QStringLiteral(", "));
}

QString changeText(TimeNs now, TimeNs before)
{
    if (before <= 0)
        return QStringLiteral("–");
    const double p = 100.0 * double(now - before) / double(before);
    return QStringLiteral("%1%2 %").arg(p >= 0 ? QStringLiteral("+") : QString()).arg(p, 0, 'f', 1);
}

} // namespace

WhatIfPanel::WhatIfPanel(QWidget* parent)
    : RangePanel(new TableModel({ tr("Rank"), tr("Measured"), tr("Replay"), tr("Predicted"), tr("Change"),
                     tr("Fidelity"), tr("Critical path (predicted)") }),
        parent)
{
    auto* layout = qobject_cast<QVBoxLayout*>(this->layout());
    layout->insertWidget(0, makeControls());
    table()->horizontalHeader()->setSectionResizeMode(Path, QHeaderView::Stretch);
    m_plot = new TimelinePlot(this);
    m_plot->setObjectName(QStringLiteral("whatIfPlot"));
    m_plot->setMinimumSize(240, 100);
    m_plot->setToolTip(tr("The predicted timeline of the visible steps"));
    // The table (a row per rank) and the predicted timeline side by side: a bottom dock is wide and short, and the
    // timeline is in view without scrolling the dock.
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("whatIfSplit"));
    split->setChildrenCollapsible(false);
    layout->removeWidget(table());
    split->addWidget(table());
    split->addWidget(m_plot);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    layout->addWidget(split, 1);
    clear();
}

WhatIfPanel::~WhatIfPanel() = default;

QWidget* WhatIfPanel::makeControls()
{
    auto* box = new QWidget(this);
    auto* form = new QFormLayout(box);
    form->setContentsMargins(0, 0, 0, 0);
    m_remove = new QLineEdit(box);
    m_remove->setPlaceholderText(tr("REGEX (removed) or REGEX=F (scaled); …  e.g. DataLoader; optimizer=0.5"));
    m_remove->setToolTip(tr("Host regions whose name matches a regular expression, and all inside them: removed, or "
                            "taking F times their time. Entries are separated by ';'."));
    form->addRow(tr("Host regions:"), m_remove);
    m_scale = new QLineEdit(box);
    m_scale->setPlaceholderText(tr("PATTERN=F, … e.g. attention=0.5, gemm=0.8"));
    form->addRow(tr("Scale GPU work:"), m_scale);
    auto* row = new QHBoxLayout;
    m_comm = new QComboBox(box);
    m_comm->addItems({ tr("as recorded"), tr("hidden"), tr("faster by"), tr("no waiting for stragglers") });
    m_commFactor = new QDoubleSpinBox(box);
    m_commFactor->setRange(1.01, 1000);
    m_commFactor->setValue(2);
    m_commFactor->setPrefix(QStringLiteral("×"));
    m_commFactor->setEnabled(false);
    connect(m_comm, &QComboBox::currentIndexChanged, this, [this](int i) { m_commFactor->setEnabled(i == 2); });
    row->addWidget(m_comm);
    row->addWidget(m_commFactor);
    form->addRow(tr("Communication:"), row);
    auto* row2 = new QHBoxLayout;
    m_noSync = new QCheckBox(tr("Remove synchronising calls"), box);
    m_even = new QCheckBox(tr("Typical durations"), box);
    m_even->setObjectName(QStringLiteral("whatIfEven"));
    m_even->setToolTip(tr("The straggler what-if: every compute operation at the mean of its kind and every "
                          "communication at the median transfer of its kind, over all ranks and steps; the summary "
                          "says which rank, stage or operation costs the job most (whatif --even)"));
    m_launch = new QDoubleSpinBox(box);
    m_launch->setRange(1, 1000);
    m_launch->setValue(1);
    m_launch->setPrefix(tr("launch calls ×"));
    m_launch->setToolTip(tr("Kernel-launch calls this many times faster"));
    auto* replay = new QPushButton(tr("Replay"), box);
    replay->setObjectName(QStringLiteral("whatIfReplay"));
    connect(replay, &QPushButton::clicked, this, &WhatIfPanel::apply);
    connect(m_remove, &QLineEdit::returnPressed, this, &WhatIfPanel::apply);
    connect(m_scale, &QLineEdit::returnPressed, this, &WhatIfPanel::apply);
    m_export = new QPushButton(tr("Export Figure…"), box);
    m_export->setToolTip(tr("Save the predicted timeline as a PNG, SVG or PDF figure"));
    connect(m_export, &QPushButton::clicked, this, &WhatIfPanel::exportFigure);
    row2->addWidget(m_even);
    row2->addWidget(m_noSync);
    row2->addWidget(m_launch);
    row2->addStretch(1);
    row2->addWidget(replay);
    row2->addWidget(m_export);
    form->addRow(row2);
    return box;
}

whatif::Edits WhatIfPanel::edits(QString* problem) const
{
    whatif::Edits e;
    for (const QString& item : m_remove->text().split(QLatin1Char(';'), Qt::SkipEmptyParts)) {
        whatif::Edits::Scale s;
        const std::string text = item.trimmed().toStdString();
        if (text.empty())
            continue;
        if (!whatif::parseScale(text, s))
            s = { text, 0.0 }; // no "=F": removed
        e.regions.push_back(s);
    }
    for (const QString& item : m_scale->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        whatif::Edits::Scale s;
        if (whatif::parseScale(item.trimmed().toStdString(), s))
            e.gpu.push_back(s);
        else if (problem)
            *problem = tr("'%1' is not PATTERN=F; left out.").arg(item.trimmed());
    }
    e.comm = m_comm->currentIndex() == 1 ? whatif::Edits::Comm::Hidden
        : m_comm->currentIndex() == 2    ? whatif::Edits::Comm::Faster
        : m_comm->currentIndex() == 3    ? whatif::Edits::Comm::NoWait
                                         : whatif::Edits::Comm::Measured;
    e.commFactor = e.comm == whatif::Edits::Comm::Faster ? m_commFactor->value() : 1.0;
    e.noSync = m_noSync->isChecked();
    e.launchFactor = m_launch->value();
    e.even = m_even->isChecked();
    return e;
}

void WhatIfPanel::setEdits(const whatif::Edits& e)
{
    QStringList removes, scales;
    for (const auto& s : e.regions)
        removes << (s.factor == 0.0 ? QString::fromStdString(s.pattern)
                                    : QStringLiteral("%1=%2").arg(QString::fromStdString(s.pattern)).arg(s.factor));
    for (const auto& s : e.gpu)
        scales << QStringLiteral("%1=%2").arg(QString::fromStdString(s.pattern)).arg(s.factor);
    m_remove->setText(removes.join(QStringLiteral("; ")));
    m_scale->setText(scales.join(QStringLiteral(", ")));
    m_comm->setCurrentIndex(int(e.comm));
    if (e.comm == whatif::Edits::Comm::Faster)
        m_commFactor->setValue(e.commFactor);
    m_noSync->setChecked(e.noSync);
    m_launch->setValue(e.launchFactor);
    m_even->setChecked(e.even);
}

void WhatIfPanel::apply()
{
    m_requested = true;
    m_shown = false;
    if (m_trace && m_analysis)
        recompute();
}

void WhatIfPanel::clear()
{
    m_model.reset();
    m_requested = false;
    m_shown = false;
    m_predTrace.reset();
    m_predAnalysis.reset();
    m_predIndex.reset();
    m_plot->clearTrace();
    m_plot->setVisible(false); // until a replay of this trace is shown
    m_title.clear();
    m_recordedSteps.clear();
    m_predictedSteps.clear();
    m_export->setEnabled(false);
    model()->clear();
    summaryLabel()->setText(tr("Open a trace, choose edits and press Replay: the predicted step time per rank."));
}

void WhatIfPanel::recompute()
{
    if (m_shown) {
        showRange();
        return;
    }
    if (!m_requested)
        return;
    QString problem;
    const whatif::Edits e = edits(&problem);
    auto trace = m_trace;
    auto analysis = m_analysis;
    auto model = m_model;
    auto collectives = m_collectives;
    const TimeRange range = m_range;
    summaryLabel()->setText(tr("Replaying: %1 …").arg(QString::fromStdString(e.describe())));
    jobs()->run<Result>(
        [trace, analysis, model, collectives, range, e, problem] {
            Result r;
            r.problem = problem.toStdString();
            r.edits = e.describe();
            r.model = model ? model : std::make_shared<const whatif::WhatIfModel>(trace, analysis, collectives);
            for (int rank = 0; rank < int(trace->ranks.size()); ++rank)
                r.findings.push_back(trace->ranks[std::size_t(rank)].label + ": "
                    + rankFinding(*trace, *analysis, collectives.get(), rank, range));
            try {
                r.result = r.model->evaluate(e);
            } catch (const std::invalid_argument& ex) {
                r.problem = ex.what();
                return r;
            }
            if (e.even)
                r.straggler = whatif::evenTable(r.model->even(0));
            r.trace = r.model->predictedTrace(e);
            r.analysis = analyze(*r.trace, analysis->rules);
            r.index = ViewIndex::build(*r.trace, r.analysis.get());
            for (std::size_t k = 0; k < analysis->ranks.size() && k < r.analysis->ranks.size(); ++k) {
                const auto& a = analysis->ranks[k].steps;
                const auto& b = r.analysis->ranks[k].steps;
                if (a.empty() || a.size() != b.size())
                    continue;
                for (std::size_t i = 0; i < a.size(); ++i) {
                    r.recordedSteps.push_back(a[i].hostRange); // the iteration as the host runs it (as the model)
                    r.predictedSteps.push_back(b[i].hostRange);
                }
                break;
            }
            return r;
        },
        [this](const Result& r) { show(r); });
}

void WhatIfPanel::show(const Result& r)
{
    m_model = r.model;
    if (!r.trace) {
        summaryLabel()->setText(tr("Cannot replay: %1").arg(QString::fromStdString(r.problem)));
        return;
    }
    m_shown = true;
    m_predTrace = r.trace;
    m_predAnalysis = r.analysis;
    m_predIndex = r.index;
    m_recordedSteps = r.recordedSteps;
    m_predictedSteps = r.predictedSteps;
    std::vector<TableModel::Row> rows;
    for (const whatif::RankWhatIf& w : r.result.ranks) {
        TableModel::Row row(ColumnCount);
        auto set = [&](int col, const QString& text) {
            row[std::size_t(col)].text = text;
            if (col != Rank && col != Path)
                row[std::size_t(col)].alignment = Qt::AlignRight | Qt::AlignVCenter;
        };
        set(Rank, QString::fromStdString(w.label));
        set(Measured, w.steps.empty() ? QStringLiteral("–") : durationText(w.measuredMean));
        set(Replay, w.steps.empty() ? QStringLiteral("–") : durationText(w.replayMean));
        set(Predicted, w.steps.empty() ? QStringLiteral("–") : durationText(w.predictedMean));
        set(Change, changeText(w.predictedMean, w.replayMean));
        set(Fidelity,
            w.measuredMean > 0
                ? QStringLiteral("%1 %").arg(100.0 * double(w.replayMean) / double(w.measuredMean), 0, 'f', 1)
                : QStringLiteral("–"));
        set(Path, pathText(w.predictedPath));
        rows.push_back(std::move(row));
    }
    model()->setRows(std::move(rows));
    table()->resizeColumnsToContents();
    QString text
        = tr("Edits: %1. Mean step over the steps 'stats' averages; fidelity = replay / measured; the plot shows the "
             "predicted timeline of the visible steps.")
              .arg(QString::fromStdString(r.edits));
    if (!r.problem.empty())
        text += QLatin1Char(' ') + QString::fromStdString(r.problem);
    for (const std::string& w : r.result.warnings)
        text += QLatin1Char(' ') + QString::fromStdString(w);
    if (!r.straggler.empty())
        text += QLatin1Char('\n') + QString::fromStdString(r.straggler).trimmed();
    for (const std::string& f : r.findings)
        text += QLatin1Char('\n') + QString::fromStdString(f);
    summaryLabel()->setText(text);
    m_plot->setTrace(m_predTrace, m_predAnalysis, m_predIndex);
    m_plot->setVisible(true);
    m_title = tr("Predicted: %1").arg(QString::fromStdString(r.edits));
    TimelineOptions o = m_plot->options();
    o.title = m_title;
    o.range.reset();
    m_plot->setOptions(o);
    m_export->setEnabled(true);
    showRange();
    emit replayed();
}

void WhatIfPanel::showRange()
{
    if (!m_predTrace)
        return;
    // The predicted span of the steps that the visible range touches; without steps, the same range.
    TimeRange out = m_range;
    std::size_t first = m_recordedSteps.size(), last = 0;
    for (std::size_t i = 0; i < m_recordedSteps.size(); ++i)
        if (m_recordedSteps[i].end > m_range.start && m_recordedSteps[i].start < m_range.end) {
            first = std::min(first, i);
            last = i;
        }
    if (first < m_recordedSteps.size())
        out = { m_predictedSteps[first].start, m_predictedSteps[last].end };
    if (out.end <= out.start)
        out = m_predTrace->extent;
    m_predRange = out;
    m_plot->setVisibleRange(out, false);
}

void WhatIfPanel::followTimelineOptions(const TimelineOptions& options)
{
    TimelineOptions o = options;
    o.range.reset();
    o.title = m_title;
    m_plot->setOptions(o);
    showRange();
}

void WhatIfPanel::exportFigure()
{
    if (!m_predTrace)
        return;
    ExportFigureDialog dialog(m_predTrace, m_predAnalysis, m_predIndex, m_predRange, this);
    dialog.exec();
}

QString WhatIfPanel::summary() const
{
    return summaryLabel()->text();
}

} // namespace exposure
