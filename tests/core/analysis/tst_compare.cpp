// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/compare.h"
#include "model/timeformat.h"
#include "report/statsreport.h"
#include "support/processrun.h"

#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace exposure;

namespace {

// `ranks` ranks, three ProfilerStep regions of 1000 ns each; in every step a 600 ns gemm at +100 and (with more
// than one rank) an AllReduce at +500 lasting 300 ns (200 ns hidden, 100 ns exposed) that ends together on all
// ranks; rank r arrives r*10 ns earlier than the last one, so it waits that long.
std::shared_ptr<Trace> makeRun(int ranks, TimeNs stepLen = 1000)
{
    TraceBuilder b;
    for (int r = 0; r < ranks; ++r) {
        b.addRank("Rank " + std::to_string(r), "node0", r);
        const int cpu = b.addLane(r, "Master thread", LaneKind::CpuThread);
        const int compute = b.addLane(r, "CUDA[" + std::to_string(r) + ":7]", LaneKind::GpuStream, r, 7);
        const int comm = b.addLane(r, "CUDA[" + std::to_string(r) + ":17]", LaneKind::GpuStream, r, 17);
        for (int s = 0; s < 3; ++s) {
            const TimeNs t0 = s * stepLen;
            b.addInterval(r, cpu, t0, t0 + stepLen, "ProfilerStep#" + std::to_string(s), RegionKind::HostRegion);
            b.addInterval(r, compute, t0 + 100, t0 + 700, "ampere_sgemm_128x64_tn", RegionKind::Kernel);
            if (ranks > 1) {
                const TimeNs wait = (ranks - 1 - r) * 10;
                b.addInterval(
                    r, comm, t0 + 500 - wait, t0 + 800, "ncclKernel_AllReduce_RING_LL_Sum_float", RegionKind::Kernel);
            }
        }
    }
    return b.finish();
}

// One rank, one ProfilerStep region per entry of `lengths` (back to back), each with a 100 ns gemm at its start:
// a start-up step is simply a long first window.
std::shared_ptr<Trace> makeSteps(const std::vector<TimeNs>& lengths, int ranks = 1)
{
    TraceBuilder b;
    for (int r = 0; r < ranks; ++r) {
        b.addRank("Rank " + std::to_string(r), "node0", r);
        const int cpu = b.addLane(r, "Master thread", LaneKind::CpuThread);
        const int compute = b.addLane(r, "CUDA[" + std::to_string(r) + ":7]", LaneKind::GpuStream, r, 7);
        TimeNs t = 0;
        for (std::size_t s = 0; s < lengths.size(); ++s) {
            b.addInterval(r, cpu, t, t + lengths[s], "ProfilerStep#" + std::to_string(s), RegionKind::HostRegion);
            b.addInterval(r, compute, t, t + 100, "ampere_sgemm_128x64_tn", RegionKind::Kernel);
            t += lengths[s];
        }
    }
    return b.finish();
}

// The "mean step" cell of statsTable's first rank row ("133.1 ms ×14").
QString meanStepCell(const std::string& table)
{
    static const QRegularExpression re(QStringLiteral("\\n(?:Rank 0|0)\\s+\\S*\\s+\\S+ \\S+\\s+(\\S+ \\S+ ×\\d+)"));
    const auto m = re.match(QString::fromStdString(table));
    return m.hasMatch() ? m.captured(1) : QString();
}

} // namespace

