// SPDX-License-Identifier: GPL-3.0-or-later
// What-if replay on generated traces with exact expected step times and critical paths.
#include "analysis/analysis.h"
#include "support/whatiftraces.h"
#include "whatif/whatif.h"

#include <QTest>

using namespace exposure;
using namespace exposure::whatif;

namespace {

using testing::kUs;
const char* kGemm = testing::kWhatIfGemm;
const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

struct Built
{
    std::shared_ptr<Trace> trace;
    std::shared_ptr<const Analysis> analysis;
};

Built withAnalysis(std::shared_ptr<Trace> trace)
{
    Built out;
    out.trace = std::move(trace);
    out.analysis = analyze(*out.trace, Rules::defaults());
    return out;
}

Built cpuBound()
{
    return withAnalysis(testing::launchBoundSteps());
}

Built gpuBound()
{
    return withAnalysis(testing::gpuBoundSteps());
}

// Two ranks, 800 µs steps: a GEMM (200 µs on rank 0, 600 µs on rank 1, the straggler), then an all-reduce on a
// second stream that starts when the GEMM ends and transfers for 100 µs once rank 1 has arrived; the host waits for
// it in a stream synchronize that returns 10 µs later, then has 70 µs of its own.
Built straggler()
{
    TraceBuilder b;
    for (int r = 0; r < 2; ++r) {
        b.addRank("Rank " + std::to_string(r), "node0", r);
        const int cpu = b.addLane(r, "Master thread", LaneKind::CpuThread);
        const int compute = b.addLane(r, "CUDA[" + std::to_string(r) + ":7]", LaneKind::GpuStream, r, 7);
        const int comm = b.addLane(r, "CUDA[" + std::to_string(r) + ":17]", LaneKind::GpuStream, r, 17);
        const TimeNs c = (r == 0 ? 200 : 600) * kUs;
        for (int k = 0; k < 3; ++k) {
            const TimeNs B = k * 800 * kUs;
            b.addInterval(r, cpu, B, B + 800 * kUs, "ProfilerStep#" + std::to_string(k), RegionKind::HostRegion, 0);
            const auto l1 = b.addInterval(r, cpu, B, B + 10 * kUs, "cudaLaunchKernel", RegionKind::HostApi, 1);
            const auto l2
                = b.addInterval(r, cpu, B + 10 * kUs, B + 20 * kUs, "cudaLaunchKernel", RegionKind::HostApi, 1);
            b.addInterval(r, cpu, B + 20 * kUs, B + 730 * kUs, "cudaStreamSynchronize", RegionKind::HostApi, 1);
            b.addInterval(r, compute, B + 20 * kUs, B + 20 * kUs + c, kGemm, RegionKind::Kernel);
            b.addInterval(r, comm, B + 20 * kUs + c, B + 720 * kUs, kAllReduce, RegionKind::Kernel);
            b.addLaunch(r, compute, cpu, l1);
            b.addLaunch(r, comm, cpu, l2);
        }
    }
    return withAnalysis(b.finish());
}

// The slow-loader run: one rank, 1000 µs steps. A 400 µs DataLoader region, then two 20 µs launches: a 270 µs GEMM
// on stream 7 at +430 and a 500 µs GEMM on stream 9 at +450; a stream synchronize from +440 returns at +720, when the
// first GEMM has ended (+700) but the second has not (+950): the synchronize waited for stream 7 only. The graph
// lets a synchronising call wait for the last work on every stream, calibrated to the recording: the edge from the
// second GEMM's end has the gap 720 - 950 = -230 µs, and it decides the synchronize's end.
Built slowLoader()
{
    TraceBuilder b;
    b.addRank("Rank 0");
    const int cpu = b.addLane(0, "Master thread", LaneKind::CpuThread);
    const int s7 = b.addLane(0, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
    const int s9 = b.addLane(0, "CUDA[0:9]", LaneKind::GpuStream, 0, 9);
    for (int k = 0; k < 3; ++k) {
        const TimeNs B = k * 1000 * kUs;
        b.addInterval(0, cpu, B, B + 1000 * kUs, "ProfilerStep#" + std::to_string(k), RegionKind::HostRegion, 0);
        b.addInterval(0, cpu, B, B + 400 * kUs, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            RegionKind::HostRegion, 1);
        const auto l1 = b.addInterval(0, cpu, B + 400 * kUs, B + 420 * kUs, "cudaLaunchKernel", RegionKind::HostApi, 1);
        const auto l2 = b.addInterval(0, cpu, B + 420 * kUs, B + 440 * kUs, "cudaLaunchKernel", RegionKind::HostApi, 1);
        b.addInterval(0, cpu, B + 440 * kUs, B + 720 * kUs, "cudaStreamSynchronize", RegionKind::HostApi, 1);
        b.addInterval(0, s7, B + 430 * kUs, B + 700 * kUs, kGemm, RegionKind::Kernel);
        b.addInterval(0, s9, B + 450 * kUs, B + 950 * kUs, kGemm, RegionKind::Kernel);
        b.addLaunch(0, s7, cpu, l1);
        b.addLaunch(0, s9, cpu, l2);
    }
    return withAnalysis(b.finish());
}

TimeNs part(const PathSums& p, PathPart k)
{
    return p.ns[std::size_t(k)];
}

} // namespace

class TestWhatIf : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // Without edits every event of every test trace replays at its recorded time.
    void replayReproducesTheRecording()
    {
        for (const Built& t : { cpuBound(), gpuBound(), straggler() }) {
            const CollectiveMatch match = matchCollectives(*t.trace, *t.analysis);
            const Graph g = buildGraph(*t.trace, *t.analysis, match);
            const Replay r = replay(g, recordedPlan(g));
            QCOMPARE(r.forced, std::size_t(0));
            for (std::uint32_t n = 0; n < g.nodeCount(); ++n) {
                QCOMPARE(r.start(n), g.recStart[n]);
                QCOMPARE(r.end(n), g.recEnd[n]);
            }
        }
    }

