// SPDX-License-Identifier: GPL-3.0-or-later
#include "panels/collectivesmodel.h"

#include "analysis/commops.h"
#include "common/labels.h"
#include "model/timeformat.h"

namespace exposure {

namespace {

// internalId of an index: 0 for a group's row, the group's row + 1 for the rows under it.
constexpr quintptr kTop = 0;

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
        return CollectivesModel::tr("No process group (matched by kernel name and end time)");
    return CollectivesModel::tr("Group %1%2")
        .arg(QString::fromStdString(pg.name),
            pg.ranks.empty() ? QString() : CollectivesModel::tr(" ranks %1").arg(QString::fromStdString(pg.ranks)));
}

QStringList summaryCells(const CollectiveSummaryRow& r)
{
    const TimeNs n = TimeNs(r.count);
    QStringList cells(CollectivesModel::ColumnCount);
    // The operation called, and the kernels' own type where it says something else.
    const std::string kernelType = r.type.empty() ? "?" : r.type;
    const std::string normalised = normaliseCommOp(r.type);
    cells[CollectivesModel::Type] = r.op.empty() || r.op == "other" ? QString::fromStdString(kernelType)
        : r.type.empty() || normalised == r.op
        ? QString::fromStdString(r.op)
        : CollectivesModel::tr("%1 (%2 kernels)").arg(QString::fromStdString(r.op), QString::fromStdString(r.type));
    cells[CollectivesModel::DataType] = QString::fromStdString(r.dtype);
    cells[CollectivesModel::Size] = r.bytes ? byteCountText(r.bytes) : QString();
    cells[CollectivesModel::Algorithm] = QString::fromStdString(r.algorithm);
    cells[CollectivesModel::Count] = groupDigits(r.count);
    cells[CollectivesModel::Total] = duration(r.totalNs);
    cells[CollectivesModel::Mean] = duration(r.totalNs / n);
    cells[CollectivesModel::Latency] = duration(r.latencyTotalNs / n);
    cells[CollectivesModel::BusBandwidth]
        = r.busBandwidth > 0 ? QString::number(r.busBandwidth / 1e9, 'f', 2) + QStringLiteral(" GB/s") : QString();
    cells[CollectivesModel::Waiting] = r.memberNs > 0
        ? QString::number(100.0 * double(r.waitNs) / double(r.memberNs), 'f', 1) + QStringLiteral(" %")
        : QString();
    return cells;
}

} // namespace

CollectivesModel::CollectivesModel(QObject* parent)
    : QAbstractItemModel(parent)
{ }

void CollectivesModel::clear()
{
    beginResetModel();
    m_groups.clear();
    endResetModel();
}

void CollectivesModel::setMatch(const Trace& trace, const CollectiveMatch& match, const Analysis* analysis)
{
    beginResetModel();
    m_groups.clear();
    auto opOf = [&](const CollectiveGroup& g) {
        const CollectiveMember& m = g.members.front();
        return commOpOf(trace, *analysis, { m.rank, m.lane, m.interval });
    };
    auto kernelName = [&](std::uint32_t name) { return trace.name(name); };
    const auto rows = trace.ranks.size() < 2 ? std::vector<CollectiveSummaryRow> {}
        : analysis                           ? collectiveSummary(match, analysis->rules, kernelName, opOf)
                                             : collectiveSummary(trace, match, Rules::defaults());
    const auto stragglers = stragglerSummary(match);
    for (std::uint32_t g = 0; trace.ranks.size() >= 2 && g < match.processGroups.size(); ++g) {
        const ProcessGroupMatch& pg = match.processGroups[g];
        Group group;
        group.title = tr("%1: %2 collectives, %3 of %4 kernels matched by %5")
                          .arg(groupTitle(pg))
                          .arg(pg.collectives)
                          .arg(pg.matchedInstances)
                          .arg(pg.instances)
                          .arg(QString::fromLatin1(matchMethodName(pg.method)));
        for (const CountMismatch& mm : pg.mismatches)
            group.lines.push_back({ { tr("Count mismatch: %1 has %2 against %3 on %4; %5 without a counterpart")
                                            .arg(rankLabel(trace, mm.rank))
                                            .arg(mm.rankCount)
                                            .arg(mm.referenceCount)
                                            .arg(rankLabel(trace, mm.reference))
                                            .arg(mm.unmatched) },
                true, QString() });
        for (const CollectiveSummaryRow& r : rows)
            if (r.processGroup == g)
                group.lines.push_back(
                    { summaryCells(r), false, r.bytes ? tr("%1 bytes").arg(groupDigits(r.bytes)) : QString() });
        QStringList last;
        for (const StragglerRow& st : stragglers)
            if (st.processGroup == g && st.arrivedLast > 0)
                last << tr("%1 last in %2 (others waited %3)")
                            .arg(rankLabel(trace, st.rank))
                            .arg(st.arrivedLast)
                            .arg(duration(st.causedWaitNs));
        group.lines.push_back(
            { { tr("Stragglers: %1").arg(last.isEmpty() ? tr("none") : last.join(QStringLiteral(", "))) }, true,
                QString() });
        m_groups.push_back(std::move(group));
    }
    endResetModel();
}

