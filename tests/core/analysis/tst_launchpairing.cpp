// SPDX-License-Identifier: GPL-3.0-or-later
// Launch pairing by correlation id on a generated torch.profiler trace: CUDA graph launches that replay kernels and a
// memset on two streams, a multi-device launch that starts two kernels, kernels without a launch record. Exact
// per-step kernel counts, the pairing both ways, the launch diagnosis and the idle split by the launching call.
#include "analysis/analysis.h"
#include "analysis/statsparts.h"
#include "mpi/wire.h"
#include "report/statsreport.h"
#include "run/openrun.h"
#include "support/kinetotraces.h"

#include <QTemporaryDir>
#include <QTest>
#include <vector>

using namespace exposure;
using namespace exposure::mpi;
using namespace exposure::testing;

namespace {

// Times in µs. Steps [0, 100) and [100, 200) on the main thread. GPU work on streams 7 and 20:
//   orphan      [1, 3)      stream 7, correlation 999: no call in the trace (before the step's first launch)
//   corr 1  cudaLaunchKernel [10, 15)              -> gemm_a [20, 30) s7
//   corr 2  cudaGraphLaunch  [40, 60)              -> g_k1 [70, 80) s7, memset [80, 85) s7, g_k2 [85, 105) s20,
//                                                     g_k3 [110, 120) s7 (runs in step 1, launched in step 0)
//   corr 3  cudaLaunchCooperativeKernelMultiDevice [90, 100) -> coop_k [125, 130) on s7 and on s20
//   corr 4  cudaGraphLaunch  [140, 150)            -> g_k1 [160, 170) s7, g_k2 [165, 175) s20, memset [175, 178) s20
//   corr 5  cudaLaunchKernel [180, 184)            -> gemm_b [190, 195) s7
//   orphan2     [200, 202)  stream 7, correlation 998: no call; outside every step
QByteArray graphTrace()
{
    auto cpu = [](const char* name, int ts, int dur, int corr) -> QByteArray {
        return QByteArray(R"(  {"ph": "X", "cat": "cuda_runtime", "name": ")") + name
            + R"(", "pid": 1, "tid": 1, "ts": )" + QByteArray::number(ts) + R"(, "dur": )" + QByteArray::number(dur)
            + R"(, "args": {"correlation": )" + QByteArray::number(corr) + "}},\n";
    };
    auto gpu = [](const char* cat, const char* name, int stream, int ts, int dur, int corr) -> QByteArray {
        return QByteArray(R"(  {"ph": "X", "cat": ")") + cat + R"(", "name": ")" + name + R"(", "pid": 0, "tid": )"
            + QByteArray::number(stream) + R"(, "ts": )" + QByteArray::number(ts) + R"(, "dur": )"
            + QByteArray::number(dur) + R"(, "args": {"device": 0, "stream": )" + QByteArray::number(stream)
            + R"(, "correlation": )" + QByteArray::number(corr) + "}},\n";
    };
    QByteArray e;
    e += R"(  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1, "ts": 0, "dur": 100},)"
         "\n";
    e += R"(  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 100, "dur": 100},)"
         "\n";
    // Each launch call (none for the orphans) with the GPU work of its correlation id, in time order.
    struct Work
    {
        const char* cat;
        const char* name;
        int stream, ts, dur;
    };
    struct Launch
    {
        const char* call; // nullptr: no call in the trace
        int ts, dur, corr;
        std::vector<Work> work;
    };
    const Launch launches[] = {
        { nullptr, 0, 0, 999, { { "kernel", "orphan", 7, 1, 2 } } },
        { "cudaLaunchKernel", 10, 5, 1, { { "kernel", "gemm_a", 7, 20, 10 } } },
        { "cudaGraphLaunch", 40, 20, 2,
            { { "kernel", "g_k1", 7, 70, 10 }, { "gpu_memset", "Memset (Device)", 7, 80, 5 },
                { "kernel", "g_k2", 20, 85, 20 }, { "kernel", "g_k3", 7, 110, 10 } } },
        { "cudaLaunchCooperativeKernelMultiDevice", 90, 10, 3,
            { { "kernel", "coop_k", 7, 125, 5 }, { "kernel", "coop_k", 20, 125, 5 } } },
        { "cudaGraphLaunch", 140, 10, 4,
            { { "kernel", "g_k1", 7, 160, 10 }, { "kernel", "g_k2", 20, 165, 10 },
                { "gpu_memset", "Memset (Device)", 20, 175, 3 } } },
        { "cudaLaunchKernel", 180, 4, 5, { { "kernel", "gemm_b", 7, 190, 5 } } },
        { nullptr, 0, 0, 998, { { "kernel", "orphan2", 7, 200, 2 } } },
    };
    for (const Launch& l : launches)
        if (l.call)
            e += cpu(l.call, l.ts, l.dur, l.corr);
    for (const Launch& l : launches)
        for (const Work& w : l.work)
            e += gpu(w.cat, w.name, w.stream, w.ts, w.dur, l.corr);
    e.chop(2); // the last ",\n"
    return QByteArray("{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n") + e + "\n  ]\n}\n";
}

constexpr TimeNs us = 1000;

int laneOf(const Rank& r, const std::string& name)
{
    for (std::size_t i = 0; i < r.lanes.size(); ++i)
        if (r.lanes[i].name == name)
            return int(i);
    return -1;
}

} // namespace

