// SPDX-License-Identifier: GPL-3.0-or-later
#include "view/viewindex.h"

#include "analysis/commops.h"
#include "analysis/grouplayout.h"
#include "analysis/rules.h"
#include "model/enumnames.h"
#include "model/parallelfor.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <map>

namespace exposure {

const char* laneRoleName(LaneRole role)
{
    static constexpr EnumName<LaneRole> names[] = { { LaneRole::Compute, "compute" },
        { LaneRole::Communication, "NCCL" }, { LaneRole::Memcpy, "memcpy" }, { LaneRole::Cpu, "CPU" } };
    return nameIn(names, role, "");
}

namespace {

// "dp · 0 (default_pg)": the parallelism role and process group of a communication stream's kernels (the first 4 096
// that name one; roles by `rules` and the groups' `layout` where given, else by the groups' names); roles joined by
// '+' where several groups share the stream; empty where none is recorded.
std::string commGroupLabel(
    const Trace& trace, const Lane& lane, const Rules* rules, const GroupLayout* layout = nullptr)
{
    std::vector<std::pair<std::string, std::string>> groups; // (group, role)
    const std::size_t n = std::min<std::size_t>(lane.collectiveArgs.size(), 4096);
    for (std::size_t k = 0; k < n; ++k) {
        const std::uint32_t at = lane.collectiveArgs[k].second;
        if (at >= trace.collectiveArgs.size())
            continue;
        const CollectiveArgs& args = trace.collectiveArgs[at];
        const std::string group = !args.processGroup.empty() ? args.processGroup : args.groupRanks;
        if (group.empty() || std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
                return g.first == group;
            }) != groups.end())
            continue;
        groups.emplace_back(group, rules ? roleOfGroup(*rules, layout, &args) : roleOfGroup(group));
    }
    if (groups.empty())
        return {};
    if (groups.size() == 1)
        return groups.front().second + " \xC2\xB7 " + groups.front().first;
    std::string roles;
    for (const auto& [g, r] : groups)
        if (roles.find(r) == std::string::npos)
            roles += (roles.empty() ? "" : "+") + r;
    return roles + " \xC2\xB7 " + std::to_string(groups.size()) + " groups";
}

} // namespace

void ViewIndex::resizeRanks(std::size_t n)
{
    lod.resize(n);
    roles.resize(n);
    commLabels.resize(n);
    overlap.resize(n);
    overlapLod.resize(n);
    shares.resize(n);
    overlapShares.resize(n);
    depth.resize(n);
}

Category categoryOf(const Trace& trace, const Analysis* analysis, StringId name)
{
    if (analysis && name < analysis->names.size())
        return analysis->names[name].category;
    switch (trace.regionKind(name)) {
    case RegionKind::Kernel:
    case RegionKind::DeviceOp: {
        static const Rules defaults = Rules::defaults(); // the rules decide, before an analysis as after one
        return defaults.classify(trace.name(name), RegionKind::Kernel).category;
    }
    case RegionKind::Memcpy:
        return Category::Memcpy;
    case RegionKind::CommOp:
        return Category::Communication;
    case RegionKind::ComputeOp:
        return Category::Compute;
    case RegionKind::Idle:
    case RegionKind::Sync:
        return Category::Idle;
    case RegionKind::HostApi:
    case RegionKind::HostRegion:
    case RegionKind::Unknown:
        break;
    }
    return Category::Host;
}

