// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/transferspanel.h"

#include "analysis/analysis.h"
#include "common/labels.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>

namespace exposure {

namespace {

QString bandwidthText(double bytesPerSecond)
{
    return bytesPerSecond > 0 ? QStringLiteral("%1 GB/s").arg(bytesPerSecond / 1e9, 0, 'f', 2) : QStringLiteral("-");
}

QString bytesText(std::uint64_t bytes)
{
    return bytes ? byteCountText(bytes) : QStringLiteral("-");
}

// A table item that sorts by a number.
class NumberItem : public QTableWidgetItem
{
public:
    NumberItem(const QString& text, double key)
        : QTableWidgetItem(text)
        , m_key(key)
    {
        setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    bool operator<(const QTableWidgetItem& other) const override
    {
        const auto* n = dynamic_cast<const NumberItem*>(&other);
        return n ? m_key < n->m_key : QTableWidgetItem::operator<(other);
    }

private:
    double m_key;
};

} // namespace

TransfersPanel::TransfersPanel(QWidget* parent)
    : RangePanel({ tr("Rank"), tr("Stream"), tr("Direction"), tr("Bytes"), tr("Duration"), tr("Bandwidth"), tr("Step"),
                     tr("Start") },
        parent)
{
    table()->setToolTip(tr("Double-click a copy to select it on the timeline"));
    connect(table(), &QTableWidget::cellActivated, this, [this](int row, int) {
        const QTableWidgetItem* item = table()->item(row, Rank);
        if (!item)
            return;
        const int k = item->data(Qt::UserRole).toInt();
        if (k >= 0 && std::size_t(k) < m_refs.size())
            emit transferSelected(
                m_refs[std::size_t(k)].rank, m_refs[std::size_t(k)].lane, m_refs[std::size_t(k)].interval);
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
    for (const TransferSum& s : r.byDirection)
        lines << tr("%1: %2 copies, %3 in %4 (%5)")
                     .arg(QString::fromStdString(s.direction), groupDigits(s.count), bytesText(s.bytes),
                         durationText(s.timeNs),
                         bandwidthText(s.timeNs > 0 ? double(s.bytes) * 1e9 / double(s.timeNs) : 0));
    QStringList steps;
    for (const TransferSum& s : r.byStep) {
        if (s.step < 0 || !m_trace || !m_analysis || std::size_t(s.rank) >= m_analysis->ranks.size()
            || std::size_t(s.step) >= m_analysis->ranks[std::size_t(s.rank)].steps.size())
            continue;
        steps << tr("%1 %2 %3: %4")
                     .arg(QString::fromStdString(m_trace->ranks[std::size_t(s.rank)].label),
                         QString::fromStdString(m_analysis->ranks[std::size_t(s.rank)].steps[std::size_t(s.step)].name),
                         QString::fromStdString(s.direction), bytesText(s.bytes));
    }
    if (!steps.isEmpty())
        lines << tr("Per step: %1")
                     .arg(steps.mid(0, 12).join(QStringLiteral("; "))
                         + (steps.size() > 12 ? QStringLiteral("; …") : QString()));
    summaryLabel()->setText(
        lines.isEmpty() ? tr("No copies or memsets in the visible range.") : lines.join(QLatin1Char('\n')));

    m_refs.clear();
    table()->setSortingEnabled(false);
    const std::size_t n = std::min<std::size_t>(r.rows.size(), kMaxRows);
    table()->setRowCount(int(n));
    for (std::size_t k = 0; k < n; ++k) {
        const TransferRow& row = r.rows[k];
        const int i = int(k);
        auto* rank = new QTableWidgetItem(QString::fromStdString(m_trace->ranks[std::size_t(row.ref.rank)].label));
        rank->setData(Qt::UserRole, i);
        table()->setItem(i, Rank, rank);
        table()->setItem(i, Stream,
            new QTableWidgetItem(QString::fromStdString(
                m_trace->ranks[std::size_t(row.ref.rank)].lanes[std::size_t(row.ref.lane)].name)));
        table()->setItem(i, Direction, new QTableWidgetItem(QString::fromStdString(row.direction)));
        table()->setItem(i, Bytes, new NumberItem(bytesText(row.bytes), double(row.bytes)));
        table()->setItem(i, Duration, new NumberItem(durationText(row.durationNs), double(row.durationNs)));
        table()->setItem(i, Bandwidth, new NumberItem(bandwidthText(row.bytesPerSecond()), row.bytesPerSecond()));
        const auto& rankSteps = m_analysis->ranks[std::size_t(row.ref.rank)].steps;
        table()->setItem(i, Step,
            new QTableWidgetItem(row.step >= 0 && std::size_t(row.step) < rankSteps.size()
                    ? QString::fromStdString(rankSteps[std::size_t(row.step)].name)
                    : QString()));
        table()->setItem(i, Start, new NumberItem(durationText(row.start), double(row.start)));
        m_refs.push_back(row.ref);
    }
    table()->setSortingEnabled(true);
    table()->resizeColumnsToContents();
}

QString TransfersPanel::summary() const
{
    return summaryLabel()->text();
}

} // namespace exposure