class TestLaunchPairing : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void everyKernelHasItsCall();
    void stepsHoldTheKernelsLaunchedInThem();
    void callsKnowWhatTheyLaunched();
    void graphKernelsKnowTheirReplay();
    void diagnosisCountsGraphsApart();
    void idleSplitByTheLaunchingCall();
    void reportSaysHowManyEachCallLaunched();
    void scorepStaysInOrder();

private:
    QTemporaryDir m_dir;
    std::shared_ptr<const Trace> m_trace;
    std::shared_ptr<const Analysis> m_analysis;
};

void TestLaunchPairing::initTestCase()
{
    m_trace = loadTrace(write(m_dir, QStringLiteral("graphs.json"), graphTrace()).toStdString(), {});
    m_analysis = analyze(*m_trace, Rules::defaults());
    QCOMPARE(m_trace->ranks.size(), std::size_t(1));
}

void TestLaunchPairing::everyKernelHasItsCall()
{
    const RankAnalysis& ra = m_analysis->ranks[0];
    QCOMPARE(ra.launchPairing, LaunchPairing::CorrelationIds);
    QCOMPARE(std::string(launchPairingName(ra.launchPairing)), std::string("correlation ids"));
    QCOMPARE(ra.kernelsPaired, std::uint64_t(9)); // every kernel but the two without a call
    QCOMPARE(ra.kernelsUnpaired, std::uint64_t(2));
    QVERIFY(ra.warnings.empty()); // the importer, not the pairing, reports the calls missing from the trace
    QCOMPARE(m_trace->warnings.size(), std::size_t(1));
    QCOMPARE(m_trace->warnings[0], std::string("graphs.json: 2 kernels have no launch call with their correlation id"));
}

void TestLaunchPairing::stepsHoldTheKernelsLaunchedInThem()
{
    const RankAnalysis& ra = m_analysis->ranks[0];
    QCOMPARE(ra.steps.size(), std::size_t(2));
    const auto steps = computeStepStats(*m_trace, *m_analysis, 0);
    // Steps on the GPU's time axis: step 0's window runs to the end of the work launched in its host step (coop_k
    // at 130 µs), step 1's from there to gemm_b's end. Step 0: gemm_a, the three kernels of the first graph (g_k3
    // runs after the host step ended) and the two of the multi-device launch; the orphan, with no call and ahead of
    // the stream's first launched work, counts as launched before recording (no step). Step 1: the second graph's
    // two, gemm_b.
    QCOMPARE(steps[0].kernelCount, std::uint64_t(6));
    QCOMPARE(steps[1].kernelCount, std::uint64_t(3));
    QCOMPARE(m_analysis->ranks[0].steps[0].range, (TimeRange { 3 * us, 130 * us }));
    QCOMPARE(m_analysis->ranks[0].steps[1].range, (TimeRange { 130 * us, 195 * us }));
    const int s7 = laneOf(m_trace->ranks[0], "CUDA[0:7]");
    QCOMPARE(stepOfInterval(*m_trace, *m_analysis, { 0, s7, 4 }), 0); // g_k3 at 110 µs
    QCOMPARE(stepOfInterval(*m_trace, *m_analysis, { 0, s7, 5 }), 0); // coop_k at 125 µs
    QCOMPARE(stepOfInterval(*m_trace, *m_analysis, { 0, s7, 8 }), -1); // orphan2: no call, outside every step
}