    void cpuBoundShrinksByTheRemovedCost()
    {
        const Built t = cpuBound();
        const WhatIfModel model(t.trace, t.analysis);
        Edits e;
        e.regions.push_back({ "^inject$", 0.0 });
        const WhatIfResult res = model.evaluate(e);
        QCOMPARE(res.ranks.size(), std::size_t(1));
        const RankWhatIf& r = res.ranks[0];
        QCOMPARE(r.steps.size(), std::size_t(3));
        QCOMPARE(r.measuredMean, 1000 * kUs);
        QCOMPARE(r.replayMean, 1000 * kUs);
        QCOMPARE(r.predictedMean, 600 * kUs);
        QCOMPARE(r.maxStepErrorPercent, 0.0);
        // Replay: the step's own host time 500 + inject 400 + two launches 100.
        QCOMPARE(part(r.replayPath, PathPart::Host), 900 * kUs);
        QCOMPARE(part(r.replayPath, PathPart::Launch), 100 * kUs);
        QCOMPARE(r.replayPath.total(), 1000 * kUs);
        QCOMPARE(part(r.predictedPath, PathPart::Host), 500 * kUs);
        QCOMPARE(part(r.predictedPath, PathPart::Launch), 100 * kUs);
        QCOMPARE(part(r.predictedPath, PathPart::Compute), TimeNs(0));
        // Launch calls twice as fast on top: 50 µs less.
        e.launchFactor = 2.0;
        QCOMPARE(model.evaluate(e).ranks[0].predictedMean, 550 * kUs);
    }