namespace {

// Paint classes: one per (category, sub-group) in use, ordered so that every rank stacks them alike.
void buildPaintClasses(ViewIndex& index, const Analysis* analysis, const std::vector<Category>& cats)
{
    const std::size_t nameCount = cats.size();
    auto subgroupOf = [&](std::size_t id) {
        return analysis && id < analysis->names.size() ? analysis->names[id].subgroup : std::string();
    };
    std::map<std::pair<int, std::string>, std::uint8_t> ids;
    for (std::size_t id = 0; id < nameCount; ++id)
        ids.emplace(std::make_pair(int(cats[id]), subgroupOf(id)), 0);
    if (ids.size() > 250) { // more than a palette can tell apart: one class per category
        std::map<std::pair<int, std::string>, std::uint8_t> coarse;
        for (const auto& [key, v] : ids)
            coarse.emplace(std::make_pair(key.first, std::string()), 0);
        ids.swap(coarse);
    }
    for (auto& [key, v] : ids) {
        v = std::uint8_t(index.paintClasses.size());
        index.paintClasses.push_back({ Category(key.first), key.second });
    }
    index.paintClassOfName.resize(nameCount);
    for (std::size_t id = 0; id < nameCount; ++id) {
        auto it = ids.find(std::make_pair(int(cats[id]), subgroupOf(id)));
        if (it == ids.end())
            it = ids.find(std::make_pair(int(cats[id]), std::string()));
        index.paintClassOfName[id] = it->second;
    }
}

// The per-depth tables of one CPU lane with nesting (none for a flat lane).
void buildDepthTables(ViewIndex& index, const Lane& lane, ViewIndex::DepthTables& d)
{
    const auto& t = lane.intervals;
    int rowsNeeded = 0;
    for (std::size_t i = 0; i < t.size(); ++i)
        rowsNeeded = std::max(rowsNeeded, ViewIndex::depthRow(t.depth(i)) + 1);
    if (rowsNeeded < 2)
        return; // flat: the lane's own table and LOD draw it
    d.tables.resize(std::size_t(rowsNeeded));
    d.original.resize(std::size_t(rowsNeeded));
    d.rowOfInterval.resize(t.size());
    // The lane is sorted by start, so every per-depth table is too.
    for (std::size_t i = 0; i < t.size(); ++i) {
        const int row = ViewIndex::depthRow(t.depth(i));
        d.tables[std::size_t(row)].append(t.start(i), t.end(i), t.name(i), t.depth(i));
        d.original[std::size_t(row)].push_back(std::uint32_t(i));
        d.rowOfInterval[i] = std::uint8_t(row);
    }
    d.lods.reserve(d.tables.size());
    d.shares.reserve(d.tables.size());
    for (const auto& table : d.tables) {
        d.lods.emplace_back(table, &index.lowPriority);
        d.shares.emplace_back(table, &index.paintClassOfName);
    }
}

// What a GPU lane mostly does, by busy time per category.
LaneRole gpuLaneRole(const std::array<TimeNs, kCategoryCount>& busy)
{
    const TimeNs compute = busy[std::size_t(Category::Compute)];
    const TimeNs comm = busy[std::size_t(Category::Communication)];
    const TimeNs copy = busy[std::size_t(Category::Memcpy)];
    if (compute == 0 && comm == 0 && copy == 0)
        return LaneRole::Other;
    if (comm >= compute && comm >= copy)
        return LaneRole::Communication;
    if (compute >= copy)
        return LaneRole::Compute;
    return LaneRole::Memcpy;
}

// One lane's LOD, share index, role and its share of the per-name statistics.
// `stats`: the per-name statistics of the ranks indexed on this thread (merged into the index afterwards).
void indexLane(
    ViewIndex& index, std::size_t r, const Lane& lane, const std::vector<Category>& cats, std::vector<NameStats>& stats)
{
    const std::size_t nameCount = cats.size();
    index.lod[r].emplace_back(lane.intervals, &index.lowPriority);
    const bool splitByDepth = index.depth[r][index.shares[r].size()].tables.size() >= 2;
    if (splitByDepth)
        index.shares[r].emplace_back(); // drawn per depth; the whole-lane index waits for laneShares()
    else
        index.shares[r].emplace_back(lane.intervals, &index.paintClassOfName);
    std::array<TimeNs, kCategoryCount> busy {};
    const auto& t = lane.intervals;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const StringId id = t.name(i);
        const TimeNs d = t.duration(i);
        if (id < nameCount) {
            busy[std::size_t(cats[id])] += d;
            auto& st = stats[id];
            st.min = st.count == 0 ? d : std::min(st.min, d);
            st.max = std::max(st.max, d);
            st.total += d;
            ++st.count;
        }
    }
    index.roles[r].push_back(lane.isGpu() ? gpuLaneRole(busy) : LaneRole::Cpu);
}

} // namespace

