// SPDX-License-Identifier: GPL-3.0-or-later
// Reports of many ranks: exact nearest-rank percentiles, robust outliers of ranks and steps, warnings folded across
// files, and the table that replaces one row per rank.
#include "analysis/heatmap.h"
#include "analysis/ranksummary.h"
#include "analysis/statsparts.h"

#include <QTest>
#include <string>

using namespace exposure;

namespace {

// 20 ranks alike (compute 100 ms + r µs, exposed 10 ms) except rank 13 (compute 150 ms) and rank 7, whose step 3 is
// twice as long as everyone's.
StatsReport manyRanks()
{
    StatsReport report;
    for (int r = 0; r < 20; ++r) {
        RankReport rank;
        rank.rank = r;
        rank.label = "Rank " + std::to_string(r);
        rank.stats.spanNs = 500'000'000;
        rank.stats.computeBusyNs = r == 13 ? 150'000'000 : 100'000'000 + TimeNs(r) * 1000;
        rank.stats.exposedNs = 10'000'000;
        rank.stats.idleNs = 50'000'000 + TimeNs(r) * 10'000;
        for (int k = 0; k < 5; ++k) {
            StepReport s;
            s.index = k;
            s.name = "ProfilerStep#" + std::to_string(k);
            const TimeNs start = TimeNs(k) * 100'000'000;
            s.range = s.hostRange = { start, start + (r == 7 && k == 3 ? 180'000'000 : 90'000'000 + TimeNs(r) * 100) };
            rank.steps.push_back(s);
        }
        report.ranks.push_back(rank);
    }
    return report;
}

} // namespace

