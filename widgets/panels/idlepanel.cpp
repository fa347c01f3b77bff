// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/idlepanel.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <algorithm>

namespace exposure {

IdlePanel::IdlePanel(QWidget* parent)
    : RangePanel(new IdleModel, parent)
    , m_gaps(static_cast<IdleModel*>(model()))
{
    QTableView* t = table();
    t->horizontalHeader()->setSectionResizeMode(Region, QHeaderView::Stretch);
    t->setTextElideMode(Qt::ElideMiddle);
    t->setToolTip(tr("Double-click a gap to zoom there"));
    connect(t, &QTableView::activated, this, [this](const QModelIndex& index) {
        if (index.row() < 0 || index.row() >= m_gaps->rowCount())
            return;
        const TimeRange g = m_gaps->gapAt(index.row());
        const TimeNs margin = std::max<TimeNs>(g.duration() * 2, 1000);
        emit zoomRequested({ g.start - margin, g.end + margin });
    });
}

void IdlePanel::recompute()
{
    auto trace = m_trace;
    auto analysis = m_analysis;
    auto collectives = m_collectives;
    const TimeRange range = m_range;
    jobs()->run<Result>(
        [trace, analysis, collectives, range] {
            Result r;
            for (int rank = 0; rank < int(trace->ranks.size()); ++rank) {
                auto gaps = idleGaps(*trace, *analysis, rank, range);
                r.findings.push_back(trace->ranks[std::size_t(rank)].label + ": "
                    + rankFinding(*trace, *analysis, collectives.get(), rank, range));
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
    if (m_trace && m_analysis)
        m_gaps->setGaps(*m_trace, *m_analysis, r.gaps);
    else
        m_gaps->clear();
    table()->resizeColumnsToContents();
}

QString IdlePanel::findings() const
{
    return summaryLabel()->text();
}

} // namespace exposure