    // Removing the DataLoader: the step shrinks by its 400 µs. The critical path crosses the synchronize's edge with
    // the negative gap (its end is decided 230 µs before the GEMM it follows ends); it used to count that GEMM's last
    // 230 µs twice, as compute and as -230 µs of latency. Every instant now goes to one part: none is negative and
    // they add up to the step.
    void slowLoaderCriticalPathAddsUp()
    {
        const Built t = slowLoader();
        const WhatIfModel model(t.trace, t.analysis);
        Edits e;
        e.regions.push_back({ "DataLoader", 0.0 });
        const WhatIfResult res = model.evaluate(e);
        const RankWhatIf& r = res.ranks[0];
        QCOMPARE(r.replayMean, 1000 * kUs);
        QCOMPARE(r.predictedMean, 600 * kUs);
        for (const PathSums* p : { &r.replayPath, &r.predictedPath }) {
            for (const TimeNs v : p->ns)
                QVERIFY2(v >= 0, qPrintable(QString::number(v)));
            QCOMPARE(p->total(), p == &r.replayPath ? r.replayMean : r.predictedMean);
            // The host after the synchronize (280), the GEMM on stream 9 up to the synchronize's end (270), its
            // launch latency (30) and launch call (20); before it, the DataLoader (replay only).
            QCOMPARE(part(*p, PathPart::Compute), 270 * kUs);
            QCOMPARE(part(*p, PathPart::Latency), 30 * kUs);
        }
        QCOMPARE(part(r.predictedPath, PathPart::Host) + part(r.predictedPath, PathPart::Launch)
                + part(r.predictedPath, PathPart::Sync),
            300 * kUs);
        QCOMPARE(part(r.replayPath, PathPart::Host) + part(r.replayPath, PathPart::Launch)
                + part(r.replayPath, PathPart::Sync) + part(r.replayPath, PathPart::Other),
            700 * kUs);
        for (const StepTimes& s : r.steps)
            QCOMPARE(s.number, s.index); // ProfilerStep#k: numbered k
    }

    void gpuBoundGainsNothingFromHostCost()
    {
        const Built t = gpuBound();
        const WhatIfModel model(t.trace, t.analysis);
        Edits e;
        e.regions.push_back({ "inject", 0.0 });
        const RankWhatIf r = model.evaluate(e).ranks[0];
        QCOMPARE(r.measuredMean, 1050 * kUs);
        QCOMPARE(r.replayMean, 1050 * kUs);
        QCOMPARE(r.predictedMean, 1050 * kUs);
        // The kernel decides the step: latency 100 + compute 900 + the synchronize's own 50.
        QCOMPARE(part(r.predictedPath, PathPart::Latency), 100 * kUs);
        QCOMPARE(part(r.predictedPath, PathPart::Compute), 900 * kUs);
        QCOMPARE(part(r.predictedPath, PathPart::Sync), 50 * kUs);
        QCOMPARE(part(r.predictedPath, PathPart::Host), TimeNs(0));
        QCOMPARE(r.predictedPath.total(), 1050 * kUs);

        // Twice-as-fast GEMMs: the kernel (450 µs) ends before the host reaches the synchronize, so the host decides:
        // launch 50 + inject 600 + synchronize 50.
        Edits fast;
        fast.gpu.push_back({ "gemm", 0.5 });
        const RankWhatIf f = model.evaluate(fast).ranks[0];
        QCOMPARE(f.predictedMean, 700 * kUs);
        QCOMPARE(part(f.predictedPath, PathPart::Host), 600 * kUs);
        QCOMPARE(part(f.predictedPath, PathPart::Launch), 50 * kUs);
        QCOMPARE(part(f.predictedPath, PathPart::Sync), 50 * kUs);
        QCOMPARE(part(f.predictedPath, PathPart::Compute), TimeNs(0));
    }

    void removingTheSyncLetsTheHostRunAhead()
    {
        const Built t = gpuBound();
        const WhatIfModel model(t.trace, t.analysis);
        Edits e;
        e.noSync = true;
        const RankWhatIf r = model.evaluate(e).ranks[0];
        // The step is the host's launch 50 + inject 600; the synchronize is gone.
        QCOMPARE(r.predictedMean, 650 * kUs);
        QCOMPARE(part(r.predictedPath, PathPart::Sync), TimeNs(0));
        // The predicted trace: step 1 starts at 650 µs, its kernel waits for kernel 0 (ends at 1000 µs).
        const auto p = model.predictedTrace(e);
        const IntervalTable& cpu = p->ranks[0].lanes[0].intervals;
        const IntervalTable& gpu = p->ranks[0].lanes[1].intervals;
        QCOMPARE(cpu.start(4), 650 * kUs); // ProfilerStep#1 (after step 0's four intervals)
        QCOMPARE(gpu.start(1), 1000 * kUs);
        QCOMPARE(gpu.end(1), 1900 * kUs);
    }