const CollectivesModel::Line* CollectivesModel::lineOf(const QModelIndex& index) const
{
    if (!index.isValid() || index.internalId() == kTop)
        return nullptr;
    const Group& g = m_groups[std::size_t(index.internalId() - 1)];
    return &g.lines[std::size_t(index.row())];
}

bool CollectivesModel::isSpanned(const QModelIndex& index) const
{
    if (!index.isValid() || index.model() != this)
        return false;
    const Line* line = lineOf(index);
    return !line || line->spanned;
}

QModelIndex CollectivesModel::index(int row, int column, const QModelIndex& parent) const
{
    if (row < 0 || column < 0 || column >= ColumnCount || row >= rowCount(parent))
        return {};
    return createIndex(row, column, parent.isValid() ? quintptr(parent.row()) + 1 : kTop);
}

QModelIndex CollectivesModel::parent(const QModelIndex& child) const
{
    if (!child.isValid() || child.internalId() == kTop)
        return {};
    return createIndex(int(child.internalId() - 1), 0, kTop);
}

int CollectivesModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid())
        return int(m_groups.size());
    if (parent.internalId() != kTop || parent.column() != 0)
        return 0;
    return int(m_groups[std::size_t(parent.row())].lines.size());
}

int CollectivesModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

QVariant CollectivesModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.model() != this)
        return {};
    const Line* line = lineOf(index);
    if (role == Qt::TextAlignmentRole && line && !line->spanned && (index.column() >= Count || index.column() == Size))
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && line && !line->spanned) // the exact count behind "28.4 MB"
        return index.column() == Size && !line->sizeTip.isEmpty() ? QVariant(line->sizeTip)
                                                                  : headerData(index.column(), Qt::Horizontal, role);
    if (role != Qt::DisplayRole)
        return {};
    if (!line)
        return index.column() == 0 ? QVariant(m_groups[std::size_t(index.row())].title) : QVariant();
    if (line->spanned)
        return index.column() == 0 ? QVariant(line->cells.front()) : QVariant();
    return line->cells[index.column()];
}

QVariant CollectivesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::ToolTipRole)
        return columnToolTip(Column(section));
    if (role == Qt::TextAlignmentRole)
        return QVariant::fromValue(
            (section >= Count || section == Size ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    static const char* const titles[ColumnCount] = { QT_TR_NOOP("Type"), QT_TR_NOOP("Data type"), QT_TR_NOOP("Size"),
        QT_TR_NOOP("Algorithm"), QT_TR_NOOP("Count"), QT_TR_NOOP("Total"), QT_TR_NOOP("Mean"), QT_TR_NOOP("Latency"),
        QT_TR_NOOP("Bus bandwidth"), QT_TR_NOOP("Waiting") };
    return tr(titles[section]);
}

QString CollectivesModel::columnToolTip(Column column)
{
    switch (column) {
    case Size:
        return tr("Message size S: the larger of the input and output message (the exact byte count in each cell's "
                  "tooltip)");
    case Count:
        return tr("Collectives matched across ranks (one per collective, not one per rank's kernel)");
    case Total:
        return tr("Σ over the collectives of each one's span: from the first rank's kernel start to the last rank's "
                  "kernel end. A collective counts once, however many ranks run it, and its span includes the "
                  "waiting for the last rank: the Kernels panel's total instead sums every rank's kernel durations, so "
                  "the two differ.");
    case Mean:
        return tr("Total / Count: the mean span of one collective across its ranks");
    case Latency:
        return tr("The shortest member's duration (the last arrival's, without waiting), averaged");
    case BusBandwidth:
        return tr("Message size / mean latency × the nccl-tests factor (2(n−1)/n all-reduce, (n−1)/n all-gather, "
                  "reduce-scatter, all-to-all, 1 otherwise)");
    case Waiting:
        return tr("Share of the members' time spent before the last member arrived");
    default:
        return {};
    }
}

Qt::ItemFlags CollectivesModel::flags(const QModelIndex& index) const
{
    if (!index.isValid() || index.model() != this)
        return Qt::NoItemFlags;
    return Qt::ItemIsSelectable | Qt::ItemIsEnabled;
}

} // namespace exposure
