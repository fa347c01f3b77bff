// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/idlepanel.h"

#include "common/labels.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <algorithm>

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

// The cause with the most time in a gap.
QString causeOf(const IdleGap& g)
{
    const std::pair<TimeNs, QString> parts[]
        = { { g.hostBoundNs, QObject::tr("host-bound") }, { g.syncWaitNs, QObject::tr("sync wait") },
              { g.queuedNs, QObject::tr("queued") }, { g.unattributedNs, QObject::tr("unattributed") } };
    const auto* top = &parts[0];
    for (const auto& p : parts)
        if (p.first > top->first)
            top = &p;
    QString text = top->second;
    if (top == &parts[0] && g.dataLoadingNs * 2 > g.hostBoundNs)
        text += QObject::tr(" (data loading)");
    return text;
}

} // namespace

IdlePanel::IdlePanel(QWidget* parent)
    : RangePanel({ tr("Rank"), tr("Start"), tr("Gap"), tr("Cause"), tr("Host-bound"), tr("Sync wait"), tr("Queued"),
                     tr("CPU was in"), tr("Ended by launch") },
        parent)
{
    QTableWidget* t = table();
    t->horizontalHeader()->setSectionResizeMode(Region, QHeaderView::Stretch);
    t->setTextElideMode(Qt::ElideMiddle);
    t->setToolTip(tr("Double-click a gap to zoom there"));
    connect(t, &QTableWidget::cellActivated, this, [this](int row, int) {
        if (row < 0 || std::size_t(row) >= m_rowRanges.size())
            return;
        const TimeRange g = m_rowRanges[std::size_t(row)];
        const TimeNs margin = std::max<TimeNs>(g.duration() * 2, 1000);
        emit zoomRequested({ g.start - margin, g.end + margin });
    });
}

void IdlePanel::recompute()
{
    auto trace = m_trace;
    auto analysis = m_analysis;
    const TimeRange range = m_range;
    jobs()->run<Result>(
        [trace, analysis, range] {
            Result r;
            for (int rank = 0; rank < int(trace->ranks.size()); ++rank) {
                auto gaps = idleGaps(*trace, *analysis, rank, range);
                const IdleBreakdown b = sumIdleGaps(gaps);
                r.findings.push_back(trace->ranks[std::size_t(rank)].label + ": "
                    + idleFinding(computeStats(*trace, *analysis, rank, range), b,
                        diagnoseLaunches(*trace, *analysis, rank, range)));
                for (IdleGap& g : gaps)
                    r.gaps.emplace_back(rank, g);
            }
            const std::size_t keep = std::min<std::size_t>(r.gaps.size(), kMaxGaps);
            std::partial_sort(r.gaps.begin(), r.gaps.begin() + std::ptrdiff_t(keep), r.gaps.end(),
                [](const auto& a, const auto& b) { return a.second.range.duration() > b.second.range.duration(); });
            r.gaps.resize(keep);
            return r;
        },
        [this](const Result& r) { show(r); });
}

void IdlePanel::show(const Result& r)
{
    QStringList lines;
    for (const auto& f : r.findings)
        lines << QString::fromStdString(f);
    summaryLabel()->setText(
        lines.isEmpty() ? tr("Open a trace to see why its GPUs were idle.") : lines.join(QLatin1Char('\n')));
    m_rowRanges.clear();
    table()->setSortingEnabled(false);
    table()->setRowCount(int(r.gaps.size()));
    int row = 0;
    for (const auto& [rank, g] : r.gaps) {
        auto set = [&](int col, const QString& text, qlonglong sortKey) {
            auto* item = new QTableWidgetItem(text);
            item->setData(Qt::UserRole, sortKey);
            if (col != Region && col != Launch && col != Cause && col != Rank)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            table()->setItem(row, col, item);
        };
        set(Rank, QString::fromStdString(m_trace->ranks[std::size_t(rank)].label), rank);
        set(Start, durationText(g.range.start), g.range.start);
        set(Duration, durationText(g.range.duration()), g.range.duration());
        set(Cause, causeOf(g), 0);
        set(HostBound, durationText(g.hostBoundNs), g.hostBoundNs);
        set(SyncWait, durationText(g.syncWaitNs), g.syncWaitNs);
        set(Queued, durationText(g.queuedNs), g.queuedNs);
        set(Region, regionName(*m_trace, *m_analysis, rank, g.cpuRegion), 0);
        set(Launch, regionName(*m_trace, *m_analysis, rank, g.launch), 0);
        m_rowRanges.push_back(g.range);
        ++row;
    }
    table()->resizeColumnsToContents();
}

QString IdlePanel::findings() const
{
    return summaryLabel()->text();
}

} // namespace exposure