std::shared_ptr<const ViewIndex> ViewIndex::build(const Trace& trace, const Analysis* analysis, int threads)
{
    auto index = std::make_shared<ViewIndex>();
    const std::size_t nameCount = trace.strings.size();
    std::vector<Category> cats(nameCount);
    for (std::size_t id = 0; id < nameCount; ++id)
        cats[id] = categoryOf(trace, analysis, StringId(id));
    index->lowPriority.assign(nameCount, 0);
    for (std::size_t id = 0; id < nameCount; ++id)
        index->lowPriority[id] = cats[id] == Category::Idle ? 1 : 0;
    buildPaintClasses(*index, analysis, cats);

    index->resizeRanks(trace.ranks.size());
    const GroupLayout layout = analysis ? inferGroupLayout(trace) : GroupLayout {};
    auto indexRank = [&](std::size_t r, std::vector<NameStats>& stats) {
        const Rank& rank = trace.ranks[r];
        index->lod[r].reserve(rank.lanes.size());
        index->depth[r].resize(rank.lanes.size());
        for (std::size_t li = 0; li < rank.lanes.size(); ++li)
            if (!rank.lanes[li].isGpu())
                buildDepthTables(*index, rank.lanes[li], index->depth[r][li]);
        for (const Lane& lane : rank.lanes) {
            indexLane(*index, r, lane, cats, stats);
            index->commLabels[r].push_back(lane.isGpu() && lane.commRole == CommRole::None
                    ? commGroupLabel(trace, lane, analysis ? &analysis->rules : nullptr, &layout)
                    : std::string());
        }
        if (analysis && r < analysis->ranks.size()) {
            auto& table = index->overlap[r];
            const auto& segs = analysis->ranks[r].overlap;
            table.reserve(segs.size());
            for (const auto& seg : segs)
                table.append(seg.start, seg.end, StringId(seg.state));
            index->overlapLod[r].build(table);
            index->overlapShares[r].build(table, nullptr);
        }
    };
    // Ranks are independent but for the per-name statistics: each thread indexes a contiguous block of ranks into
    // statistics of its own, summed afterwards (count, total, min and max do not depend on the order).
    const std::size_t blocks = workerCount(trace.ranks.size(), threads);
    std::vector<std::vector<NameStats>> blockStats(blocks, std::vector<NameStats>(nameCount));
    parallelFor(blocks, blocks, [&](std::size_t b) {
        for (std::size_t r = trace.ranks.size() * b / blocks; r < trace.ranks.size() * (b + 1) / blocks; ++r)
            indexRank(r, blockStats[b]);
    });
    index->nameStats = std::move(blockStats[0]);
    for (std::size_t b = 1; b < blocks; ++b)
        for (std::size_t id = 0; id < nameCount; ++id) {
            const NameStats& from = blockStats[b][id];
            if (from.count == 0)
                continue;
            NameStats& to = index->nameStats[id];
            to.min = to.count == 0 ? from.min : std::min(to.min, from.min);
            to.max = std::max(to.max, from.max);
            to.total += from.total;
            to.count += from.count;
        }
    return index;
}

const ShareIndex* ViewIndex::laneShares(const Trace& trace, int rank, int lane) const
{
    if (rank < 0 || std::size_t(rank) >= shares.size() || lane < 0 || std::size_t(lane) >= shares[rank].size()
        || std::size_t(rank) >= trace.ranks.size() || std::size_t(lane) >= trace.ranks[rank].lanes.size())
        return nullptr;
    const IntervalTable& table = trace.ranks[rank].lanes[lane].intervals;
    const ShareIndex& own = shares[rank][lane];
    if (own.intervalCount() == table.size())
        return &own;
    std::lock_guard<std::mutex> lock(m_lazyMutex);
    auto& slot = m_lazyShares[{ rank, lane }];
    if (!slot)
        slot = std::make_unique<ShareIndex>(table, &paintClassOfName);
    return slot.get();
}

