// SPDX-License-Identifier: GPL-3.0-or-later
// Loads archives written by the fixture generator and checks every interval the importer builds.
#include "analysis/analysis.h"
#include "analysis/transfers.h"
#include "import/consistency.h"
#include "model/trace.h"
#include "run/openrun.h"
#include "support/testtraces.h"
#include "synth/archivewriter.h"

#include <QTemporaryDir>
#include <QTest>
#include <atomic>
#include <filesystem>

using namespace exposure;
using namespace exposure::synth;

namespace {

// The basic single-rank trace used by several tests (all times in ns; see tst_otf2import's comments).
ArchiveSpec basicSpec()
{
    ArchiveSpec spec;
    auto& r = spec.addRank(0, "node7");
    auto& cpu = r.threads[0];
    cpu.regions = {
        { "ProfilerStep#1", 0, 100'000 },
        { "forward", 1'000, 40'000, RegionRole::User },
        { "cuLaunchKernel", 2'000, 6'000, RegionRole::Wrapper, 0 },
        { "cuLaunchKernel", 10'000, 14'000, RegionRole::Wrapper, 0 },
        { "backward", 50'000, 90'000, RegionRole::User },
        { "AddmmBackward0", 51'000, 60'000 },
        { "cuLaunchKernel", 52'000, 56'000, RegionRole::Wrapper, 0 },
        { "cuLaunchKernel", 61'000, 65'000, RegionRole::Wrapper, 1 },
        { "cuMemcpyHtoDAsync_v2", 95'000, 96'000, RegionRole::Wrapper },
    };
    auto& s0 = r.addStream(0, 7);
    KernelSpec k0 { "gemm_kernel", 8'000, 20'000 };
    KernelSpec k1 { "at::native::add_kernel(float*)", 20'000, 20'000, "_ZN2at6native10add_kernelEPf" };
    KernelSpec k2 { "_Z5dgradPf", 58'000, 80'000 };
    k2.blocksPerGrid = 4;
    k2.threadsPerBlock = 64;
    k2.registersPerThread = 40;
    s0.kernels = { k0, k1, k2 };
    s0.idle = { { 20'000, 58'000 } };
    s0.copies = { { CopyKind::HtoD, 97'000, 99'000, 4096 }, { CopyKind::DtoH, 99'000, 99'500, 1024 },
        { CopyKind::DtoD, 99'500, 99'800, 2048 } };
    auto& s1 = r.addStream(0, 17);
    s1.kernels = { { "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 66'000, 85'000 },
        { "ncclKernel_AllReduce_RING_LL_Sum_float", 85'000, 92'000 } };
    return spec;
}

const Lane* laneNamed(const Rank& r, const std::string& name)
{
    for (const auto& l : r.lanes)
        if (l.name == name)
            return &l;
    return nullptr;
}

// Sum over pairs of the intersection of intervals of a and b (each lane's intervals do not overlap).
TimeNs overlap(const Trace& t, const Lane& a, const Lane& b, RegionKind kindA, RegionKind kindB)
{
    TimeNs sum = 0;
    for (std::size_t i = 0; i < a.intervals.size(); ++i) {
        if (t.regionKind(a.intervals.name(i)) != kindA)
            continue;
        for (std::size_t j = 0; j < b.intervals.size(); ++j) {
            if (t.regionKind(b.intervals.name(j)) != kindB)
                continue;
            const TimeNs s = std::max(a.intervals.start(i), b.intervals.start(j));
            const TimeNs e = std::min(a.intervals.end(i), b.intervals.end(j));
            if (e > s)
                sum += e - s;
        }
    }
    return sum;
}

// basicSpec's launches: references to the cuLaunchKernel intervals (final, sorted indices) in launch order.
void checkBasicLaunches(const Trace& t)
{
    const Rank& r = t.ranks[0];
    const auto& l7 = r.lanes[1].launches;
    QCOMPARE(l7.size(), 3u);
    const std::uint32_t expected[] = { 2, 3, 6 };
    for (std::size_t k = 0; k < 3; ++k) {
        QCOMPARE(l7[k].cpuLane, 0u);
        QCOMPARE(l7[k].interval, expected[k]);
        QCOMPARE(t.name(r.lanes[0].intervals.name(l7[k].interval)), std::string("cuLaunchKernel"));
    }
    QCOMPARE(r.lanes[2].launches.size(), 1u);
    QCOMPARE(r.lanes[2].launches[0].interval, 7u);
}

std::string path(const QTemporaryDir& d, const char* sub = "")
{
    return d.path().toStdString() + "/" + sub;
}

} // namespace

class TestOtf2Import : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void basicArchive();
    void launchesAndParameters();
    void ncclOverlapIsExact();
    void withoutLaunchParameters();
    void perRankFoldersKeepAbsoluteTime();
    void rankNumbersFromFolderNames();
    void discoveryOrderWithoutNumbers();
    void searchDepthIsLimited();
    void anchorFileAndArchiveFolder();
    void scoreP7Layout();
    void unknownDeviceFromSystemTree();
    void hipCustomParadigm();
    void mpiArchiveOneRankPerGroup();
    void demoTrace();
    void progressAndCancel();
    void threadCountDoesNotChangeTheResult();
    void ticksConvertExactlyAtAnOddResolution();
    void peerToPeerCopiesAndDataParallelPattern();
    void localLocationIdsAsScorePWritesThem();
    void clockOffsetRecordsShiftTimes();
    void laneCheckGivesRankSpansAfterClipping();
};

void TestOtf2Import::basicArchive()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    writeArchive(path(dir), basicSpec());
    const auto t = loadTrace(path(dir));
    QCOMPARE(t->ranks.size(), 1u);
    const Rank& r = t->ranks[0];
    QCOMPARE(r.rank, 0);
    QCOMPARE(r.host, std::string("node7"));
    QCOMPARE(r.devices, std::vector<int> { 0 });
    QCOMPARE(r.timerResolution, 3'700'000'000ull);
    QVERIFY(r.archivePath.find("rank0/traces.otf2") != std::string::npos);
    QCOMPARE(r.lanes.size(), 3u); // METRIC location skipped
    QCOMPARE(r.lanes[0].name, std::string("Master thread"));
    QCOMPARE(r.lanes[0].kind, LaneKind::CpuThread);
    QCOMPARE(r.lanes[1].name, std::string("CUDA[0:7]"));
    QCOMPARE(r.lanes[1].kind, LaneKind::GpuStream);
    QCOMPARE(r.lanes[1].device, 0);
    QCOMPARE(r.lanes[1].stream, 7);
    QVERIFY(r.lanes[1].nullStream);
    QCOMPARE(r.lanes[2].stream, 17);
    QVERIFY(!r.lanes[2].nullStream);

    // The 3.7 GHz ticks convert back to the exact nanoseconds; the trace is rebased to its first interval.
    QCOMPARE(t->originAbsNs, TimeNs(1'650'000'000'000'000));
    QCOMPARE(t->extent.start, TimeNs(0));
    QCOMPARE(t->extent.end, TimeNs(100'000));

    const auto& cpu = r.lanes[0].intervals;
    QCOMPARE(cpu.size(), 9u);
    const TimeNs starts[] = { 0, 1'000, 2'000, 10'000, 50'000, 51'000, 52'000, 61'000, 95'000 };
    const TimeNs ends[] = { 100'000, 40'000, 6'000, 14'000, 90'000, 60'000, 56'000, 65'000, 96'000 };
    const int depths[] = { 0, 1, 2, 2, 1, 2, 3, 2, 1 };
    for (std::size_t i = 0; i < cpu.size(); ++i) {
        QCOMPARE(cpu.start(i), starts[i]);
        QCOMPARE(cpu.end(i), ends[i]);
        QCOMPARE(int(cpu.depth(i)), depths[i]);
    }
    QCOMPARE(t->name(cpu.name(0)), std::string("ProfilerStep#1"));
    QCOMPARE(t->regionKind(cpu.name(0)), RegionKind::HostRegion);
    QCOMPARE(t->name(cpu.name(2)), std::string("cuLaunchKernel"));
    QCOMPARE(t->regionKind(cpu.name(2)), RegionKind::HostApi);
    QCOMPARE(r.lanes[0].eventCount, 18u);

    const auto& gpu = r.lanes[1].intervals;
    QCOMPARE(gpu.size(), 7u);
    QCOMPARE(t->name(gpu.name(0)), std::string("gemm_kernel"));
    QCOMPARE(gpu.start(0), TimeNs(8'000));
    QCOMPARE(gpu.duration(0), TimeNs(12'000));
    QCOMPARE(t->name(gpu.name(1)), std::string("at::native::add_kernel(float*)"));
    QCOMPARE(gpu.duration(1), TimeNs(0)); // zero-length kernel kept
    QCOMPARE(t->name(gpu.name(2)), std::string("COMPUTE IDLE"));
    QCOMPARE(t->regionKind(gpu.name(2)), RegionKind::Idle);
    QCOMPARE(gpu.duration(2), TimeNs(38'000));
    QCOMPARE(t->name(gpu.name(3)), std::string("dgrad(float*)")); // demangled from its mangled name
    QCOMPARE(gpu.start(3), TimeNs(58'000));
    QCOMPARE(gpu.end(3), TimeNs(80'000));
    for (std::size_t i : { 0u, 1u, 3u })
        QCOMPARE(t->regionKind(gpu.name(i)), RegionKind::Kernel);
    QCOMPARE(t->name(t->canonicalNames[gpu.name(1)]), std::string("_ZN2at6native10add_kernelEPf"));
    QCOMPARE(t->name(t->canonicalNames[gpu.name(3)]), std::string("_Z5dgradPf"));
    QCOMPARE(t->canonicalNames[gpu.name(0)], gpu.name(0));

    // Copies rebuilt from RMA events, with their direction and bytes.
    QCOMPARE(t->name(gpu.name(4)), std::string("memcpy HtoD"));
    QCOMPARE(t->name(gpu.name(5)), std::string("memcpy DtoH"));
    QCOMPARE(t->name(gpu.name(6)), std::string("memcpy DtoD"));
    QCOMPARE(gpu.start(4), TimeNs(97'000));
    QCOMPARE(gpu.duration(4), TimeNs(2'000));
    QCOMPARE(gpu.duration(5), TimeNs(500));
    QCOMPARE(gpu.duration(6), TimeNs(300));
    for (std::size_t i : { 4u, 5u, 6u })
        QCOMPARE(t->regionKind(gpu.name(i)), RegionKind::Memcpy);
    using CB = std::pair<std::uint32_t, std::uint64_t>;
    QCOMPARE(r.lanes[1].copyBytes, (std::vector<CB> { { 4, 4096 }, { 5, 1024 }, { 6, 2048 } }));
    // 3 kernels x (Enter + 7 parameters + Leave) + idle 2 + copies 6.
    QCOMPARE(r.lanes[1].eventCount, 35u);

    QCOMPARE(t->warnings.size(), 0u);
    QCOMPARE(t->intervalCount(), 18u);
}

void TestOtf2Import::launchesAndParameters()
{
    QTemporaryDir dir;
    writeArchive(path(dir), basicSpec());
    const auto t = loadTrace(path(dir));
    const Rank& r = t->ranks[0];
    checkBasicLaunches(*t);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(r.lanes[0].intervals.start(7), TimeNs(61'000));

    // kernel_counter parameters: two distinct sets, interned once.
    const auto& ids = r.lanes[1].launchParamIds;
    QCOMPARE(ids.size(), r.lanes[1].intervals.size());
    QCOMPARE(ids[0], ids[1]);
    QVERIFY(ids[0] != ids[3]);
    QCOMPARE(ids[2], kNoLaunchParams); // idle
    QCOMPARE(ids[4], kNoLaunchParams); // memcpy
    const auto& p = t->launchParams[ids[3]];
    QCOMPARE(p.blocksPerGrid, 4u);
    QCOMPARE(p.threadsPerBlock, 64u);
    QCOMPARE(p.registersPerThread, 40u);
    QCOMPARE(t->launchParams[ids[0]].blocksPerGrid, 80u);
    QCOMPARE(t->launchParams.size(), 2u); // rank's NCCL kernels use the default set too
}

void TestOtf2Import::ncclOverlapIsExact()
{
    QTemporaryDir dir;
    writeArchive(path(dir), basicSpec());
    const auto t = loadTrace(path(dir));
    const Rank& r = t->ranks[0];
    const Lane* compute = laneNamed(r, "CUDA[0:7]");
    const Lane* nccl = laneNamed(r, "CUDA[0:17]");
    QVERIFY(compute && nccl);
    QCOMPARE(nccl->intervals.size(), 2u);
    QCOMPARE(t->regionKind(nccl->intervals.name(0)), RegionKind::Kernel);
    // dgrad [58, 80) us and the all-reduce [66, 85) us overlap by 14 us; the second all-reduce is exposed.
    QCOMPARE(overlap(*t, *nccl, *compute, RegionKind::Kernel, RegionKind::Kernel), TimeNs(14'000));
    QCOMPARE(nccl->intervals.duration(0) + nccl->intervals.duration(1), TimeNs(26'000));
}

void TestOtf2Import::withoutLaunchParameters()
{
    QTemporaryDir dir;
    writeArchive(path(dir), basicSpec());
    LoadOptions o;
    o.keepLaunchParameters = false;
    const auto t = loadTrace(path(dir), o);
    QVERIFY(t->ranks[0].lanes[1].launchParamIds.empty());
    QVERIFY(t->launchParams.empty());
    QCOMPARE(t->ranks[0].lanes[1].intervals.size(), 7u);
}

void TestOtf2Import::perRankFoldersKeepAbsoluteTime()
{
    QTemporaryDir dir;
    ArchiveSpec spec;
    for (int rank = 0; rank < 2; ++rank) {
        auto& r = spec.addRank(rank);
        r.threads[0].regions = { { "ProfilerStep#1", 5'000 + rank * 3'000, 50'000 } };
        auto& s = r.addStream(rank, 7);
        s.kernels = { { "k", 10'000 + rank * 1'000, 20'000 } };
    }
    writeArchive(path(dir), spec);
    const auto t = loadTrace(path(dir));
    QCOMPARE(t->ranks.size(), 2u);
    QCOMPARE(t->ranks[1].rank, 1);
    QCOMPARE(t->ranks[1].devices, std::vector<int> { 1 });
    // One clock for the node: rank 1 keeps its 3 us offset relative to rank 0.
    QCOMPARE(t->originAbsNs, TimeNs(1'650'000'000'005'000));
    QCOMPARE(t->ranks[0].lanes[0].intervals.start(0), TimeNs(0));
    QCOMPARE(t->ranks[1].lanes[0].intervals.start(0), TimeNs(3'000));
    QCOMPARE(t->ranks[1].lanes[1].intervals.start(0), TimeNs(6'000));
    QCOMPARE(t->ranks[1].lanes[1].intervals.duration(0), TimeNs(9'000));
    QCOMPARE(t->extent.end, TimeNs(45'000));
}

void TestOtf2Import::rankNumbersFromFolderNames()
{
    QTemporaryDir dir;
    ArchiveSpec spec;
    const char* folders[] = { "job_rank10", "job_rank2", "job_rank1" };
    for (int i = 0; i < 3; ++i) {
        auto& r = spec.addRank(i, "host" + std::to_string(i));
        r.folder = std::string("exp/") + folders[i];
        r.threads[0].regions = { { "step", 1'000, 2'000 } };
    }
    writeArchive(path(dir), spec);
    const auto t = loadTrace(path(dir));
    QCOMPARE(testing::rankNumbers(*t), (std::vector<int> { 1, 2, 10 }));
    QCOMPARE(testing::rankHosts(*t), (std::vector<std::string> { "host2", "host1", "host0" }));
    QCOMPARE(t->ranks[2].label, std::string("Rank 10"));
}

void TestOtf2Import::discoveryOrderWithoutNumbers()
{
    QTemporaryDir dir;
    ArchiveSpec spec;
    const char* folders[] = { "beta", "alpha" };
    for (int i = 0; i < 2; ++i) {
        auto& r = spec.addRank(i, folders[i]);
        r.folder = folders[i];
        r.threads[0].regions = { { "step", 1'000, 2'000 } };
    }
    writeArchive(path(dir), spec);
    const auto t = loadTrace(path(dir));
    QCOMPARE(testing::rankNumbers(*t), (std::vector<int> { 0, 1 }));
    QCOMPARE(testing::rankHosts(*t), (std::vector<std::string> { "alpha", "beta" }));
}

void TestOtf2Import::searchDepthIsLimited()
{
    QTemporaryDir dir;
    ArchiveSpec spec;
    auto& r = spec.addRank(0);
    r.threads[0].regions = { { "step", 1'000, 2'000 } };
    r.folder = "a/b/rank0"; // 3 levels: found
    writeArchive(path(dir), spec);
    QCOMPARE(loadTrace(path(dir))->ranks.size(), 1u);

    QTemporaryDir deep;
    spec.ranks[0].folder = "a/b/c/rank0"; // 4 levels: not searched
    writeArchive(path(deep), spec);
    try {
        loadTrace(path(deep));
        QFAIL("expected LoadError");
    } catch (const LoadError& e) {
        QCOMPARE(e.file(), path(deep));
        QVERIFY2(e.problem().find("no OTF2 archive") != std::string::npos, e.what());
    }
}

void TestOtf2Import::anchorFileAndArchiveFolder()
{
    QTemporaryDir dir;
    writeRankArchive(path(dir), basicSpec(), 0);
    const auto viaFolder = loadTrace(path(dir));
    const auto viaAnchor = loadTrace(path(dir, "traces.otf2"));
    QCOMPARE(viaFolder->ranks.size(), 1u);
    QCOMPARE(viaAnchor->ranks.size(), 1u);
    QCOMPARE(viaAnchor->intervalCount(), 18u);
    QCOMPARE(viaFolder->intervalCount(), 18u);
    QCOMPARE(viaAnchor->ranks[0].rank, 0);
}

void TestOtf2Import::scoreP7Layout()
{
    QTemporaryDir dir;
    auto spec = basicSpec();
    spec.layout = Layout::ScoreP7;
    spec.kernelRole = KernelRole::Function;
    writeArchive(path(dir), spec);
    const auto t = loadTrace(path(dir));
    const Rank& r = t->ranks[0];
    QCOMPARE(r.lanes.size(), 3u);
    QCOMPARE(r.lanes[1].kind, LaneKind::GpuStream);
    QCOMPARE(r.lanes[1].device, 0);
    const auto& gpu = r.lanes[1].intervals;
    QCOMPARE(t->regionKind(gpu.name(0)), RegionKind::Kernel);
    QCOMPARE(t->regionKind(gpu.name(3)), RegionKind::Kernel);
    QCOMPARE(r.lanes[1].launches.size(), 3u);
    QCOMPARE(overlap(*t, r.lanes[2], r.lanes[1], RegionKind::Kernel, RegionKind::Kernel), TimeNs(14'000));
}

void TestOtf2Import::unknownDeviceFromSystemTree()
{
    QTemporaryDir dir;
    ArchiveSpec spec;
    auto& r = spec.addRank(0);
    auto& s = r.addStream(3, 7);
    s.unknownDevice = true;
    s.kernels = { { "k", 1'000, 2'000 } };
    writeArchive(path(dir), spec);
    const auto t = loadTrace(path(dir));
    const Lane* l = laneNamed(t->ranks[0], "CUDA[?:7]");
    QVERIFY(l);
    QCOMPARE(l->device, 3);
    QCOMPARE(l->stream, 7);
    QCOMPARE(t->ranks[0].devices, std::vector<int> { 3 });
}

void TestOtf2Import::hipCustomParadigm()
{
    QTemporaryDir dir;
    auto spec = basicSpec();
    spec.paradigm = "HIP";
    writeArchive(path(dir), spec);
    const auto t = loadTrace(path(dir));
    const Lane* l = laneNamed(t->ranks[0], "HIP[0:7]");
    QVERIFY(l);
    QVERIFY(l->nullStream);
    QCOMPARE(l->intervals.size(), 7u);
    QCOMPARE(t->regionKind(l->intervals.name(0)), RegionKind::Kernel);
    QCOMPARE(t->regionKind(l->intervals.name(2)), RegionKind::Idle);
}

void TestOtf2Import::mpiArchiveOneRankPerGroup()
{
    QTemporaryDir dir;
    ArchiveSpec spec;
    spec.mpi = true;
    for (int rank = 0; rank < 3; ++rank) {
        auto& r = spec.addRank(rank, rank < 2 ? "n0" : "n1");
        r.threads[0].regions
            = { { "step", 1'000 * (rank + 1), 9'000 }, { "cuLaunchKernel", 5'000, 6'000, RegionRole::Wrapper, 0 } };
        auto& s = r.addStream(rank % 2, 7);
        s.kernels = { { "k", 7'000, 8'000 + 100 * rank } };
    }
    writeArchive(path(dir), spec);
    const auto t = loadTrace(path(dir));
    QCOMPARE(t->ranks.size(), 3u);
    for (int rank = 0; rank < 3; ++rank) {
        const Rank& r = t->ranks[std::size_t(rank)];
        QCOMPARE(r.rank, rank);
        QCOMPARE(r.host, std::string(rank < 2 ? "n0" : "n1"));
        QCOMPARE(r.lanes.size(), 2u);
        QCOMPARE(r.lanes[1].device, rank % 2);
        QCOMPARE(r.lanes[1].intervals.duration(0), TimeNs(1'000 + 100 * rank));
        QCOMPARE(r.lanes[1].launches.size(), 1u);
        QCOMPARE(r.lanes[1].launches[0].interval, 1u);
        QCOMPARE(r.lanes[0].intervals.start(0), TimeNs(1'000 * rank));
    }
}

void TestOtf2Import::demoTrace()
{
    QTemporaryDir dir;
    DemoOptions o;
    const auto spec = makeDemoSpec(o);
    writeArchive(path(dir), spec);
    const auto t = loadTrace(path(dir));
    QCOMPARE(t->ranks.size(), 2u);
    QCOMPARE(t->warnings.size(), 0u);
    TimeNs ncclTotal[2] = { 0, 0 };
    for (int r = 0; r < 2; ++r) {
        const Rank& rank = t->ranks[std::size_t(r)];
        QCOMPARE(rank.lanes.size(), 3u);
        const Lane& compute = rank.lanes[1];
        const Lane& nccl = rank.lanes[2];
        QCOMPARE(nccl.stream, 17);
        QCOMPARE(nccl.intervals.size(), 18u); // 3 gradient buckets x 6 steps
        QCOMPARE(nccl.launches.size(), 18u);
        // One launch per kernel and one copy call per input copy (2 per step) reference the compute stream.
        QCOMPARE(compute.launches.size(),
            spec.ranks[std::size_t(r)].streams[0].kernels.size() + spec.ranks[std::size_t(r)].streams[0].copies.size());
        std::size_t steps = 0;
        for (std::size_t i = 0; i < rank.lanes[0].intervals.size(); ++i)
            steps += t->name(rank.lanes[0].intervals.name(i)).rfind("ProfilerStep#", 0) == 0;
        QCOMPARE(steps, 6u);
        for (std::size_t i = 0; i < nccl.intervals.size(); ++i)
            ncclTotal[r] += nccl.intervals.duration(i);
        // Every all-reduce but the last of each step is hidden at least in part behind backward kernels.
        QVERIFY(overlap(*t, nccl, compute, RegionKind::Kernel, RegionKind::Kernel) > 0);
        QVERIFY(overlap(*t, nccl, compute, RegionKind::Kernel, RegionKind::Kernel) < ncclTotal[r]);
    }
    // Rank 1 is slower, so rank 0's NCCL kernels wait (spin) longer.
    QVERIFY(ncclTotal[0] > ncclTotal[1]);
}

void TestOtf2Import::progressAndCancel()
{
    QTemporaryDir dir;
    DemoOptions o;
    o.ranks = 1;
    o.scale = 12; // > 65536 events on the compute stream: several chunks
    writeArchive(path(dir), makeDemoSpec(o));

    std::vector<LoadProgress> seen;
    LoadOptions opts;
    opts.progress = [&](const LoadProgress& p) { seen.push_back(p); };
    const auto t = loadTrace(path(dir), opts);
    QVERIFY(seen.size() >= 2);
    QCOMPARE(seen.back().eventsRead, seen.back().eventsTotal);
    QCOMPARE(seen.back().eventsTotal, t->eventCount);
    for (std::size_t i = 1; i < seen.size(); ++i)
        QVERIFY(seen[i].eventsRead >= seen[i - 1].eventsRead);

    std::atomic<bool> cancel { false };
    LoadOptions c;
    c.cancel = &cancel;
    c.progress = [&](const LoadProgress&) { cancel = true; };
    QVERIFY_THROWS_EXCEPTION(LoadCancelled, loadTrace(path(dir), c));

    std::atomic<bool> early { true };
    LoadOptions e;
    e.cancel = &early;
    QVERIFY_THROWS_EXCEPTION(LoadCancelled, loadTrace(path(dir), e));
}

void TestOtf2Import::threadCountDoesNotChangeTheResult()
{
    QTemporaryDir dir;
    DemoOptions o;
    o.ranks = 3;
    o.steps = 2;
    auto spec = makeDemoSpec(o);
    // A second CPU thread that also launches on the compute stream, so that launches interleave across threads.
    auto& extra = spec.ranks[0].threads.emplace_back();
    extra.name = "Pthread thread 1";
    extra.regions = { { "cuLaunchKernel", 1'000'500, 1'001'000, RegionRole::Wrapper, 0 } };
    spec.ranks[0].streams[0].kernels.insert(
        spec.ranks[0].streams[0].kernels.begin(), KernelSpec { "early", 1'001'200, 1'001'300 });
    writeArchive(path(dir), spec);

    LoadOptions one;
    one.threads = 1;
    const auto a = loadTrace(path(dir), one);
    for (int threads : { 2, 3, 5 }) {
        LoadOptions many;
        many.threads = threads;
        const auto b = loadTrace(path(dir), many);
        QCOMPARE(b->ranks.size(), a->ranks.size());
        QCOMPARE(b->eventCount, a->eventCount);
        QCOMPARE(b->launchParams, a->launchParams);
        QCOMPARE(b->originAbsNs, a->originAbsNs);
        for (std::size_t r = 0; r < a->ranks.size(); ++r) {
            const auto& la = a->ranks[r].lanes;
            const auto& lb = b->ranks[r].lanes;
            QCOMPARE(lb.size(), la.size());
            for (std::size_t l = 0; l < la.size(); ++l) {
                QCOMPARE(lb[l].name, la[l].name);
                QCOMPARE(lb[l].intervals.starts(), la[l].intervals.starts());
                QCOMPARE(lb[l].intervals.size(), la[l].intervals.size());
                for (std::size_t i = 0; i < la[l].intervals.size(); ++i) {
                    QCOMPARE(lb[l].intervals.duration(i), la[l].intervals.duration(i));
                    QCOMPARE(b->name(lb[l].intervals.name(i)), a->name(la[l].intervals.name(i)));
                }
                QCOMPARE(lb[l].launchParamIds, la[l].launchParamIds);
                QCOMPARE(lb[l].copyBytes, la[l].copyBytes);
                QCOMPARE(lb[l].launches.size(), la[l].launches.size());
                for (std::size_t k = 0; k < la[l].launches.size(); ++k) {
                    QCOMPARE(lb[l].launches[k].cpuLane, la[l].launches[k].cpuLane);
                    QCOMPARE(lb[l].launches[k].interval, la[l].launches[k].interval);
                }
            }
        }
    }
    // The extra thread's launch comes first on rank 0's compute stream (it is the earliest launch).
    const auto& launches = a->ranks[0].lanes[2].launches;
    QCOMPARE(a->ranks[0].lanes[1].name, std::string("Pthread thread 1"));
    QCOMPARE(launches[0].cpuLane, 1u);
    QCOMPARE(launches[0].interval, 0u);
    QCOMPARE(launches[1].cpuLane, 0u);
    QCOMPARE(launches.size(), spec.ranks[0].streams[0].kernels.size() + spec.ranks[0].streams[0].copies.size());
}

void TestOtf2Import::ticksConvertExactlyAtAnOddResolution()
{
    // The MI300 archive's TSC rate and offset; raw ticks with gaps from 1 tick to ~2^36 ticks.
    ArchiveSpec spec;
    spec.timerResolution = 3'699'958'577ull;
    spec.globalOffsetTicks = 6'127'384'835'033'798ull;
    auto& r = spec.addRank(0);
    std::vector<std::uint64_t> ticks;
    std::uint64_t t = spec.globalOffsetTicks;
    std::uint64_t x = 88172645463325252ull; // xorshift: deterministic
    for (int i = 0; i < 2000; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        t += 1 + (x >> (28 + (x & 31))); // mostly small steps, sometimes huge ones
        ticks.push_back(t);
    }
    for (std::size_t i = 0; i + 1 < ticks.size(); i += 2) {
        r.threads[0].raw.push_back({ RawEvent::Enter, 0, "r", ticks[i] });
        r.threads[0].raw.push_back({ RawEvent::Leave, 0, "r", ticks[i + 1] });
    }
    QTemporaryDir dir;
    writeArchive(path(dir), spec);
    const auto tr = loadTrace(path(dir));
    const auto& iv = tr->ranks[0].lanes[0].intervals;
    QCOMPARE(iv.size(), ticks.size() / 2);
    __extension__ typedef unsigned __int128 U128;
    auto ns = [&](std::uint64_t tk) { return TimeNs(U128(tk) * 1'000'000'000u / spec.timerResolution); };
    QCOMPARE(tr->originAbsNs, ns(ticks[0]));
    for (std::size_t k = 0; k < iv.size(); ++k) {
        QCOMPARE(iv.start(k), ns(ticks[2 * k]) - ns(ticks[0]));
        QCOMPARE(iv.end(k), ns(ticks[2 * k + 1]) - ns(ticks[0]));
    }
}

// torch.nn.DataParallel in one process on two GPUs: every step copies the inputs from GPU 0 to GPU 1 and the outputs
// back, written by Score-P as RmaGets whose remote end is the other device's stream.
void TestOtf2Import::peerToPeerCopiesAndDataParallelPattern()
{
    ArchiveSpec spec;
    auto& r = spec.addRank(0, "node0");
    r.addStream(0, 7);
    r.addStream(1, 13);
    auto& s0 = r.streams[0]; // (adding a stream may move the others)
    auto& s1 = r.streams[1];
    for (int step = 0; step < 3; ++step) {
        const Ns t = step * 100'000;
        r.threads[0].regions.push_back({ "ProfilerStep#" + std::to_string(step), t, t + 90'000 });
        CopySpec scatter { CopyKind::DtoD, t + 1'000, t + 3'000, 1'000'000 };
        scatter.peerStream = 1;
        s0.copies.push_back(scatter);
        s0.kernels.push_back({ "gemm_kernel", t + 4'000, t + 40'000 });
        s1.kernels.push_back({ "gemm_kernel", t + 4'000, t + 40'000 });
        CopySpec gather { CopyKind::DtoD, t + 41'000, t + 42'000, 500'000 };
        gather.peerStream = 0;
        s1.copies.push_back(gather);
    }
    QTemporaryDir dir;
    writeArchive(dir.path().toStdString(), spec);
    const auto trace = loadTrace(dir.path().toStdString(), {});
    const Rank& rank = trace->ranks[0];
    const Lane* gpu0 = laneNamed(rank, "CUDA[0:7]");
    const Lane* gpu1 = laneNamed(rank, "CUDA[1:13]");
    QVERIFY(gpu0 && gpu1);
    QCOMPARE(gpu0->copyPeers.size(), std::size_t(3));
    QCOMPARE(gpu0->copyPeers[0].second, 1); // to device 1
    QCOMPARE(gpu1->copyPeers[0].second, 0);
    QCOMPARE(trace->name(gpu0->intervals.name(gpu0->copyPeers[0].first)), std::string("memcpy PtoP"));
    const auto analysis = analyze(*trace, Rules::defaults());
    const auto rows = transfers(*trace, *analysis, trace->extent);
    QCOMPARE(rows.size(), std::size_t(6));
    QCOMPARE(rows[0].direction, std::string("PtoP"));
    QCOMPARE(rows[0].bytes, std::uint64_t(1'000'000));
    const auto& w = analysis->ranks[0].warnings;
    QVERIFY(std::any_of(w.begin(), w.end(), [](const std::string& m) {
        return m.find("peer-to-peer copies between 2 GPUs in 3 of 3 steps") != std::string::npos
            && m.find("DataParallel") != std::string::npos;
    }));
}

// Score-P's local definitions map local location ids to global ones, and its CUDA_STREAM_REF values hold local ids.
// The importer switches OTF2's own mapping off there and maps those values itself: every launch must still find its
// stream, on any number of threads.
void TestOtf2Import::localLocationIdsAsScorePWritesThem()
{
    QTemporaryDir dir;
    auto spec = basicSpec();
    spec.localLocationIds = true;
    writeArchive(path(dir), spec);
    for (int threads : { 1, 3 }) {
        LoadOptions o;
        o.threads = threads;
        const auto t = loadTrace(path(dir), o);
        QCOMPARE(t->ranks[0].lanes.size(), 3u);
        checkBasicLaunches(*t);
        if (QTest::currentTestFailed())
            return;
        QVERIFY(t->warnings.empty());
    }
}

// ClockOffset records: OTF2 corrects every timestamp by them. All-zero offsets (what Score-P writes on one host)
// change nothing; a non-zero one moves every time by exactly its amount.
void TestOtf2Import::clockOffsetRecordsShiftTimes()
{
    const auto load = [](std::int64_t offsetTicks, bool records) {
        QTemporaryDir dir;
        auto spec = basicSpec();
        spec.clockOffsetRecords = records;
        spec.clockOffsetTicks = offsetTicks;
        writeArchive(path(dir), spec);
        return loadTrace(path(dir));
    };
    const auto none = load(0, false);
    const auto zero = load(0, true);
    const auto shifted = load(3'700, true); // 1 us at 3.7 GHz
    QCOMPARE(zero->originAbsNs, none->originAbsNs);
    QCOMPARE(shifted->originAbsNs, none->originAbsNs + 1'000);
    for (const auto* t : { zero.get(), shifted.get() }) {
        QCOMPARE(t->ranks[0].lanes.size(), none->ranks[0].lanes.size());
        for (std::size_t l = 0; l < none->ranks[0].lanes.size(); ++l)
            QCOMPARE(t->ranks[0].lanes[l].intervals.starts(), none->ranks[0].lanes[l].intervals.starts());
    }
}

// The lane check reads every interval; the rank spans it hands on (to the cross-rank check and the job check) are
// rankSpan's, after its clipping: a kernel that outlasts a later one no longer sets its rank's end.
void TestOtf2Import::laneCheckGivesRankSpansAfterClipping()
{
    TraceBuilder b;
    const int r0 = b.addRank("Rank 0");
    const int gpu = b.addLane(r0, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
    b.addInterval(r0, gpu, 100, 10'000, "long", RegionKind::Kernel);
    b.addInterval(r0, gpu, 200, 300, "inside", RegionKind::Kernel);
    b.addInterval(r0, gpu, 400, 500, "after", RegionKind::Kernel);
    const int r1 = b.addRank("Rank 1");
    const int cpu = b.addLane(r1, "Master thread", LaneKind::CpuThread);
    b.addInterval(r1, cpu, 50, 60, "step", RegionKind::HostRegion);
    b.addInterval(r1, cpu, 20, 30, "init", RegionKind::HostRegion);
    const int r2 = b.addRank("Rank 2");
    b.addLane(r2, "Master thread", LaneKind::CpuThread);
    Trace& t = b.trace();
    t.finalize(false);
    const ConsistencyReport report = checkLaneConsistency(t);
    QCOMPARE(report.clippedEnds, 1u);
    QCOMPARE(report.rankSpans.size(), std::size_t(3));
    QCOMPARE(report.rankSpans[0], (TimeRange { 100, 500 }));
    QCOMPARE(report.rankSpans[1], (TimeRange { 20, 60 }));
    QVERIFY(report.rankSpans[2].start > report.rankSpans[2].end); // no interval
    for (std::size_t r = 0; r < 3; ++r)
        QCOMPARE(report.rankSpans[r], rankSpan(t.ranks[r]));
    // Ranks 0 and 1 overlap no other rank: the given spans and the computed ones warn alike.
    Trace copy = t;
    QCOMPARE(checkRankAlignment(t, &report.rankSpans), 2u);
    QCOMPARE(checkRankAlignment(copy), 2u);
    QCOMPARE(t.warnings, copy.warnings);
}

QTEST_APPLESS_MAIN(TestOtf2Import)
#include "tst_otf2import.moc"