void TestLaunchPairing::callsKnowWhatTheyLaunched()
{
    const LaunchTable& lt = m_analysis->ranks[0].launchCalls;
    QCOMPARE(lt.calls.size(), std::size_t(5));
    QCOMPARE(lt.work.size(), std::size_t(11)); // 9 kernels and 2 memsets
    using Bucket = std::pair<std::uint32_t, std::uint64_t>;
    const std::vector<Bucket> hist = lt.kernelsPerCall();
    QCOMPARE(hist, (std::vector<Bucket> { { 1, 2 }, { 2, 2 }, { 3, 1 } }));
    // The first graph launch (the second call of the main thread): g_k1, memset, g_k2, g_k3 in start order.
    const Rank& rank = m_trace->ranks[0];
    const int s7 = laneOf(rank, "CUDA[0:7]"), s20 = laneOf(rank, "CUDA[0:20]");
    const LaunchCall& g = lt.calls[1];
    QVERIFY(g.graph);
    QCOMPARE(g.workCount, 4u);
    QCOMPARE(g.kernels, 3u);
    QCOMPARE(rank.lanes[g.call.cpuLane].intervals.start(g.call.interval), 40 * us);
    const std::vector<IntervalRef> work(lt.work.begin() + g.firstWork, lt.work.begin() + g.firstWork + g.workCount);
    QCOMPARE(work, (std::vector<IntervalRef> { { 0, s7, 2 }, { 0, s7, 3 }, { 0, s20, 0 }, { 0, s7, 4 } }));
    QVERIFY(!lt.calls[2].graph); // the multi-device launch: two kernels, no graph
    QCOMPARE(lt.calls[2].kernels, 2u);
    QCOMPARE(lt.find(LaunchRef { g.call.cpuLane, g.call.interval }), &g);
    QCOMPARE(lt.find(LaunchRef { g.call.cpuLane, 0 }), nullptr); // ProfilerStep#0 launched nothing
}

void TestLaunchPairing::graphKernelsKnowTheirReplay()
{
    const int s7 = laneOf(m_trace->ranks[0], "CUDA[0:7]");
    const auto w = launchOfWork(*m_analysis, { 0, s7, 4 }); // g_k3
    QVERIFY(w);
    QVERIFY(w->graph);
    QCOMPARE(w->node, 3u);
    QCOMPARE(w->nodes, 4u);
    QCOMPARE(m_trace->ranks[0].lanes[std::size_t(w->call.lane)].intervals.start(w->call.interval), 40 * us);
    QVERIFY(!launchOfWork(*m_analysis, { 0, s7, 0 })); // orphan
    const auto gemm = launchOfWork(*m_analysis, { 0, s7, 1 });
    QVERIFY(gemm && !gemm->graph);
    QCOMPARE(gemm->nodes, 1u);
}

void TestLaunchPairing::diagnosisCountsGraphsApart()
{
    const LaunchDiagnosis d = diagnoseLaunches(*m_trace, *m_analysis, 0, m_trace->extent);
    QCOMPARE(d.kernels, std::uint64_t(4)); // gemm_a, the two coop_k, gemm_b
    QCOMPARE(d.calls, std::uint64_t(5));
    QCOMPARE(d.multiKernelCalls, std::uint64_t(3));
    QCOMPARE(d.multiKernelKernels, std::uint64_t(7));
    QCOMPARE(d.maxKernelsPerCall, 3u);
    QCOMPARE(d.graphLaunches, std::uint64_t(2));
    QCOMPARE(d.graphKernels, std::uint64_t(5));
    // gemm_a 10 µs vs a 5 µs call, coop_k 5 µs vs 10 µs (twice), gemm_b 5 µs vs 4 µs: two of four are shorter.
    QCOMPARE(d.shorterThanLaunch, 0.5);
}