namespace {

// The rows of one rank, the first one carrying the rank's name (none where the filter leaves none).
void appendRankRows(
    const Trace& trace, const ViewIndex& index, const RowFilter& filter, std::size_t r, std::vector<TimelineRow>& rows)
{
    auto wanted = [&](int rank, int lane) {
        if (filter.only.empty())
            return true;
        return std::find(filter.only.begin(), filter.only.end(), std::make_pair(rank, lane)) != filter.only.end();
    };
    const Rank& rank = trace.ranks[r];
    const int ri = int(r);
    const bool hasOverlap = r < index.overlap.size() && !index.overlap[r].empty();
    std::vector<int> gpu, cpu;
    for (std::size_t l = 0; l < rank.lanes.size(); ++l)
        (rank.lanes[l].isGpu() ? gpu : cpu).push_back(int(l));
    auto roleOf = [&](int l) {
        return r < index.roles.size() && std::size_t(l) < index.roles[r].size() ? index.roles[r][l] : LaneRole::Other;
    };
    std::stable_sort(gpu.begin(), gpu.end(), [&](int a, int b) { return roleOf(a) < roleOf(b); });

    std::vector<TimelineRow> mine;
    auto laneRow = [&](int l) {
        TimelineRow row;
        row.rank = ri;
        row.lane = l;
        row.label = rank.lanes[l].name;
        const LaneRole laneRole = roleOf(l);
        // AMD streams (HIP[d:s]) run RCCL, not NCCL.
        const char* role = laneRole == LaneRole::Communication && rank.lanes[l].name.rfind("HIP", 0) == 0
            ? "RCCL"
            : laneRoleName(laneRole);
        if (rank.lanes[l].isGpu() && *role) {
            row.label += ' ';
            row.label += role;
        }
        if (laneRole == LaneRole::Communication && rank.lanes[l].commRole == CommRole::None)
            if (const std::string group = r < index.commLabels.size() && std::size_t(l) < index.commLabels[r].size()
                    ? index.commLabels[r][std::size_t(l)]
                    : commGroupLabel(trace, rank.lanes[l], nullptr);
                !group.empty())
                row.label += " " + group;
        return row;
    };
    if (filter.collapsedRanks.count(ri) > 0) {
        TimelineRow row;
        if (hasOverlap) {
            row.kind = TimelineRow::Kind::Overlap;
            row.rank = ri;
            row.label = "overlap";
        } else if (!gpu.empty()) {
            row = laneRow(gpu.front());
        } else if (!cpu.empty()) {
            row = laneRow(cpu.front());
        } else {
            return;
        }
        row.label += " (collapsed)";
        mine.push_back(row);
    } else {
        for (int l : gpu)
            if (wanted(ri, l))
                mine.push_back(laneRow(l));
        if (hasOverlap && filter.showOverlap && wanted(ri, -1)) {
            TimelineRow row;
            row.kind = TimelineRow::Kind::Overlap;
            row.rank = ri;
            row.label = "overlap";
            mine.push_back(row);
        }
        if (filter.showCpu && !filter.gpuOnly)
            for (int l : cpu) {
                if (!wanted(ri, l))
                    continue;
                const std::size_t depthRows
                    = filter.cpuDepthRows && r < index.depth.size() && std::size_t(l) < index.depth[r].size()
                    ? index.depth[r][std::size_t(l)].tables.size()
                    : 0;
                if (depthRows < 2) {
                    mine.push_back(laneRow(l));
                    continue;
                }
                // One sub-row per nesting depth; only the top one carries the lane's name.
                for (std::size_t d = 0; d < depthRows; ++d) {
                    TimelineRow row = laneRow(l);
                    row.depth = int(d);
                    if (d > 0)
                        row.label.clear();
                    mine.push_back(row);
                }
            }
    }
    if (mine.empty())
        return;
    mine.front().firstOfRank = true;
    mine.front().label = rank.label + " \xC2\xB7 " + mine.front().label;
    rows.insert(rows.end(), mine.begin(), mine.end());
}

} // namespace

std::vector<TimelineRow> buildRows(const Trace& trace, const ViewIndex& index, const RowFilter& filter)
{
    std::vector<TimelineRow> rows;
    const bool anyOverlap
        = std::any_of(index.overlap.begin(), index.overlap.end(), [](const IntervalTable& t) { return !t.empty(); });
    if (filter.groups.empty() || !filter.only.empty() || !anyOverlap) {
        for (std::size_t r = 0; r < trace.ranks.size(); ++r)
            appendRankRows(trace, index, filter, r, rows);
        return rows;
    }
    for (std::size_t g = 0; g < filter.groups.size(); ++g) {
        const RankGroup& group = filter.groups[g];
        std::vector<int> members;
        for (const int r : group.ranks)
            if (r >= 0 && std::size_t(r) < trace.ranks.size())
                members.push_back(r);
        if (members.empty())
            continue;
        TimelineRow header;
        header.kind = TimelineRow::Kind::Group;
        header.rank = members.front();
        header.group = int(g);
        header.firstOfRank = true;
        header.label
            = group.label + " \xC2\xB7 " + std::to_string(members.size()) + (members.size() == 1 ? " rank" : " ranks");
        rows.push_back(header);
        if (filter.collapsedGroups.count(int(g)))
            continue;
        for (const int r : members) {
            const std::size_t before = rows.size();
            appendRankRows(trace, index, filter, std::size_t(r), rows);
            for (std::size_t i = before; i < rows.size(); ++i)
                rows[i].group = int(g);
        }
    }
    return rows;
}

} // namespace exposure
