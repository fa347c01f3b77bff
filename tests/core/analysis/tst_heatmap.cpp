// SPDX-License-Identifier: GPL-3.0-or-later
// The rank × step heat map (analysis/heatmap.h): robust z-scores on samples with known medians and deviations, and
// on a generated 20-rank run with one slow rank the cells against the per-step statistics (exact ns), hand-computed
// values, the outlier marks, the row orders and the straggler ranking.
#include "analysis/collectives.h"
#include "analysis/heatmap.h"
#include "support/heatmaptraces.h"

#include <QTest>
#include <algorithm>
#include <numeric>

using namespace exposure;
using L = testing::StragglerLayout;

namespace {

constexpr int kRanks = 20, kSteps = 4, kSlow = 13;

struct Run
{
    std::shared_ptr<Trace> trace;
    std::shared_ptr<const Analysis> analysis;
    CollectiveMatch match;
};

Run stragglerRun(int hosts = 1)
{
    Run r;
    r.trace = testing::makeStragglerTrace(kRanks, kSteps, kSlow, hosts);
    r.analysis = analyze(*r.trace, Rules::defaults());
    r.match = matchCollectives(*r.trace, *r.analysis);
    return r;
}

} // namespace

class TestHeatMap : public QObject
{
    Q_OBJECT
private slots:
    void robustZ_data();
    void robustZ();
    void cellsEqualStepStatistics();
    void handComputedCells();
    void outliersAreTheSlowRank();
    void rankOrders();
    void stragglerRanking();
    void bubbleIsTheJobWindowLessCompute();
    void metricNames();
};

void TestHeatMap::robustZ_data()
{
    QTest::addColumn<std::vector<double>>("xs");
    QTest::addColumn<std::vector<double>>("expected");
    // median 3, |x - 3| = {2, 1, 0, 1, 97}: MAD 1.
    QTest::newRow("mad") << std::vector<double> { 1, 2, 3, 4, 100 }
                         << std::vector<double> { -2 * 0.6745, -0.6745, 0, 0.6745, 97 * 0.6745 };
    // Even count: median (2 + 3) / 2 = 2.5; deviations {1.5, 0.5, 0.5, 7.5}: MAD (0.5 + 1.5) / 2 = 1.
    QTest::newRow("even") << std::vector<double> { 1, 2, 3, 10 }
                          << std::vector<double> { -1.5 * 0.6745, -0.5 * 0.6745, 0.5 * 0.6745, 7.5 * 0.6745 };
    // MAD 0: mean absolute deviation 4 / 5 = 0.8, z = (x - 5) / (1.2533 * 0.8).
    QTest::newRow("mad zero") << std::vector<double> { 5, 5, 5, 5, 9 }
                              << std::vector<double> { 0, 0, 0, 0, 4 / (1.2533 * 0.8) };
    QTest::newRow("all equal") << std::vector<double> { 7, 7, 7 } << std::vector<double> { 0, 0, 0 };
    QTest::newRow("one") << std::vector<double> { 42 } << std::vector<double> { 0 };
}

void TestHeatMap::robustZ()
{
    QFETCH(std::vector<double>, xs);
    QFETCH(std::vector<double>, expected);
    const std::vector<double> z = exposure::robustZ(xs);
    QCOMPARE(z.size(), expected.size());
    for (std::size_t i = 0; i < z.size(); ++i)
        QVERIFY2(std::abs(z[i] - expected[i]) < 1e-12,
            qPrintable(
                QStringLiteral("z[%1] = %2, expected %3").arg(i).arg(z[i], 0, 'g', 17).arg(expected[i], 0, 'g', 17)));
}

void TestHeatMap::cellsEqualStepStatistics()
{
    const Run run = stragglerRun();
    const StepHeatMap map = computeStepHeatMap(*run.trace, *run.analysis, &run.match);
    QCOMPARE(map.rankCount, std::size_t(kRanks));
    QCOMPARE(map.columns.size(), std::size_t(kSteps));
    QVERIFY(map.hasWaiting);
    for (int r = 0; r < kRanks; ++r) {
        const auto& steps = run.analysis->ranks[std::size_t(r)].steps;
        QCOMPARE(steps.size(), std::size_t(kSteps));
        const std::vector<WindowStats> stats = computeStepStats(*run.trace, *run.analysis, r);
        for (std::size_t k = 0; k < steps.size(); ++k) {
            QCOMPARE(map.columns[k].stepIndex, steps[k].index);
            const StepHeatMap::Cell& c = map.cell(std::size_t(r), k);
            QVERIFY(c.present);
            QCOMPARE(c.window, steps[k].range);
            QCOMPARE(c.values[std::size_t(HeatMetric::Step)], steps[k].range.duration());
            QCOMPARE(c.values[std::size_t(HeatMetric::Compute)], stats[k].computeBusyNs);
            QCOMPARE(c.values[std::size_t(HeatMetric::Exposed)], stats[k].exposedNs);
            QCOMPARE(c.values[std::size_t(HeatMetric::Idle)], stats[k].idleNs);
            QCOMPARE(c.values[std::size_t(HeatMetric::Waiting)],
                collectiveSplitInWindow(run.match, r, steps[k].range).waitNs);
        }
    }
    // A column's window is the union of the ranks' windows of that step: the slow rank's is the longest.
    for (std::size_t k = 0; k < map.columns.size(); ++k)
        QCOMPARE(map.columns[k].window, (TimeRange { TimeNs(k) * L::kStep, TimeNs(k) * L::kStep + L::kSlowStep }));
}

