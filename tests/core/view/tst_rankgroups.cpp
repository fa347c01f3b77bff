// SPDX-License-Identifier: GPL-3.0-or-later
// Ranks in groups (host, pipeline stage, DP group, blocks) and the area-true state columns of a group row: in every
// pixel column the summed time of each overlap state over the group's ranks, idle being the rest of members × span.
#include "analysis/analysis.h"
#include "view/rankgroups.h"
#include "view/viewindex.h"

#include <QTest>
#include <numeric>

using namespace exposure;

namespace {

IntervalTable overlapTable(std::initializer_list<std::tuple<TimeNs, TimeNs, OverlapState>> segments)
{
    IntervalTable t;
    for (const auto& [a, b, s] : segments)
        t.append(a, b, StringId(s));
    return t;
}

std::vector<int> allRanksOf(const std::vector<RankGroup>& groups)
{
    std::vector<int> out;
    for (const RankGroup& g : groups)
        out.insert(out.end(), g.ranks.begin(), g.ranks.end());
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<int> iota(int n)
{
    std::vector<int> v(std::size_t(n), 0);
    std::iota(v.begin(), v.end(), 0);
    return v;
}

// Ranks named r, on host "node<r / perHost>" (one host if perHost is 0), with parallel coordinates from `coords`;
// rank r: a GEMM [0, 600) and an AllReduce [600, 1000); ranks of the second host also an AllReduce [100, 300) on
// their NCCL stream (hidden behind the GEMM).
std::shared_ptr<Trace> makeGroupedTrace(int ranks, int perHost, ParallelCoords (*coords)(int) = nullptr)
{
    TraceBuilder b;
    const std::string allReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
    for (int r = 0; r < ranks; ++r) {
        const int host = perHost > 0 ? r / perHost : 0;
        const int rank = b.addRank("Rank " + std::to_string(r), "node" + std::to_string(host), 0, r);
        if (coords)
            b.trace().ranks[std::size_t(rank)].coords = coords(r);
        const int compute = b.addLane(rank, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
        const int nccl = b.addLane(rank, "CUDA[0:17]", LaneKind::GpuStream, 0, 17);
        b.addInterval(rank, compute, 0, 600, "ampere_sgemm_128x64_nn", RegionKind::Kernel);
        if (host == 1)
            b.addInterval(rank, nccl, 100, 300, allReduce, RegionKind::Kernel);
        b.addInterval(rank, nccl, 600, 1000, allReduce, RegionKind::Kernel);
    }
    return b.finish();
}

} // namespace

class TestRankGroups : public QObject
{
    Q_OBJECT
private slots:
    void stateColumnsAreExactShares();
    void columnsSumToTheGroupTotalsAtAnyWidth_data();
    void columnsSumToTheGroupTotalsAtAnyWidth();
    void autoGroupingPicksHostsThenStagesThenDpThenBlocks();
    void dpGroupsShareEveryCoordinateButDp();
    void blocksStayAtMost64();
    void namesRoundTrip();
    void groupRowsFromTheAnalysis();
    void viewIndexIsTheSameOnAnyThreadCount();
};

void TestRankGroups::stateColumnsAreExactShares()
{
    using S = OverlapState;
    const IntervalTable a
        = overlapTable({ { 0, 250, S::ComputeOnly }, { 250, 300, S::Exposed }, { 300, 500, S::Hidden } });
    const IntervalTable b = overlapTable({ { 0, 1000, S::Exposed } });
    const IntervalTable c;
    const IntervalTable d = overlapTable({ { 100, 150, S::Other }, { 500, 520, S::WaitingExposed },
        { 530, 540, S::WaitingHidden }, { 950, 1000, S::ComputeOnly } });
    const ShareIndex sa(a, nullptr), sb(b, nullptr), sc(c, nullptr), sd(d, nullptr);
    const std::vector<GroupMember> members { { &a, &sa }, { &b, &sb }, { &c, &sc }, { &d, &sd } };
    ColumnGrid grid;
    grid.t0 = 0;
    grid.nsPerPixel = 100;
    grid.width = 12; // two columns past the trace's end: nothing there, not even idle
    std::vector<TimeNs> cols;
    groupStateColumns(members, grid, TimeRange { 0, 1000 }, cols);
    QCOMPARE(cols.size(), std::size_t(12 * kGroupStateCount));
    auto at = [&](int x, int s) { return cols[std::size_t(x) * kGroupStateCount + std::size_t(s)]; };
    const int compute = int(S::ComputeOnly), hidden = int(S::Hidden), exposed = int(S::Exposed), other = int(S::Other),
              waitE = int(S::WaitingExposed), waitH = int(S::WaitingHidden);
    // Column 0 [0, 100): a computes, b communicates exposed; c and d idle.
    QCOMPARE(at(0, compute), TimeNs(100));
    QCOMPARE(at(0, exposed), TimeNs(100));
    QCOMPARE(at(0, kGroupIdle), TimeNs(200));
    // Column 1 [100, 200): d does other GPU work for 50 ns.
    QCOMPARE(at(1, other), TimeNs(50));
    QCOMPARE(at(1, kGroupIdle), TimeNs(150));
    // Column 2 [200, 300): a computes 50 and communicates exposed 50.
    QCOMPARE(at(2, compute), TimeNs(50));
    QCOMPARE(at(2, exposed), TimeNs(150));
    QCOMPARE(at(2, kGroupIdle), TimeNs(200));
    // Column 3 [300, 400): a's communication hidden.
    QCOMPARE(at(3, hidden), TimeNs(100));
    QCOMPARE(at(3, exposed), TimeNs(100));
    // Column 5 [500, 600): d waits for peers 20 ns exposed, 10 ns hidden.
    QCOMPARE(at(5, waitE), TimeNs(20));
    QCOMPARE(at(5, waitH), TimeNs(10));
    QCOMPARE(at(5, kGroupIdle), TimeNs(400 - 130));
    QCOMPARE(at(9, compute), TimeNs(50));
    QCOMPARE(at(9, kGroupIdle), TimeNs(250));
    for (int x = 0; x < 10; ++x) { // inside the trace a column holds the 4 ranks × 100 ns
        TimeNs sum = 0;
        for (int s = 0; s < kGroupStateCount; ++s)
            sum += at(x, s);
        QCOMPARE(sum, TimeNs(400));
    }
    for (int x = 10; x < 12; ++x)
        for (int s = 0; s < kGroupStateCount; ++s)
            QCOMPARE(at(x, s), TimeNs(0));
    // The totals of the group.
    const auto totals = groupStateTimes(members, { 0, 5000 }, { 0, 1000 });
    QCOMPARE(totals[std::size_t(compute)], TimeNs(300));
    QCOMPARE(totals[std::size_t(exposed)], TimeNs(1050));
    QCOMPARE(totals[std::size_t(hidden)], TimeNs(200));
    QCOMPARE(totals[std::size_t(other)], TimeNs(50));
    QCOMPARE(totals[std::size_t(waitE)], TimeNs(20));
    QCOMPARE(totals[std::size_t(waitH)], TimeNs(10));
    QCOMPARE(totals[kGroupIdle], TimeNs(4000 - 300 - 1050 - 200 - 50 - 20 - 10));
}

void TestRankGroups::columnsSumToTheGroupTotalsAtAnyWidth_data()
{
    QTest::addColumn<int>("width");
    for (int w : { 1, 3, 7, 333, 1000, 2048 })
        QTest::addRow("%d columns", w) << w;
}

void TestRankGroups::columnsSumToTheGroupTotalsAtAnyWidth()
{
    QFETCH(int, width);
    // 16 ranks with irregular segments over [0, 1 000 003).
    constexpr TimeNs kEnd = 1'000'003;
    std::vector<IntervalTable> tables(16);
    std::vector<ShareIndex> shares(16);
    std::vector<GroupMember> members;
    for (int r = 0; r < 16; ++r) {
        TimeNs t = 17 * r;
        for (int k = 0; t < kEnd; ++k) {
            const TimeNs len = 1000 + (k * 7919 + r * 104729) % 9000;
            const TimeNs gap = (k * 31 + r) % 5 == 0 ? 0 : 1 + (k * 13 + r * 3) % 700;
            tables[std::size_t(r)].append(t, std::min(kEnd, t + len), StringId((k + r) % kOverlapStateCount));
            t += len + gap;
        }
        shares[std::size_t(r)].build(tables[std::size_t(r)], nullptr);
    }
    for (int r = 0; r < 16; ++r)
        members.push_back({ &tables[std::size_t(r)], &shares[std::size_t(r)] });
    ColumnGrid grid;
    grid.t0 = 0;
    grid.nsPerPixel = double(kEnd) / width;
    grid.width = width;
    std::vector<TimeNs> cols;
    groupStateColumns(members, grid, { 0, kEnd }, cols);
    const auto totals = groupStateTimes(members, { 0, kEnd }, { 0, kEnd });
    std::array<TimeNs, kGroupStateCount> summed {};
    for (int x = 0; x < width; ++x) {
        TimeNs column = 0;
        for (int s = 0; s < kGroupStateCount; ++s) {
            summed[std::size_t(s)] += cols[std::size_t(x) * kGroupStateCount + std::size_t(s)];
            column += cols[std::size_t(x) * kGroupStateCount + std::size_t(s)];
        }
        QCOMPARE(column, 16 * columnSpan(grid, x).intersected({ 0, kEnd }).duration());
    }
    // The columns partition the time: their sums are the totals exactly.
    for (int s = 0; s < kGroupStateCount; ++s)
        QCOMPARE(summed[std::size_t(s)], totals[std::size_t(s)]);
    QCOMPARE(std::accumulate(totals.begin(), totals.end(), TimeNs(0)), 16 * kEnd);
}

void TestRankGroups::autoGroupingPicksHostsThenStagesThenDpThenBlocks()
{
    // 20 ranks, 4 a host: by host.
    const auto hosts = makeGroupedTrace(20, 4);
    QCOMPARE(resolveGrouping(*hosts, RankGrouping::Auto), RankGrouping::Host);
    const auto byHost = groupRanks(*hosts, RankGrouping::Auto);
    QCOMPARE(byHost.size(), std::size_t(5));
    QCOMPARE(byHost[2].label, std::string("node2"));
    QCOMPARE(byHost[2].ranks, std::vector<int>({ 8, 9, 10, 11 }));
    QCOMPARE(allRanksOf(byHost), iota(20));
    // One host, pipeline stages known: by stage.
    const auto stages = makeGroupedTrace(20, 0, [](int r) {
        ParallelCoords c;
        c.pp = r % 4;
        c.dp = r / 4;
        return c;
    });
    QCOMPARE(resolveGrouping(*stages, RankGrouping::Auto), RankGrouping::Stage);
    const auto byStage = groupRanks(*stages, RankGrouping::Auto);
    QCOMPARE(byStage.size(), std::size_t(4));
    QCOMPARE(byStage[1].label, std::string("stage 1"));
    QCOMPARE(byStage[1].ranks, std::vector<int>({ 1, 5, 9, 13, 17 }));
    QCOMPARE(allRanksOf(byStage), iota(20));
    // One host, only dp known: DP groups (one: every rank shares the unknown other coordinates) do not tell ranks
    // apart, so blocks.
    const auto dpOnly = makeGroupedTrace(20, 0, [](int r) {
        ParallelCoords c;
        c.dp = r;
        return c;
    });
    QCOMPARE(resolveGrouping(*dpOnly, RankGrouping::Auto), RankGrouping::Blocks);
    // Nothing known (one host, each rank its own host): blocks of 8.
    for (int perHost : { 0, 1 }) {
        const auto none = makeGroupedTrace(20, perHost);
        QCOMPARE(resolveGrouping(*none, RankGrouping::Auto), RankGrouping::Blocks);
        const auto byBlock = groupRanks(*none, RankGrouping::Auto);
        QCOMPARE(byBlock.size(), std::size_t(3));
        QCOMPARE(byBlock[0].label,
            std::string("ranks 0\xE2\x80\x93"
                        "7"));
        QCOMPARE(byBlock[2].label,
            std::string("ranks 16\xE2\x80\x93"
                        "19"));
        QCOMPARE(byBlock[2].ranks, std::vector<int>({ 16, 17, 18, 19 }));
        QCOMPARE(allRanksOf(byBlock), iota(20));
    }
    QVERIFY(groupRanks(*hosts, RankGrouping::None).empty());
    // Stage grouping asked of ranks without a pp coordinate: one group "stage ?".
    const auto unknown = groupRanks(*hosts, RankGrouping::Stage);
    QCOMPARE(unknown.size(), std::size_t(1));
    QCOMPARE(unknown[0].label, std::string("stage ?"));
}

void TestRankGroups::dpGroupsShareEveryCoordinateButDp()
{
    // 8 ranks: pp = r / 4, dp = (r / 2) % 2, tp = r % 2. A DP group: same pp and tp.
    const auto t = makeGroupedTrace(8, 0, [](int r) {
        ParallelCoords c;
        c.pp = r / 4;
        c.dp = (r / 2) % 2;
        c.tp = r % 2;
        return c;
    });
    const auto groups = groupRanks(*t, RankGrouping::DataParallel);
    QCOMPARE(groups.size(), std::size_t(4));
    QCOMPARE(groups[0].ranks, std::vector<int>({ 0, 2 }));
    QCOMPARE(groups[1].ranks, std::vector<int>({ 1, 3 }));
    QCOMPARE(groups[3].ranks, std::vector<int>({ 5, 7 }));
    QCOMPARE(groups[3].label, std::string("dp group pp 1 \xC2\xB7 tp 1"));
    QCOMPARE(allRanksOf(groups), iota(8));
}

void TestRankGroups::blocksStayAtMost64()
{
    for (const auto& [ranks, groups, size] : { std::tuple { 512, 64, 8 }, { 1024, 64, 16 }, { 520, 33, 16 } }) {
        TraceBuilder b;
        for (int r = 0; r < ranks; ++r)
            b.addRank("Rank " + std::to_string(r), "", 0, r);
        const auto t = b.finish();
        const auto g = groupRanks(*t, RankGrouping::Blocks);
        QCOMPARE(int(g.size()), groups);
        QCOMPARE(int(g.front().ranks.size()), size);
        QCOMPARE(allRanksOf(g), iota(ranks));
    }
}

void TestRankGroups::namesRoundTrip()
{
    for (RankGrouping g : { RankGrouping::None, RankGrouping::Auto, RankGrouping::Host, RankGrouping::Stage,
             RankGrouping::DataParallel, RankGrouping::Blocks })
        QCOMPARE(rankGroupingFromName(rankGroupingName(g)), std::optional<RankGrouping>(g));
    QCOMPARE(rankGroupingFromName("pp"), std::optional<RankGrouping>(RankGrouping::Stage));
    QVERIFY(!rankGroupingFromName("hosts"));
}

void TestRankGroups::groupRowsFromTheAnalysis()
{
    // 12 ranks, 4 a host; the ranks of node1 hide an AllReduce [100, 300) behind their GEMM.
    const auto trace = makeGroupedTrace(12, 4);
    const auto analysis = analyze(*trace, Rules::defaults());
    const auto index = ViewIndex::build(*trace, analysis.get());
    RowFilter filter;
    filter.groups = groupRanks(*trace, RankGrouping::Auto);
    filter.collapsedGroups = { 0, 1, 2 };
    auto rows = buildRows(*trace, *index, filter);
    QCOMPARE(rows.size(), std::size_t(3));
    for (int g = 0; g < 3; ++g) {
        QCOMPARE(rows[std::size_t(g)].kind, TimelineRow::Kind::Group);
        QCOMPARE(rows[std::size_t(g)].group, g);
        QCOMPARE(rows[std::size_t(g)].rank, 4 * g);
        QVERIFY(rows[std::size_t(g)].firstOfRank);
    }
    QCOMPARE(rows[1].label, std::string("node1 \xC2\xB7 4 ranks"));
    // Expanding node1: its header, then per rank compute, NCCL and overlap rows.
    filter.collapsedGroups = { 0, 2 };
    rows = buildRows(*trace, *index, filter);
    QCOMPARE(rows.size(), std::size_t(3 + 4 * 3));
    QCOMPARE(rows[1].kind, TimelineRow::Kind::Group);
    for (std::size_t i = 2; i < 14; ++i) {
        QCOMPARE(rows[i].group, 1);
        QCOMPARE(rows[i].rank, 4 + int(i - 2) / 3);
    }
    QCOMPARE(rows[14].group, 2);

    // The state columns of node1 and node0 from the view index's overlap rows: 4 columns of 250 ns.
    ColumnGrid grid;
    grid.t0 = 0;
    grid.nsPerPixel = 250;
    grid.width = 4;
    auto columnsOf = [&](const RankGroup& g) {
        std::vector<GroupMember> members;
        for (int r : g.ranks)
            members.push_back({ &index->overlap[std::size_t(r)], &index->overlapShares[std::size_t(r)] });
        std::vector<TimeNs> cols;
        groupStateColumns(members, grid, trace->extent, cols);
        return cols;
    };
    QCOMPARE(trace->extent.end, TimeNs(1000));
    const auto node0 = columnsOf(filter.groups[0]);
    const auto node1 = columnsOf(filter.groups[1]);
    auto at = [](const std::vector<TimeNs>& c, int x, OverlapState s) {
        return c[std::size_t(x) * kGroupStateCount + std::size_t(s)];
    };
    QCOMPARE(at(node0, 0, OverlapState::ComputeOnly), TimeNs(4 * 250));
    QCOMPARE(at(node0, 2, OverlapState::ComputeOnly), TimeNs(4 * 100));
    QCOMPARE(at(node0, 2, OverlapState::Exposed), TimeNs(4 * 150));
    QCOMPARE(at(node0, 3, OverlapState::Exposed), TimeNs(4 * 250));
    QCOMPARE(at(node1, 0, OverlapState::ComputeOnly), TimeNs(4 * 100));
    QCOMPARE(at(node1, 0, OverlapState::Hidden), TimeNs(4 * 150));
    QCOMPARE(at(node1, 1, OverlapState::Hidden), TimeNs(4 * 50));
    QCOMPARE(at(node1, 1, OverlapState::ComputeOnly), TimeNs(4 * 200));
    for (int x = 0; x < 4; ++x)
        QCOMPARE(node1[std::size_t(x) * kGroupStateCount + kGroupIdle], TimeNs(0));
}

QTEST_GUILESS_MAIN(TestRankGroups)
void TestRankGroups::viewIndexIsTheSameOnAnyThreadCount()
{
    // Ranks are indexed in blocks, one per thread, and the per-name statistics of the blocks summed: 1, 3 and 5
    // threads (blocks of 12, 4 and 2-3 ranks) give the same index, and its statistics count every interval once.
    const auto trace = makeGroupedTrace(12, 4);
    const auto analysis = analyze(*trace, Rules::defaults());
    const auto one = ViewIndex::build(*trace, analysis.get(), 1);
    std::uint64_t intervals = 0;
    TimeNs busy = 0;
    for (const Rank& r : trace->ranks)
        for (const Lane& l : r.lanes)
            for (std::size_t i = 0; i < l.intervals.size(); ++i, ++intervals)
                busy += l.intervals.duration(i);
    std::uint64_t counted = 0;
    TimeNs total = 0;
    for (const NameStats& st : one->nameStats) {
        counted += st.count;
        total += st.total;
    }
    QCOMPARE(counted, intervals);
    QCOMPARE(total, busy);
    for (const int threads : { 3, 5 }) {
        const auto many = ViewIndex::build(*trace, analysis.get(), threads);
        QCOMPARE(many->nameStats.size(), one->nameStats.size());
        for (std::size_t id = 0; id < one->nameStats.size(); ++id) {
            const NameStats &a = one->nameStats[id], &b = many->nameStats[id];
            QCOMPARE(b.count, a.count);
            QCOMPARE(b.total, a.total);
            QCOMPARE(b.min, a.min);
            QCOMPARE(b.max, a.max);
        }
        QVERIFY(many->roles == one->roles);
        QVERIFY(many->commLabels == one->commLabels);
        for (std::size_t r = 0; r < trace->ranks.size(); ++r) {
            QCOMPARE(many->lod[r].size(), one->lod[r].size());
            QCOMPARE(many->overlap[r].size(), one->overlap[r].size());
            for (std::size_t i = 0; i < one->overlap[r].size(); ++i)
                QCOMPARE(many->overlap[r].start(i), one->overlap[r].start(i));
        }
    }
}

#include "tst_rankgroups.moc"
