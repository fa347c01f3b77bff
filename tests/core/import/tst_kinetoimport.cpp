// SPDX-License-Identifier: GPL-3.0-or-later
// torch.profiler (Kineto) import on small generated traces: exact nanoseconds, lanes, nesting, launches by
// correlation, phases and steps, rank numbering, and every kind of bad input as one line naming the file.
#include "analysis/analysis.h"
#include "import/kinetoimporter.h"
#include "run/openrun.h"
#include "support/kinetotraces.h"
#include "support/testtraces.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <map>
#include <mutex>

using namespace exposure;
using namespace exposure::testing;

namespace {

QString loadError(const QString& path)
{
    try {
        (void)loadTrace(path.toStdString(), {});
    } catch (const LoadError& e) {
        return QString::fromStdString(e.what());
    }
    return QStringLiteral("(loaded)");
}

const Lane* laneNamed(const Rank& r, const std::string& name)
{
    for (const auto& l : r.lanes)
        if (l.name == name)
            return &l;
    return nullptr;
}

// EXPOSURE_JSON_WHOLE_FILE_LIMIT for one scope: "0" streams every file, unset reads files of up to 128 MiB whole.
class WholeFileLimit
{
public:
    explicit WholeFileLimit(const QByteArray& bytes) { qputenv("EXPOSURE_JSON_WHOLE_FILE_LIMIT", bytes); }
    ~WholeFileLimit() { qunsetenv("EXPOSURE_JSON_WHOLE_FILE_LIMIT"); }
    WholeFileLimit(const WholeFileLimit&) = delete;
    WholeFileLimit& operator=(const WholeFileLimit&) = delete;
};

// Two loads of the same files: the same ranks, names, lanes and intervals (QCOMPARE: check currentTestFailed()).
void compareTraces(const Trace& a, const Trace& b)
{
    QCOMPARE(a.ranks.size(), b.ranks.size());
    QCOMPARE(a.strings.size(), b.strings.size());
    for (StringId i = 0; i < a.strings.size(); ++i) {
        QCOMPARE(a.name(i), b.name(i));
        QCOMPARE(a.regionKind(i), b.regionKind(i));
    }
    QVERIFY(a.collectiveArgs == b.collectiveArgs);
    QCOMPARE(a.warnings, b.warnings);
    for (std::size_t r = 0; r < a.ranks.size(); ++r) {
        QCOMPARE(a.ranks[r].rank, b.ranks[r].rank);
        QCOMPARE(a.ranks[r].lanes.size(), b.ranks[r].lanes.size());
        for (std::size_t l = 0; l < a.ranks[r].lanes.size(); ++l) {
            const Lane& x = a.ranks[r].lanes[l];
            const Lane& y = b.ranks[r].lanes[l];
            QCOMPARE(x.name, y.name);
            QCOMPARE(x.intervals.starts(), y.intervals.starts());
            QCOMPARE(x.launchByInterval.size(), y.launchByInterval.size());
            QCOMPARE(x.collectiveArgs, y.collectiveArgs);
            for (std::size_t i = 0; i < x.intervals.size(); ++i) {
                QCOMPARE(x.intervals.end(i), y.intervals.end(i));
                QCOMPARE(x.intervals.name(i), y.intervals.name(i));
            }
        }
    }
}

} // namespace

class TestKinetoImport : public QObject
{
    Q_OBJECT
private slots:
    void oneRankExactly();
    void plainAndGzipGiveTheSameTrace();
    void ranksFromInfoNameOrOrder();
    void brokenNestingIsClippedAndReported();
    void overlappingKernelsOnOneStream();
    void negativeDurationIsSkippedAndReported();
    void badInput_data();
    void badInput();
    void multiRankWithoutCommunicationWarnsLoudly();
    void ncclArgumentsAndBusBandwidth();
    void cudaGraphKernelsShareTheirLaunch();
    void progressCountsBytesAndCancelStops();
    void schema2021ReadsLikeTheCurrentOne();
    void parallelReadingGivesTheSameTrace();
    void streamedAndInMemoryReadAlike();
};

