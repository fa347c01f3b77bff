// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/idlemodel.h"

#include "common/labels.h"

namespace exposure {

namespace {

QString regionName(const Trace& trace, const Analysis& analysis, int rank, const LaunchRef& ref)
{
    if (ref.cpuLane == kUnknownLaunch)
        return {};
    const auto& t = trace.ranks[std::size_t(rank)].lanes[ref.cpuLane].intervals;
    const StringId id = t.name(ref.interval);
    return QString::fromStdString(displayName(trace, &analysis, id));
}

} // namespace

IdleModel::IdleModel(QObject* parent)
    : TableModel({ tr("Rank"), tr("Start"), tr("Gap"), tr("Cause"), tr("Host-bound"), tr("Sync wait"), tr("Queued"),
                     tr("CPU was in"), tr("Ended by launch") },
        parent)
{ }

QString IdleModel::causeText(const IdleGap& g)
{
    const std::pair<TimeNs, QString> parts[] = { { g.hostBoundNs, tr("host-bound") }, { g.syncWaitNs, tr("sync wait") },
        { g.queuedNs, tr("queued") }, { g.unattributedNs, tr("unattributed") } };
    const auto* top = &parts[0];
    for (const auto& p : parts)
        if (p.first > top->first)
            top = &p;
    QString text = top->second;
    if (top == &parts[0] && g.dataLoadingNs * 2 > g.hostBoundNs)
        text += tr(" (data loading)");
    return text;
}

void IdleModel::setGaps(const Trace& trace, const Analysis& analysis, const std::vector<std::pair<int, IdleGap>>& gaps)
{
    std::vector<Row> rows;
    rows.reserve(gaps.size());
    m_ranges.clear();
    for (const auto& [rank, g] : gaps) {
        rows.push_back({ keyedCell(QString::fromStdString(trace.ranks[std::size_t(rank)].label), rank, false),
            keyedCell(durationText(g.range.start), g.range.start, true),
            keyedCell(durationText(g.range.duration()), g.range.duration(), true), keyedCell(causeText(g), 0, false),
            keyedCell(durationText(g.hostBoundNs), g.hostBoundNs, true),
            keyedCell(durationText(g.syncWaitNs), g.syncWaitNs, true),
            keyedCell(durationText(g.queuedNs), g.queuedNs, true),
            keyedCell(regionName(trace, analysis, rank, g.cpuRegion), 0, false),
            keyedCell(regionName(trace, analysis, rank, g.launch), 0, false) });
        m_ranges.push_back(g.range);
    }
    setRows(std::move(rows));
}

TimeRange IdleModel::gapAt(int row) const
{
    return tagged(m_ranges, row);
}

} // namespace exposure
