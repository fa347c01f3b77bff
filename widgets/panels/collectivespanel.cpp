// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/collectivespanel.h"

#include "common/labels.h"
#include "model/timeformat.h"

#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace exposure {

namespace {

QString rankLabel(const Trace& trace, int index)
{
    return std::size_t(index) < trace.ranks.size() ? QString::fromStdString(trace.ranks[std::size_t(index)].label)
                                                   : QString::number(index);
}

QString duration(TimeNs ns)
{
    return QString::fromStdString(formatDuration(ns));
}

QString groupTitle(const ProcessGroupMatch& pg)
{
    if (pg.method == MatchMethod::Time && pg.name.empty())
        return CollectivesPanel::tr("No process group (matched by kernel name and end time)");
    return CollectivesPanel::tr("Group %1%2")
        .arg(QString::fromStdString(pg.name),
            pg.ranks.empty() ? QString() : CollectivesPanel::tr(" ranks %1").arg(QString::fromStdString(pg.ranks)));
}

void addRows(QTreeWidgetItem* parent, const std::vector<CollectiveSummaryRow>& rows, std::uint32_t group)
{
    for (const CollectiveSummaryRow& r : rows) {
        if (r.processGroup != group)
            continue;
        auto* item = new QTreeWidgetItem(parent);
        const TimeNs n = TimeNs(r.count);
        item->setText(CollectivesPanel::Type, QString::fromStdString(r.type.empty() ? "?" : r.type));
        item->setText(CollectivesPanel::DataType, QString::fromStdString(r.dtype));
        item->setText(CollectivesPanel::Size, r.bytes ? QString::number(r.bytes) + QStringLiteral(" B") : QString());
        item->setText(CollectivesPanel::Algorithm, QString::fromStdString(r.algorithm));
        item->setText(CollectivesPanel::Count, QString::number(r.count));
        item->setText(CollectivesPanel::Total, duration(r.totalNs));
        item->setText(CollectivesPanel::Mean, duration(r.totalNs / n));
        item->setText(CollectivesPanel::Latency, duration(r.latencyTotalNs / n));
        item->setText(CollectivesPanel::BusBandwidth,
            r.busBandwidth > 0 ? QString::number(r.busBandwidth / 1e9, 'f', 2) + QStringLiteral(" GB/s") : QString());
        item->setText(CollectivesPanel::Waiting,
            r.memberNs > 0
                ? QString::number(100.0 * double(r.waitNs) / double(r.memberNs), 'f', 1) + QStringLiteral(" %")
                : QString());
        for (int c = CollectivesPanel::Count; c < CollectivesPanel::ColumnCount; ++c)
            item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
    }
}

} // namespace

CollectivesPanel::CollectivesPanel(QWidget* parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_tree(new QTreeWidget(this))
{
    m_summary->setWordWrap(true);
    m_tree->setColumnCount(ColumnCount);
    m_tree->setHeaderLabels({ tr("Type"), tr("Data type"), tr("Size"), tr("Algorithm"), tr("Count"), tr("Total"),
        tr("Mean"), tr("Latency"), tr("Bus bandwidth"), tr("Waiting") });
    m_tree->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_tree->setToolTip(tr("Latency: the shortest member's duration (the last arrival's, without waiting). Bus "
                          "bandwidth: message size / mean latency × the nccl-tests factor (2(n−1)/n all-reduce, "
                          "(n−1)/n all-gather, reduce-scatter, all-to-all, 1 otherwise). Waiting: share of the "
                          "members' time spent before the last member arrived."));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_tree, 1);
    setTrace(nullptr, nullptr);
}

void CollectivesPanel::setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const CollectiveMatch> match)
{
    m_tree->clear();
    if (!trace || !match || trace->ranks.size() < 2 || match->processGroups.empty()) {
        m_summary->setText(tr("No communication kernels on several ranks."));
        return;
    }
    const auto rows = collectiveSummary(*trace, *match);
    const auto stragglers = stragglerSummary(*match);
    for (std::uint32_t g = 0; g < match->processGroups.size(); ++g) {
        const ProcessGroupMatch& pg = match->processGroups[g];
        auto* top = new QTreeWidgetItem(m_tree);
        top->setFirstColumnSpanned(true);
        top->setText(0,
            tr("%1: %2 collectives, %3 of %4 kernels matched by %5")
                .arg(groupTitle(pg))
                .arg(pg.collectives)
                .arg(pg.matchedInstances)
                .arg(pg.instances)
                .arg(QString::fromLatin1(matchMethodName(pg.method))));
        for (const CountMismatch& mm : pg.mismatches) {
            auto* item = new QTreeWidgetItem(top);
            item->setFirstColumnSpanned(true);
            item->setText(0,
                tr("Count mismatch: %1 has %2 against %3 on %4; %5 without a counterpart")
                    .arg(rankLabel(*trace, mm.rank))
                    .arg(mm.rankCount)
                    .arg(mm.referenceCount)
                    .arg(rankLabel(*trace, mm.reference))
                    .arg(mm.unmatched));
        }
        addRows(top, rows, g);
        QStringList last;
        for (const StragglerRow& st : stragglers)
            if (st.processGroup == g && st.arrivedLast > 0)
                last << tr("%1 last in %2 (others waited %3)")
                            .arg(rankLabel(*trace, st.rank))
                            .arg(st.arrivedLast)
                            .arg(duration(st.causedWaitNs));
        auto* s = new QTreeWidgetItem(top);
        s->setFirstColumnSpanned(true);
        s->setText(0, tr("Stragglers: %1").arg(last.isEmpty() ? tr("none") : last.join(QStringLiteral(", "))));
        top->setExpanded(true);
    }
    m_summary->setText(
        tr("%1 process groups, %2 collectives matched").arg(match->processGroups.size()).arg(match->groups.size()));
}

QString CollectivesPanel::summary() const
{
    return m_summary->text();
}

} // namespace exposure
