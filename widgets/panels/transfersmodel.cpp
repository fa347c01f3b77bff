// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/transfersmodel.h"

#include "common/labels.h"

namespace exposure {

namespace {

TableCell number(const QString& text, double key)
{
    TableCell c;
    c.text = text;
    c.sortKey = key;
    c.alignment = Qt::AlignRight | Qt::AlignVCenter;
    return c;
}

TableCell plain(const QString& text)
{
    TableCell c;
    c.text = text;
    return c;
}

} // namespace

TransfersModel::TransfersModel(QObject* parent)
    : TableModel({ tr("Rank"), tr("Stream"), tr("Direction"), tr("Bytes"), tr("Duration"), tr("Bandwidth"), tr("Step"),
                     tr("Start") },
        parent)
{ }

QString TransfersModel::bandwidthText(double bytesPerSecond)
{
    return bytesPerSecond > 0 ? QStringLiteral("%1 GB/s").arg(bytesPerSecond / 1e9, 0, 'f', 2) : QStringLiteral("-");
}

QString TransfersModel::bytesText(std::uint64_t bytes)
{
    return bytes ? byteCountText(bytes) : QStringLiteral("-");
}

void TransfersModel::setTransfers(
    const Trace& trace, const Analysis& analysis, const std::vector<TransferRow>& rows, std::size_t limit)
{
    const std::size_t n = std::min(rows.size(), limit);
    std::vector<Row> table;
    table.reserve(n);
    m_refs.clear();
    for (std::size_t k = 0; k < n; ++k) {
        const TransferRow& row = rows[k];
        const auto& rank = trace.ranks[std::size_t(row.ref.rank)];
        const auto& steps = analysis.ranks[std::size_t(row.ref.rank)].steps;
        table.push_back({ plain(QString::fromStdString(rank.label)),
            plain(QString::fromStdString(rank.lanes[std::size_t(row.ref.lane)].name)),
            plain(QString::fromStdString(row.direction)), number(bytesText(row.bytes), double(row.bytes)),
            number(durationText(row.durationNs), double(row.durationNs)),
            number(bandwidthText(row.bytesPerSecond()), row.bytesPerSecond()),
            plain(row.step >= 0 && std::size_t(row.step) < steps.size()
                    ? QString::fromStdString(steps[std::size_t(row.step)].name)
                    : QString()),
            number(durationText(row.start), double(row.start)) });
        m_refs.push_back(row.ref);
    }
    setRows(std::move(table));
}

IntervalRef TransfersModel::transferAt(int row) const
{
    return tagged(m_refs, row);
}

} // namespace exposure
