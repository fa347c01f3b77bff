// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/transferspanel.h"

#include "analysis/analysis.h"
#include "common/labels.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace exposure {

namespace {

QString bandwidthText(double bytesPerSecond)
{
    return bytesPerSecond > 0 ? QStringLiteral("%1 GB/s").arg(bytesPerSecond / 1e9, 0, 'f', 2) : QStringLiteral("-");
}

QString bytesText(std::uint64_t bytes)
{
    return bytes ? QObject::tr("%1 bytes").arg(groupDigits(bytes)) : QStringLiteral("-");
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
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_table(new QTableWidget(this))
    , m_jobs(new JobSlot(this))
{
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_table->setColumnCount(ColumnCount);
    m_table->setHorizontalHeaderLabels({ tr("Rank"), tr("Stream"), tr("Direction"), tr("Bytes"), tr("Duration"),
        tr("Bandwidth"), tr("Step"), tr("Start") });
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->setWordWrap(false);
    m_table->setToolTip(tr("Double-click a copy to select it on the timeline"));
    connect(m_table, &QTableWidget::cellActivated, this, [this](int row, int) {
        const QTableWidgetItem* item = m_table->item(row, Rank);
        if (!item)
            return;
        const int k = item->data(Qt::UserRole).toInt();
        if (k >= 0 && std::size_t(k) < m_refs.size())
            emit transferSelected(
                m_refs[std::size_t(k)].rank, m_refs[std::size_t(k)].lane, m_refs[std::size_t(k)].interval);
    });
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_table, 1);
}

void TransfersPanel::setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis)
{
    m_trace = std::move(trace);
    m_analysis = std::move(analysis);
    m_jobs->cancel();
    show({});
    if (m_trace)
        m_range = m_trace->extent;
    recompute();
}

void TransfersPanel::setVisibleRange(TimeRange range)
{
    if (range == m_range)
        return;
    m_range = range;
    recompute();
}

void TransfersPanel::recompute()
{
    if (!m_trace || !m_analysis)
        return;
    auto trace = m_trace;
    auto analysis = m_analysis;
    const TimeRange range = m_range;
    m_jobs->run<Result>(
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
    m_summary->setText(
        lines.isEmpty() ? tr("No copies or memsets in the visible range.") : lines.join(QLatin1Char('\n')));

    m_refs.clear();
    m_table->setSortingEnabled(false);
    const std::size_t n = std::min<std::size_t>(r.rows.size(), kMaxRows);
    m_table->setRowCount(int(n));
    for (std::size_t k = 0; k < n; ++k) {
        const TransferRow& row = r.rows[k];
        const int i = int(k);
        auto* rank = new QTableWidgetItem(QString::fromStdString(m_trace->ranks[std::size_t(row.ref.rank)].label));
        rank->setData(Qt::UserRole, i);
        m_table->setItem(i, Rank, rank);
        m_table->setItem(i, Stream,
            new QTableWidgetItem(QString::fromStdString(
                m_trace->ranks[std::size_t(row.ref.rank)].lanes[std::size_t(row.ref.lane)].name)));
        m_table->setItem(i, Direction, new QTableWidgetItem(QString::fromStdString(row.direction)));
        m_table->setItem(i, Bytes, new NumberItem(bytesText(row.bytes), double(row.bytes)));
        m_table->setItem(i, Duration, new NumberItem(durationText(row.durationNs), double(row.durationNs)));
        m_table->setItem(i, Bandwidth, new NumberItem(bandwidthText(row.bytesPerSecond()), row.bytesPerSecond()));
        const auto& rankSteps = m_analysis->ranks[std::size_t(row.ref.rank)].steps;
        m_table->setItem(i, Step,
            new QTableWidgetItem(row.step >= 0 && std::size_t(row.step) < rankSteps.size()
                    ? QString::fromStdString(rankSteps[std::size_t(row.step)].name)
                    : QString()));
        m_table->setItem(i, Start, new NumberItem(durationText(row.start), double(row.start)));
        m_refs.push_back(row.ref);
    }
    m_table->setSortingEnabled(true);
    m_table->resizeColumnsToContents();
}

QString TransfersPanel::summary() const
{
    return m_summary->text();
}

} // namespace exposure