    // The predicted trace keeps every lane's side tables: the launches by correlation id (torch.profiler) decide the
    // phases of the predicted timeline as of the recorded one.
    void predictedTraceKeepsLaunchesByCorrelationId()
    {
        auto trace = testing::threeSteps(1000 * kUs, [](TraceBuilder& b, int cpu, int gpu, TimeNs B) {
            const auto l = b.addInterval(0, cpu, B, B + 50 * kUs, "cudaLaunchKernel", RegionKind::HostApi, 1);
            const auto k = b.addInterval(0, gpu, B + 60 * kUs, B + 500 * kUs, testing::kWhatIfGemm, RegionKind::Kernel);
            b.setLaunchOf(0, gpu, k, cpu, l);
        });
        const Built t = withAnalysis(trace);
        const WhatIfModel model(t.trace, t.analysis);
        const auto p = model.predictedTrace({});
        const Lane& recorded = t.trace->ranks[0].lanes[1];
        const Lane& predicted = p->ranks[0].lanes[1];
        QCOMPARE(recorded.launchByInterval.size(), std::size_t(3));
        QCOMPARE(predicted.launchByInterval.size(), std::size_t(3));
        for (std::size_t i = 0; i < 3; ++i) {
            QCOMPARE(predicted.launchByInterval[i].cpuLane, recorded.launchByInterval[i].cpuLane);
            QCOMPARE(predicted.launchByInterval[i].interval, recorded.launchByInterval[i].interval);
            QCOMPARE(predicted.intervals.start(i), recorded.intervals.start(i)); // no edits: the same times
        }
    }

    void lateMemberDecidesTheCollective()
    {
        const Built t = straggler();
        const WhatIfModel model(t.trace, t.analysis);
        QCOMPARE(model.evaluate({}).groups, std::size_t(3));
        const WhatIfResult res = model.evaluate({});
        for (const RankWhatIf& r : res.ranks) {
            QCOMPARE(r.measuredMean, 800 * kUs);
            QCOMPARE(r.replayMean, 800 * kUs);
        }
        // Rank 0's step waits for rank 1's GEMM: host 70 + sync 10 + transfer 100 + rank 1's GEMM 600 + its launch
        // latency 20; 620 of it on rank 1.
        const PathSums& p = res.ranks[0].replayPath;
        QCOMPARE(part(p, PathPart::Host), 70 * kUs);
        QCOMPARE(part(p, PathPart::Sync), 10 * kUs);
        QCOMPARE(part(p, PathPart::Communication), 100 * kUs);
        QCOMPARE(part(p, PathPart::Compute), 600 * kUs);
        QCOMPARE(part(p, PathPart::Latency), 20 * kUs);
        QCOMPARE(p.otherRanksNs, 620 * kUs);
    }

    // The straggler what-if on the same job: evened, both GEMMs take their mean (400 us), and a step takes
    // 20 + 400 + 100 + 10 + 70 = 600 us against 800 recorded; rank 1 (and the GEMM) alone bring it back to 800.
    void evenedJobAndItsStraggler()
    {
        const Built t = straggler();
        const WhatIfModel model(t.trace, t.analysis);
        const EvenResult e = model.even(2);
        QCOMPARE(e.recordedMean, 800 * kUs);
        QCOMPARE(e.evenedMean, 600 * kUs);
        QCOMPARE(e.slowdown, 800.0 / 600.0);
        QCOMPARE(e.steps.size(), std::size_t(3));
        for (const auto& s : e.steps)
            QCOMPARE(s.slowdown, 800.0 / 600.0);
        QCOMPARE(e.by.size(), std::size_t(2)); // rank and op (no coordinates)
        QCOMPARE(e.by[0].first, std::string("rank"));
        QCOMPARE(e.by[0].second[0].name, std::string("1"));
        QCOMPARE(e.by[0].second[0].slowdown, 800.0 / 600.0);
        QCOMPARE(e.by[0].second[0].ownRatio, 600.0 / 400.0);
        QCOMPARE(e.by[0].second[1].name, std::string("0"));
        QCOMPARE(e.by[0].second[1].slowdown, 1.0);
        QCOMPARE(e.by[1].first, std::string("op"));
        QCOMPARE(e.by[1].second[0].name, std::string(kGemm));
        QCOMPARE(e.by[1].second[0].slowdown, 800.0 / 600.0);
        QCOMPARE(e.by[1].second[1].slowdown, 1.0);
        QCOMPARE(e.replays, std::size_t(2 + 2 + 2));
        const std::string text = evenTable(e);
        QVERIFY2(text.find("slowdown 1.333") != std::string::npos, text.c_str());
        QVERIFY(text.find("rank: rank 1 alone costs 33.3 % (its compute takes 1.50× the typical time)")
            != std::string::npos);
        QVERIFY(
            evenJson(e).find("\"slowdown_by\": {\"rank\": {\"1\": 1.333333, \"0\": 1.000000}") != std::string::npos);
    }

