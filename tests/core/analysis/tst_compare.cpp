// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/compare.h"

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
                b.addInterval(r, comm, t0 + 500 - wait, t0 + 800, "ncclKernel_AllReduce_RING_LL_Sum_float",
                              RegionKind::Kernel);
            }
        }
    }
    return b.finish();
}

} // namespace

class TestCompare : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void summaryOfOneRank()
    {
        const auto t = makeRun(1);
        const auto a = analyze(*t, Rules::defaults());
        const auto s = summarizeRun(*t, *a);
        QCOMPARE(s.ranks, 1);
        QCOMPARE(s.stepsUsed, 2); // the first step is left out
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
        QCOMPARE(s.stepsUsed, 8);
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
        const std::string json = compareJson({base, s});
        QVERIFY(json.find("\"comm_wait_ns\": 15") != std::string::npos);
        QVERIFY(json.find("\"efficiency\": 0.800000") != std::string::npos);
        QVERIFY(json.find("\"overlap_ratio\": null") != std::string::npos); // the 1-rank base
        const std::string table = compareTable({base, s});
        QVERIFY(table.find("80.0 %") != std::string::npos);
    }

    void cliNeedsTwoRuns()
    {
        QProcess p;
        p.start(QStringLiteral(EXPOSURE_CLI), {QStringLiteral("compare"), QStringLiteral("/nonexistent")});
        QVERIFY(p.waitForFinished(20000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY(p.readAllStandardError().contains("at least two RUN"));
        p.start(QStringLiteral(EXPOSURE_CLI),
                {QStringLiteral("compare"), QStringLiteral("/nonexistent-a"), QStringLiteral("/nonexistent-b")});
        QVERIFY(p.waitForFinished(20000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY(p.readAllStandardError().contains("/nonexistent-a"));
    }

    void cliComparesDemoRuns()
    {
        QTemporaryDir dir;
        for (const char* n : {"1", "2"}) {
            QProcess gen;
            gen.start(QStringLiteral(EXPOSURE_MAKE_DEMO),
                      {dir.filePath(QStringLiteral("run") + QLatin1String(n)), QStringLiteral("--ranks"),
                       QLatin1String(n), QStringLiteral("--steps"), QStringLiteral("3")});
            QVERIFY(gen.waitForFinished(60000));
            QCOMPARE(gen.exitCode(), 0);
        }
        QProcess p;
        p.start(QStringLiteral(EXPOSURE_CLI), {QStringLiteral("compare"), QStringLiteral("--json"),
                                              dir.filePath(QStringLiteral("run1")), dir.filePath(QStringLiteral("run2"))});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const QByteArray out = p.readAllStandardOutput();
        QVERIFY(out.startsWith("{\"runs\": [{"));
        QCOMPARE(out.count("\"ranks\": "), 2);
        QVERIFY(out.contains("\"ranks\": 1,"));
        QVERIFY(out.contains("\"ranks\": 2,"));
        QVERIFY(out.contains("\"steps_used\": 4,")); // 2 ranks x (3 steps - 1 warm-up)

        // The stats JSON carries the same matching per rank: both ranks matched the same number of collectives,
        // and the waits of one are caused by the other.
        p.start(QStringLiteral(EXPOSURE_CLI), {QStringLiteral("stats"), QStringLiteral("--json"),
                                              dir.filePath(QStringLiteral("run2"))});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const QString stats = QString::fromUtf8(p.readAllStandardOutput());
        static const QRegularExpression re(QStringLiteral(
            "\"collectives\": \\{\"matched\": (\\d+), \"unmatched\": (\\d+), \"wait_ns\": (\\d+), "
            "\"transfer_ns\": (\\d+), \"exposed_wait_ns\": (\\d+), \"caused_waits\": (\\d+), \"caused_wait_ns\": (\\d+)\\}"));
        QList<QRegularExpressionMatch> ranks;
        for (auto it = re.globalMatch(stats); it.hasNext();)
            ranks.append(it.next());
        QCOMPARE(ranks.size(), 2);
        QVERIFY(ranks[0].captured(1).toInt() > 0);
        QCOMPARE(ranks[0].captured(1), ranks[1].captured(1));
        const qlonglong wait0 = ranks[0].captured(3).toLongLong(), wait1 = ranks[1].captured(3).toLongLong();
        const qlonglong caused0 = ranks[0].captured(7).toLongLong(), caused1 = ranks[1].captured(7).toLongLong();
        QCOMPARE(wait0 + wait1, caused0 + caused1);
    }
};

QTEST_APPLESS_MAIN(TestCompare)
#include "tst_compare.moc"
