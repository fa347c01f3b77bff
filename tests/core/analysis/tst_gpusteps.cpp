// SPDX-License-Identifier: GPL-3.0-or-later
// Steps on the GPU's time axis: a step's window runs from the end of the previous step's GPU work to the end of the
// GPU work launched in its host step; every per-step value is taken inside it, so none exceeds the step and the
// steps add up to the values over the time they cover.
#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "analysis/compare.h"
#include "analysis/statsparts.h"
#include "analysis/stepmean.h"
#include "analysis/transfers.h"
#include "run/openrun.h"
#include "support/kinetotraces.h"
#include "support/testtraces.h"
#include "synth/archivewriter.h"

#include <QTemporaryDir>
#include <QTest>
#include <algorithm>

using namespace exposure;

namespace {

constexpr const char* kNccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

// The per-step values that must add up (everything but the kernel counts, which count a kernel in every window it
// reaches into, and the ratio), summed with accumulate().
#define COMPARE_SUMS(sums, whole)                                                                                      \
    do {                                                                                                               \
        QCOMPARE((sums).computeBusyNs, (whole).computeBusyNs);                                                         \
        QCOMPARE((sums).commBusyNs, (whole).commBusyNs);                                                               \
        QCOMPARE((sums).commKernelSumNs, (whole).commKernelSumNs);                                                     \
        QCOMPARE((sums).overlappedNs, (whole).overlappedNs);                                                           \
        QCOMPARE((sums).exposedNs, (whole).exposedNs);                                                                 \
        QCOMPARE((sums).backwardOverlappedNs, (whole).backwardOverlappedNs);                                           \
        QCOMPARE((sums).memcpyBusyNs, (whole).memcpyBusyNs);                                                           \
        QCOMPARE((sums).gpuBusyNs, (whole).gpuBusyNs);                                                                 \
        QCOMPARE((sums).spanNs, (whole).spanNs);                                                                       \
        QCOMPARE((sums).idleNs, (whole).idleNs);                                                                       \
    } while (0)

// One torch.profiler rank whose GPU lags its host by more than a step: three ProfilerSteps of 1 ms, each launching
// one compute kernel (stream 7) and steps #4 and #5 an AllReduce (stream 17) that runs up to 1.5 ms after its host
// step ended; a kernel launched before recording began (no runtime event) opens stream 7. Times in µs:
//   K0 [1000, 1300) pre-recording      #4 [1100, 2100)  #5 [2100, 3100)  #6 [3100, 4100)
//   k4 [1400, 2900) launched at 1200    n4 [2800, 3500) launched at 1300
//   k5 [2900, 4100) launched at 2200    n5 [4000, 4600) launched at 2300
//   k6 [4600, 5400) launched at 3200
QByteArray laggingKinetoRank()
{
    QByteArray events;
    auto add = [&](const QByteArray& e) { events += (events.isEmpty() ? "" : ",\n") + e; };
    add(R"({"ph": "M", "name": "thread_name", "pid": 10, "tid": 10, "args": {"name": "main"}})");
    for (int s = 0; s < 3; ++s)
        add(QByteArray(R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#)") + QByteArray::number(4 + s)
            + R"(", "pid": 10, "tid": 10, "ts": )" + QByteArray::number(1100 + 1000 * s) + R"(, "dur": 1000})");
    auto kernel = [&](int corr, int launchUs, int startUs, int durUs, const char* name, int stream) {
        if (launchUs >= 0)
            add(QByteArray(R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, )")
                + R"("ts": )" + QByteArray::number(launchUs) + R"(, "dur": 5, "args": {"correlation": )"
                + QByteArray::number(corr) + "}}");
        add(QByteArray(R"({"ph": "X", "cat": "kernel", "name": ")") + name + R"(", "pid": 0, "tid": )"
            + QByteArray::number(stream) + R"(, "ts": )" + QByteArray::number(startUs) + R"(, "dur": )"
            + QByteArray::number(durUs) + R"(, "args": {"device": 0, "stream": )" + QByteArray::number(stream)
            + R"(, "correlation": )" + QByteArray::number(corr) + "}}");
    };
    kernel(900, -1, 1000, 300, "ampere_sgemm_128x64_nn", 7);
    kernel(1, 1200, 1400, 1500, "ampere_sgemm_128x64_nn", 7);
    kernel(2, 1300, 2800, 700, kNccl, 17);
    kernel(3, 2200, 2900, 1200, "ampere_sgemm_128x64_nn", 7);
    kernel(4, 2300, 4000, 600, kNccl, 17);
    kernel(5, 3200, 4600, 800, "ampere_sgemm_128x64_nn", 7);
    return "{\n\"schemaVersion\": 1,\n\"traceEvents\": [\n" + events + "\n],\n\"traceName\": \"x\"\n}\n";
}

// Two ranks with known launches, three host steps of 10 µs each; per step a compute kernel [2, 8) µs after the step
// starts and an AllReduce that ends at 9 µs on both ranks. Rank 1 starts it at 7 µs; rank 0 at 4 µs in the first
// step and at 6 µs in the others, so it waits 3 µs, then 1 µs, 1 µs. Lanes: 0 compute, 1 NCCL, 2 CPU.
std::shared_ptr<Trace> twoRanksWaiting()
{
    TraceBuilder b;
    for (int r = 0; r < 2; ++r) {
        const int rank = b.addRank("Rank " + std::to_string(r), "node0", r);
        const int compute = b.addLane(rank, "CUDA[" + std::to_string(r) + ":7]", LaneKind::GpuStream, r, 7);
        const int nccl = b.addLane(rank, "CUDA[" + std::to_string(r) + ":17]", LaneKind::GpuStream, r, 17);
        const int cpu = b.addLane(rank, "Master thread", LaneKind::CpuThread);
        for (int s = 0; s < 3; ++s) {
            const TimeNs t = s * 10'000;
            b.addInterval(rank, cpu, t, t + 10'000, "ProfilerStep#" + std::to_string(s), RegionKind::HostRegion);
            b.addLaunch(rank, compute, cpu,
                b.addInterval(rank, cpu, t + 100, t + 150, "cuLaunchKernel", RegionKind::HostApi, 1));
            b.addLaunch(
                rank, nccl, cpu, b.addInterval(rank, cpu, t + 200, t + 250, "cuLaunchKernel", RegionKind::HostApi, 1));
            b.addInterval(rank, compute, t + 2'000, t + 8'000, "ampere_sgemm_128x64_nn", RegionKind::Kernel);
            const TimeNs ncclStart = r == 1 ? 7'000 : s == 0 ? 4'000 : 6'000;
            b.addInterval(rank, nccl, t + ncclStart, t + 9'000, kNccl, RegionKind::Kernel);
        }
    }
    return b.finish();
}

} // namespace

class TestGpuSteps : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Steps of a trace whose times are near the 64-bit limit (found by fuzzing): the start-up rule and the mean need
    // no product or sum that overflows. 4.9e18 > 3 × 1.6e18: the first step is start-up; two 4.9e18 steps average
    // exactly (their sum would not fit).
    void stepMeanOfHugeSteps()
    {
        auto step = [](int index, TimeNs start, TimeNs length) {
            StepWindow w;
            w.index = index;
            w.range = { start, start + length };
            w.hostRange = w.range;
            return w;
        };
        const TimeNs big = 4'900'000'000'000'000'000, small = 1'600'000'000'000'000'001;
        const std::vector<StepWindow> startup { step(0, 0, big), step(1, 0, small), step(2, 0, small) };
        const StepMean a = stepMean(startup);
        QCOMPARE(a.startup, (std::vector<std::size_t> { 0 }));
        QCOMPARE(a.meanNs, small);
        const std::vector<StepWindow> two { step(0, 0, big), step(1, 0, big - 1) };
        const StepMean b = stepMean(two);
        QVERIFY(b.startup.empty());
        QCOMPARE(b.meanNs, big - 1); // (2 big - 1) / 2, rounded down
        // Exactly three times the median is not start-up; one nanosecond more is.
        QVERIFY(stepMean({ step(0, 0, 3 * 1000), step(1, 0, 1000), step(2, 0, 1000) }).startup.empty());
        QCOMPARE(
            stepMean({ step(0, 0, 3 * 1000 + 1), step(1, 0, 1000), step(2, 0, 1000) }).startup.size(), std::size_t(1));
    }

    // The GPU lags the host by more than a step, and a kernel launched before recording began opens the trace.
    void gpuLaggingTheHost()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const auto trace
            = loadTrace(testing::write(dir, QStringLiteral("r.json"), laggingKinetoRank()).toStdString(), {});
        const auto a = analyze(*trace, Rules::defaults());
        const RankAnalysis& ra = a->ranks[0];
        QCOMPARE(ra.steps.size(), std::size_t(3));
        QCOMPARE(ra.stepAxis, StepAxis::GpuByLaunch);
        const TimeNs t0 = ra.steps[0].hostRange.start - 1'100'000; // the trace's time of 0 µs
        auto us = [&](TimeNs v) { return t0 + v * 1000; };
        QCOMPARE(ra.steps[0].hostRange, (TimeRange { us(1100), us(2100) }));
        QCOMPARE(ra.steps[2].hostRange, (TimeRange { us(3100), us(4100) }));
        // The pre-recording kernel K0 belongs to no step: the first window starts after it (and after #4 began).
        QCOMPARE(ra.steps[0].range, (TimeRange { us(1300), us(3500) }));
        QCOMPARE(ra.steps[1].range, (TimeRange { us(3500), us(4600) }));
        QCOMPARE(ra.steps[2].range, (TimeRange { us(4600), us(5400) }));

        const auto steps = computeStepStats(*trace, *a, 0);
        QCOMPARE(steps.size(), std::size_t(3));
        QCOMPARE(steps[0].computeBusyNs, 2'100'000); // k4 and the start of k5
        QCOMPARE(steps[0].commBusyNs, 700'000);
        QCOMPARE(steps[0].overlappedNs, 700'000);
        QCOMPARE(steps[0].exposedNs, 0);
        QCOMPARE(steps[0].gpuBusyNs, 2'100'000);
        QCOMPARE(steps[0].spanNs, 2'200'000);
        QCOMPARE(steps[0].idleNs, 100'000);
        QCOMPARE(steps[1].computeBusyNs, 600'000);
        QCOMPARE(steps[1].commBusyNs, 600'000);
        QCOMPARE(steps[1].overlappedNs, 100'000);
        QCOMPARE(steps[1].exposedNs, 500'000);
        QCOMPARE(steps[1].idleNs, 0);
        QCOMPARE(steps[2].computeBusyNs, 800'000);
        QCOMPARE(steps[2].commBusyNs, 0);
        for (std::size_t k = 0; k < steps.size(); ++k) {
            const TimeNs length = ra.steps[k].range.duration();
            QVERIFY(steps[k].computeBusyNs <= length);
            QVERIFY(steps[k].commBusyNs <= length);
            QVERIFY(steps[k].gpuBusyNs <= length);
        }
        // The steps add up to the values over the time they cover: everything but K0.
        WindowStats sums;
        for (const auto& s : steps)
            accumulate(sums, s);
        const TimeRange covered { ra.steps.front().range.start, ra.steps.back().range.end };
        const WindowStats whole = computeStepWindowStats(*trace, *a, 0, covered);
        COMPARE_SUMS(sums, whole);
        QCOMPARE(sums.computeBusyNs, 3'500'000);
        QCOMPARE(computeStats(*trace, *a, 0, trace->extent).computeBusyNs, 3'800'000); // with K0
        // The idle time of the steps split by cause adds up to their idle time: [1300, 1400) after the 1200 launch
        // had returned is queued.
        IdleBreakdown idle;
        for (const auto& w : ra.steps) {
            const IdleBreakdown b = sumIdleGaps(idleGapsCut(*trace, *a, 0, w.range));
            idle.queuedNs += b.queuedNs;
            idle.hostBoundNs += b.hostBoundNs;
            idle.unattributedNs += b.unattributedNs;
        }
        QCOMPARE(idle.queuedNs, 100'000);
        QCOMPARE(idle.hostBoundNs + idle.unattributedNs, 0);
        QCOMPARE(sumIdleGaps(idleGapsCut(*trace, *a, 0, covered)).totalNs(), whole.idleNs);

        // Steps by the name the timeline shows, the number in it, or the index.
        QCOMPARE(findStep(ra.steps, "ProfilerStep#6"), 2);
        QCOMPARE(findStep(ra.steps, " profilerstep#5 "), 1);
        QCOMPARE(findStep(ra.steps, "6"), 2);
        QCOMPARE(findStep(ra.steps, "0"), -1); // steps are numbered 4 to 6: an index is not a number
        QCOMPARE(findStep(ra.steps, "9"), -1);
        QCOMPARE(findStep(ra.steps, "step"), -1);
        QCOMPARE(stepIndexNamed(*a, "ProfilerStep#4"), 0);
        QCOMPARE(stepAtTime(ra.steps, us(3499)), 0);
        QCOMPARE(stepAtTime(ra.steps, us(3500)), 1);
        QCOMPARE(stepAtTime(ra.steps, us(1299)), -1);
        QCOMPARE(stepAtTime(ra.steps, us(5400)), -1);

        // The JSON report: each step's GPU window, its host window, and the rule that placed it.
        StatsReportOptions o;
        o.window = trace->extent;
        const std::string json = statsJson(buildStatsReport(*trace, *a, o), o);
        QVERIFY(json.find("\"step_windows\": \"gpu by launch\"") != std::string::npos);
        QVERIFY(json.find("\"start_ns\": " + std::to_string(us(3500))) != std::string::npos);
        QVERIFY(json.find("\"host_start_ns\": " + std::to_string(us(2100))) != std::string::npos);
        QVERIFY(json.find("\"collectives\": {\"wait_ns\": 0, \"transfer_ns\": 0}") != std::string::npos);
    }

    // Waiting and transfer per step, inside the same windows as communication; Compare Runs averages them over the
    // same (rank, step) pairs, so leaving a step out changes them with communication.
    void waitingPerStep()
    {
        const auto trace = twoRanksWaiting();
        const auto a = analyze(*trace, Rules::defaults());
        for (int r = 0; r < 2; ++r) {
            QCOMPARE(a->ranks[std::size_t(r)].stepAxis, StepAxis::GpuByLaunch);
            QCOMPARE(a->ranks[std::size_t(r)].steps[0].range, (TimeRange { 0, 9'000 }));
            QCOMPARE(a->ranks[std::size_t(r)].steps[1].range, (TimeRange { 9'000, 19'000 }));
            QCOMPARE(a->ranks[std::size_t(r)].steps[2].range, (TimeRange { 19'000, 29'000 }));
        }
        const CollectiveMatch match = matchCollectives(*trace, *a);
        QCOMPARE(match.groups.size(), std::size_t(3));
        QCOMPARE(match.ranks[0].waitNs, 5'000);
        StatsReportOptions o;
        o.window = trace->extent;
        const StatsReport report = buildStatsReport(*trace, *a, o);
        const std::vector<TimeNs> wait0 = { 3'000, 1'000, 1'000 }, comm0 = { 5'000, 3'000, 3'000 };
        for (std::size_t r = 0; r < 2; ++r) {
            const RankReport& rank = report.ranks[r];
            TimeNs wait = 0, transfer = 0;
            for (std::size_t k = 0; k < 3; ++k) {
                const StepReport& s = rank.steps[k];
                QCOMPARE(s.waitNs, r == 0 ? wait0[k] : 0);
                QCOMPARE(s.transferNs, 2'000);
                QCOMPARE(s.stats.commBusyNs, r == 0 ? comm0[k] : 2'000);
                QVERIFY(s.waitNs <= s.stats.commBusyNs);
                QVERIFY(s.stats.computeBusyNs <= s.range.duration());
                wait += s.waitNs;
                transfer += s.transferNs;
            }
            // The steps cover every collective: their parts add up to the rank's whole-trace values.
            QCOMPARE(wait, rank.collectives.waitNs);
            QCOMPARE(transfer, rank.collectives.transferNs);
        }
        const std::string json = statsJson(report, o);
        QVERIFY(json.find("\"collectives\": {\"wait_ns\": 3000, \"transfer_ns\": 2000}") != std::string::npos);

        CompareOptions all, skip1;
        all.skipSteps = 0;
        skip1.skipSteps = 1;
        const RunSummary s0 = summarizeRun(*trace, *a, all), s1 = summarizeRun(*trace, *a, skip1);
        QCOMPARE(s0.stepsUsed, 6);
        QCOMPARE(s0.stepNs, 58'000 / 6);
        QCOMPARE(s0.commBusyNs, 17'000 / 6);
        QCOMPARE(s0.waitNs, 5'000 / 6);
        QCOMPARE(s0.transferNs, 2'000);
        QCOMPARE(s1.stepsUsed, 4);
        QCOMPARE(s1.stepNs, 10'000);
        QCOMPARE(s1.commBusyNs, 2'500);
        QCOMPARE(s1.waitNs, 500);
        QCOMPARE(s1.transferNs, 2'000);
        QCOMPARE(s1.computeNs, 6'000);
        QCOMPARE(summarizeRun(*trace, *a).waitNs, s0.waitNs); // the start-up rule keeps the 9 µs first step
        for (const RunSummary& s : { s0, s1 }) {
            QVERIFY(s.computeNs <= s.stepNs);
            QVERIFY(s.waitNs <= s.commBusyNs);
        }

        // The idle finding of a rank that is busy but mostly waits for its peer.
        const PeerWait peers = peerWaitInWindow(match, *trace, 0, trace->extent);
        QCOMPARE(peers.waitNs, 5'000);
        QCOMPARE(QString::fromStdString(peers.mostWaitedFor), QStringLiteral("Rank 1"));
        WindowStats busy;
        busy.spanNs = 10'000;
        busy.gpuBusyNs = 9'900;
        busy.idleNs = 100;
        busy.commKernelSumNs = 5'200;
        QCOMPARE(QString::fromStdString(idleFinding(busy, {}, {}, &peers)),
            QStringLiteral("GPU busy (idle 1 %), but it waits for Rank 1 in 96 % of its NCCL time (5 µs: the rank "
                           "that arrives last at the collectives; look at what delays it)"));
        QCOMPARE(QString::fromStdString(idleFinding(busy, {}, {})),
            QStringLiteral("GPU idle 1 %: the GPU is kept busy (not launch-bound)"));
        // At any idle share: with the GPU idle a quarter of the time for the CPU, waiting that is most of the NCCL
        // time is named, first when it is longer than the idle time, with its own time.
        WindowStats idle = busy;
        idle.idleNs = 2'600;
        IdleBreakdown launch;
        launch.hostBoundNs = 2'600;
        QCOMPARE(QString::fromStdString(idleFinding(idle, launch, {}, &peers)),
            QStringLiteral(
                "GPU waits for Rank 1 in 96 % of its NCCL time (5 µs: the rank that arrives last at the "
                "collectives; look at what delays it); idle 26 %: 100 % of it waiting for the CPU to launch"));
        idle.idleNs = 6'000;
        launch.hostBoundNs = 6'000;
        QCOMPARE(QString::fromStdString(idleFinding(idle, launch, {}, &peers)),
            QStringLiteral("GPU idle 60 %: 100 % of it waiting for the CPU to launch (hint: larger batches, CUDA "
                           "graphs or torch.compile, i.e. fewer and larger kernels, usually help); it also waits for "
                           "Rank 1 in 96 % of its NCCL time (5 µs: the rank that arrives last at the collectives; look "
                           "at what delays it)"));
        // Waiting that is less than half of the NCCL time (the rest is transfer) is not the finding.
        idle.commKernelSumNs = 10'001;
        QVERIFY(idleFinding(idle, launch, {}, &peers).find("Rank 1") == std::string::npos);
    }

    // The demo trace (Score-P-like, written by core/synth): in every rank's step nothing exceeds the step, waiting
    // stays within communication, and the steps add up to the values over the time they cover.
    void statsAndIdlePanelShareTheFinding()
    {
        // Rank 0 of the pair idles 28 % of the trace and spends 12 of its 15 ms of NCCL time waiting for rank 1: the
        // report (JSON and table) names the waiting, with the same words the Idle panel computes for the window.
        const auto trace = exposure::testing::makeWaitingPairTrace();
        const auto a = analyze(*trace, Rules::defaults());
        const CollectiveMatch match = matchCollectives(*trace, *a);
        StatsReportOptions o;
        o.window = trace->extent;
        const StatsReport report = buildStatsReport(*trace, *a, o);
        QCOMPARE(report.ranks[0].peers.waitNs, 12'000'000);
        QCOMPARE(QString::fromStdString(report.ranks[0].peers.mostWaitedFor), QStringLiteral("Rank 1"));
        QCOMPARE(report.ranks[1].peers.waitNs, 0);
        for (int r = 0; r < 2; ++r) {
            const PeerWait peers = peerWaitInWindow(match, *trace, r, o.window);
            const std::string panel = idleFinding(computeStats(*trace, *a, r, o.window),
                sumIdleGaps(idleGaps(*trace, *a, r, o.window)), diagnoseLaunches(*trace, *a, r, o.window), &peers);
            QVERIFY2(statsJson(report, o).find("\"finding\": \"" + panel + "\"") != std::string::npos, panel.c_str());
            QVERIFY2(statsTable(report, o).find("Rank " + std::to_string(r) + ": " + panel + "\n") != std::string::npos,
                panel.c_str());
            if (r == 0)
                QVERIFY2(panel.starts_with("GPU waits for Rank 1 in 80 % of its NCCL time (12 ms: "), panel.c_str());
            else
                QVERIFY2(panel.find("waits for") == std::string::npos, panel.c_str());
        }
    }

    void demoStepsAddUp()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath(QStringLiteral("run")).toStdString();
        synth::DemoOptions demo;
        demo.ranks = 3;
        demo.steps = 4;
        synth::writeArchive(path, synth::makeDemoSpec(demo));
        const auto trace = loadTrace(path);
        const auto a = analyze(*trace, Rules::defaults());
        const CollectiveMatch match = matchCollectives(*trace, *a);
        QVERIFY(!match.groups.empty());
        for (int r = 0; r < 3; ++r) {
            const RankAnalysis& ra = a->ranks[std::size_t(r)];
            QCOMPARE(ra.steps.size(), std::size_t(4));
            QCOMPARE(ra.stepAxis, StepAxis::GpuByLaunch);
            const auto steps = computeStepStats(*trace, *a, r);
            const RankCollectiveParts parts(match, r);
            WindowStats sums;
            TimeNs wait = 0;
            for (std::size_t k = 0; k < steps.size(); ++k) {
                const TimeNs length = ra.steps[k].range.duration();
                QVERIFY(k == 0 || ra.steps[k].range.start == ra.steps[k - 1].range.end);
                QVERIFY(steps[k].computeBusyNs <= length);
                QVERIFY(steps[k].commBusyNs <= length);
                QVERIFY(steps[k].gpuBusyNs <= length);
                const CollectiveSplit split = parts.in(ra.steps[k].range);
                QVERIFY(split.waitNs <= steps[k].commBusyNs);
                QVERIFY(split.waitNs + split.transferNs <= steps[k].commKernelSumNs);
                accumulate(sums, steps[k]);
                wait += split.waitNs;
            }
            const TimeRange covered { ra.steps.front().range.start, ra.steps.back().range.end };
            const WindowStats whole = computeStepWindowStats(*trace, *a, r, covered);
            COMPARE_SUMS(sums, whole);
            QVERIFY(sums.computeBusyNs > 0 && sums.commBusyNs > 0 && sums.memcpyBusyNs > 0);
            QCOMPARE(wait, parts.in(covered).waitNs);
            // The demo synchronises at the end of every step: the steps cover all the rank's GPU work.
            QCOMPARE(sums.gpuBusyNs, computeStats(*trace, *a, r, trace->extent).gpuBusyNs);
        }
        const RunSummary s = summarizeRun(*trace, *a);
        QVERIFY(s.computeNs <= s.stepNs);
        QVERIFY(s.waitNs <= s.commBusyNs);
    }
};

QTEST_GUILESS_MAIN(TestGpuSteps)
#include "tst_gpusteps.moc"
