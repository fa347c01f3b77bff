// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/timelinescene.h"

#include "common/labels.h"

#include <QObject>
#include <algorithm>

namespace exposure {

const ViewIndex::DepthTables* TimelineScene::depthTables(int row) const
{
    if (!index || row < 0 || std::size_t(row) >= rows.size())
        return nullptr;
    const TimelineRow& r = rows[row];
    if (r.kind != TimelineRow::Kind::Lane || r.depth < 0 || std::size_t(r.rank) >= index->depth.size()
        || std::size_t(r.lane) >= index->depth[r.rank].size())
        return nullptr;
    const auto& d = index->depth[r.rank][r.lane];
    return std::size_t(r.depth) < d.tables.size() ? &d : nullptr;
}

std::shared_ptr<const WaitingOverlap> WaitingOverlap::build(const ViewIndex& index, const CollectiveMatch& match)
{
    const auto waits = waitParts(match);
    if (std::all_of(waits.begin(), waits.end(), [](const auto& w) { return w.empty(); }))
        return nullptr;
    auto out = std::make_shared<WaitingOverlap>();
    const std::size_t n = index.overlap.size();
    out->tables.resize(n);
    for (std::size_t r = 0; r < n; ++r)
        out->tables[r] = r < waits.size() ? splitWaiting(index.overlap[r], waits[r]) : index.overlap[r];
    out->lods.resize(n);
    out->shares.resize(n);
    for (std::size_t r = 0; r < n; ++r) {
        out->lods[r].build(out->tables[r]);
        out->shares[r].build(out->tables[r], nullptr);
    }
    return out;
}

const IntervalTable* TimelineScene::table(int row) const
{
    if (!trace || row < 0 || std::size_t(row) >= rows.size())
        return nullptr;
    const TimelineRow& r = rows[row];
    if (r.kind == TimelineRow::Kind::Group) // painted from its ranks' overlap rows (groupMembers)
        return nullptr;
    if (r.kind == TimelineRow::Kind::Overlap && waiting && std::size_t(r.rank) < waiting->tables.size())
        return &waiting->tables[std::size_t(r.rank)];
    if (r.kind == TimelineRow::Kind::Overlap)
        return index && std::size_t(r.rank) < index->overlap.size() ? &index->overlap[r.rank] : nullptr;
    if (const auto* d = depthTables(row))
        return &d->tables[std::size_t(r.depth)];
    return &trace->ranks[r.rank].lanes[r.lane].intervals;
}

std::uint32_t TimelineScene::laneInterval(int row, std::uint32_t i) const
{
    if (const auto* d = depthTables(row))
        return d->original[std::size_t(rows[row].depth)][i];
    return i;
}

int TimelineScene::rowOf(IntervalRef ref) const
{
    const int first = rowOf(ref.rank, ref.lane);
    if (first < 0 || ref.lane < 0)
        return first;
    const auto* d = depthTables(first);
    if (!d || ref.interval >= d->rowOfInterval.size())
        return first;
    // Sub-rows of a lane are consecutive, depth 0 first.
    const int row = first + d->rowOfInterval[ref.interval];
    return std::size_t(row) < rows.size() && rows[row].lane == ref.lane && rows[row].rank == ref.rank ? row : first;
}

const LodIndex* TimelineScene::lod(int row) const
{
    if (!index || row < 0 || std::size_t(row) >= rows.size())
        return nullptr;
    const TimelineRow& r = rows[row];
    if (r.kind == TimelineRow::Kind::Group)
        return nullptr;
    if (r.kind == TimelineRow::Kind::Overlap && waiting && std::size_t(r.rank) < waiting->lods.size())
        return &waiting->lods[std::size_t(r.rank)];
    if (r.kind == TimelineRow::Kind::Overlap)
        return std::size_t(r.rank) < index->overlapLod.size() ? &index->overlapLod[r.rank] : nullptr;
    if (const auto* d = depthTables(row))
        return &d->lods[std::size_t(r.depth)];
    if (std::size_t(r.rank) < index->lod.size() && std::size_t(r.lane) < index->lod[r.rank].size())
        return &index->lod[r.rank][r.lane];
    return nullptr;
}

const ShareIndex* TimelineScene::shares(int row) const
{
    if (!index || row < 0 || std::size_t(row) >= rows.size())
        return nullptr;
    const TimelineRow& r = rows[row];
    if (r.kind == TimelineRow::Kind::Group)
        return nullptr;
    if (r.kind == TimelineRow::Kind::Overlap && waiting && std::size_t(r.rank) < waiting->shares.size())
        return &waiting->shares[std::size_t(r.rank)];
    if (r.kind == TimelineRow::Kind::Overlap)
        return std::size_t(r.rank) < index->overlapShares.size() ? &index->overlapShares[r.rank] : nullptr;
    if (const auto* d = depthTables(row))
        return std::size_t(r.depth) < d->shares.size() ? &d->shares[std::size_t(r.depth)] : nullptr;
    return trace ? index->laneShares(*trace, r.rank, r.lane) : nullptr;
}

std::vector<GroupMember> TimelineScene::groupMembers(int group) const
{
    std::vector<GroupMember> out;
    if (!index || group < 0 || std::size_t(group) >= groups.size())
        return out;
    for (const int r : groups[std::size_t(group)].ranks) {
        const auto rank = std::size_t(r);
        if (waiting && rank < waiting->tables.size())
            out.push_back({ &waiting->tables[rank], &waiting->shares[rank] });
        else if (rank < index->overlap.size() && rank < index->overlapShares.size())
            out.push_back({ &index->overlap[rank], &index->overlapShares[rank] });
        else
            out.push_back({}); // idle throughout
    }
    return out;
}

int TimelineScene::rowOf(int rank, int lane) const
{
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        if (r.rank == rank && (lane < 0 ? r.kind == TimelineRow::Kind::Overlap : r.lane == lane))
            return int(i);
    }
    return -1;
}