class TestRankSummary : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void percentilesAreNearestRank()
    {
        const std::vector<double> four { 1, 2, 3, 4 };
        QCOMPARE(nearestRankPercentile(four, 50), 2.0);
        QCOMPARE(nearestRankPercentile(four, 90), 4.0);
        QCOMPARE(nearestRankPercentile(four, 0), 1.0);
        std::vector<double> ten;
        for (int i = 1; i <= 10; ++i)
            ten.push_back(i * 10);
        QCOMPARE(nearestRankPercentile(ten, 90), 90.0);
        QCOMPARE(nearestRankPercentile(ten, 91), 100.0);
        QCOMPARE(nearestRankPercentile(ten, 50), 50.0);
        QCOMPARE(nearestRankPercentile({ 7 }, 50), 7.0);
    }

    void distributionsAndOutliers()
    {
        const StatsReport report = manyRanks();
        const RankSummary s = summarizeRanks(report);
        const Distribution* compute = nullptr;
        for (const Distribution& d : s.metrics)
            if (d.key == "compute_busy_ns")
                compute = &d;
        QVERIFY(compute);
        QCOMPARE(compute->count, std::size_t(20));
        QCOMPARE(compute->min, 100'000'000.0);
        QCOMPARE(compute->minRank, 0);
        QCOMPARE(compute->max, 150'000'000.0);
        QCOMPARE(compute->maxRank, 13);
        // Sorted: ranks 0..19 without 13 (100 ms + r µs), then 150 ms; p50 is the 10th value (rank 9), p90 the 18th
        // (rank 18).
        QCOMPARE(compute->p50, 100'009'000.0);
        QCOMPARE(compute->p90, 100'018'000.0);
        // Rank 13's compute stands out; the others' 1 µs steps do not.
        QCOMPARE(s.rankOutliers.size(), std::size_t(2)); // compute of rank 13 and the mean step of rank 7
        // Largest |z| first: rank 7's mean step (18 ms above a spread of 100 ns per rank) before rank 13's compute
        // (50 ms above a spread of 1 us per rank).
        QCOMPARE(s.rankOutliers[0].metric, std::string("mean step"));
        QCOMPARE(s.rankOutliers[0].rankIndex, 7);
        QCOMPARE(s.rankOutliers[1].metric, std::string("compute"));
        QCOMPARE(s.rankOutliers[1].rankIndex, 13);
        // Rank 7's step 3 against step 3 of the others.
        QCOMPARE(s.stepOutliers.size(), std::size_t(1));
        QCOMPARE(s.stepOutliers[0].rankIndex, 7);
        QCOMPARE(s.stepOutliers[0].step, 3);
        QCOMPARE(s.stepOutliers[0].value, 180'000'000.0);
    }

    void robustZWithoutSpread()
    {
        // MAD 0 (most values equal): the mean absolute deviation stands in; all equal: nothing stands out.
        const auto z = robustZ({ 5, 5, 5, 5, 9 });
        QCOMPARE(z[0], 0.0);
        QVERIFY(z[4] > 3.5);
        for (const double v : robustZ({ 3, 3, 3, 3 }))
            QCOMPARE(v, 0.0);
    }

    void warningsFold()
    {
        std::vector<std::string> w;
        for (int r = 0; r < 128; ++r)
            w.push_back("/runs/x/rank" + std::to_string(r) + ".json.gz: " + std::to_string(r + 3)
                + " events end before they start (negative \"dur\") and were skipped");
        w.push_back("collectives: something else");
        const auto folded = foldRepeatedWarnings(w);
        QCOMPARE(folded.size(), std::size_t(2));
        QCOMPARE(folded[0],
            std::string("128× /runs/x/rank0.json.gz: 3 events end before they start (negative \"dur\") and were "
                        "skipped (also: /runs/x/rank1.json.gz: 4 events end before they start (negative \"dur\") "
                        "and were skipped, and 126 more alike)"));
        QCOMPARE(folded[1], std::string("collectives: something else"));
    }

    void tableSummarisesManyRanks()
    {
        const StatsReport report = manyRanks();
        StatsReportOptions o;
        o.window = { 0, 500'000'000 };
        const std::string text = statsTable(report, o);
        QVERIFY2(text.find("Ranks: 20, summarised") != std::string::npos, text.c_str());
        QVERIFY(text.find("compute    100 ms  Rank 0    100 ms    100 ms    150 ms  Rank 13\n") != std::string::npos);
        QVERIFY(text.find("idle        50 ms  Rank 0  50.09 ms  50.17 ms  50.19 ms  Rank 19\n") != std::string::npos);
        QVERIFY(text.find("  Rank 7: mean step 108 ms (median 90 ms, robust z +22073.9)\n") != std::string::npos);
        QVERIFY(text.find("  Rank 13: compute 150 ms (median 100 ms, robust z +6130.7)\n") != std::string::npos);
        QVERIFY(text.find("  Rank 7: step 3 180 ms (median 90 ms") != std::string::npos);
        QVERIFY(text.find("20 ranks (Rank 0–19), e.g. Rank 0: GPU idle 10 %") != std::string::npos);
        // No row per rank: rank 19 appears only where a line names it.
        QVERIFY(text.find("Rank 19  ") == std::string::npos);
        int lines = 0;
        for (const char c : text)
            lines += c == '\n';
        QVERIFY2(lines <= 40, qPrintable(QString::number(lines)));
        o.rankDetail = StatsReportOptions::RankDetail::AllRanks;
        const std::string all = statsTable(report, o);
        QVERIFY(all.find("Ranks: 20, summarised") == std::string::npos);
        QVERIFY(all.find("Rank 19") != std::string::npos);
    }

    // A process group of a large job is one short line: more than 8 recorded ranks are printed as ranges.
    void groupRanksAsRanges()
    {
        StatsReport report = manyRanks();
        std::string twenty = "[";
        for (int r = 0; r < 20; ++r)
            twenty += (r ? ", " : "") + std::to_string(r);
        twenty += "]";
        const auto group = [](std::string name, std::string ranks) {
            ProcessGroupMatch pg;
            pg.method = MatchMethod::ProcessGroup;
            pg.name = std::move(name);
            pg.ranks = std::move(ranks);
            return pg;
        };
        report.processGroups = { group("0 (default_pg)", twenty), group("1", "[0, 2]"),
            group("2", "[0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11]"), group("3", "[0, 1, 2, 3, 4, 5, 6, 7]") };
        StatsReportOptions o;
        o.window = { 0, 500'000'000 };
        const std::string text = statsTable(report, o);
        QVERIFY2(text.find("\ngroup 0 (default_pg) ranks 0-19: 0 collectives") != std::string::npos, text.c_str());
        QVERIFY(text.find("\ngroup 1 ranks [0, 2]: ") != std::string::npos);
        QVERIFY(text.find("\ngroup 2 ranks 0-8,10,11: ") != std::string::npos);
        QVERIFY(text.find("\ngroup 3 ranks [0, 1, 2, 3, 4, 5, 6, 7]: ") != std::string::npos);
        // The JSON keeps the list as recorded.
        QVERIFY(statsJson(report, o).find("\"group_ranks\": \"" + twenty + "\"") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestRankSummary)
#include "tst_ranksummary.moc"