void TestHeatMap::handComputedCells()
{
    const Run run = stragglerRun();
    const StepHeatMap map = computeStepHeatMap(*run.trace, *run.analysis, &run.match);
    auto value = [&](int rank, std::size_t step, HeatMetric m) {
        return map.cell(std::size_t(rank), step).values[std::size_t(m)];
    };
    for (std::size_t k = 0; k < std::size_t(kSteps); ++k) {
        // After the last step no GPU activity follows: its idle time ends with the last kernel (activityExtent).
        const TimeNs tail = k + 1 < std::size_t(kSteps) ? 1 : 0;
        for (const int r : { 0, 1, 2 }) {
            QCOMPARE(value(r, k, HeatMetric::Step), L::kNormalStep);
            QCOMPARE(value(r, k, HeatMetric::Compute), 6'400 * L::kUs - L::jitter(r));
            QCOMPARE(value(r, k, HeatMetric::Exposed), L::kNcclEnd - L::kNormalNcclStart); // 1.4 ms
            QCOMPARE(value(r, k, HeatMetric::Waiting), L::kSlowNcclStart - L::kNormalNcclStart); // 0.9 ms
            // 7 gaps of 0.2 ms between kernels, the jitter before the all-reduce, 0.2 ms after it.
            QCOMPARE(value(r, k, HeatMetric::Idle), 1'400 * L::kUs + L::jitter(r) + tail * 200 * L::kUs);
        }
        QCOMPARE(value(kSlow, k, HeatMetric::Step), L::kSlowStep);
        QCOMPARE(value(kSlow, k, HeatMetric::Compute), 8 * L::kMs);
        QCOMPARE(value(kSlow, k, HeatMetric::Exposed), L::kNcclEnd - L::kSlowNcclStart); // 0.5 ms
        QCOMPARE(value(kSlow, k, HeatMetric::Waiting), TimeNs(0));
        QCOMPARE(value(kSlow, k, HeatMetric::Idle), 700 * L::kUs + tail * 400 * L::kUs);
    }
}

void TestHeatMap::outliersAreTheSlowRank()
{
    const Run run = stragglerRun();
    const StepHeatMap map = computeStepHeatMap(*run.trace, *run.analysis, &run.match);
    for (const HeatMetric m :
        { HeatMetric::Step, HeatMetric::Compute, HeatMetric::Exposed, HeatMetric::Waiting, HeatMetric::Idle }) {
        const HeatMatrix h = heatMatrix(map, m);
        QCOMPARE(h.outlierCount(), std::size_t(kSteps));
        for (std::size_t r = 0; r < h.rows; ++r)
            for (std::size_t c = 0; c < h.columns; ++c)
                QVERIFY2(bool(h.outlier[h.at(r, c)]) == (int(r) == kSlow),
                    qPrintable(QStringLiteral("%1: rank %2 step %3, z %4")
                                   .arg(QString::fromLatin1(heatMetricName(m)))
                                   .arg(r)
                                   .arg(c)
                                   .arg(h.z[h.at(r, c)])));
    }
    // Compute, column 0: values 6.38 ms (×6), 6.39 ms (×6), 6.40 ms (×7), 8 ms: median 6.39 ms, MAD 10 us.
    const HeatMatrix compute = heatMatrix(map, HeatMetric::Compute);
    QVERIFY(std::abs(compute.z[compute.at(kSlow, 0)] - 0.6745 * 1'610.0 / 10.0) < 1e-9);
    QVERIFY(std::abs(compute.z[compute.at(0, 0)] - 0.6745) < 1e-9);
    QCOMPARE(compute.minValue, 6'380 * L::kUs);
    QCOMPARE(compute.maxValue, 8 * L::kMs);
    // Step time, column 0: 19 × 9.4 ms and 9.6 ms: MAD 0, mean absolute deviation 0.2 ms / 20 = 10 us.
    const HeatMatrix step = heatMatrix(map, HeatMetric::Step);
    QVERIFY(std::abs(step.z[step.at(kSlow, 0)] - 200.0 / (1.2533 * 10.0)) < 1e-9);
    QCOMPARE(step.z[step.at(0, 0)], 0.0);
    // Without a matching there is no waiting metric: nothing present, nothing marked.
    const StepHeatMap alone = computeStepHeatMap(*run.trace, *run.analysis, nullptr);
    QVERIFY(!alone.hasWaiting);
    const HeatMatrix waiting = heatMatrix(alone, HeatMetric::Waiting);
    QCOMPARE(waiting.outlierCount(), std::size_t(0));
    QCOMPARE(std::count(waiting.present.begin(), waiting.present.end(), 1), 0);
}

void TestHeatMap::rankOrders()
{
    const Run run = stragglerRun(2);
    const StepHeatMap map = computeStepHeatMap(*run.trace, *run.analysis, &run.match);
    const HeatMatrix compute = heatMatrix(map, HeatMetric::Compute);
    std::vector<int> number(kRanks);
    std::iota(number.begin(), number.end(), 0);
    QCOMPARE(orderRanks(*run.trace, compute, RankOrder::Number), number);
    QCOMPARE(orderRanks(*run.trace, compute, RankOrder::Stage), number); // no stages known
    std::vector<int> host;
    for (int r = 0; r < kRanks; r += 2)
        host.push_back(r);
    for (int r = 1; r < kRanks; r += 2)
        host.push_back(r);
    QCOMPARE(orderRanks(*run.trace, compute, RankOrder::Host), host);
    // Value: largest mean compute first: the slow rank, then jitter 0 (r % 3 == 0), 1, 2, each by number.
    std::vector<int> value { kSlow };
    for (int j = 0; j < 3; ++j)
        for (int r = 0; r < kRanks; ++r)
            if (r != kSlow && r % 3 == j)
                value.push_back(r);
    QCOMPARE(orderRanks(*run.trace, compute, RankOrder::Value), value);
}

void TestHeatMap::stragglerRanking()
{
    const Run run = stragglerRun();
    const StepHeatMap map = computeStepHeatMap(*run.trace, *run.analysis, &run.match);
    const std::vector<StragglerRank> s = rankStragglers(map, &run.match);
    QCOMPARE(s.size(), std::size_t(kRanks));
    QCOMPARE(s.front().rank, kSlow);
    QCOMPARE(s.front().arrivedLast, std::uint64_t(kSteps));
    QCOMPARE(s.front().causedWaitNs, TimeNs(kSteps) * (kRanks - 1) * 900 * L::kUs);
    QCOMPARE(s.front().excessStepNs, TimeNs(kSteps) * (L::kSlowStep - L::kNormalStep));
    QCOMPARE(s.front().slowSteps, std::uint64_t(kSteps));
    for (std::size_t i = 1; i < s.size(); ++i) {
        QCOMPARE(s[i].rank, int(i <= std::size_t(kSlow) ? i - 1 : i)); // the rest by index
        QCOMPARE(s[i].arrivedLast, std::uint64_t(0));
        QCOMPARE(s[i].excessStepNs, TimeNs(0));
    }
}

// The bubble of a cell: the job's window of that step (every rank's step window is [k·10, k·10 + 9.6) ms, so the hull
// is the same) less the rank's compute in it, all of which lies in its own window: 9.6 ms less the compute cell.
void TestHeatMap::bubbleIsTheJobWindowLessCompute()
{
    const Run run = stragglerRun();
    const StepHeatMap map = computeStepHeatMap(*run.trace, *run.analysis, &run.match);
    QVERIFY(map.hasBubble);
    QVERIFY(map.available(HeatMetric::Bubble));
    const HeatMatrix bubble = heatMatrix(map, HeatMetric::Bubble);
    const HeatMatrix compute = heatMatrix(map, HeatMetric::Compute);
    QCOMPARE(std::count(bubble.present.begin(), bubble.present.end(), 1), std::ptrdiff_t(20 * 4));
    for (std::size_t r = 0; r < bubble.rows; ++r)
        for (std::size_t c = 0; c < bubble.columns; ++c)
            QCOMPARE(bubble.values[bubble.at(r, c)], 9'600'000 - compute.values[compute.at(r, c)]);
    QCOMPARE(bubble.values[bubble.at(13, 0)], TimeNs(1'600'000)); // the slow rank computes 8 ms of the 9.6
}

void TestHeatMap::metricNames()
{
    for (std::size_t k = 0; k < kHeatMetricCount; ++k)
        QCOMPARE(heatMetricFromName(heatMetricName(HeatMetric(k))), std::optional(HeatMetric(k)));
    QCOMPARE(heatMetricFromName("waiting"), std::optional(HeatMetric::Waiting));
    QVERIFY(!heatMetricFromName("wait"));
    QCOMPARE(rankOrderFromName("host"), std::optional(RankOrder::Host));
    QVERIFY(!rankOrderFromName("rank"));
}

QTEST_APPLESS_MAIN(TestHeatMap)
#include "tst_heatmap.moc"
