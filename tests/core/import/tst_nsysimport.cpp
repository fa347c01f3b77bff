// SPDX-License-Identifier: GPL-3.0-or-later
// Nsight Systems SQLite import on exports built here with the documented schema: exact nanoseconds, lanes per
// thread and stream, nesting of NVTX ranges and CUDA calls, launches by correlation id, steps and phases from NVTX,
// processes as ranks, rank numbers, statistics equal to interval unions, every kind of bad input as one line naming
// the file (and a set of damaged copies that must load or fail that way), .nsys-rep through nsys, cancel.
#include "analysis/analysis.h"
#include "analysis/statistics.h"
#include "import/loadoptions.h"
#include "import/memorybudget.h"
#include "import/nsysimporter.h"
#include "run/openrun.h"
#include "support/nsystraces.h"
#include "support/testtraces.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>

using namespace exposure;
using namespace exposure::testing;

namespace {

constexpr std::int64_t kBase = 1'000'000'000; // the export's nanoseconds since the session started

const char* const kElementwise = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                                 "at::detail::Array<char *, 1>>(int, T2, T3)";
const char* const kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
                          "segment_k_off_kernel__5x_cublas";
const char* const kNccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

// One rank of a training step in process `pid` (main thread `pid`, a second thread `pid + 1`), times from `base`:
//   main:  NVTX ProfilerStep#3 [0, 100000) > forward [100, 40000) > cudaMemcpyAsync [200, 300) (copy HtoD
//          [400, 1400) on stream 7, 4096 bytes), cudaLaunchKernel [1000, 1010) (elementwise [2000, 12000) on 7)
//          > backward [40000, 87000) > cudaLaunchKernel [41000, 41010) (GEMM [42000, 62000) on 7),
//          cudaMemsetAsync [85000, 85010) (memset [86000, 86500) on 7)
//          > cudaStreamSynchronize [88000, 99000) > its wait [88010, 98990)
//   other: cudaLaunchKernel [50000, 50010) (NCCL all-reduce [52000, 82000) on stream 17)
void writeRank(NsysWriter& w, std::int64_t pid, int device = 0, std::int64_t base = kBase)
{
    const std::int64_t main = nsysTid(pid, pid), other = nsysTid(pid, pid + 1);
    w.threadName(main, "pt_main_thread");
    w.nvtx(main, base, base + 100'000, "ProfilerStep#3");
    w.nvtx(main, base + 100, base + 40'000, "forward");
    w.nvtx(main, base + 40'000, base + 87'000, "backward", true);
    w.runtime(main, base + 200, base + 300, pid * 100 + 1, "cudaMemcpyAsync_v3020");
    w.memcpy(pid, device, 7, base + 400, base + 1'400, pid * 100 + 1, 4096, 1, 1, 3);
    w.runtime(main, base + 1'000, base + 1'010, pid * 100 + 2, "cudaLaunchKernel_v7000");
    w.kernel(pid, device, 7, base + 2'000, base + 12'000, pid * 100 + 2, kElementwise);
    w.runtime(main, base + 41'000, base + 41'010, pid * 100 + 3, "cudaLaunchKernel_v7000");
    w.kernel(pid, device, 7, base + 42'000, base + 62'000, pid * 100 + 3, kGemm);
    w.runtime(other, base + 50'000, base + 50'010, pid * 100 + 4, "cudaLaunchKernel_v7000");
    w.kernel(pid, device, 17, base + 52'000, base + 82'000, pid * 100 + 4, kNccl);
    w.runtime(main, base + 85'000, base + 85'010, pid * 100 + 5, "cudaMemsetAsync_v3020");
    w.memset(pid, device, 7, base + 86'000, base + 86'500, pid * 100 + 5, 1024);
    w.runtime(main, base + 88'000, base + 99'000, pid * 100 + 6, "cudaStreamSynchronize_v3020");
    w.sync(pid, base + 88'010, base + 98'990, pid * 100 + 6, 3);
}

std::string writeExport(const QTemporaryDir& dir, const QString& name, std::initializer_list<std::int64_t> pids,
    const std::string& version = "3.11.1")
{
    const std::string path = dir.filePath(name).toStdString();
    NsysWriter w(path, version);
    w.gpu(0, "NVIDIA H200");
    w.gpu(1, "NVIDIA H200");
    int device = 0;
    for (const auto pid : pids)
        writeRank(w, pid, device++ % 2);
    return path;
}

QString loadError(const std::string& path, const LoadOptions& options = {})
{
    try {
        (void)loadTrace(path, options);
    } catch (const LoadError& e) {
        return QString::fromStdString(e.what());
    }
    return QStringLiteral("(loaded)");
}

bool hasWarning(const Trace& t, const std::string& text)
{
    return std::any_of(
        t.warnings.begin(), t.warnings.end(), [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

// Union length of [start, end) intervals.
TimeNs unionLength(std::vector<std::pair<TimeNs, TimeNs>> v)
{
    std::sort(v.begin(), v.end());
    TimeNs total = 0, reach = std::numeric_limits<TimeNs>::min();
    for (const auto& [s, e] : v) {
        const TimeNs from = std::max(s, reach);
        if (e > from)
            total += e - from;
        reach = std::max(reach, e);
    }
    return total;
}

// Every interval of every lane, with its name: two traces read differently must give the same list.
std::vector<std::string> dump(const Trace& t)
{
    std::vector<std::string> out;
    for (const auto& r : t.ranks)
        for (const auto& l : r.lanes) {
            out.push_back(
                std::to_string(r.rank) + " " + l.name + " launches " + std::to_string(l.launchByInterval.size()));
            for (std::size_t i = 0; i < l.intervals.size(); ++i)
                out.push_back(std::to_string(l.intervals.start(i)) + " " + std::to_string(l.intervals.end(i)) + " "
                    + std::to_string(l.intervals.depth(i)) + " " + t.name(l.intervals.name(i)));
        }
    for (const auto& w : t.warnings)
        out.push_back(w);
    return out;
}

} // namespace

class TestNsysImport : public QObject
{
    Q_OBJECT
private slots:
    void oneProcessExactly();
    void stepsPhasesAndStatistics();
    void reportWithSeveralProcessesGivesRanks();
    void folderOfReportsRankNumbers();
    void parallelReadingGivesTheSameTrace();
    void statisticsEqualUnionsOfRandomKernels();
    void badRowsAreSkippedAndReported();
    void badInput_data();
    void badInput();
    void lockedDatabase();
    void damagedCopiesLoadOrFailWithOneLine();
    void reportNeedsNsys();
    void memoryLimitProgressAndCancel();
};

void TestNsysImport::oneProcessExactly()
{
    QTemporaryDir dir;
    const auto t = loadTrace(writeExport(dir, QStringLiteral("train.sqlite"), { 4242 }), {});
    QCOMPARE(t->ranks.size(), std::size_t(1));
    const Rank& r = t->ranks[0];
    QCOMPARE(r.rank, 0);
    // Threads first (by globalTid, named from ThreadNames), then streams by (device, stream).
    QCOMPARE(testing::laneNames(r),
        (std::vector<std::string> { "pt_main_thread", "thread 4243", "CUDA[0:7]", "CUDA[0:17]" }));
    QCOMPARE(r.devices, std::vector<int>({ 0 }));
    // Times rebased to the first event (the step's NVTX range), exact to the nanosecond.
    QCOMPARE(t->originAbsNs, kBase);
    const Lane& compute = r.lanes[2];
    QCOMPARE(compute.intervals.size(), std::size_t(4));
    QCOMPARE(t->name(compute.intervals.name(0)), std::string("Memcpy HtoD (Pageable -> Device)"));
    QCOMPARE(compute.intervals.start(0), TimeNs(400));
    QCOMPARE(compute.intervals.end(0), TimeNs(1'400));
    QCOMPARE(t->name(compute.intervals.name(1)), std::string(kElementwise));
    QCOMPARE(compute.intervals.start(1), TimeNs(2'000));
    QCOMPARE(compute.intervals.duration(2), TimeNs(20'000));
    QCOMPARE(t->name(compute.intervals.name(3)), std::string("Memset (Device)"));
    QCOMPARE(t->regionKind(compute.intervals.name(1)), RegionKind::Kernel);
    QCOMPARE(t->regionKind(compute.intervals.name(0)), RegionKind::Memcpy);
    QCOMPARE(compute.copyBytes.size(), std::size_t(2));
    QCOMPARE(compute.copyBytes[0], std::make_pair(0u, std::uint64_t(4096)));
    QCOMPARE(compute.copyBytes[1], std::make_pair(3u, std::uint64_t(1024)));
    // The kernels' launch parameters (80 × 1 × 1 blocks of 256 threads, 32 registers; no shared memory): one entry,
    // the copy and the memset have none.
    QCOMPARE(compute.launchParamIds.size(), std::size_t(4));
    QCOMPARE(compute.launchParamIds[0], kNoLaunchParams);
    QCOMPARE(compute.launchParamIds[3], kNoLaunchParams);
    QCOMPARE(compute.launchParamIds[1], compute.launchParamIds[2]);
    QVERIFY(compute.launchParamIds[1] < t->launchParams.size());
    const KernelLaunchParams& p = t->launchParams[compute.launchParamIds[1]];
    QCOMPARE(p.grid, (std::array<std::uint32_t, 3> { 80, 1, 1 }));
    QCOMPARE(p.block, (std::array<std::uint32_t, 3> { 256, 1, 1 }));
    QCOMPARE(p.blocksPerGrid, std::uint64_t(80));
    QCOMPARE(p.threadsPerBlock, std::uint64_t(256));
    QCOMPARE(p.registersPerThread, std::uint64_t(32));
    QCOMPARE(p.staticSharedMemory + p.dynamicSharedMemory + p.sharedMemory, std::uint64_t(0));
    // Launches by correlation id, per interval: the copy's call, the two kernels' launches, the memset's call.
    QVERIFY(compute.launches.empty());
    QCOMPARE(compute.launchByInterval.size(), std::size_t(4));
    const auto& main = r.lanes[0].intervals;
    for (int k = 0; k < 4; ++k)
        QCOMPARE(compute.launchByInterval[k].cpuLane, 0u);
    QCOMPARE(t->name(main.name(compute.launchByInterval[1].interval)), std::string("cudaLaunchKernel")); // no "_v7000"
    QCOMPARE(main.start(compute.launchByInterval[1].interval), TimeNs(1'000));
    QCOMPARE(main.start(compute.launchByInterval[2].interval), TimeNs(41'000));
    QCOMPARE(r.lanes[3].launchByInterval.size(), std::size_t(1));
    QCOMPARE(r.lanes[3].launchByInterval[0].cpuLane, 1u);
    // Nesting on the main thread: step > forward > calls; step > backward > calls; step > sync call > its wait.
    QCOMPARE(main.size(), std::size_t(9));
    const std::vector<std::pair<std::string, int>> expected = { { "ProfilerStep#3", 0 }, { "forward", 1 },
        { "cudaMemcpyAsync", 2 }, { "cudaLaunchKernel", 2 }, { "backward", 1 }, { "cudaLaunchKernel", 2 },
        { "cudaMemsetAsync", 2 }, { "cudaStreamSynchronize", 1 }, { "Stream synchronize", 2 } };
    for (std::size_t i = 0; i < expected.size(); ++i) {
        QCOMPARE(t->name(main.name(i)), expected[i].first);
        QCOMPARE(int(main.depth(i)), expected[i].second);
    }
    QCOMPARE(t->regionKind(main.name(3)), RegionKind::HostApi);
    QCOMPARE(t->regionKind(main.name(0)), RegionKind::HostRegion);
    QCOMPARE(main.start(8), TimeNs(88'010));
    QCOMPARE(main.end(8), TimeNs(98'990));
    QVERIFY2(t->warnings.empty(), t->warnings.empty() ? "" : t->warnings.front().c_str());
}

void TestNsysImport::stepsPhasesAndStatistics()
{
    QTemporaryDir dir;
    const auto t = loadTrace(writeExport(dir, QStringLiteral("train.sqlite"), { 7 }), {});
    const auto a = analyze(*t, Rules::defaults());
    const auto& ra = a->ranks[0];
    QCOMPARE(ra.launchPairing, LaunchPairing::CorrelationIds);
    QCOMPARE(ra.stepSource, StepSource::Regions);
    QCOMPARE(ra.steps.size(), std::size_t(1));
    QCOMPARE(ra.phases[2][1], Phase::Forward); // launched inside the NVTX range "forward"
    QCOMPARE(ra.phases[2][2], Phase::Backward); // inside "backward" (its text through StringIds)
    // Compute busy = |[2000, 12000) u [42000, 62000)| = 30000; the all-reduce [52000, 82000) hides 10000 of its
    // 30000 behind the GEMM.
    const auto s = computeStats(*t, *a, 0, t->extent);
    QCOMPARE(s.kernelCount, 3ull);
    QCOMPARE(s.commKernelCount, 1ull);
    QCOMPARE(s.computeBusyNs, TimeNs(30'000));
    QCOMPARE(s.commBusyNs, TimeNs(30'000));
    QCOMPARE(s.overlappedNs, TimeNs(10'000));
    QCOMPARE(s.exposedNs, TimeNs(20'000));
    QCOMPARE(s.memcpyBusyNs, TimeNs(1'500));
    // The stream synchronize call and its wait are sync calls for the idle breakdown.
    const Rules rules = Rules::defaults();
    QVERIFY(rules.classify("cudaStreamSynchronize", RegionKind::HostApi).syncCall);
    QVERIFY(rules.classify("Stream synchronize", RegionKind::HostRegion).syncCall);
    QVERIFY(rules.classify("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", RegionKind::Kernel).category
        == Category::Communication);
}

void TestNsysImport::reportWithSeveralProcessesGivesRanks()
{
    // One report of three processes with GPU work and a launcher (CPU only): ranks by process id.
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("all.sqlite")).toStdString();
    {
        NsysWriter w(path);
        w.gpu(0, "NVIDIA H200");
        w.gpu(1, "NVIDIA H200");
        writeRank(w, 300, 1);
        writeRank(w, 100, 0);
        writeRank(w, 200, 1);
        w.runtime(nsysTid(50, 50), kBase, kBase + 10, 1, "cudaGetDeviceCount_v3020");
        w.nvtx(nsysTid(50, 50), kBase, kBase + 500'000, "torchrun");
    }
    const auto t = loadTrace(path, {});
    QCOMPARE(t->ranks.size(), std::size_t(3));
    QCOMPARE(t->ranks[0].rank, 0);
    QCOMPARE(t->ranks[0].lanes[1].name, std::string("thread 101"));
    QCOMPARE(t->ranks[1].lanes[1].name, std::string("thread 201"));
    QCOMPARE(t->ranks[2].devices, std::vector<int>({ 1 }));
    QCOMPARE(t->ranks[2].lanes[2].name, std::string("CUDA[1:7]"));
    QVERIFY(hasWarning(*t, "the processes of a report are ranks in the order of their process ids"));
    // Each process pairs its own launches (correlation ids are per process).
    for (const auto& r : t->ranks)
        QCOMPARE(r.lanes[2].launchByInterval[1].cpuLane, 0u);
    QCOMPARE(t->eventCount, std::uint64_t(3 * 15 + 2 + 10)); // rows read, the 10 StringIds included
}

void TestNsysImport::folderOfReportsRankNumbers()
{
    {
        QTemporaryDir dir;
        writeExport(dir, QStringLiteral("job_rank10.sqlite"), { 1 });
        writeExport(dir, QStringLiteral("job_rank2.sqlite"), { 2 });
        const auto t = loadTrace(dir.path().toStdString(), {});
        QCOMPARE(t->ranks.size(), std::size_t(2));
        QCOMPARE(t->ranks[0].rank, 2);
        QCOMPARE(t->ranks[1].rank, 10);
        QCOMPARE(t->ranks[1].label, std::string("Rank 10"));
        QVERIFY(!hasWarning(*t, "natural order"));
    }
    {
        QTemporaryDir dir;
        writeExport(dir, QStringLiteral("report2.sqlite"), { 1 });
        writeExport(dir, QStringLiteral("report10.sqlite"), { 2 });
        const auto t = loadTrace(dir.path().toStdString(), {});
        QCOMPARE(t->ranks[0].rank, 0);
        QVERIFY(QString::fromStdString(t->ranks[0].archivePath).endsWith(QLatin1String("report2.sqlite")));
        QVERIFY(QString::fromStdString(t->ranks[1].archivePath).endsWith(QLatin1String("report10.sqlite")));
        QVERIFY(hasWarning(*t, "rank numbers follow the natural order of the files"));
        // --ranks is for OTF2 folders.
        LoadOptions o;
        o.ranks = { 1 };
        QVERIFY(loadError(dir.path().toStdString(), o).contains(QLatin1String("Nsight Systems file of each rank")));
    }
}

void TestNsysImport::parallelReadingGivesTheSameTrace()
{
    QTemporaryDir dir;
    for (int r = 0; r < 6; ++r)
        writeExport(dir, QStringLiteral("rank%1.sqlite").arg(r), { 1000 + r });
    LoadOptions one, four;
    one.threads = 1;
    four.threads = 4;
    const auto a = loadTrace(dir.path().toStdString(), one);
    const auto b = loadTrace(dir.path().toStdString(), four);
    QCOMPARE(a->ranks.size(), std::size_t(6));
    QCOMPARE(dump(*a), dump(*b));
    QCOMPARE(a->strings.size(), b->strings.size());
}

void TestNsysImport::statisticsEqualUnionsOfRandomKernels()
{
    // 3000 kernels of random extent on three streams of one process; busy times are their unions, exactly.
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("random.sqlite")).toStdString();
    std::vector<std::pair<TimeNs, TimeNs>> compute, comm;
    {
        NsysWriter w(path);
        std::mt19937_64 random(21);
        // Each stream runs its kernels one after another (random gaps, some back to back); streams overlap.
        std::int64_t next[3] = { kBase, kBase + 777, kBase + 1'234 };
        for (int k = 0; k < 3000; ++k) {
            const int stream = int(random() % 3);
            const std::int64_t start = next[stream] + std::int64_t(random() % 3 == 0 ? 0 : random() % 50'000);
            const std::int64_t end = start + 1 + std::int64_t(random() % 200'000);
            next[stream] = end;
            const bool nccl = stream == 2;
            w.kernel(9, 0, 7 + stream, start, end, k + 1, nccl ? kNccl : (k % 2 ? kGemm : kElementwise));
            (nccl ? comm : compute).emplace_back(start, end);
        }
    }
    const auto t = loadTrace(path, {});
    const auto a = analyze(*t, Rules::defaults());
    const auto s = computeStats(*t, *a, 0, t->extent);
    QCOMPARE(s.kernelCount, 3000ull);
    QCOMPARE(s.computeBusyNs, unionLength(compute));
    QCOMPARE(s.commBusyNs, unionLength(comm));
    auto all = compute;
    all.insert(all.end(), comm.begin(), comm.end());
    QCOMPARE(s.overlappedNs, unionLength(compute) + unionLength(comm) - unionLength(all));
    QVERIFY(hasWarning(*t, "3000 kernels have no launch call"));
}

void TestNsysImport::badRowsAreSkippedAndReported()
{
    QTemporaryDir dir;
    const std::string path = writeExport(dir, QStringLiteral("x.sqlite"), { 5 });
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const char* sql
        = "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
          " demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,"
          " staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId) VALUES"
          " ('soon', 5, 0, 1, 7, 1, 83886080, 1, 1, 0,0,0,0,0,0,0,0,0,0,0,0)," // text time
          " (2000000000, 1000000000, 0, 1, 7, 1, 83886080, 1, 1, 0,0,0,0,0,0,0,0,0,0,0,0)," // ends before it starts
          " (1000000000, 1000000001, 99999, 1, 7, 1, 83886080, 1, 1, 0,0,0,0,0,0,0,0,0,0,0,0);" // device out of range
          "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, text) VALUES (1000000000, NULL, 59, 83886085, "
          "'open');"
          "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (1000000000, 1000000005, 0, 1, 7, 777, 83886080, 3, "
          "0);";
    QCOMPARE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    const auto t = loadTrace(path, {});
    QCOMPARE(t->ranks[0].lanes[2].intervals.size(), std::size_t(4)); // unchanged
    QVERIFY(hasWarning(*t, "x.sqlite: 3 rows without integer start and end"));
    QVERIFY(hasWarning(*t, "x.sqlite: 1 NVTX ranges never ended"));
    QVERIFY(hasWarning(*t, "x.sqlite: 1 synchronization records have no CUDA call"));
}

void TestNsysImport::badInput_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("sql"); // run on a fresh export of one rank (empty: the file is `bytes`)
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");
    QTest::newRow("not sqlite") << "a.sqlite"
                                << "" << QByteArray("{\"traceEvents\": []}") << "not an SQLite database";
    QTest::newRow("empty file") << "a.sqlite"
                                << "" << QByteArray() << "not an SQLite database";
    QTest::newRow("header only") << "a.sqlite"
                                 << "" << QByteArray("SQLite format 3\0garbage garbage garbage", 40) << "SQLite";
    QTest::newRow("another database") << "a.sqlite"
                                      << "DROP TABLE StringIds" << QByteArray()
                                      << "without the StringIds table: not an Nsight Systems export";
    QTest::newRow("another schema")
        << "a.sqlite"
        << "UPDATE META_DATA_EXPORT SET value = '4.0.0' WHERE name = 'EXPORT_SCHEMA_VERSION'" << QByteArray()
        << "export schema version 4.0.0 is not one Exposure reads";
    QTest::newRow("missing column") << "a.sqlite"
                                    << "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL "
                                       "(start INTEGER, end INTEGER, deviceId INTEGER, correlationId INTEGER)"
                                    << QByteArray() << "table CUPTI_ACTIVITY_KIND_KERNEL has no column \"streamId\"";
    QTest::newRow("no gpu tables")
        << "a.sqlite"
        << "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY; DROP TABLE "
           "CUPTI_ACTIVITY_KIND_MEMSET"
        << QByteArray() << "no CUDA kernels, copies or memsets";
    QTest::newRow("no gpu rows") << "a.sqlite"
                                 << "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL; DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY; "
                                    "DELETE FROM CUPTI_ACTIVITY_KIND_MEMSET"
                                 << QByteArray() << "no CUDA kernels, copies or memsets";
    QTest::newRow("truncated") << "a.sqlite"
                               << "TRUNCATE" << QByteArray() << "SQLite";
}

void TestNsysImport::badInput()
{
    QFETCH(QString, name);
    QFETCH(QString, sql);
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    QTemporaryDir dir;
    std::string path = dir.filePath(name).toStdString();
    if (sql.isEmpty()) {
        QFile f(QString::fromStdString(path));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
    } else {
        {
            NsysWriter w(path);
            for (int pid = 1; pid <= 40; ++pid) // pages enough for a truncation to cut into tables
                writeRank(w, pid);
        }
        if (sql == QLatin1String("TRUNCATE")) {
            std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
        } else {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
            QCOMPARE(sqlite3_exec(db, sql.toUtf8().constData(), nullptr, nullptr, nullptr), SQLITE_OK);
            sqlite3_close(db);
        }
    }
    const QString error = loadError(path);
    QVERIFY2(error.startsWith(QString::fromStdString(path) + QLatin1String(": ")), qPrintable(error));
    QVERIFY2(error.contains(message), qPrintable(error));
    QVERIFY(!error.contains(QLatin1Char('\n')));
}

void TestNsysImport::lockedDatabase()
{
    QTemporaryDir dir;
    const std::string path = writeExport(dir, QStringLiteral("busy.sqlite"), { 3 });
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    QCOMPARE(sqlite3_exec(db, "BEGIN EXCLUSIVE; INSERT INTO StringIds VALUES (9999, 'x');", nullptr, nullptr, nullptr),
        SQLITE_OK);
    const QString error = loadError(path);
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    QVERIFY2(error.startsWith(QString::fromStdString(path) + QLatin1String(": SQLite")), qPrintable(error));
    QVERIFY2(error.contains(QLatin1String("lock")), qPrintable(error));
}

void TestNsysImport::damagedCopiesLoadOrFailWithOneLine()
{
    // A fixed set of damaged copies of one export (bytes overwritten at random places, cut at random lengths): each
    // loads or fails with one line naming the file; none crashes or hangs.
    QTemporaryDir dir;
    const std::string good = writeExport(dir, QStringLiteral("good.sqlite"), { 1, 2 });
    QFile in(QString::fromStdString(good));
    QVERIFY(in.open(QIODevice::ReadOnly));
    const QByteArray original = in.readAll();
    const auto intact = loadTrace(good, {});
    QCOMPARE(intact->ranks.size(), std::size_t(2));
    std::mt19937 random(2021);
    int loaded = 0, failed = 0;
    for (int c = 0; c < 120; ++c) {
        QByteArray bytes = original;
        if (c % 4 == 3) {
            bytes.truncate(int(random() % std::uint32_t(bytes.size())));
        } else {
            const int n = 1 + int(random() % 16);
            for (int k = 0; k < n; ++k)
                bytes[int(random() % std::uint32_t(bytes.size()))] = char(random());
        }
        const QString path = dir.filePath(QStringLiteral("damaged%1.sqlite").arg(c));
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(bytes);
        out.close();
        try {
            const auto t = loadTrace(path.toStdString(), {});
            QVERIFY(!t->ranks.empty());
            // Compared with the intact export: damage never adds ranks or intervals.
            QVERIFY(t->ranks.size() <= intact->ranks.size());
            QVERIFY2(t->intervalCount() <= intact->intervalCount(), qPrintable(path));
            ++loaded;
        } catch (const LoadError& e) {
            const QString error = QString::fromStdString(e.what());
            QVERIFY2(error.startsWith(path + QLatin1String(": ")), qPrintable(error));
            QVERIFY(!error.contains(QLatin1Char('\n')));
            ++failed;
        }
    }
    QCOMPARE(loaded + failed, 120);
    QVERIFY(failed > 0);
}

void TestNsysImport::reportNeedsNsys()
{
    QTemporaryDir dir;
    const std::string rep = dir.filePath(QStringLiteral("profile.nsys-rep")).toStdString();
    {
        QFile f(QString::fromStdString(rep));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("not really a report");
    }
    const QByteArray oldPath = qgetenv("PATH");
    const QByteArray oldCache = qgetenv("XDG_CACHE_HOME");
    qputenv("XDG_CACHE_HOME", dir.filePath(QStringLiteral("cache")).toUtf8());
    // Without nsys: one line with the command to run.
    qputenv("PATH", dir.filePath(QStringLiteral("nowhere")).toUtf8());
    const QString error = loadError(rep);
    QVERIFY2(error.startsWith(QString::fromStdString(rep) + QLatin1String(": ")), qPrintable(error));
    QVERIFY2(error.contains(QLatin1String("nsys export --type sqlite")), qPrintable(error));
    // With an nsys on the PATH (here a script that copies a prepared export to --output): exported once, cached.
    const std::string prepared = writeExport(dir, QStringLiteral("prepared.db"), { 11 });
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("bin")));
    const QString script = dir.filePath(QStringLiteral("bin/nsys"));
    {
        QFile f(script);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray("#!/bin/sh\n") + "echo run >> " + dir.filePath(QStringLiteral("runs")).toUtf8() + "\n"
            + "while [ \"$1\" != --output ]; do shift; done\ncp " + QByteArray::fromStdString(prepared) + " \"$2\"\n");
        f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    }
    qputenv("PATH", dir.filePath(QStringLiteral("bin")).toUtf8() + ":/usr/bin:/bin");
    const auto t = loadTrace(rep, {});
    const auto again = loadTrace(rep, {});
    qputenv("PATH", oldPath);
    qputenv("XDG_CACHE_HOME", oldCache);
    QCOMPARE(t->ranks.size(), std::size_t(1));
    QCOMPARE(again->intervalCount(), t->intervalCount());
    QFile runs(dir.filePath(QStringLiteral("runs")));
    QVERIFY(runs.open(QIODevice::ReadOnly));
    QCOMPARE(runs.readAll().count("run"), 1);
    // The file name tells nothing: an SQLite header is enough.
    QCOMPARE(loadTrace(prepared, {})->ranks.size(), std::size_t(1));
}

void TestNsysImport::memoryLimitProgressAndCancel()
{
    QTemporaryDir dir;
    const std::string path = writeExport(dir, QStringLiteral("m.sqlite"), { 1 });
    LoadOptions small;
    small.memoryLimit = 1 << 20;
    try {
        (void)loadTrace(path, small);
        QFAIL("loaded past the memory limit");
    } catch (const TraceTooLarge& e) {
        QVERIFY(QString::fromStdString(e.what()).contains(QLatin1String("Nsight Systems exports")));
        QCOMPARE(e.needed(), kBaseBytes + std::uint64_t(15 + 9) * kBytesPerNsysRow);
    }
    std::atomic<bool> cancel { true };
    LoadOptions c;
    c.cancel = &cancel;
    QVERIFY_THROWS_EXCEPTION(LoadCancelled, (void)loadTrace(path, c));
    // Progress by rows (the count of the estimate, then every 16384 rows read and at the end of each file) up to
    // the rows counted first; a cancel from the progress callback stops the reading.
    const std::string big = dir.filePath(QStringLiteral("big.sqlite")).toStdString();
    {
        NsysWriter w(big);
        for (int k = 0; k < 40'000; ++k)
            w.kernel(1, 0, 7, kBase + 10 * k, kBase + 10 * k + 5, k, kGemm);
    }
    std::vector<LoadProgress> seen;
    LoadOptions p;
    p.progress = [&](const LoadProgress& x) { seen.push_back(x); };
    (void)loadTrace(big, p);
    // The estimate's count (one call), then the reading.
    QCOMPARE(seen.size(), std::size_t(4));
    QCOMPARE(seen[0].eventsRead, std::uint64_t(40'001)); // the kernels and one StringIds row
    QCOMPARE(seen[1].eventsRead, std::uint64_t(16384));
    QCOMPARE(seen[2].eventsRead, std::uint64_t(32768));
    QCOMPARE(seen.back().eventsRead, std::uint64_t(40'001));
    QCOMPARE(seen.back().eventsTotal, std::uint64_t(40'001));
    QCOMPARE(seen.back().currentFile, big);
    std::atomic<bool> stop { false };
    LoadOptions s;
    s.cancel = &stop;
    s.progress = [&](const LoadProgress&) { stop = true; };
    QVERIFY_THROWS_EXCEPTION(LoadCancelled, (void)loadTrace(big, s));
}

QTEST_APPLESS_MAIN(TestNsysImport)
#include "tst_nsysimport.moc"