void TestKinetoImport::oneRankExactly()
{
    QTemporaryDir dir;
    const QString path = write(dir, QStringLiteral("rank0.pt.trace.json.gz"), rankTrace(0, 1));
    const auto trace = loadTrace(path.toStdString(), {});
    QCOMPARE(trace->ranks.size(), std::size_t(1));
    const Rank& r = trace->ranks[0];
    QCOMPARE(r.rank, 0);
    // CPU threads first (named by their metadata), then streams by device and stream.
    QCOMPARE(testing::laneNames(r), (std::vector<std::string> { "main", "thread 11", "CUDA[0:7]", "CUDA[0:17]" }));
    // Times rebased to the earliest event (ProfilerStep at 1000 us), exact to the nanosecond; digits beyond the
    // nanosecond are dropped ("10.0005" us -> 10000 ns).
    const Lane* compute = laneNamed(r, "CUDA[0:7]");
    QVERIFY(compute);
    QCOMPARE(compute->intervals.size(), std::size_t(3)); // memcpy, two kernels (gpu_user_annotation is not GPU work)
    QCOMPARE(compute->intervals.start(0), TimeNs(500));
    QCOMPARE(compute->intervals.start(1), TimeNs(5'123));
    QCOMPARE(compute->intervals.duration(1), TimeNs(10'000));
    QCOMPARE(trace->regionKind(compute->intervals.name(0)), RegionKind::Memcpy);
    QCOMPARE(compute->copyBytes.size(), std::size_t(1));
    QCOMPARE(compute->copyBytes[0].second, std::uint64_t(4096));
    // Launch parameters as recorded: the first kernel's grid, block, registers, shared memory and occupancy; the
    // memcpy and the second kernel have none.
    QCOMPARE(compute->launchParamIds.size(), std::size_t(3));
    QCOMPARE(compute->launchParamIds[0], kNoLaunchParams);
    QCOMPARE(compute->launchParamIds[2], kNoLaunchParams);
    QVERIFY(compute->launchParamIds[1] < trace->launchParams.size());
    const KernelLaunchParams& p = trace->launchParams[compute->launchParamIds[1]];
    QCOMPARE(p.grid, (std::array<std::uint32_t, 3> { 320, 2, 1 }));
    QCOMPARE(p.block, (std::array<std::uint32_t, 3> { 128, 1, 1 }));
    QCOMPARE(p.blocksPerGrid, std::uint64_t(640));
    QCOMPARE(p.threadsPerBlock, std::uint64_t(128));
    QCOMPARE(p.registersPerThread, std::uint64_t(96));
    QCOMPARE(p.sharedMemory, std::uint64_t(16384));
    QCOMPARE(p.occupancyPercent, 38);
    QCOMPARE(laneNamed(r, "CUDA[0:17]")->launchParamIds.size(), std::size_t(0)); // no kernel there has any
    // Nesting on the main thread: step > forward > launch.
    const auto& main = r.lanes[0].intervals;
    QCOMPARE(main.size(), std::size_t(3));
    QCOMPARE(int(main.depth(0)), 0);
    QCOMPARE(int(main.depth(1)), 1);
    QCOMPARE(int(main.depth(2)), 2);
    QCOMPARE(main.duration(0), TimeNs(100'500));
    // Launches by correlation, per interval: each kernel's phase comes from its launching region. The memcpy's
    // correlation id (99) names no call in the trace.
    QVERIFY(compute->launches.empty());
    QCOMPARE(compute->launchByInterval.size(), std::size_t(3));
    QCOMPARE(compute->launchByInterval[0].cpuLane, kUnknownLaunch);
    QCOMPARE(compute->launchByInterval[1].cpuLane, 0u);
    QCOMPARE(compute->launchByInterval[1].interval, 2u);
    QCOMPARE(compute->launchByInterval[2].cpuLane, 1u);
    const auto a = analyze(*trace, Rules::defaults());
    QCOMPARE(a->ranks[0].launchPairing, LaunchPairing::CorrelationIds);
    const int computeIndex = int(compute - r.lanes.data());
    QCOMPARE(a->ranks[0].phases[computeIndex][1], Phase::Forward);
    QCOMPARE(a->ranks[0].phases[computeIndex][2], Phase::Backward);
    QCOMPARE(a->ranks[0].stepSource, StepSource::Regions);
    QCOMPARE(a->ranks[0].steps.size(), std::size_t(1));
    // The NCCL kernel [45, 75) us overlaps the backward GEMM [35, 55) us for 10 us: 10 us hidden, 20 us exposed.
    const auto s = computeStats(*trace, *a, 0, trace->extent);
    QCOMPARE(s.commKernelCount, 1ull);
    QCOMPARE(s.overlappedNs, TimeNs(10'000));
    QCOMPARE(s.exposedNs, TimeNs(20'000));
    QCOMPARE(s.kernelCount, 3ull);
}

void TestKinetoImport::plainAndGzipGiveTheSameTrace()
{
    QTemporaryDir dir;
    const auto a = loadTrace(write(dir, QStringLiteral("a.json"), rankTrace(0, 1)).toStdString(), {});
    const auto b = loadTrace(write(dir, QStringLiteral("b.json.gz"), rankTrace(0, 1)).toStdString(), {});
    QCOMPARE(a->intervalCount(), b->intervalCount());
    QCOMPARE(a->extent.end, b->extent.end);
    QCOMPARE(a->eventCount, b->eventCount);
}

void TestKinetoImport::ranksFromInfoNameOrOrder()
{
    {
        // distributedInfo wins over the file names.
        QTemporaryDir dir;
        write(dir, QStringLiteral("zz.json"), rankTrace(0, 2));
        write(dir, QStringLiteral("aa.json"), rankTrace(1, 2));
        const auto t = loadTrace(dir.path().toStdString(), {});
        QCOMPARE(t->ranks.size(), std::size_t(2));
        QCOMPARE(t->ranks[0].rank, 0);
        QVERIFY(QString::fromStdString(t->ranks[0].archivePath).endsWith(QLatin1String("zz.json")));
    }
    {
        // No distributedInfo: "rank<N>" in the file name, natural order (rank10 after rank2).
        QTemporaryDir dir;
        write(dir, QStringLiteral("trace_rank10.json"), rankTrace(0, 0, false));
        write(dir, QStringLiteral("trace_rank2.json.gz"), rankTrace(0, 0, false));
        const auto t = loadTrace(dir.path().toStdString(), {});
        QCOMPARE(t->ranks.size(), std::size_t(2));
        QCOMPARE(t->ranks[0].rank, 2);
        QCOMPARE(t->ranks[1].rank, 10);
        QCOMPARE(t->ranks[1].label, std::string("Rank 10"));
    }
    {
        // Neither: the natural order of the files.
        QTemporaryDir dir;
        write(dir, QStringLiteral("b.json"), rankTrace(0, 0, false));
        write(dir, QStringLiteral("a.json"), rankTrace(0, 0, false));
        const auto t = loadTrace(dir.path().toStdString(), {});
        QCOMPARE(t->ranks[0].rank, 0);
        QVERIFY(QString::fromStdString(t->ranks[0].archivePath).endsWith(QLatin1String("a.json")));
    }
}

void TestKinetoImport::brokenNestingIsClippedAndReported()
{
    QTemporaryDir dir;
    // An op that starts inside the step but ends 50 us after it.
    const QByteArray extra
        = R"(, {"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 10, "tid": 10, "ts": 1090.0, "dur": 60.0})";
    const auto t = loadTrace(write(dir, QStringLiteral("r.json"), rankTrace(0, 1, true, extra)).toStdString(), {});
    const auto& main = t->ranks[0].lanes[0].intervals;
    QCOMPARE(main.size(), std::size_t(4));
    QCOMPARE(main.end(3), main.end(0)); // clipped to the step's end
    QCOMPARE(int(main.depth(3)), 1);
    QVERIFY(std::any_of(t->warnings.begin(), t->warnings.end(),
        [](const std::string& w) { return w.find("1 CPU events outlast their parent") != std::string::npos; }));
}

void TestKinetoImport::overlappingKernelsOnOneStream()
{
    // Stream 9 of device 0: "a" and "b" overlap by 0.5 us (kept: a GPU may start the next kernel early); "long"
    // covers all of "inside" (a serial stream cannot finish a later kernel first: the timing glitch that inflates
    // other tools' maxima to seconds), so its end is clipped to the start of "inside"; "after" follows cleanly.
    QTemporaryDir dir;
    QByteArray extra;
    const char* kernels[][3] = { { "a", "1100.0", "1.0" }, { "b", "1100.5", "1.5" }, { "long", "1103.0", "895.0" },
        { "inside", "1104.0", "1.0" }, { "after", "1999.0", "10.0" } };
    for (const auto& k : kernels)
        extra += QByteArray(R"(, {"ph": "X", "cat": "kernel", "name": ")") + k[0] + R"(", "pid": 0, "tid": 9, "ts": )"
            + k[1] + R"(, "dur": )" + k[2] + R"(, "args": {"device": 0, "stream": 9}})";
    const auto t = loadTrace(write(dir, QStringLiteral("r.json"), rankTrace(0, 1, true, extra)).toStdString(), {});
    const Lane* lane = nullptr;
    for (const auto& l : t->ranks[0].lanes)
        if (l.isGpu() && l.stream == 9)
            lane = &l;
    QVERIFY(lane);
    std::map<std::string, std::pair<TimeNs, TimeNs>> byName;
    for (std::size_t i = 0; i < lane->intervals.size(); ++i)
        byName[t->name(lane->intervals.name(i))] = { lane->intervals.start(i), lane->intervals.end(i) };
    QCOMPARE(byName.size(), std::size_t(5));
    const TimeNs o = byName["a"].first;
    QCOMPARE(byName["a"].second - o, TimeNs(1'000));
    QCOMPARE(byName["b"].first - o, TimeNs(500));
    QCOMPARE(byName["b"].second - o, TimeNs(2'000)); // partial overlap: kept as recorded
    QCOMPARE(byName["long"].second - o, TimeNs(4'000)); // clipped from 898 us to the start of "inside"
    QCOMPARE(byName["inside"].second - o, TimeNs(5'000));
    QCOMPARE(byName["after"].second - o, TimeNs(909'000));
    std::vector<std::string> clipped, kept;
    for (const auto& w : t->warnings) {
        if (w.find("clipped") != std::string::npos)
            clipped.push_back(w);
        if (w.find("kept as recorded") != std::string::npos)
            kept.push_back(w);
    }
    QCOMPARE(clipped.size(), std::size_t(1));
    QCOMPARE(kept.size(), std::size_t(1));
    const std::string file = dir.filePath(QStringLiteral("r.json")).toStdString();
    QVERIFY2(clipped[0].rfind(file + ": ", 0) == 0, clipped[0].c_str());
    QVERIFY2(clipped[0].find(": 1 kernels or copies end after a later one on the same stream") != std::string::npos,
        clipped[0].c_str());
    QVERIFY2(clipped[0].find("removing 894 µs (the longest clip 894 µs)") != std::string::npos, clipped[0].c_str());
    QVERIFY2(kept[0].find(": 1 kernels or copies start before the previous one on the same stream ended (by up to "
                          "500 ns)")
            != std::string::npos,
        kept[0].c_str());
    // The glitch no longer inflates the longest kernel: nothing on the stream lasts more than 10 us.
    for (const auto& [name, range] : byName)
        QVERIFY2(range.second - range.first <= 10'000, name.c_str());
}

void TestKinetoImport::negativeDurationIsSkippedAndReported()
{
    QTemporaryDir dir;
    const QByteArray extra = R"(, {"ph": "X", "cat": "kernel", "name": "backwards", "pid": 0, "tid": 7, "ts": 1080.0,)"
                             R"( "dur": -3.0, "args": {"device": 0, "stream": 7}})";
    const auto t = loadTrace(write(dir, QStringLiteral("r.json"), rankTrace(0, 1, true, extra)).toStdString(), {});
    for (const auto& l : t->ranks[0].lanes)
        for (std::size_t i = 0; i < l.intervals.size(); ++i)
            QVERIFY(t->name(l.intervals.name(i)) != "backwards");
    QVERIFY(std::any_of(t->warnings.begin(), t->warnings.end(), [](const std::string& w) {
        return w == "r.json: 1 events end before they start (negative \"dur\") and were skipped";
    }));
}

void TestKinetoImport::badInput_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("problem");
    const QByteArray good = rankTrace(0, 1);
    QTest::newRow("invalid JSON") << "bad.json" << good.left(good.size() / 2) << "invalid JSON at byte";
    QTest::newRow("not Kineto") << "spec.json" << QByteArray(R"({"exposureFigure": 1})") << "no \"traceEvents\" array";
    QTest::newRow("no GPU events")
        << "cpu.json"
        << QByteArray(
               R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]})")
        << "no GPU events";
    QTest::newRow("empty file") << "empty.json" << QByteArray() << "invalid JSON at byte 0";
    // 100 000 nested '[' (200 KB): the reader recursed once per level and overflowed the stack.
    QTest::newRow("deep nesting") << "deep.json" << QByteArray(100'000, '[')
                                  << "JSON nested deeper than 64 levels at byte 65";
    QTest::newRow("deep nesting inside an event") << "deep-args.json"
                                                  << QByteArray(R"({"traceEvents": [{"ph": "X", "args": {"a": )")
            + QByteArray(100'000, '{').replace("{", "{\"k\": ")
                                                  << "JSON nested deeper than 64 levels";
    QTest::newRow("invalid UTF-8 in a name is kept, not a crash")
        << "utf8.json"
        << QByteArray("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\xff\xfe\", \"pid\": 0, "
                      "\"tid\": 7, "
                      "\"ts\": 1, \"dur\": 1, \"args\": {\"correlation\": 123456789012345678901234567890}}]}")
        << "(loaded)";
}

void TestKinetoImport::badInput()
{
    QFETCH(QString, name);
    QFETCH(QByteArray, text);
    QFETCH(QString, problem);
    QTemporaryDir dir;
    const QString path = write(dir, name, text);
    const QString message = loadError(path);
    QVERIFY2(message.contains(problem), qPrintable(message));
    if (problem != QLatin1String("(loaded)")) {
        QVERIFY2(message.startsWith(path + QStringLiteral(": ")), qPrintable(message));
        QVERIFY(!message.contains(QLatin1Char('\n')));
    }
    // Read through the stream instead of whole: the same message, to the byte.
    const WholeFileLimit streamed("0");
    QCOMPARE(loadError(path), message);
}

void TestKinetoImport::multiRankWithoutCommunicationWarnsLoudly()
{
    QTemporaryDir dir;
    // Two ranks whose NCCL kernel was renamed: nothing is recognised as communication.
    QByteArray r0 = rankTrace(0, 2), r1 = rankTrace(1, 2);
    r0.replace("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "myAllReduceKernel");
    r1.replace("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "myAllReduceKernel");
    write(dir, QStringLiteral("r0.json"), r0);
    write(dir, QStringLiteral("r1.json"), r1);
    const auto t = loadTrace(dir.path().toStdString(), {});
    const auto a = analyze(*t, Rules::defaults());
    const auto& w = a->ranks[0].warnings;
    QVERIFY(std::any_of(w.begin(), w.end(), [](const std::string& s) {
        return s.find("no communication kernel recognised on any of the 2 ranks with built-in") != std::string::npos;
    }));

    // Mismatched world sizes: two jobs, read as one run numbered by the order of the files (run/jobcheck.h names
    // them; tst_jobcheck checks that warning); a truncated gzip.
    QTemporaryDir mixed;
    write(mixed, QStringLiteral("a.json"), rankTrace(1, 2));
    write(mixed, QStringLiteral("b.json"), rankTrace(0, 4));
    const auto both = loadTrace(mixed.path().toStdString(), {});
    QCOMPARE(both->ranks.size(), std::size_t(2));
    QCOMPARE(both->ranks[0].archivePath, mixed.filePath(QStringLiteral("a.json")).toStdString());
    QCOMPARE(both->ranks[0].rank, 0);
    QCOMPARE(both->ranks[1].rank, 1);
    QTemporaryDir cut;
    const QString gz = write(cut, QStringLiteral("t.json.gz"), rankTrace(0, 1));
    QFile f(gz);
    QVERIFY(f.open(QIODevice::ReadWrite));
    QVERIFY(f.resize(f.size() / 2));
    f.close();
    const QString message = loadError(gz);
    QVERIFY2(message.startsWith(gz + QStringLiteral(": "))
            && (message.contains(QStringLiteral("gzip")) || message.contains(QStringLiteral("invalid JSON"))),
        qPrintable(message));
}

void TestKinetoImport::ncclArgumentsAndBusBandwidth()
{
    QTemporaryDir dir;
    const auto t = loadTrace(write(dir, QStringLiteral("r.json"), rankTrace(0, 2)).toStdString(), {});
    QCOMPARE(t->collectiveArgs.size(), std::size_t(1));
    const CollectiveArgs& ca = t->collectiveArgs[0];
    QCOMPARE(ca.collective, std::string("allreduce"));
    QCOMPARE(ca.inElements, std::uint64_t(1'000'000));
    QCOMPARE(ca.groupSize, 2);
    QCOMPARE(ca.processGroup, std::string("0 (default_pg)"));
    QCOMPARE(ca.groupRanks, std::string("[0, 1]"));
    const Lane* nccl = laneNamed(t->ranks[0], "CUDA[0:17]");
    QVERIFY(nccl);
    QCOMPARE(nccl->collectiveArgs.size(), std::size_t(1));
    QCOMPARE(nccl->collectiveArgs[0], std::make_pair(0u, 0u));
    // 4 MB all-reduce among 2 ranks in 30 us: algorithm bandwidth 4e6 / 30e-6 B/s, bus bandwidth x 2(n-1)/n = x 1.
    QCOMPARE(collectiveBytes(ca), std::uint64_t(4'000'000));
    QCOMPARE(busBandwidth(ca, 30e-6), 4e6 / 30e-6);
    CollectiveArgs eight = ca;
    eight.groupSize = 8;
    QCOMPARE(busBandwidth(eight, 1.0), 4e6 * 2.0 * 7.0 / 8.0);
    eight.collective = "allgather";
    QCOMPARE(busBandwidth(eight, 1.0), 4e6 * 7.0 / 8.0);
    eight.collective = "broadcast";
    QCOMPARE(busBandwidth(eight, 1.0), 4e6);
    eight.dtype = "mystery";
    QCOMPARE(busBandwidth(eight, 1.0), 0.0);
    QCOMPARE(dtypeBytes("BFloat16"), 2);
    QCOMPARE(dtypeBytes("Long"), 8);
}

void TestKinetoImport::cudaGraphKernelsShareTheirLaunch()
{
    // One cudaGraphLaunch inside the optimizer step runs three kernels: all carry the launch's correlation id, all
    // get its phase and step.
    const QByteArray extra = R"json(,
  {"ph": "X", "cat": "cpu_op", "name": "Optimizer.step#AdamW.step", "pid": 10, "tid": 10, "ts": 1070.0, "dur": 20.0},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 10, "tid": 10, "ts": 1071.0, "dur": 5.0,
   "args": {"correlation": 200}},
  {"ph": "X", "cat": "kernel", "name": "graph_kernel_a", "pid": 0, "tid": 7, "ts": 1080.0, "dur": 1.0, "args": {"device": 0, "stream": 7, "correlation": 200}},
  {"ph": "X", "cat": "kernel", "name": "graph_kernel_b", "pid": 0, "tid": 7, "ts": 1082.0, "dur": 1.0, "args": {"device": 0, "stream": 7, "correlation": 200}},
  {"ph": "X", "cat": "kernel", "name": "graph_kernel_c", "pid": 0, "tid": 7, "ts": 1084.0, "dur": 1.0, "args": {"device": 0, "stream": 7, "correlation": 200}})json";
    QTemporaryDir dir;
    const auto t = loadTrace(write(dir, QStringLiteral("g.json"), rankTrace(0, 1, true, extra)).toStdString(), {});
    const Lane* compute = laneNamed(t->ranks[0], "CUDA[0:7]");
    QVERIFY(compute);
    const auto& by = compute->launchByInterval; // the memcpy, two launched kernels, three from the graph
    QCOMPARE(by.size(), std::size_t(6));
    QCOMPARE(by[3].interval, by[4].interval);
    QCOMPARE(by[4].interval, by[5].interval);
    QVERIFY(by[2].interval != by[3].interval);
    const auto a = analyze(*t, Rules::defaults());
    QCOMPARE(a->ranks[0].launchPairing, LaunchPairing::CorrelationIds);
    QCOMPARE(a->ranks[0].kernelsPaired, std::uint64_t(6)); // with the NCCL kernel on stream 17
    const int lane = int(compute - t->ranks[0].lanes.data());
    for (std::size_t i = 3; i < 6; ++i) { // intervals 3..5 (interval 0 is the memcpy)
        QCOMPARE(a->ranks[0].phases[lane][i], Phase::Optimizer);
        QCOMPARE(stepOfInterval(*t, *a, { 0, lane, std::uint32_t(i) }), 0);
    }
    QVERIFY(t->warnings.empty());
}

void TestKinetoImport::progressCountsBytesAndCancelStops()
{
    QTemporaryDir dir;
    const QString a = write(dir, QStringLiteral("rank0.json"), rankTrace(0, 2));
    const QString b = write(dir, QStringLiteral("rank1.json.gz"), rankTrace(1, 2));
    const std::uint64_t total = std::uint64_t(QFileInfo(a).size() + QFileInfo(b).size());
    std::vector<LoadProgress> seen;
    LoadOptions o;
    o.progress = [&](const LoadProgress& p) { seen.push_back(p); };
    (void)loadTrace(dir.path().toStdString(), o);
    QVERIFY(!seen.empty());
    QCOMPARE(seen.back().bytesTotal, total);
    QCOMPARE(seen.back().bytesRead, total);
    for (std::size_t i = 1; i < seen.size(); ++i)
        QVERIFY(seen[i].bytesRead >= seen[i - 1].bytesRead);
    // A set cancel flag stops the read: LoadCancelled, nothing returned.
    std::atomic<bool> cancel { true };
    LoadOptions c;
    c.cancel = &cancel;
    QVERIFY_THROWS_EXCEPTION(LoadCancelled, (void)loadTrace(dir.path().toStdString(), c));
}

void TestKinetoImport::schema2021ReadsLikeTheCurrentOne()
{
    QTemporaryDir dir;
    const auto trace
        = loadTrace(write(dir, QStringLiteral("worker0.pt.trace.json"), rankTrace2021()).toStdString(), {});
    QCOMPARE(trace->ranks.size(), std::size_t(1));
    const Rank& r = trace->ranks[0];
    // The same lanes as the current schema: threads (named by metadata), then streams from "stream N" tids.
    QCOMPARE(testing::laneNames(r), (std::vector<std::string> { "python", "thread 11", "CUDA[0:7]", "CUDA[0:17]" }));
    const Lane& compute = r.lanes[2];
    QCOMPARE(compute.intervals.size(), std::size_t(4)); // memcpy, two GEMMs, memset
    QCOMPARE(compute.intervals.start(2), TimeNs(35'000)); // integer microseconds, exactly
    QCOMPARE(compute.intervals.duration(2), TimeNs(20'000));
    QCOMPARE(trace->regionKind(compute.intervals.name(0)), RegionKind::Memcpy);
    QCOMPARE(trace->regionKind(compute.intervals.name(3)), RegionKind::Memcpy);
    QCOMPARE(compute.copyBytes.size(), std::size_t(2));
    // Launches by correlation, per interval: the copy's id names no call; both GEMMs and the memset have theirs.
    QCOMPARE(compute.launchByInterval.size(), std::size_t(4));
    QCOMPARE(compute.launchByInterval[0].cpuLane, kUnknownLaunch);
    QCOMPARE(compute.launchByInterval[1].cpuLane, 0u);
    QCOMPARE(compute.launchByInterval[2].cpuLane, 1u);
    QCOMPARE(compute.launchByInterval[3].cpuLane, 0u);
    QCOMPARE(r.lanes[3].launchByInterval.size(), std::size_t(2));
    QCOMPARE(r.lanes[3].launchByInterval[1].cpuLane, 1u);
    QVERIFY(std::none_of(trace->warnings.begin(), trace->warnings.end(),
        [](const std::string& w) { return w.find("no launch call") != std::string::npos; }));
    // Steps from "ProfilerStep#4" (an Operator then), phases from the forward and backward ops.
    const auto a = analyze(*trace, Rules::defaults());
    QCOMPARE(a->ranks[0].launchPairing, LaunchPairing::CorrelationIds);
    QCOMPARE(a->ranks[0].stepSource, StepSource::Regions);
    QCOMPARE(a->ranks[0].steps.size(), std::size_t(1));
    QCOMPARE(a->ranks[0].phases[2][1], Phase::Forward);
    QCOMPARE(a->ranks[0].phases[2][2], Phase::Backward);
    // The NCCL kernels of 2021 by name: collective, algorithm, protocol and type.
    const NameClass ar = Rules::defaults().classify(trace->name(r.lanes[3].intervals.name(0)), RegionKind::Kernel);
    QCOMPARE(ar.category, Category::Communication);
    QCOMPARE(ar.collective, std::string("AllReduce"));
    QCOMPARE(ar.algorithm, std::string("RING"));
    QCOMPARE(ar.protocol, std::string("LL"));
    QCOMPARE(ar.dataType, std::string("float"));
    const NameClass sr = Rules::defaults().classify(trace->name(r.lanes[3].intervals.name(1)), RegionKind::Kernel);
    QCOMPARE(sr.collective, std::string("SendRecv"));
    QCOMPARE(sr.dataType, std::string("int8_t"));
    // Compute [5, 15) u [35, 55) us = 30 us; the all-reduce [45, 75) hides 10 of its 30 us, the send/recv 0 of 5.
    const auto s = computeStats(*trace, *a, 0, trace->extent);
    QCOMPARE(s.kernelCount, 4ull);
    QCOMPARE(s.commKernelCount, 2ull);
    QCOMPARE(s.computeBusyNs, TimeNs(30'000));
    QCOMPARE(s.commBusyNs, TimeNs(35'000));
    QCOMPARE(s.overlappedNs, TimeNs(10'000));
    QCOMPARE(s.exposedNs, TimeNs(25'000));
}

void TestKinetoImport::streamedAndInMemoryReadAlike()
{
    // Files of up to 128 MiB are decompressed whole and parsed in place, larger ones streamed: the same trace.
    QTemporaryDir dir;
    for (int r = 0; r < 4; ++r)
        write(dir, QStringLiteral("rank%1.json%2").arg(r).arg(r % 2 ? QStringLiteral(".gz") : QString()),
            rankTrace(r, 4));
    const auto whole = loadTrace(dir.path().toStdString(), {});
    std::shared_ptr<const Trace> streamed;
    {
        const WholeFileLimit limit("0");
        streamed = loadTrace(dir.path().toStdString(), {});
    }
    QCOMPARE(whole->ranks.size(), std::size_t(4));
    compareTraces(*whole, *streamed);
    if (QTest::currentTestFailed())
        return;

    // A gzip file of two members, the second a single newline: its trailer says 1 byte. Read whole, the content
    // outgrows twice a limit of 64 bytes, the file is rewound and streamed: the same trace, and progress starts
    // again from 0 without going past the file's size.
    QTemporaryDir two;
    const QString one = write(two, QStringLiteral("rank0.json.gz"), rankTrace(0, 1));
    QTemporaryDir nl;
    const QString newline = write(nl, QStringLiteral("nl.gz"), QByteArray("\n"));
    QFile f(one), g(newline);
    QVERIFY(f.open(QIODevice::Append) && g.open(QIODevice::ReadOnly));
    f.write(g.readAll());
    f.close();
    QTemporaryDir plain;
    write(plain, QStringLiteral("rank0.json"), rankTrace(0, 1) + "\n");
    const auto reference = loadTrace(plain.path().toStdString(), {});
    std::vector<LoadProgress> seen;
    LoadOptions o;
    o.progress = [&](const LoadProgress& p) { seen.push_back(p); };
    std::shared_ptr<const Trace> rewound;
    {
        const WholeFileLimit limit("64");
        rewound = loadTrace(two.path().toStdString(), o);
    }
    compareTraces(*reference, *rewound);
    QVERIFY(!seen.empty());
    for (const auto& p : seen)
        QVERIFY(p.bytesRead <= p.bytesTotal);
    // The rewind shows: progress went back to the file's start once.
    const auto back = std::adjacent_find(seen.begin(), seen.end(),
        [](const LoadProgress& a, const LoadProgress& b) { return b.bytesRead < a.bytesRead; });
    QVERIFY(back != seen.end());
    QCOMPARE(std::next(back)->bytesRead, std::uint64_t(0));

    // Under the default limit the same two-member file is read whole at once; its trailer understates the content,
    // so zlib reads it instead of libdeflate: the same trace. So is a file with bytes after its one member (which
    // zlib ignores), and a gzip file whose content is exactly its trailer's size (the libdeflate path).
    compareTraces(*reference, *loadTrace(two.path().toStdString(), {}));
    QTemporaryDir tail;
    const QString tailed = write(tail, QStringLiteral("rank0.json.gz"), rankTrace(0, 1) + "\n");
    QFile t(tailed);
    QVERIFY(t.open(QIODevice::Append));
    t.write("not gzip");
    t.close();
    compareTraces(*reference, *loadTrace(tail.path().toStdString(), {}));
    QTemporaryDir exact;
    write(exact, QStringLiteral("rank0.json.gz"), rankTrace(0, 1) + "\n");
    compareTraces(*reference, *loadTrace(exact.path().toStdString(), {}));
}

void TestKinetoImport::parallelReadingGivesTheSameTrace()
{
    // Eight ranks read one after another and on four threads: the same trace, interval for interval.
    QTemporaryDir dir;
    for (int r = 0; r < 8; ++r)
        write(dir, QStringLiteral("rank%1.json%2").arg(r).arg(r % 2 ? QStringLiteral(".gz") : QString()),
            rankTrace(r, 8));
    LoadOptions one, four;
    one.threads = 1;
    four.threads = 4;
    std::vector<LoadProgress> seen;
    std::mutex m;
    four.progress = [&](const LoadProgress& p) {
        std::lock_guard lock(m);
        seen.push_back(p);
    };
    const auto a = loadTrace(dir.path().toStdString(), one);
    const auto b = loadTrace(dir.path().toStdString(), four);
    QCOMPARE(a->ranks.size(), std::size_t(8));
    QCOMPARE(a->collectiveArgs.size(), std::size_t(8));
    for (std::size_t r = 0; r < 8; ++r)
        QCOMPARE(a->ranks[r].rank, int(r));
    compareTraces(*a, *b);
    if (QTest::currentTestFailed())
        return;
    // Progress from the reading threads, counting bytes up to the total.
    QVERIFY(!seen.empty());
    QCOMPARE(seen.back().bytesRead, seen.back().bytesTotal);
    for (const auto& p : seen)
        QVERIFY(p.bytesRead <= p.bytesTotal);
}

QTEST_APPLESS_MAIN(TestKinetoImport)
#include "tst_kinetoimport.moc"