QColor TimelineScene::colorOf(int row, std::uint32_t interval) const
{
    const IntervalTable* t = table(row);
    if (!t || interval >= t->size())
        return palette.idle();
    const StringId id = t->name(interval);
    if (rows[row].kind == TimelineRow::Kind::Overlap)
        return palette.overlap(OverlapState(std::min<StringId>(id, kOverlapStateCount - 1)));
    return id < nameColors.size() ? nameColors[id] : palette.idle();
}

std::vector<std::pair<std::uint8_t, TimeNs>> TimelineScene::classTimes(int row, TimeNs start, TimeNs end) const
{
    std::vector<std::pair<std::uint8_t, TimeNs>> out;
    const ShareIndex* si = shares(row);
    const IntervalTable* t = table(row);
    if (!si || !t || si->intervalCount() != t->size())
        return out;
    std::vector<TimeNs> times(si->classCount());
    si->timeIn(*t, start, end, times.data());
    for (std::size_t l = 0; l < times.size(); ++l)
        if (times[l] > 0)
            out.emplace_back(si->classAt(l), times[l]);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return out;
}

QString TimelineScene::classLabel(int row, std::uint8_t cls) const
{
    const bool states = row >= 0 && std::size_t(row) < rows.size() && rows[row].kind != TimelineRow::Kind::Lane;
    if (states && cls == kGroupIdle)
        return QObject::tr("idle");
    if (states)
        return cls <= std::uint8_t(OverlapState::WaitingHidden) ? overlapStateShortLabel(OverlapState(cls)) : QString();
    if (!index || cls >= index->paintClasses.size())
        return {};
    const PaintClass& pc = index->paintClasses[cls];
    if (!pc.subgroup.empty() && pc.subgroup != "other")
        return QString::fromStdString(pc.subgroup);
    return pc.category == Category::Compute ? QObject::tr("other compute") : categoryLabel(pc.category);
}

bool TimelineScene::classIsBusy(int row, std::uint8_t cls) const
{
    if (row >= 0 && std::size_t(row) < rows.size() && rows[row].kind != TimelineRow::Kind::Lane)
        return cls != kGroupIdle;
    return !index || cls >= index->paintClasses.size() || index->paintClasses[cls].category != Category::Idle;
}

} // namespace exposure