class TestCompare : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // Issue 13.2: a start-up step (8.2 s before steps of about 132 ms) inflated `stats`' mean step to 680 ms while
    // `compare` skipped it. One rule now serves both, and both say which steps the mean covers.
    void startupStepLeftOutByStatsAndCompare()
    {
        std::vector<TimeNs> lengths { 8'200'000'000 };
        for (int i = 0; i < 14; ++i)
            lengths.push_back(131'000'000 + 300'000 * i); // 131.0 … 134.9 ms
        const auto t = makeSteps(lengths);
        const auto a = analyze(*t, Rules::defaults());
        QCOMPARE(int(a->ranks[0].steps.size()), 15);
        TimeNs sum = 0;
        for (std::size_t i = 1; i < lengths.size(); ++i)
            sum += lengths[i];
        const TimeNs mean = sum / 14; // 132.95 ms

        StatsReportOptions o;
        o.window = t->extent;
        const std::string table = statsTable(*t, *a, o);
        QCOMPARE(meanStepCell(table), QString::fromStdString(formatDuration(mean)) + QStringLiteral(" ×14"));
        QVERIFY2(table.find("steps 1\xE2\x80\x93"
                            "14 (step 0 left out: start-up, 8.2 s)")
                != std::string::npos,
            table.c_str());
        const std::string json = statsJson(*t, *a, o);
        QVERIFY2(json.find("\"step_mean\": {\"mean_ns\": " + std::to_string(mean)
                     + ", \"steps_used\": 14, \"first_step\": 1, \"last_step\": 14, \"startup_steps\": [0]")
                != std::string::npos,
            json.c_str());
        QCOMPARE(QString::fromStdString(json).count(QStringLiteral("\"startup\": true")), 1);
        QCOMPARE(QString::fromStdString(json).count(QStringLiteral("\"startup\": false")), 14);

        const RunSummary s = summarizeRun(*t, *a);
        QCOMPARE(s.stepNs, mean); // the same mean as stats
        QCOMPARE(s.stepsUsed, 14);
        QCOMPARE(s.stepsLeftOut, 1);
        QCOMPARE(
            QString::fromStdString(s.stepsCovered), QStringLiteral("steps 1–14 (step 0 left out: start-up, 8.2 s)"));
        QVERIFY(compareTable({ s, s }).find("steps 1\xE2\x80\x93"
                                            "14 (step 0 left out")
            != std::string::npos);
    }

    // Steps of one length: none is start-up, in stats and in compare alike (compare used to drop the first).
    void evenStepsAllCounted()
    {
        const auto t = makeSteps({ 1000, 1000, 1000, 1000 });
        const auto a = analyze(*t, Rules::defaults());
        StatsReportOptions o;
        o.window = t->extent;
        QCOMPARE(meanStepCell(statsTable(*t, *a, o)), QStringLiteral("1 µs ×4"));
        const RunSummary s = summarizeRun(*t, *a);
        QCOMPARE(s.stepsUsed, 4);
        QCOMPARE(s.stepsLeftOut, 0);
        QCOMPARE(QString::fromStdString(s.stepsCovered), QStringLiteral("steps 0–3"));
        // --skip-steps N still leaves out exactly N.
        CompareOptions skip2;
        skip2.skipSteps = 2;
        QCOMPARE(summarizeRun(*t, *a, skip2).stepsUsed, 2);
        QCOMPARE(QString::fromStdString(summarizeRun(*t, *a, skip2).stepsCovered),
            QStringLiteral("steps 2–3 (steps 0–1 left out: skipped on request, 2 µs)"));
    }

    void summaryOfOneRank()
    {
        const auto t = makeRun(1);
        const auto a = analyze(*t, Rules::defaults());
        const auto s = summarizeRun(*t, *a);
        QCOMPARE(s.ranks, 1);
        QCOMPARE(s.stepsUsed, 3); // steps of one length: none is start-up
        QCOMPARE(s.stepNs, TimeNs(1000));
        QCOMPARE(s.computeNs, TimeNs(600));
        QCOMPARE(s.commBusyNs, TimeNs(0));
        QVERIFY(!s.overlapRatio);
        QCOMPARE(s.waitNs, TimeNs(0));
    }

    void summaryOfFourRanks()
    {
        const auto t = makeRun(4);
        const auto a = analyze(*t, Rules::defaults());
        const auto s = summarizeRun(*t, *a);
        QCOMPARE(s.ranks, 4);
        QCOMPARE(s.stepsUsed, 12);
        QCOMPARE(s.stepNs, TimeNs(1000));
        QCOMPARE(s.computeNs, TimeNs(600));
        // Rank r's AllReduce spans [500 - w, 800) with w = (3 - r) * 10: comm busy 300 + w, hidden 200 + w.
        // Means over ranks: w = 15 on average.
        QCOMPARE(s.commBusyNs, TimeNs(315));
        QCOMPARE(s.hiddenNs, TimeNs(215));
        QCOMPARE(s.exposedNs, TimeNs(100));
        QCOMPARE(*s.overlapRatio, 215.0 / 315.0);
        // Waiting per step and rank: mean of 30, 20, 10, 0 = 15; transfer 300.
        QCOMPARE(s.waitNs, TimeNs(15));
        QCOMPARE(s.transferNs, TimeNs(300));
        QCOMPARE(s.unmatchedCollectives, 0ull);

        const auto base = summarizeRun(*makeRun(1, 800), *analyze(*makeRun(1, 800), Rules::defaults()));
        QCOMPARE(*weakScalingEfficiency(base, s), 0.8);
        const std::string json = compareJson({ base, s });
        QVERIFY(json.find("\"comm_wait_ns\": 15") != std::string::npos);
        QVERIFY(json.find("\"efficiency\": 0.800000") != std::string::npos);
        QVERIFY(json.find("\"overlap_ratio\": null") != std::string::npos); // the 1-rank base
        const std::string table = compareTable({ base, s });
        QVERIFY(table.find("80.0 %") != std::string::npos);
    }

    // Issue 13.3: two runs with the same GPU count got a "scaling efficiency" (205.5 %) without a word.
    void efficiencyNeedsDifferentGpuCounts()
    {
        const auto a4 = makeRun(4, 2000), b4 = makeRun(4, 1000), c1 = makeRun(1, 800);
        const RunSummary slow4 = summarizeRun(*a4, *analyze(*a4, Rules::defaults()));
        const RunSummary fast4 = summarizeRun(*b4, *analyze(*b4, Rules::defaults()));
        const RunSummary one = summarizeRun(*c1, *analyze(*c1, Rules::defaults()));
        QVERIFY(!weakScalingEfficiency(slow4, fast4));
        QCOMPARE(efficiencyNote(slow4, fast4, false), EfficiencyNote::SameGpuCount);
        QCOMPARE(efficiencyNote(slow4, slow4, true), EfficiencyNote::Baseline);
        QCOMPARE(std::string(efficiencyNoteText(EfficiencyNote::SameGpuCount)), "same GPU count as the baseline");
        const std::string json = compareJson({ slow4, fast4 });
        QVERIFY2(json.find("\"efficiency\": null, \"efficiency_note\": \"same GPU count as the baseline\"")
                != std::string::npos,
            json.c_str());
        QVERIFY(json.find("\"efficiency\": 1.000000, \"efficiency_note\": \"baseline\"") != std::string::npos);
        QVERIFY(json.find("\"efficiency\": 2.000000") == std::string::npos); // no 200 %
        const std::string table = compareTable({ slow4, fast4 });
        QVERIFY(table.find("200.0 %") == std::string::npos);
        QVERIFY(table.find("runs with the baseline's GPU count have no efficiency") != std::string::npos);

        // Runs are ordered by GPU count (stable); the first is the baseline.
        std::vector<RunSummary> runs { slow4, one, fast4 };
        orderByGpuCount(runs);
        QCOMPARE(runs[0].ranks, 1);
        QCOMPARE(runs[1].stepNs, slow4.stepNs);
        QCOMPARE(runs[2].stepNs, fast4.stepNs);
        QCOMPARE(*weakScalingEfficiency(runs[0], runs[1]), 800.0 / 2000.0);
    }

    void cliNeedsTwoRuns()
    {
        QProcess p;
        p.start(QStringLiteral(EXPOSURE_CLI), { QStringLiteral("compare"), QStringLiteral("/nonexistent") });
        QVERIFY(p.waitForFinished(20000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY(p.readAllStandardError().contains("at least two RUN"));
        p.start(QStringLiteral(EXPOSURE_CLI),
            { QStringLiteral("compare"), QStringLiteral("/nonexistent-a"), QStringLiteral("/nonexistent-b") });
        QVERIFY(p.waitForFinished(20000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY(p.readAllStandardError().contains("/nonexistent-a"));
    }

    void cliComparesDemoRuns()
    {
        QTemporaryDir dir;
        for (const char* n : { "1", "2" }) {
            QProcess gen;
            gen.start(QStringLiteral(EXPOSURE_MAKE_DEMO),
                { dir.filePath(QStringLiteral("run") + QLatin1String(n)), QStringLiteral("--ranks"), QLatin1String(n),
                    QStringLiteral("--steps"), QStringLiteral("3") });
            QVERIFY(gen.waitForFinished(60000));
            QCOMPARE(gen.exitCode(), 0);
        }
        // `exposure-cli compare --json` of two of the runs, in this order.
        const auto compareJson = [&dir](const char* first, const char* second) {
            return synth::runProcess(QStringLiteral(EXPOSURE_CLI),
                { QStringLiteral("compare"), QStringLiteral("--json"), dir.filePath(QLatin1String(first)),
                    dir.filePath(QLatin1String(second)) });
        };
        const synth::ProcessResult ordered = compareJson("run1", "run2");
        QCOMPARE(ordered.exitCode, 0);
        const QByteArray& out = ordered.out;
        QVERIFY(out.startsWith("{\"runs\": [{"));
        QCOMPARE(out.count("\"ranks\": "), 2);
        QVERIFY(out.contains("\"ranks\": 1,"));
        QVERIFY(out.contains("\"ranks\": 2,"));
        QVERIFY(out.contains("\"steps_used\": 6,")); // 2 ranks x 3 steps: the demo has no start-up step
        QVERIFY(out.contains("\"efficiency_note\": \"baseline\""));

        // Given in the other order, the runs still come out by GPU count, the 1-GPU run first (the baseline).
        const synth::ProcessResult reversed = compareJson("run2", "run1");
        QCOMPARE(reversed.exitCode, 0);
        const QByteArray& swapped = reversed.out;
        QVERIFY(swapped.indexOf("\"ranks\": 1,") < swapped.indexOf("\"ranks\": 2,"));
        QVERIFY(swapped.indexOf("\"ranks\": 1,") < swapped.indexOf("\"efficiency_note\": \"baseline\""));

        // The stats JSON carries the same matching per rank: both ranks matched the same number of collectives,
        // and the waits of one are caused by the other.
        QProcess p;
        p.start(QStringLiteral(EXPOSURE_CLI),
            { QStringLiteral("stats"), QStringLiteral("--json"), dir.filePath(QStringLiteral("run2")) });
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const QString stats = QString::fromUtf8(p.readAllStandardOutput());
        static const QRegularExpression re(
            QStringLiteral("\"collectives\": \\{\"matched\": (\\d+), \"unmatched\": (\\d+), \"wait_ns\": (\\d+), "
                           "\"transfer_ns\": (\\d+), \"exposed_wait_ns\": (\\d+), \"caused_waits\": (\\d+), "
                           "\"caused_wait_ns\": (\\d+)\\}"));
        QList<QRegularExpressionMatch> ranks;
        for (auto it = re.globalMatch(stats); it.hasNext();)
            ranks.append(it.next());
        QCOMPARE(ranks.size(), 2);
        // The demo's 3 steps hold 9 all-reduces on each rank; rank 1 is slower, so rank 0 waits 2 080 800 ns for it
        // (866 400 ns of that exposed) and rank 1 causes all of it. Transfers take 1 320 000 ns on both.
        const QStringList rank0 = ranks[0].capturedTexts().mid(1), rank1 = ranks[1].capturedTexts().mid(1);
        QCOMPARE(rank0,
            (QStringList { QStringLiteral("9"), QStringLiteral("0"), QStringLiteral("2080800"),
                QStringLiteral("1320000"), QStringLiteral("866400"), QStringLiteral("0"), QStringLiteral("0") }));
        QCOMPARE(rank1,
            (QStringList { QStringLiteral("9"), QStringLiteral("0"), QStringLiteral("0"), QStringLiteral("1320000"),
                QStringLiteral("0"), QStringLiteral("9"), QStringLiteral("2080800") }));
    }
};

QTEST_APPLESS_MAIN(TestCompare)
#include "tst_compare.moc"