    // Random jitter only (the GPU-bound fixture's kernels all alike): the slowdown is 1.
    void evenWithoutStragglerIsOne()
    {
        const Built t = gpuBound();
        const WhatIfModel model(t.trace, t.analysis);
        const EvenResult e = model.even(1);
        QVERIFY2(std::abs(e.slowdown - 1.0) < 0.01, qPrintable(QString::number(e.slowdown)));
    }

    void communicationEdits()
    {
        const Built t = straggler();
        const WhatIfModel model(t.trace, t.analysis);
        Edits e;
        // No waiting after the median member (of two: the first): rank 0 transfers right after its own GEMM.
        e.comm = Edits::Comm::NoWait;
        WhatIfResult res = model.evaluate(e);
        QCOMPARE(res.ranks[0].predictedMean, 400 * kUs);
        QCOMPARE(res.ranks[1].predictedMean, 800 * kUs);
        QCOMPARE(res.ranks[0].predictedPath.otherRanksNs, TimeNs(0));
        // Hidden: the all-reduce takes no time and waits for nobody.
        e.comm = Edits::Comm::Hidden;
        res = model.evaluate(e);
        QCOMPARE(res.ranks[0].predictedMean, 300 * kUs);
        QCOMPARE(res.ranks[1].predictedMean, 700 * kUs);
        // Twice as fast: 50 µs of transfer after rank 1 arrives.
        e.comm = Edits::Comm::Faster;
        e.commFactor = 2.0;
        res = model.evaluate(e);
        QCOMPARE(res.ranks[0].predictedMean, 750 * kUs);
        QCOMPARE(res.ranks[1].predictedMean, 750 * kUs);
        // The straggler's GEMM as fast as rank 0's: both ranks at rank 0's pace.
        Edits s;
        s.gpu.push_back({ "gemm", 1.0 / 3.0 });
        res = model.evaluate(s);
        QCOMPARE(res.ranks[1].predictedMean, 400 * kUs);
    }

    void editParsing()
    {
        Edits::Scale s;
        QVERIFY(parseScale("attention=0.5", s));
        QCOMPARE(s.pattern, std::string("attention"));
        QCOMPARE(s.factor, 0.5);
        QVERIFY(parseScale("a=b=2", s));
        QCOMPARE(s.pattern, std::string("a=b"));
        QVERIFY(!parseScale("gemm", s));
        QVERIFY(!parseScale("gemm=-1", s));
        QVERIFY(!parseScale("=2", s));
        Edits e;
        QVERIFY(parseComm("x2", e));
        QCOMPARE(e.commFactor, 2.0);
        QVERIFY(parseComm("hidden", e));
        QVERIFY(e.comm == Edits::Comm::Hidden);
        QVERIFY(!parseComm("x0", e));
        QVERIFY(!parseComm("fast", e));
        Edits bad;
        bad.regions.push_back({ "(", 0.0 });
        const Built t = cpuBound();
        const WhatIfModel model(t.trace, t.analysis);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, model.evaluate(bad));
    }
};

QTEST_GUILESS_MAIN(TestWhatIf)
#include "tst_whatif.moc"
