// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/transferspanel.h"

#include "analysis/analysis.h"
#include "common/labels.h"

#include <QLabel>
#include <QTableView>

namespace exposure {

TransfersPanel::TransfersPanel(QWidget* parent)
    : RangePanel(new TransfersModel, parent)
    , m_transfers(static_cast<TransfersModel*>(model()))
{
    table()->setToolTip(tr("Double-click a copy to select it on the timeline"));
    connect(table(), &QTableView::activated, this, [this](const QModelIndex& index) {
        const IntervalRef ref = m_transfers->transferAt(index.row());
        if (ref.rank >= 0)
            emit transferSelected(ref);
    });
}

void TransfersPanel::recompute()
{
    auto trace = m_trace;
    auto analysis = m_analysis;
    const TimeRange range = m_range;
    jobs()->run<Result>(
        [trace, analysis, range] {
            Result r;
            r.rows = transfers(*trace, *analysis, range);
            r.byDirection = sumTransfers(r.rows, false);
            r.byStep = sumTransfers(r.rows, true);
            return r;
        },
        [this](const Result& r) { show(r); });
}

void TransfersPanel::show(const Result& r)
{
    QStringList lines;
    for (const TransferSum& s : r.byDirection) {
        // A memset writes device memory and moves nothing: counted apart from the copies, its rate is a fill rate.
        const bool memset = s.direction == "memset";
        lines << (memset ? tr("%1: %2 memsets, %3 set in %4 (%5)") : tr("%1: %2 copies, %3 in %4 (%5)"))
                     .arg(QString::fromStdString(s.direction), groupDigits(s.count), TransfersModel::bytesText(s.bytes),
                         durationText(s.timeNs),
                         TransfersModel::bandwidthText(s.timeNs > 0 ? double(s.bytes) * 1e9 / double(s.timeNs) : 0));
    }
    QStringList steps;
    for (const TransferSum& s : r.byStep) {
        if (s.step < 0 || !m_trace || !m_analysis || std::size_t(s.rank) >= m_analysis->ranks.size()
            || std::size_t(s.step) >= m_analysis->ranks[std::size_t(s.rank)].steps.size())
            continue;
        steps << tr("%1 %2 %3: %4")
                     .arg(QString::fromStdString(m_trace->ranks[std::size_t(s.rank)].label),
                         QString::fromStdString(m_analysis->ranks[std::size_t(s.rank)].steps[std::size_t(s.step)].name),
                         QString::fromStdString(s.direction), TransfersModel::bytesText(s.bytes));
    }
    if (!steps.isEmpty())
        lines << tr("Per step: %1")
                     .arg(steps.mid(0, 12).join(QStringLiteral("; "))
                         + (steps.size() > 12 ? QStringLiteral("; …") : QString()));
    summaryLabel()->setText(
        lines.isEmpty() ? tr("No copies or memsets in the visible range.") : lines.join(QLatin1Char('\n')));

    table()->setSortingEnabled(false);
    if (m_trace && m_analysis)
        m_transfers->setTransfers(*m_trace, *m_analysis, r.rows, kMaxRows);
    else
        m_transfers->clear();
    table()->setSortingEnabled(true);
    table()->resizeColumnsToContents();
}

QString TransfersPanel::summary() const
{
    return summaryLabel()->text();
}

} // namespace exposure
