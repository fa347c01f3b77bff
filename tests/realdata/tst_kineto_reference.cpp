// SPDX-License-Identifier: GPL-3.0-or-later
// The torch.profiler traces in ../shared/traces/kineto-ddp-bert come with per-rank numbers that their README computed
// independently (union of kernel intervals, NCCL vs compute). This test rebuilds each rank's kernels as a Trace and
// checks that Exposure's analysis gives exactly those numbers. Skipped where ../shared is absent (a user's machine).
#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "kinetokernels.h"
#include "run/openrun.h"
#include "support/shareddata.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>

using namespace exposure;
using namespace exposure::testing;

class TestKinetoReference : public QObject
{
    Q_OBJECT
    // The README's numbers of the current data row, against the statistics of its rank.
    static void compareWithReadme(const WindowStats& s)
    {
        QFETCH(qulonglong, kernels);
        QFETCH(qulonglong, ncclKernels);
        QFETCH(qlonglong, ncclSum);
        QFETCH(qlonglong, commBusy);
        QFETCH(qlonglong, computeBusy);
        QFETCH(qlonglong, overlapped);
        QFETCH(qlonglong, exposed);
        QCOMPARE(s.kernelCount, kernels);
        QCOMPARE(s.commKernelCount, ncclKernels);
        QCOMPARE(s.commKernelSumNs, ncclSum);
        QCOMPARE(s.commBusyNs, commBusy);
        QCOMPARE(s.computeBusyNs, computeBusy);
        QCOMPARE(s.overlappedNs, overlapped);
        QCOMPARE(s.exposedNs, exposed);
        if (ncclKernels == 0)
            QVERIFY(!s.overlapRatio.has_value());
        else
            QCOMPARE(qRound(*s.overlapRatio * 10000), qRound(double(overlapped) / double(commBusy) * 10000));
    }

private Q_SLOTS:
    void wholeTrace_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<qulonglong>("kernels");
        QTest::addColumn<qulonglong>("ncclKernels");
        QTest::addColumn<qlonglong>("ncclSum");
        QTest::addColumn<qlonglong>("commBusy");
        QTest::addColumn<qlonglong>("computeBusy");
        QTest::addColumn<qlonglong>("overlapped");
        QTest::addColumn<qlonglong>("exposed");
        // Values from ../shared/traces/kineto-ddp-bert/README.md.
        QTest::newRow("ws1 rank 0") << "ddp_bert_ws1_rank0.json.gz" << 6570ull << 0ull << 0ll << 0ll << 62731675ll
                                    << 0ll << 0ll;
        QTest::newRow("ws2 rank 0") << "ddp_bert_ws2_rank0.json.gz" << 6694ull << 76ull << 290550619ll << 290550619ll
                                    << 75348398ll << 45772848ll << 244777771ll;
        QTest::newRow("ws2 rank 1") << "ddp_bert_ws2_rank1.json.gz" << 6645ull << 75ull << 9022852ll << 9022852ll
                                    << 63157118ll << 181282ll << 8841570ll;
    }

    void wholeTrace()
    {
        QFETCH(QString, file);
        const QString path = QStringLiteral(EXPOSURE_SHARED_TRACES "/kineto-ddp-bert/") + file;
        EXPOSURE_REQUIRE_SHARED(QFile::exists(path), "../shared/traces");
        const auto trace = kernelsOf(path);
        QVERIFY(trace);
        const auto analysis = analyze(*trace, Rules::defaults());
        const auto s = computeStats(*trace, *analysis, 0, trace->extent);

        compareWithReadme(s);
    }

    // Both ranks of the 2-GPU run share one clock (baseTimeNanoseconds is equal). Their NCCL kernels run on stream 17
    // of each rank (one communicator), so they are matched in issue order: all 75 of rank 1's, the 5 broadcasts
    // included (end-time clustering matched 70 of them: an LL broadcast ends early on its root); rank 0's first
    // all-reduce has no counterpart. Of the 70 all-reduces the waiting agrees with the end-matching reference
    // (280 451 396 ns, a separate Python implementation) plus the 5 broadcasts' 24 095 ns.
    void collectiveWaitVersusTransfer()
    {
        const auto trace = twoGpuDdpKernels();
        EXPOSURE_REQUIRE_SHARED(trace, "../shared/traces");
        const auto analysis = analyze(*trace, Rules::defaults());
        const auto match = matchCollectives(*trace, *analysis);

        QCOMPARE(match.groups.size(), std::size_t(75));
        QVERIFY(!match.multipleHosts);
        QCOMPARE(match.ranks[0].matched, 75ull);
        QCOMPARE(match.ranks[1].matched, 75ull);
        QCOMPARE(match.ranks[0].unmatched, 1ull); // the first AllReduce
        QCOMPARE(match.ranks[1].unmatched, 0ull);
        // Rank 0's 290 ms of NCCL time is almost all waiting for rank 1; the transfer itself is ~9 ms on both.
        QCOMPARE(match.ranks[0].waitNs, 280451396ll + 24095);
        QCOMPARE(match.ranks[0].transferNs, 8456574ll);
        QCOMPARE(match.ranks[1].waitNs, 0ll);
        QCOMPARE(match.ranks[1].transferNs, 9022852ll);
        QCOMPARE(match.ranks[1].causedWaits, 75ull);
        QCOMPARE(match.ranks[1].causedWaitNs, 280451396ll + 24095);
        // Waiting that no compute hides is bounded by the rank's exposed communication.
        const auto s0 = computeStats(*trace, *analysis, 0, trace->extent);
        QVERIFY(match.ranks[0].exposedWaitNs > 0);
        QVERIFY(match.ranks[0].exposedWaitNs <= s0.exposedNs);
    }

    // The same numbers through Exposure's own torch.profiler importer (loadTrace on the .json.gz files): every
    // statistic to the nanosecond, and the cross-rank matching of the 2-GPU pair opened as one folder.
    void importerAgrees_data() { wholeTrace_data(); }
    void importerAgrees()
    {
        QFETCH(QString, file);
        const QString path = QStringLiteral(EXPOSURE_SHARED_TRACES "/kineto-ddp-bert/") + file;
        EXPOSURE_REQUIRE_SHARED(QFile::exists(path), "../shared/traces");
        const auto trace = loadTrace(path.toStdString(), {});
        QCOMPARE(trace->ranks.size(), std::size_t(1));
        const auto analysis = analyze(*trace, Rules::defaults());
        const auto s = computeStats(*trace, *analysis, 0, trace->extent);
        compareWithReadme(s);
        QFETCH(qulonglong, kernels);
        // Every kernel is paired with its launch by correlation id (but the few launched before the
        // profiler started), so phases come from the launching CPU region.
        const RankAnalysis& ra = analysis->ranks[0];
        QCOMPARE(ra.kernelsPaired + ra.kernelsUnpaired, kernels);
        // 2-GPU rank 0: 49 kernels were launched before the profiler started recording (48 compute, 1 NCCL).
        QCOMPARE(ra.kernelsUnpaired, file == QLatin1String("ddp_bert_ws2_rank0.json.gz") ? 49ull : 0ull);
        QCOMPARE(ra.launchPairing, LaunchPairing::CorrelationIds);
        QCOMPARE(analysis->ranks[0].stepSource, StepSource::Regions);
        // The idle breakdown accounts for every idle nanosecond, and a small-batch run is mostly host-bound.
        const IdleBreakdown idle = computeIdleBreakdown(*trace, *analysis, 0, trace->extent);
        QCOMPARE(idle.totalNs(), s.idleNs);
        QVERIFY(idle.hostBoundNs > s.idleNs / 2);
        QCOMPARE(analysis->ranks[0].steps.size(), std::size_t(5));
    }

    void importerMatchesCollectivesOfTheFolder()
    {
        const QString dir = QStringLiteral(EXPOSURE_SHARED_TRACES "/kineto-ddp-bert/");
        EXPOSURE_REQUIRE_SHARED(QFile::exists(dir + QStringLiteral("ddp_bert_ws2_rank0.json.gz")), "../shared/traces");
        // The shared folder also holds the 1-GPU run: read as one run of 3 ranks (in the order of the files), with a
        // warning that names the two jobs by their world sizes.
        {
            const auto both = loadTrace(dir.toStdString(), {});
            QCOMPARE(both->ranks.size(), std::size_t(3));
            const std::string jobs = dir.toStdString()
                + ": the files look like 2 different jobs (different world sizes): ddp_bert_ws1_rank0.json.gz (world "
                  "size 1) and ddp_bert_ws2_rank0.json.gz, ddp_bert_ws2_rank1.json.gz (world size 2); they were "
                  "opened as one run, though their ranks are not one job's (open each job separately, or compare "
                  "them)";
            QCOMPARE(std::count(both->warnings.begin(), both->warnings.end(), jobs), 1l);
        }
        QTemporaryDir tmp;
        for (int r = 0; r < 2; ++r)
            QVERIFY(QFile::copy(dir + QStringLiteral("ddp_bert_ws2_rank%1.json.gz").arg(r),
                tmp.filePath(QStringLiteral("ddp_bert_ws2_rank%1.json.gz").arg(r))));
        const auto trace = loadTrace(tmp.path().toStdString(), {});
        QCOMPARE(trace->ranks.size(), std::size_t(2));
        QCOMPARE(trace->ranks[1].rank, 1);
        const auto analysis = analyze(*trace, Rules::defaults());
        const auto match = matchCollectives(*trace, *analysis);
        QCOMPARE(match.ranks[0].matched, 75ull);
        QCOMPARE(match.ranks[0].waitNs, 280451396ll + 24095);
        QCOMPARE(match.ranks[0].transferNs, 8456574ll);
        QCOMPARE(match.ranks[1].transferNs, 9022852ll);

        // Steps on the GPU: in every rank's step nothing exceeds the step and waiting stays within communication;
        // the five steps hold every matched collective, so their waiting and transfer add up to the whole trace's.
        // Rank 0's first window starts after the 49 kernels launched before recording (they belong to no step).
        for (int r = 0; r < 2; ++r) {
            const RankAnalysis& ra = analysis->ranks[std::size_t(r)];
            QCOMPARE(ra.stepAxis, StepAxis::GpuByLaunch);
            const auto steps = computeStepStats(*trace, *analysis, r);
            const RankCollectiveParts parts(match, r);
            TimeNs wait = 0, transfer = 0;
            for (std::size_t k = 0; k < steps.size(); ++k) {
                const TimeNs length = ra.steps[k].range.duration();
                QVERIFY(steps[k].computeBusyNs <= length && steps[k].commBusyNs <= length);
                QVERIFY(steps[k].gpuBusyNs <= length);
                const CollectiveSplit split = parts.in(ra.steps[k].range);
                QVERIFY(split.waitNs <= steps[k].commBusyNs);
                wait += split.waitNs;
                transfer += split.transferNs;
            }
            QCOMPARE(wait, match.ranks[std::size_t(r)].waitNs);
            QCOMPARE(transfer, match.ranks[std::size_t(r)].transferNs);
        }
        QVERIFY(analysis->ranks[0].steps[0].range.start > analysis->ranks[0].steps[0].hostRange.start);
    }
};

EXPOSURE_DATA_APPLESS_MAIN(TestKinetoReference)
#include "tst_kineto_reference.moc"