void TestLaunchPairing::idleSplitByTheLaunchingCall()
{
    // Gaps (µs) and the call that launched the work after each: [3,20) gemm_a's call ended at 15: 12 before, 5 after;
    // [30,70) graph ended at 60: 30 / 10; [105,110) g_k3, graph ended at 60: 0 / 5; [120,125) coop, ended at 100:
    // 0 / 5; [130,160) second graph ended at 150: 20 / 10; [178,190) gemm_b's call ended at 184: 6 / 6;
    // [195,200) orphan2 has no call: unattributed.
    const IdleBreakdown b = computeIdleBreakdown(*m_trace, *m_analysis, 0, m_trace->extent);
    QCOMPARE(b.gaps, std::uint64_t(7));
    QCOMPARE(b.hostBoundNs, 68 * us);
    QCOMPARE(b.queuedNs, 41 * us);
    QCOMPARE(b.unattributedNs, 5 * us);
    QCOMPARE(b.syncWaitNs, TimeNs(0));
    QCOMPARE(computeStats(*m_trace, *m_analysis, 0, m_trace->extent).idleNs, 114 * us);
    // Over step 1's GPU window [130, 195): the gaps cut to it, [130,160) 20 / 10 and [178,190) 6 / 6.
    const IdleBreakdown s1 = sumIdleGaps(idleGapsCut(*m_trace, *m_analysis, 0, m_analysis->ranks[0].steps[1].range));
    QCOMPARE(s1.hostBoundNs, 26 * us);
    QCOMPARE(s1.queuedNs, 16 * us);
    QCOMPARE(s1.unattributedNs, TimeNs(0));
}

void TestLaunchPairing::reportSaysHowManyEachCallLaunched()
{
    StatsReportOptions o;
    o.window = m_trace->extent;
    using Bucket = std::pair<std::uint32_t, std::uint64_t>;
    const RankReport r = rankReport(*m_trace, *m_analysis, 0, o, false);
    QCOMPARE(r.kernelsPerCall, (std::vector<Bucket> { { 1, 2 }, { 2, 2 }, { 3, 1 } }));
    QCOMPARE(deserializeRankReport(serialize(r)).kernelsPerCall, r.kernelsPerCall); // exposure-mpi carries it
    QCOMPARE(deserializeRankReport(serialize(r)).launches.graphKernels, std::uint64_t(5));
    const std::string json = statsJson(*m_trace, *m_analysis, o);
    QVERIFY(json.find("\"launch_pairing\": \"correlation ids\",") != std::string::npos);
    QVERIFY(json.find("\"kernels_per_call\": {\"1\": 2, \"2\": 2, \"3\": 1},") != std::string::npos);
    QVERIFY(json.find("\"graph_launches\": 2, \"graph_kernels\": 5}") != std::string::npos);
    const std::string table = statsTable(*m_trace, *m_analysis, o);
    QVERIFY(table.find("launches paired by correlation ids, 9 of 11 kernels; calls by kernels launched: 2 × 1, 2 × 2, "
                       "1 × 3)")
        != std::string::npos);
    QVERIFY(table.find("calls that launched several kernels: 3 of 5 (7 kernels, up to 3 per call); CUDA graph launches "
                       "2 replaying 5 kernels")
        != std::string::npos);
}

void TestLaunchPairing::scorepStaysInOrder()
{
    // Without correlation ids (stream references, one kernel per launch) the in-order pairing is kept.
    TraceBuilder b;
    const int r = b.addRank("Rank 0");
    const int cpu = b.addLane(r, "Master thread", LaneKind::CpuThread);
    const int gpu = b.addLane(r, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
    const auto l0 = b.addInterval(r, cpu, 0, 10, "cuLaunchKernel", RegionKind::HostApi);
    const auto l1 = b.addInterval(r, cpu, 20, 30, "cuLaunchKernel", RegionKind::HostApi);
    b.addInterval(r, gpu, 15, 25, "gemm", RegionKind::Kernel);
    b.addInterval(r, gpu, 35, 45, "gemm", RegionKind::Kernel);
    b.addLaunch(r, gpu, cpu, l0);
    b.addLaunch(r, gpu, cpu, l1);
    const auto t = b.finish();
    const auto a = analyze(*t, Rules::defaults());
    QCOMPARE(a->ranks[0].launchPairing, LaunchPairing::StreamReferences);
    QCOMPARE(a->ranks[0].kernelsPaired, std::uint64_t(2));
    QCOMPARE(a->ranks[0].launchCalls.calls.size(), std::size_t(2));
    QCOMPARE(
        a->ranks[0].launchCalls.kernelsPerCall(), (std::vector<std::pair<std::uint32_t, std::uint64_t>> { { 1, 2 } }));
    const auto w = launchOfWork(*a, { 0, gpu, 1 });
    QVERIFY(w);
    QCOMPARE(w->call, (IntervalRef { 0, cpu, l1 }));
}

QTEST_APPLESS_MAIN(TestLaunchPairing)
#include "tst_launchpairing.moc"
