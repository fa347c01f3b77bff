// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/rowpaint.h"

#include "model/bytes.h"
#include "timeline/timelineplottable.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>

namespace exposure {

namespace {

template <typename T> void put(std::string& out, T v)
{
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void putString(std::string& out, const std::string& s)
{
    put(out, std::uint64_t(s.size()));
    out += s;
}

template <typename T> void putVector(std::string& out, const std::vector<T>& v)
{
    put(out, std::uint64_t(v.size()));
    if (!v.empty())
        out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

[[noreturn]] void malformed()
{
    throw std::runtime_error("malformed row paint message");
}

template <typename T> T get(std::string_view in, std::size_t& pos)
{
    if (in.size() - pos < sizeof(T))
        malformed();
    T v;
    std::memcpy(&v, in.data() + pos, sizeof v);
    pos += sizeof v;
    return v;
}

std::size_t getCount(std::string_view in, std::size_t& pos, std::size_t unit)
{
    const auto n = get<std::uint64_t>(in, pos);
    if (n > (in.size() - pos) / std::max<std::size_t>(1, unit))
        malformed();
    return std::size_t(n);
}

std::string getString(std::string_view in, std::size_t& pos)
{
    const std::size_t n = getCount(in, pos, 1);
    std::string s(in.substr(pos, n));
    pos += n;
    return s;
}

template <typename T> std::vector<T> getVector(std::string_view in, std::size_t& pos)
{
    const std::size_t n = getCount(in, pos, sizeof(T));
    std::vector<T> v(n);
    if (n)
        std::memcpy(v.data(), in.data() + pos, n * sizeof(T));
    pos += n * sizeof(T);
    return v;
}

} // namespace

std::size_t RowPaint::bytes() const
{
    std::size_t n = sizeof *this + classes.capacity() * sizeof(Class) + columns.capacity() * sizeof(TimeNs)
        + split.capacity() * sizeof(TimeNs) + blocks.capacity() * sizeof(Block) + arrows.capacity() * sizeof(Arrow);
    for (const auto& c : classes)
        n += c.subgroup.capacity();
    for (const auto& b : blocks)
        n += b.subgroup.capacity() + b.label.capacity();
    return n;
}

void RowPaint::appendTo(std::string& out) const
{
    put(out, std::uint8_t(visible));
    put(out, std::uint64_t(classes.size()));
    for (const Class& c : classes) {
        put(out, c.kind);
        putString(out, c.subgroup);
    }
    putVector(out, columns);
    putVector(out, split);
    put(out, std::uint64_t(blocks.size()));
    for (const Block& b : blocks) {
        put(out, b.start);
        put(out, b.end);
        put(out, std::uint8_t(b.category));
        putString(out, b.subgroup);
        put(out, std::uint8_t(b.outline));
        put(out, b.waitStart);
        put(out, b.waitNs);
        putString(out, b.label);
    }
    put(out, std::uint64_t(arrows.size()));
    for (const Arrow& a : arrows) {
        put(out, a.t);
        put(out, std::int32_t(a.toRow));
    }
    put(out, std::int32_t(members));
}

RowPaint RowPaint::readFrom(std::string_view in, std::size_t& pos)
{
    RowPaint p;
    p.visible = get<std::uint8_t>(in, pos) != 0;
    p.classes.resize(getCount(in, pos, 9));
    for (Class& c : p.classes) {
        c.kind = get<std::uint8_t>(in, pos);
        c.subgroup = getString(in, pos);
    }
    p.columns = getVector<TimeNs>(in, pos);
    p.split = getVector<TimeNs>(in, pos);
    if (!p.classes.empty() && p.columns.size() % p.classes.size() != 0)
        malformed();
    p.blocks.resize(getCount(in, pos, 50));
    for (Block& b : p.blocks) {
        b.start = get<TimeNs>(in, pos);
        b.end = get<TimeNs>(in, pos);
        const auto cat = get<std::uint8_t>(in, pos);
        if (cat > std::uint8_t(Category::Host))
            malformed();
        b.category = Category(cat);
        b.subgroup = getString(in, pos);
        b.outline = get<std::uint8_t>(in, pos) != 0;
        b.waitStart = get<TimeNs>(in, pos);
        b.waitNs = get<TimeNs>(in, pos);
        b.label = getString(in, pos);
    }
    p.arrows.resize(getCount(in, pos, 12));
    for (Arrow& a : p.arrows) {
        a.t = get<TimeNs>(in, pos);
        a.toRow = get<std::int32_t>(in, pos);
    }
    p.members = get<std::int32_t>(in, pos);
    if (p.members < 0)
        malformed();
    return p;
}

std::string rowPaintsToBytes(const std::vector<std::pair<int, RowPaint>>& rows)
{
    std::string out;
    put(out, std::uint64_t(rows.size()));
    for (const auto& [row, paint] : rows) {
        put(out, std::int32_t(row));
        paint.appendTo(out);
    }
    return out;
}

std::vector<std::pair<int, RowPaint>> rowPaintsFromBytes(std::string_view bytes)
{
    std::size_t pos = 0;
    std::vector<std::pair<int, RowPaint>> rows(getCount(bytes, pos, 4));
    for (auto& [row, paint] : rows) {
        row = get<std::int32_t>(bytes, pos);
        paint = RowPaint::readFrom(bytes, pos);
    }
    if (pos != bytes.size())
        malformed();
    return rows;
}

namespace {

constexpr int kLabelColumns = 48;

// Peer-to-peer copies of a GPU row that start in view, with the row of the device they go to.
void addArrows(const TimelineScene& s, int row, const DrawListParams& params, RowPaint& p)
{
    const TimelineRow& info = s.rows[std::size_t(row)];
    const Trace& trace = *s.trace;
    if (info.kind != TimelineRow::Kind::Lane || info.depth >= 0)
        return;
    const Lane& lane = trace.ranks[std::size_t(info.rank)].lanes[std::size_t(info.lane)];
    if (lane.isGpu()) {
        for (const auto& [interval, device] : lane.copyPeers) {
            if (p.arrows.size() >= RowPaint::kMaxArrows)
                break;
            if (interval >= lane.intervals.size())
                continue;
            const TimeNs t = lane.intervals.start(interval);
            if (t < params.t0 || t >= params.t1)
                continue;
            int peerRow = -1;
            for (std::size_t r = 0; r < s.rows.size() && peerRow < 0; ++r) {
                const TimelineRow& o = s.rows[r];
                if (o.rank == info.rank && o.kind == TimelineRow::Kind::Lane && o.depth < 0
                    && trace.ranks[std::size_t(o.rank)].lanes[std::size_t(o.lane)].isGpu()
                    && trace.ranks[std::size_t(o.rank)].lanes[std::size_t(o.lane)].device == device)
                    peerRow = int(r);
            }
            if (peerRow < 0 || peerRow == row)
                continue;
            p.arrows.push_back({ t, peerRow });
        }
    }
}

// A group row: every state of its ranks, idle last, per column (groupStateColumns); no blocks.
RowPaint groupRowPaint(const TimelineScene& s, int row, const std::vector<TimeNs>& columns)
{
    RowPaint p;
    const int group = s.rows[std::size_t(row)].group;
    if (columns.empty() || group < 0 || std::size_t(group) >= s.groups.size())
        return p;
    p.visible = true;
    for (int st = 0; st < kGroupStateCount; ++st)
        p.classes.push_back({ std::uint8_t(st), {} });
    p.columns = columns;
    p.members = int(s.groups[std::size_t(group)].ranks.size());
    return p;
}

} // namespace

RowPaint makeRowPaint(const TimelineScene& s, int row, const DrawListParams& params, const ColumnGrid& grid,
    const std::vector<DrawItem>& list, const std::vector<TimeNs>& columns,
    const std::function<const std::vector<TimeNs>&(int rank)>& overlapColumns)
{
    RowPaint p;
    if (!s.trace || row < 0 || std::size_t(row) >= s.rows.size())
        return p;
    if (s.rows[std::size_t(row)].kind == TimelineRow::Kind::Group)
        return groupRowPaint(s, row, columns);
    addArrows(s, row, params, p);
    if (list.empty())
        return p;
    p.visible = true;
    const TimelineRow& info = s.rows[std::size_t(row)];
    const bool overlapRow = info.kind == TimelineRow::Kind::Overlap;
    const Trace& trace = *s.trace;
    const Analysis* analysis = s.analysis.get();
    auto subgroupOf = [&](StringId id) -> std::string {
        return analysis && id < analysis->names.size() ? analysis->names[id].subgroup : std::string();
    };

    // The stacks: classes in the share index's order and their exact time per column.
    const ShareIndex* si = s.shares(row);
    if (si && !columns.empty()) {
        const auto& paintClasses = s.index->paintClasses;
        bool communication = false;
        for (std::size_t l = 0; l < si->classCount(); ++l) {
            const std::uint8_t cls = si->classAt(l);
            if (overlapRow) {
                p.classes.push_back({ cls, {} });
            } else if (cls < paintClasses.size()) {
                p.classes.push_back({ std::uint8_t(paintClasses[cls].category), paintClasses[cls].subgroup });
                communication = communication || paintClasses[cls].category == Category::Communication;
            } else {
                p.classes.push_back({ std::uint8_t(Category::Host), {} });
            }
        }
        p.columns = columns;
        // Two-tone split: the rank's exposed and hidden communication time per column.
        if (!overlapRow && communication && s.options.twoToneCommunication && s.index
            && std::size_t(info.rank) < s.index->overlapShares.size()) {
            const std::vector<TimeNs>& ov = overlapColumns(info.rank);
            const ShareIndex& os = s.index->overlapShares[std::size_t(info.rank)];
            const std::size_t ovK = os.classCount();
            const std::uint8_t exposed = os.localOf(std::uint8_t(OverlapState::Exposed));
            const std::uint8_t hidden = os.localOf(std::uint8_t(OverlapState::Hidden));
            if (!ov.empty() && ovK > 0 && (exposed != ShareIndex::kAbsent || hidden != ShareIndex::kAbsent)) {
                const std::size_t width = ov.size() / ovK;
                p.split.resize(width * 2);
                for (std::size_t x = 0; x < width; ++x) {
                    p.split[2 * x] = exposed == ShareIndex::kAbsent ? 0 : ov[x * ovK + exposed];
                    p.split[2 * x + 1] = hidden == ShareIndex::kAbsent ? 0 : ov[x * ovK + hidden];
                }
            }
        }
    }
    if (overlapRow)
        return p;

    // The wide blocks and what decorates them.
    const IntervalTable& table = *s.table(row);
    const std::vector<Phase>* phases = nullptr;
    if (analysis && std::size_t(info.rank) < analysis->ranks.size()) {
        const auto& ph = analysis->ranks[std::size_t(info.rank)].phases;
        if (std::size_t(info.lane) < ph.size() && ph[std::size_t(info.lane)].size() == table.size())
            phases = &ph[std::size_t(info.lane)];
    }
    const double wide = params.minPixels * params.nsPerPixel;
    for (const DrawItem& item : list) {
        if (item.count != 1 || double(item.end - item.start) < wide)
            continue;
        const StringId id = table.name(item.first);
        RowPaint::Block b;
        b.start = item.start;
        b.end = item.end;
        b.category = categoryOf(trace, analysis, id);
        b.subgroup = subgroupOf(id);
        if (s.collectives && b.category == Category::Communication) {
            const CollectiveMember* m
                = s.collectives->member({ info.rank, info.lane, s.laneInterval(row, item.largest) });
            if (m && m->waitNs > 0) {
                b.waitStart = m->start;
                b.waitNs = m->waitNs;
            }
        }
        if (s.options.outlineBackwardOverlap && phases && b.category == Category::Compute
            && (*phases)[item.first] == Phase::Backward && s.index
            && std::size_t(info.rank) < s.index->overlapShares.size()) {
            const ShareIndex& os = s.index->overlapShares[std::size_t(info.rank)];
            const std::uint8_t hidden = os.localOf(std::uint8_t(OverlapState::Hidden));
            if (hidden != ShareIndex::kAbsent) {
                std::vector<TimeNs> t(os.classCount());
                os.timeIn(s.index->overlap[std::size_t(info.rank)], item.start, item.end, t.data());
                b.outline = t[hidden] > 0;
            }
        }
        // The painter labels blocks of more than 48 whole columns (TimelinePlottable::solidRect): only those carry
        // their text.
        int x0 = grid.columnOf(item.start);
        if (grid.edge(x0) < item.start)
            ++x0;
        if (s.options.blockLabels && grid.columnOf(item.end) - x0 > kLabelColumns)
            b.label = displayName(trace, analysis, id);
        p.blocks.push_back(std::move(b));
    }

    return p;
}

std::vector<std::pair<int, RowPaint>> paintRows(const TimelineScene& scene, const std::vector<int>& rows,
    const DrawListParams& params, const ColumnGrid& grid, double valueLower, double valueUpper)
{
    std::vector<std::pair<int, RowPaint>> out;
    std::vector<std::vector<TimeNs>> overlap;
    std::vector<char> overlapDone;
    if (scene.index) {
        overlap.resize(scene.index->overlapShares.size());
        overlapDone.assign(overlap.size(), 0);
    }
    static const std::vector<TimeNs> none;
    const std::function<const std::vector<TimeNs>&(int)> overlapColumns = [&](int rank) -> const std::vector<TimeNs>& {
        if (rank < 0 || std::size_t(rank) >= overlap.size())
            return none;
        if (!overlapDone[std::size_t(rank)]) {
            overlapDone[std::size_t(rank)] = 1;
            scene.index->overlapShares[std::size_t(rank)].columns(
                scene.index->overlap[std::size_t(rank)], grid, overlap[std::size_t(rank)]);
        }
        return overlap[std::size_t(rank)];
    };
    std::vector<DrawItem> list;
    std::vector<TimeNs> columns;
    for (const int row : rows) {
        buildRowData(scene, row, params, grid, valueLower, valueUpper, list, columns);
        out.emplace_back(row, makeRowPaint(scene, row, params, grid, list, columns, overlapColumns));
    }
    return out;
}

void DrawnClasses::merge(const DrawnClasses& other)
{
    blocks.insert(other.blocks.begin(), other.blocks.end());
    compute = compute || other.compute;
    communication = communication || other.communication;
    idleBlocks = idleBlocks || other.idleBlocks;
    hidden = hidden || other.hidden;
    exposed = exposed || other.exposed;
    computeOnly = computeOnly || other.computeOnly;
    otherGpu = otherGpu || other.otherGpu;
    idle = idle || other.idle;
    waitingExposed = waitingExposed || other.waitingExposed;
    waitingHidden = waitingHidden || other.waitingHidden;
    waitingBlocks = waitingBlocks || other.waitingBlocks;
}

namespace {

// The flags of DrawnClasses in a fixed order, for its byte string.
template <typename D> auto drawnFlags(D& d)
{
    return std::array { &d.compute, &d.communication, &d.idleBlocks, &d.hidden, &d.exposed, &d.computeOnly, &d.otherGpu,
        &d.idle, &d.waitingExposed, &d.waitingHidden, &d.waitingBlocks };
}

} // namespace

std::string DrawnClasses::toBytes() const
{
    ByteWriter w;
    for (const bool* f : drawnFlags(*this))
        w.flag(*f);
    w.pod(std::uint64_t(blocks.size()));
    for (const auto& [category, subgroup] : blocks) {
        w.i64(category);
        w.str(subgroup);
    }
    return w.take();
}

DrawnClasses DrawnClasses::fromBytes(std::string_view bytes)
{
    DrawnClasses d;
    ByteReader r(bytes, "drawn classes");
    for (bool* f : drawnFlags(d))
        r.flag(*f);
    const auto n = r.pod<std::uint64_t>();
    for (std::uint64_t i = 0; i < n; ++i) {
        const int category = int(r.i64());
        d.blocks.emplace(category, r.str());
    }
    r.expectEnd();
    return d;
}

std::pair<int, std::string> legendKey(Category c, std::string subgroup, PaletteKind palette)
{
    if (palette == PaletteKind::ColorBlind || palette == PaletteKind::Grayscale || c == Category::Idle
        || c == Category::Host)
        subgroup.clear();
    return { int(c), subgroup };
}

namespace {

// The flag of each overlap state, by OverlapState's order (compute only, hidden, exposed, other, waiting exposed,
// waiting hidden).
constexpr bool DrawnClasses::*kStateFlag[] = { &DrawnClasses::computeOnly, &DrawnClasses::hidden,
    &DrawnClasses::exposed, &DrawnClasses::otherGpu, &DrawnClasses::waitingExposed, &DrawnClasses::waitingHidden };
static_assert(std::size(kStateFlag) == std::size_t(kOverlapStateCount));

// What one row paints inside `range`; the ranks whose communication it draws go into commRanks.
void addRowClasses(const TimelineScene& scene, int row, TimeRange range, DrawnClasses& d, std::set<int>& commRanks)
{
    const TimelineRow& r = scene.rows[std::size_t(row)];
    if (r.kind == TimelineRow::Kind::Group) {
        const auto times = groupStateTimes(scene.groupMembers(r.group), range, scene.trace->extent);
        for (std::size_t st = 0; st < std::size(kStateFlag); ++st)
            if (times[st] > 0)
                d.*kStateFlag[st] = true;
        d.idle = d.idle || times[kGroupIdle] > 0;
        return;
    }
    const auto times = scene.classTimes(row, range.start, range.end);
    if (r.kind == TimelineRow::Kind::Overlap) {
        TimeNs busy = 0;
        for (const auto& [cls, ns] : times) {
            busy += ns;
            if (std::size_t(cls) < std::size(kStateFlag))
                d.*kStateFlag[std::size_t(cls)] = true;
        }
        const TimeRange extent = scene.trace->extent;
        const TimeNs shown = std::min(range.end, extent.end) - std::max(range.start, extent.start);
        d.idle = d.idle || busy < shown;
        return;
    }
    for (const auto& [cls, ns] : times) {
        if (cls >= scene.index->paintClasses.size())
            continue;
        const PaintClass& pc = scene.index->paintClasses[cls];
        d.blocks.insert(legendKey(pc.category, pc.subgroup, scene.options.palette));
        d.compute = d.compute || pc.category == Category::Compute;
        d.idleBlocks = d.idleBlocks || pc.category == Category::Idle;
        if (pc.category == Category::Communication) {
            d.communication = true;
            commRanks.insert(r.rank);
        }
    }
}

// Communication blocks drawn two-tone show the hidden / exposed split of their rank.
void addTwoToneClasses(const TimelineScene& scene, const std::set<int>& commRanks, TimeRange range, DrawnClasses& d)
{
    for (int rank : commRanks) {
        if (rank < 0 || std::size_t(rank) >= scene.index->overlapShares.size())
            continue;
        const ShareIndex& si = scene.index->overlapShares[std::size_t(rank)];
        const IntervalTable& t = scene.index->overlap[std::size_t(rank)];
        if (si.intervalCount() != t.size())
            continue;
        std::vector<TimeNs> times(si.classCount());
        si.timeIn(t, range.start, range.end, times.data());
        for (std::size_t l = 0; l < times.size(); ++l) {
            d.hidden = d.hidden || (times[l] > 0 && si.classAt(l) == std::uint8_t(OverlapState::Hidden));
            d.exposed = d.exposed || (times[l] > 0 && si.classAt(l) == std::uint8_t(OverlapState::Exposed));
        }
    }
}

} // namespace

DrawnClasses drawnClasses(const TimelineScene& scene, const std::vector<int>& rows, TimeRange range)
{
    DrawnClasses d;
    if (!scene.index || !scene.trace)
        return d;
    std::set<int> commRanks;
    for (int row : rows)
        if (row >= 0 && std::size_t(row) < scene.rows.size())
            addRowClasses(scene, row, range, d, commRanks);
    if (scene.options.twoToneCommunication)
        addTwoToneClasses(scene, commRanks, range, d);
    // Communication blocks are hatched where their rank waits for peers (the waiting states of its overlap table).
    for (const int rank : commRanks) {
        if (!scene.waiting || rank < 0 || std::size_t(rank) >= scene.waiting->tables.size())
            continue;
        const ShareIndex& si = scene.waiting->shares[std::size_t(rank)];
        std::vector<TimeNs> times(si.classCount());
        si.timeIn(scene.waiting->tables[std::size_t(rank)], range.start, range.end, times.data());
        for (std::size_t l = 0; l < times.size(); ++l)
            d.waitingBlocks = d.waitingBlocks
                || (times[l] > 0
                    && (si.classAt(l) == std::uint8_t(OverlapState::WaitingExposed)
                        || si.classAt(l) == std::uint8_t(OverlapState::WaitingHidden)));
    }
    return d;
}

} // namespace exposure
