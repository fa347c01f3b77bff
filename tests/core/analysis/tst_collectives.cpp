// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/analysis.h"
#include "analysis/collectives.h"

#include <QTest>

using namespace exposure;

namespace {
const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
const char* kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n";
} // namespace

class TestCollectives : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // Three ranks on one host. Collective A: ranks start at 1000, 4000, 2000 and all end near 10 000: ranks 0 and
    // 2 wait for rank 1. Collective B: only ranks 0 and 1 (rank 2 lost its record). Collective C on rank 0 alone,
    // far from anything else: unmatched.
    void waitAndTransferAreExact()
    {
        TraceBuilder b;
        int comm[3], compute[3];
        for (int r = 0; r < 3; ++r) {
            b.addRank("Rank " + std::to_string(r), "node0", r);
            compute[r] = b.addLane(r, "CUDA[" + std::to_string(r) + ":7]", LaneKind::GpuStream, r, 7);
            comm[r] = b.addLane(r, "CUDA[" + std::to_string(r) + ":17]", LaneKind::GpuStream, r, 17);
        }
        // A
        b.addInterval(0, comm[0], 1000, 10'000, kAllReduce, RegionKind::Kernel);
        b.addInterval(1, comm[1], 4000, 10'003, kAllReduce, RegionKind::Kernel);
        b.addInterval(2, comm[2], 2000, 10'001, kAllReduce, RegionKind::Kernel);
        // B
        b.addInterval(0, comm[0], 20'000, 30'000, kAllReduce, RegionKind::Kernel);
        b.addInterval(1, comm[1], 25'000, 30'002, kAllReduce, RegionKind::Kernel);
        // C
        b.addInterval(0, comm[0], 900'000, 901'000, kAllReduce, RegionKind::Kernel);
        // Rank 0 computes during [0, 3000): hides 2000 ns of its 3000 ns wait in A.
        b.addInterval(0, compute[0], 0, 3000, kGemm, RegionKind::Kernel);
        const auto trace = b.finish();
        const auto analysis = analyze(*trace, Rules::defaults());
        const auto m = matchCollectives(*trace, *analysis);

        QCOMPARE(m.groups.size(), std::size_t(2));
        const auto& a = m.groups[0];
        QCOMPARE(a.members.size(), std::size_t(3));
        QCOMPARE(a.lastArrival, TimeNs(4000));
        QCOMPARE(a.lastRank, 1);
        QCOMPARE(a.members[0].waitNs, TimeNs(3000));
        QCOMPARE(a.members[0].transferNs, TimeNs(6000));
        QCOMPARE(a.members[1].waitNs, TimeNs(0));
        QCOMPARE(a.members[1].transferNs, TimeNs(6003));
        QCOMPARE(a.members[2].waitNs, TimeNs(2000));
        const auto& bg = m.groups[1];
        QCOMPARE(bg.members.size(), std::size_t(2));
        QCOMPARE(bg.members[0].waitNs, TimeNs(5000));

        QCOMPARE(m.ranks[0].matched, 2ull);
        QCOMPARE(m.ranks[0].unmatched, 1ull);
        QCOMPARE(m.ranks[0].waitNs, TimeNs(8000));
        QCOMPARE(m.ranks[0].transferNs, TimeNs(6000 + 5000));
        // Wait parts of rank 0: [1000, 4000) and [20000, 25000); compute covers [0, 3000).
        QCOMPARE(m.ranks[0].exposedWaitNs, TimeNs(1000 + 5000));
        QCOMPARE(m.ranks[1].causedWaits, 2ull);
        QCOMPARE(m.ranks[1].causedWaitNs, TimeNs(3000 + 2000 + 5000));
        QCOMPARE(m.ranks[2].matched, 1ull);
        QCOMPARE(m.ranks[2].unmatched, 0ull);

        const auto* mem = m.member({ 0, comm[0], 0 });
        QVERIFY(mem);
        QCOMPARE(mem->waitNs, TimeNs(3000));
        QCOMPARE(m.member({ 0, comm[0], 2 }), nullptr); // C
        QCOMPARE(m.groupOf({ 2, comm[2], 0 }), &m.groups[0]);
        QCOMPARE(m.maxWaitNs, TimeNs(5000));

        // Window-clipped waiting. Rank 0's wait parts [1000, 4000) and [20000, 25000) clipped to [2000, 22000):
        // 2000 + 2000; compute [0, 3000) hides [2000, 3000) of it.
        auto w = collectiveWaitInWindow(m, *analysis, 0, { 2000, 22'000 });
        QCOMPARE(w.waitNs, TimeNs(4000));
        QCOMPARE(w.exposedWaitNs, TimeNs(3000));
        QCOMPARE(w.members, 2ull);
        // Rank 2 waits [2000, 4000); no compute on rank 2.
        w = collectiveWaitInWindow(m, *analysis, 2, { 3500, 100'000 });
        QCOMPARE(w.waitNs, TimeNs(500));
        QCOMPARE(w.exposedWaitNs, TimeNs(500));
        // Rank 1 arrived last in both collectives: it never waits.
        w = collectiveWaitInWindow(m, *analysis, 1, trace->extent);
        QCOMPARE(w.waitNs, TimeNs(0));
        QCOMPARE(w.members, 0ull);
        // Between the wait parts, and touching their ends only: nothing.
        w = collectiveWaitInWindow(m, *analysis, 0, { 4000, 20'000 });
        QCOMPARE(w.waitNs, TimeNs(0));
        QCOMPARE(w.exposedWaitNs, TimeNs(0));
        // The whole trace reproduces the per-rank totals of matchCollectives.
        for (int r = 0; r < 3; ++r) {
            w = collectiveWaitInWindow(m, *analysis, r, trace->extent);
            QCOMPARE(w.waitNs, m.ranks[std::size_t(r)].waitNs);
            QCOMPARE(w.exposedWaitNs, m.ranks[std::size_t(r)].exposedWaitNs);
        }
        // An empty window.
        QCOMPARE(collectiveWaitInWindow(m, *analysis, 0, { 3000, 3000 }).waitNs, TimeNs(0));
    }

    // Two wait parts of one rank that overlap (two communication streams): the sum counts both, the exposed part is
    // a union.
    void overlappingWaitPartsAreUnitedForExposed()
    {
        TraceBuilder b;
        const char* kAllGather = "ncclDevKernel_AllGather_RING_LL";
        for (int r = 0; r < 2; ++r) {
            b.addRank("Rank " + std::to_string(r), "node0", r);
            b.addLane(r, "CUDA[0:17]", LaneKind::GpuStream, r, 17);
            b.addLane(r, "CUDA[0:18]", LaneKind::GpuStream, r, 18);
            b.addLane(r, "CUDA[0:7]", LaneKind::GpuStream, r, 7);
        }
        b.addInterval(0, 0, 0, 10'000, kAllReduce, RegionKind::Kernel); // waits [0, 6000)
        b.addInterval(1, 0, 6000, 10'000, kAllReduce, RegionKind::Kernel);
        b.addInterval(0, 1, 2000, 12'000, kAllGather, RegionKind::Kernel); // waits [2000, 8000)
        b.addInterval(1, 1, 8000, 12'000, kAllGather, RegionKind::Kernel);
        b.addInterval(0, 2, 5000, 7000, kGemm, RegionKind::Kernel); // hides [5000, 7000)
        const auto trace = b.finish();
        const auto analysis = analyze(*trace, Rules::defaults());
        const auto m = matchCollectives(*trace, *analysis);
        QCOMPARE(m.groups.size(), std::size_t(2));
        const auto w = collectiveWaitInWindow(m, *analysis, 0, { 1000, 100'000 });
        QCOMPARE(w.waitNs, TimeNs(5000 + 6000));
        // U = [1000, 8000) = 7000, minus compute [5000, 7000) = 5000.
        QCOMPARE(w.exposedWaitNs, TimeNs(5000));
        QCOMPARE(m.ranks[0].exposedWaitNs, TimeNs(8000 - 2000));
    }

    // Without a process group or stream (the time fallback), ends too far apart, or no common point in time: never
    // one collective.
    void noFalseMatches()
    {
        TraceBuilder b;
        for (int r = 0; r < 2; ++r) {
            b.addRank("Rank " + std::to_string(r), "node0", r);
            b.addLane(r, "GPU 0", LaneKind::GpuStream, r, -1);
        }
        b.addInterval(0, 0, 0, 1000, kAllReduce, RegionKind::Kernel);
        b.addInterval(1, 0, 1000, 1100, kAllReduce, RegionKind::Kernel); // touches but does not overlap
        b.addInterval(0, 0, 10'000, 20'000, kAllReduce, RegionKind::Kernel);
        b.addInterval(1, 0, 10'000, 20'000 + 300'000, kAllReduce, RegionKind::Kernel); // ends 300 µs later
        const auto trace = b.finish();
        const auto analysis = analyze(*trace, Rules::defaults());
        const auto m = matchCollectives(*trace, *analysis, 200'000);
        QCOMPARE(m.groups.size(), std::size_t(0));
        QCOMPARE(m.ranks[0].unmatched, 2ull);
        QCOMPARE(m.ranks[1].unmatched, 2ull);
        const auto loose = matchCollectives(*trace, *analysis, 400'000);
        QCOMPARE(loose.groups.size(), std::size_t(1));
    }

    void singleRankHasNothingToMatch()
    {
        TraceBuilder b;
        b.addRank("Rank 0");
        b.addLane(0, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
        b.addInterval(0, 0, 0, 100, kGemm, RegionKind::Kernel);
        const auto trace = b.finish();
        const auto analysis = analyze(*trace, Rules::defaults());
        const auto m = matchCollectives(*trace, *analysis);
        QCOMPARE(m.groups.size(), std::size_t(0));
        QCOMPARE(m.ranks[0].matched, 0ull);
        QCOMPARE(m.ranks[0].unmatched, 0ull);
    }

    void multipleHostsAreFlagged()
    {
        TraceBuilder b;
        b.addRank("Rank 0", "node0");
        b.addRank("Rank 1", "node1");
        const auto trace = b.finish();
        const auto analysis = analyze(*trace, Rules::defaults());
        QVERIFY(matchCollectives(*trace, *analysis).multipleHosts);
    }
};

QTEST_APPLESS_MAIN(TestCollectives)
#include "tst_collectives.moc"
