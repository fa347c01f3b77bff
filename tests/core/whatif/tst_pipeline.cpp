// SPDX-License-Identifier: GPL-3.0-or-later
// Pipeline- and data-parallel jobs with a known answer (support/pipelinejob.h), through the Chrome importer, the
// matching of op-level timers by identity, the per-step bubble and the straggler what-if:
//  * every send meets its recv, every all-gather and reduce-scatter its data-parallel peers, with no time fallback;
//  * each step's bubble is the job's window of the step less the rank's compute, exactly;
//  * the replay without edits gives back every recorded step, and `whatif --even` equals the simulation of the job
//    with every operation at its typical duration, for one worker 2x slower in a DP x PP grid, for one stage with
//    twice the layers and for random jitter only; the attribution names the worker, its stage and its replica.
#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "analysis/heatmap.h"
#include "analysis/statsparts.h"
#include "report/statsreport.h"
#include "run/openrun.h"
#include "support/evenreference.h"
#include "support/files.h"
#include "support/pipelinejob.h"
#include "whatif/whatif.h"

#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <map>

using namespace exposure;
using namespace exposure::testing;
using namespace exposure::whatif;

namespace {

struct Loaded
{
    QTemporaryDir dir;
    OpenedRun run;
};

std::unique_ptr<Loaded> load(const PipelineJob& job, const PipelineTimes& times)
{
    auto out = std::make_unique<Loaded>();
    const QString path = out->dir.filePath(QStringLiteral("timeline.json"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        qFatal("cannot write %s", qPrintable(path));
    f.write(pipelineTimeline(job, times));
    f.close();
    RunOptions o;
    o.collectives = true;
    out->run = openRun(path.toStdString(), o);
    return out;
}

// The typical duration of every operation type, as WhatIfModel::even() takes it: compute the mean (rounded to the
// nearest nanosecond), communication the median (all transfers of a type are alike here).
std::map<std::string, TimeNs> typical(const PipelineTimes& t)
{
    std::map<std::string, std::pair<long double, long>> sums;
    for (const auto& ops : t.ops)
        for (const PipelineOp& op : ops)
            for (const auto& part : op.parts) {
                sums[part.name].first += op.duration;
                ++sums[part.name].second;
            }
    std::map<std::string, TimeNs> out;
    for (const auto& [name, s] : sums)
        out[name] = TimeNs(std::llround(s.first / s.second));
    return out;
}

TimeNs meanStep(const PipelineTimes& t)
{
    long double sum = 0;
    for (const TimeNs s : t.jobStep)
        sum += s;
    return TimeNs(std::llround(sum / t.jobStep.size()));
}

// The job simulated with every operation at its typical duration, except the workers `keep` says to leave as
// recorded.
PipelineTimes evened(const PipelineJob& job, const PipelineTimes& recorded, const std::function<bool(int)>& keep)
{
    const auto typ = typical(recorded);
    return simulate(job,
        [&](int worker, const PipelineOp& op) { return keep(worker) ? op.duration : typ.at(op.parts.front().name); });
}

const EvenResult::Group* groupOf(const EvenResult& e, const std::string& dim, const std::string& name)
{
    for (const auto& [d, groups] : e.by)
        if (d == dim)
            for (const auto& g : groups)
                if (g.name == name)
                    return &g;
    return nullptr;
}

const std::string& topOf(const EvenResult& e, const std::string& dim)
{
    static const std::string none;
    for (const auto& [d, groups] : e.by)
        if (d == dim && !groups.empty())
            return groups.front().name;
    return none;
}

// Checks the what-if of `job` against the simulation: recorded steps, evened steps, slowdown, and every group of
// the rank, dp and pp dimensions kept as recorded.
void checkEven(const PipelineJob& job)
{
    const PipelineTimes rec = simulate(job);
    const auto loaded = load(job, rec);
    const WhatIfModel model(loaded->run.trace, loaded->run.analysis, loaded->run.collectives);
    const EvenResult e = model.even(2);
    const PipelineTimes ev = evened(job, rec, [](int) { return false; });
    QCOMPARE(e.steps.size(), std::size_t(job.steps));
    for (std::size_t s = 0; s < e.steps.size(); ++s) {
        QCOMPARE(e.steps[s].recorded, rec.jobStep[s]);
        QCOMPARE(e.steps[s].evened, ev.jobStep[s]);
    }
    QCOMPARE(e.recordedMean, meanStep(rec));
    QCOMPARE(e.evenedMean, meanStep(ev));
    QCOMPARE(e.slowdown, double(meanStep(rec)) / double(meanStep(ev)));
    // The predicted timeline of the evened job (What If dock, render --even): every compute operation where the
    // simulation puts it.
    whatif::Edits edits;
    edits.even = true;
    const std::shared_ptr<Trace> predicted = model.predictedTrace(edits);
    for (const Rank& rank : predicted->ranks) {
        std::vector<TimeRange> want;
        for (const PipelineOp& op : ev.ops[std::size_t(rank.rank)])
            if (op.compute)
                want.push_back({ op.start, op.end });
        for (const Lane& lane : rank.lanes)
            if (lane.name.size() >= 7 && lane.name.compare(lane.name.size() - 7, 7, "compute") == 0) {
                QCOMPARE(lane.intervals.size(), want.size());
                for (std::size_t i = 0; i < want.size(); ++i) {
                    QCOMPARE(lane.intervals.start(i), want[i].start);
                    QCOMPARE(lane.intervals.end(i), want[i].end);
                }
            }
    }
    const int workers = job.dp * job.pp;
    for (int w = 0; w < workers; ++w) {
        const EvenResult::Group* g = groupOf(e, "rank", std::to_string(w));
        QVERIFY(g);
        QCOMPARE(g->meanStep, meanStep(evened(job, rec, [&](int x) { return x == w; })));
    }
    for (int p = 0; p < job.pp; ++p) {
        const EvenResult::Group* g = groupOf(e, "pp", std::to_string(p));
        QVERIFY(g);
        QCOMPARE(g->meanStep, meanStep(evened(job, rec, [&](int x) { return x / job.dp == p; })));
    }
    for (int d = 0; d < job.dp; ++d) {
        const EvenResult::Group* g = groupOf(e, "dp", std::to_string(d));
        QVERIFY(g);
        QCOMPARE(g->meanStep, meanStep(evened(job, rec, [&](int x) { return x % job.dp == d; })));
    }
}

} // namespace

class TestPipeline : public QObject
{
    Q_OBJECT
private slots:
    // 1F1B over 4 stages and 2 replicas: every transfer and collective is matched by its identity; each step's
    // bubble is the job's window of the step less the rank's compute.
    void oneFOneBMatchedAndItsBubbles()
    {
        PipelineJob job;
        job.oneFOneB = true;
        job.compute = [](int d, int p, int step, int mb, bool backward) {
            return TimeNs((backward ? 2'000'000 : 1'000'000) + 10'000 * p + 3'000 * d + 1'000 * step + 7 * mb);
        };
        const PipelineTimes rec = simulate(job);
        const auto loaded = load(job, rec);
        const Trace& trace = *loaded->run.trace;
        const CollectiveMatch& match = *loaded->run.collectives;
        QCOMPARE(trace.ranks.size(), std::size_t(8));
        // Per step and replica: 3 stage links x 8 microbatches x 2 directions transfers; per step and stage one
        // all-gather and one reduce-scatter over the 2 replicas.
        std::size_t transfers = 0, collectives = 0;
        for (const CollectiveGroup& g : match.groups) {
            QVERIFY(g.waitBeforeStart);
            QCOMPARE(g.members.size(), std::size_t(2));
            const std::string name = trace.name(g.name);
            (name.find("send") != std::string::npos || name.find("recv") != std::string::npos ? transfers
                                                                                              : collectives)++;
            // The members of one operation start together in this format.
            QCOMPARE(g.members[0].start, g.members[1].start);
        }
        QCOMPARE(transfers, std::size_t(3 * 3 * 8 * 2 * 2));
        QCOMPARE(collectives, std::size_t(3 * 4 * 2));
        for (const RankCollectiveStats& r : match.ranks)
            QCOMPARE(r.unmatched, std::uint64_t(0));
        QCOMPARE(match.processGroups.size(), std::size_t(2));
        QCOMPARE(match.processGroups[0].method, MatchMethod::Identity);

        StatsReportOptions o;
        o.window = activityRange(trace);
        const StatsReport report = buildStatsReport(trace, *loaded->run.analysis, o, false);
        for (std::size_t r = 0; r < report.ranks.size(); ++r) {
            const int number = trace.ranks[r].rank;
            QCOMPARE(report.ranks[r].steps.size(), std::size_t(job.steps));
            for (int s = 0; s < job.steps; ++s) {
                TimeNs first = std::numeric_limits<TimeNs>::max(), last = 0, compute = 0;
                for (const auto& ops : rec.ops)
                    for (const PipelineOp& op : ops)
                        if (op.step == s) {
                            first = std::min(first, op.start);
                            last = std::max(last, op.end);
                        }
                // The rank's compute inside the job's window, whatever step it belongs to (a later stage starts a
                // step while an earlier one still runs the last).
                for (const PipelineOp& op : rec.ops[std::size_t(number)])
                    if (op.compute)
                        compute += std::max<TimeNs>(0, std::min(op.end, last) - std::max(op.start, first));
                QCOMPARE(report.ranks[r].steps[std::size_t(s)].number, job.firstStep + s);
                QCOMPARE(report.ranks[r].steps[std::size_t(s)].bubbleNs, last - first - compute);
            }
        }
        // The replay without edits gives back every step of every rank.
        const WhatIfModel model(loaded->run.trace, loaded->run.analysis, loaded->run.collectives);
        const EvenResult e = model.even(2);
        for (std::size_t s = 0; s < e.steps.size(); ++s)
            QCOMPARE(e.steps[s].recorded, rec.jobStep[s]);
    }

    // One worker (DP rank 1, stage 2: rank 5) computes 2x slower.
    void slowWorkerInGrid()
    {
        PipelineJob job;
        job.compute = [](int d, int p, int, int, bool backward) {
            return TimeNs((backward ? 2'000'000 : 1'000'000) * (d == 1 && p == 2 ? 2 : 1));
        };
        checkEven(job);
        const PipelineTimes rec = simulate(job);
        const auto loaded = load(job, rec);
        const EvenResult e = WhatIfModel(loaded->run.trace, loaded->run.analysis, loaded->run.collectives).even(1);
        QVERIFY2(e.slowdown > 1.3, qPrintable(QString::number(e.slowdown)));
        QCOMPARE(topOf(e, "rank"), std::string("5"));
        QCOMPARE(topOf(e, "pp"), std::string("2"));
        QCOMPARE(topOf(e, "dp"), std::string("1"));
        QVERIFY(evenTable(e).find("rank 5 alone costs") != std::string::npos);

        // The slowdown heat map: each cell the job's step with that worker alone as recorded minus the evened job's
        // step, exactly as the simulation gives it and as the attribution replays gave it; the slow worker's cells are
        // each step's largest, and the colour scale's top.
        StepHeatMap map = computeStepHeatMap(*loaded->run.trace, *loaded->run.analysis, loaded->run.collectives.get());
        QVERIFY(!map.available(HeatMetric::Slowdown));
        addSlowdown(map, *loaded->run.trace, e);
        QVERIFY(map.available(HeatMetric::Slowdown));
        const HeatMatrix m = heatMatrix(map, HeatMetric::Slowdown);
        QCOMPARE(m.rows, std::size_t(8));
        QCOMPARE(m.columns, std::size_t(job.steps));
        const PipelineTimes ev = evened(job, rec, [](int) { return false; });
        TimeNs slowMax = 0;
        for (std::size_t r = 0; r < m.rows; ++r) {
            const int worker = loaded->run.trace->ranks[r].rank;
            const PipelineTimes kept = evened(job, rec, [&](int x) { return x == worker; });
            const EvenResult::Group* g = groupOf(e, "rank", std::to_string(worker));
            QVERIFY(g);
            for (std::size_t c = 0; c < m.columns; ++c) {
                QVERIFY(m.present[m.at(r, c)]);
                const TimeNs v = m.values[m.at(r, c)];
                QCOMPARE(v, kept.jobStep[c] - ev.jobStep[c]);
                const int index = map.columns[c].stepIndex;
                QCOMPARE(v, g->steps.at(index) - e.evenedSteps.at(index));
                if (worker == 5)
                    slowMax = std::max(slowMax, v);
                else
                    QVERIFY2(v < m.values[m.at(std::size_t(5), c)], qPrintable(QString::number(worker)));
            }
        }
        QCOMPARE(loaded->run.trace->ranks[5].rank, 5);
        QVERIFY(slowMax > 1'000'000); // the slow worker alone adds more than a millisecond to every step
        QCOMPARE(m.maxValue, slowMax);
    }

    // The same worker slowed in Megatron's 1F1B schedule, whose sends and receives are batched in pairs.
    void slowWorkerInOneFOneB()
    {
        PipelineJob job;
        job.oneFOneB = true;
        job.compute = [](int d, int p, int, int, bool backward) {
            return TimeNs((backward ? 2'000'000 : 1'000'000) * (d == 1 && p == 2 ? 2 : 1));
        };
        checkEven(job);
    }

    // One stage (the last) holds twice the layers: its compute takes twice as long on both replicas.
    void stageWithTwiceTheLayers()
    {
        PipelineJob job;
        job.compute = [](int, int p, int, int, bool backward) {
            return TimeNs((backward ? 2'000'000 : 1'000'000) * (p == 3 ? 2 : 1));
        };
        checkEven(job);
        const PipelineTimes rec = simulate(job);
        const auto loaded = load(job, rec);
        const EvenResult e = WhatIfModel(loaded->run.trace, loaded->run.analysis, loaded->run.collectives).even(2);
        QCOMPARE(topOf(e, "pp"), std::string("3"));
        // Both replicas carry the slow stage alike: neither DP rank alone brings the step back.
        const EvenResult::Group* d0 = groupOf(e, "dp", "0");
        const EvenResult::Group* d1 = groupOf(e, "dp", "1");
        QVERIFY(d0 && d1);
        QCOMPARE(d0->meanStep, d1->meanStep);
        QVERIFY(groupOf(e, "pp", "3")->slowdown > d0->slowdown);
    }

    // The attribution's incremental replays equal full replays, group by group and cell by cell, on every kind of
    // job above: a slow worker (GPipe and 1F1B), a heavy stage, jitter.
    void incrementalEqualsFullReplays_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<bool>("oneFOneB");
        QTest::newRow("slow worker, GPipe") << 0 << false;
        QTest::newRow("slow worker, 1F1B") << 0 << true;
        QTest::newRow("heavy stage, GPipe") << 1 << false;
        QTest::newRow("heavy stage, 1F1B") << 1 << true;
        QTest::newRow("jitter, 1F1B") << 2 << true;
    }
    void incrementalEqualsFullReplays()
    {
        QFETCH(int, kind);
        QFETCH(bool, oneFOneB);
        PipelineJob job;
        job.oneFOneB = oneFOneB;
        job.dp = 3; // a tp-free 3 x 4 grid: 12 workers, 12 cells
        job.compute = [kind](int d, int p, int step, int mb, bool backward) {
            const double base = backward ? 2'000'000 : 1'000'000;
            if (kind == 0)
                return TimeNs(base * (d == 1 && p == 2 ? 2 : 1));
            if (kind == 1)
                return TimeNs(base * (p == 3 ? 2 : 1));
            const std::uint32_t x = std::uint32_t(d * 7919 + p * 104729 + step * 1299709 + mb * 15485863 + backward);
            return TimeNs(base * (0.95 + double((x * 2654435761u) % 1001) / 10000.0));
        };
        const PipelineTimes rec = simulate(job);
        const auto loaded = load(job, rec);
        const WhatIfModel model(loaded->run.trace, loaded->run.analysis, loaded->run.collectives);
        const EvenResult e = compareWithFullReplays(model);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(e.grid.dpCount, 3);
        QCOMPARE(e.grid.ppCount, 4);
    }

    // The DP rank x stage grid of the 2 x 4 job with one slow worker (DP rank 1, stage 2): each cell the job's mean
    // step with only that worker as recorded, exactly as the simulation gives it; the slow worker's cell alone above
    // the evened step, every other cell exactly the evened step (a worker faster than the mean does not shorten a
    // step that its peers at the mean set).
    void slowWorkerGrid()
    {
        PipelineJob job;
        job.compute = [](int d, int p, int, int, bool backward) {
            return TimeNs((backward ? 2'000'000 : 1'000'000) * (d == 1 && p == 2 ? 2 : 1));
        };
        const PipelineTimes rec = simulate(job);
        const auto loaded = load(job, rec);
        EvenOptions o;
        o.threads = 2;
        o.grid = true;
        const EvenResult e = WhatIfModel(loaded->run.trace, loaded->run.analysis, loaded->run.collectives).even(o);
        QCOMPARE(e.grid.dpCount, 2);
        QCOMPARE(e.grid.ppCount, 4);
        const TimeNs evenedMean = meanStep(evened(job, rec, [](int) { return false; }));
        QCOMPARE(e.evenedMean, evenedMean);
        for (int d = 0; d < 2; ++d)
            for (int p = 0; p < 4; ++p) {
                QVERIFY(e.grid.present[std::size_t(d * 4 + p)]);
                const EvenResult::Group& cell = e.grid.cell(d, p);
                QCOMPARE(cell.name, std::to_string(d) + "," + std::to_string(p));
                const TimeNs want = meanStep(evened(job, rec, [&](int w) { return w == d + 2 * p; }));
                QCOMPARE(cell.meanStep, want);
                if (d == 1 && p == 2) {
                    QVERIFY2(cell.slowdown > 1.3, qPrintable(QString::number(cell.slowdown)));
                } else {
                    QCOMPARE(cell.meanStep, evenedMean);
                    QVERIFY(cell.slowdown == 1.0);
                }
            }
    }

    // Random jitter only (a fixed sequence, +-5 % on every compute): the slowdown is close to 1 and still exact.
    void jitterOnly()
    {
        PipelineJob job;
        job.compute = [](int d, int p, int step, int mb, bool backward) {
            std::uint32_t x
                = std::uint32_t(d * 7919 + p * 104729 + step * 1299709 + mb * 15485863 + (backward ? 1 : 0));
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            const double u = double(x % 10001) / 10000.0 * 0.1 - 0.05;
            return TimeNs(std::llround((backward ? 2'000'000 : 1'000'000) * (1.0 + u)));
        };
        checkEven(job);
        const PipelineTimes rec = simulate(job);
        const auto loaded = load(job, rec);
        const EvenResult e = WhatIfModel(loaded->run.trace, loaded->run.analysis, loaded->run.collectives).even(2);
        QVERIFY2(e.slowdown >= 1.0 && e.slowdown < 1.08, qPrintable(QString::number(e.slowdown)));
    }
};

QTEST_GUILESS_MAIN(TestPipeline)
#include "tst_pipeline.moc"
