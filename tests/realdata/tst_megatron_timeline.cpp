// SPDX-License-Identifier: GPL-3.0-or-later
// The published Megatron-LM timeline in ../shared/traces/megatron-timeline-st (DP 2 x PP 4 x TP 1, 8 workers, 32 steps,
// 6 784 X events), read through the Chrome trace importer's built-in Megatron mapping. Every number below comes from
// `python3 tests/tools/chrome_unions.py ../shared/traces/megatron-timeline-st/timeline-ST.json.gz`, which reads the
// JSON without Exposure's code (exact decimals, nanoseconds rounded to the nearest). Skipped where ../shared is absent.
#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "analysis/statsparts.h"
#include "run/openrun.h"
#include "support/evenreference.h"
#include "support/shareddata.h"
#include "whatif/whatif.h"

#include <QFile>
#include <QTest>
#include <algorithm>
#include <cstdio>

using namespace exposure;

namespace {

const QString kTimeline = QStringLiteral(EXPOSURE_SHARED_TRACES "/megatron-timeline-st/timeline-ST.json.gz");

// The union of a lane's intervals, in ns.
TimeNs laneBusy(const Lane& lane)
{
    std::vector<std::pair<TimeNs, TimeNs>> v;
    for (std::size_t i = 0; i < lane.intervals.size(); ++i)
        v.emplace_back(lane.intervals.start(i), lane.intervals.end(i));
    std::sort(v.begin(), v.end());
    TimeNs total = 0, reach = std::numeric_limits<TimeNs>::min();
    for (const auto& [s, e] : v) {
        if (e <= reach)
            continue;
        total += e - std::max(s, reach);
        reach = e;
    }
    return total;
}

const Lane* laneEndingWith(const Rank& r, const std::string& suffix)
{
    for (const Lane& l : r.lanes)
        if (l.name.size() >= suffix.size() && l.name.compare(l.name.size() - suffix.size(), suffix.size(), suffix) == 0)
            return &l;
    return nullptr;
}

} // namespace

class TestMegatronTimeline : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        EXPOSURE_REQUIRE_SHARED(QFile::exists(kTimeline), "../shared/traces/megatron-timeline-st");
        RunOptions options;
        options.viewIndex = false;
        m_run = openRun(kTimeline.toStdString(), options);
        StatsReportOptions o;
        o.window = activityRange(*m_run.trace);
        m_report = buildStatsReport(*m_run.trace, *m_run.analysis, o, false);
    }

    void everyWorkerAgrees_data()
    {
        QTest::addColumn<int>("rank");
        QTest::addColumn<int>("dp");
        QTest::addColumn<int>("pp");
        QTest::addColumn<qulonglong>("events");
        QTest::addColumn<qlonglong>("computeBusy");
        QTest::addColumn<qlonglong>("ppComm");
        QTest::addColumn<qlonglong>("dpComm");
        QTest::addColumn<qlonglong>("commBusy");
        QTest::addColumn<qlonglong>("ppExposed");
        QTest::addColumn<qlonglong>("dpExposed");
        QTest::addColumn<qlonglong>("bubbleSum");
        QTest::addColumn<qlonglong>("firstBubble");
        // rank dp pp events compute_busy pp_comm dp_comm comm_busy pp_exposed dp_exposed bubble_sum first_step_bubble
        // (tp 0, tp_comm 0, 32 steps everywhere), as tests/tools/chrome_unions.py prints them
        QTest::newRow("rank 0") << 0 << 0 << 0 << 736ull << 28356682412ll << 104214187ll << 3786865250ll << 3891079437ll
                                << 103659930ll << 3786864223ll << 42502162592ll << 1526554566ll;
        QTest::newRow("rank 1") << 1 << 1 << 0 << 736ull << 28103213962ll << 102064137ll << 3800088959ll << 3902153096ll
                                << 101495510ll << 3800088253ll << 42755631042ll << 1553907898ll;
        QTest::newRow("rank 2") << 2 << 0 << 1 << 960ull << 28139195097ll << 208893080ll << 2645916383ll << 2854809463ll
                                << 208500971ll << 2645915596ll << 42719649907ll << 1536853946ll;
        QTest::newRow("rank 3") << 3 << 1 << 1 << 960ull << 28191337711ll << 208369951ll << 2646270578ll << 2854640529ll
                                << 207931769ll << 2646269325ll << 42667507293ll << 1552489196ll;
        QTest::newRow("rank 4") << 4 << 0 << 2 << 960ull << 28299078696ll << 203994477ll << 2661912699ll << 2865907176ll
                                << 203525248ll << 2661911835ll << 42559766308ll << 1535415989ll;
        QTest::newRow("rank 5") << 5 << 1 << 2 << 960ull << 28236942640ll << 205313585ll << 2661917866ll << 2867231451ll
                                << 204834664ll << 2661916911ll << 42621902364ll << 1554564007ll;
        QTest::newRow("rank 6") << 6 << 0 << 3 << 736ull << 45159151436ll << 100495570ll << 3761781572ll << 3862277142ll
                                << 100232365ll << 3761780788ll << 25699693568ll << 1011218679ll;
        QTest::newRow("rank 7") << 7 << 1 << 3 << 736ull << 45423421206ll << 101362705ll << 3774822313ll << 3876185018ll
                                << 101114597ll << 3774821055ll << 25435423798ll << 1021220890ll;
    }

    void everyWorkerAgrees()
    {
        QFETCH(int, rank);
        QFETCH(int, dp);
        QFETCH(int, pp);
        QFETCH(qulonglong, events);
        QFETCH(qlonglong, computeBusy);
        QFETCH(qlonglong, ppComm);
        QFETCH(qlonglong, dpComm);
        QFETCH(qlonglong, commBusy);
        QFETCH(qlonglong, ppExposed);
        QFETCH(qlonglong, dpExposed);
        QFETCH(qlonglong, bubbleSum);
        QFETCH(qlonglong, firstBubble);
        const Trace& t = *m_run.trace;
        QCOMPARE(t.ranks.size(), std::size_t(8));
        const Rank& r = t.ranks[std::size_t(rank)];
        QCOMPARE(r.rank, rank);
        QVERIFY(r.coords == (ParallelCoords { dp, pp, 0, -1, -1 }));
        QCOMPARE(r.label,
            "Rank " + std::to_string(rank) + " (dp " + std::to_string(dp) + ", pp " + std::to_string(pp) + ", tp 0)");
        std::uint64_t n = 0;
        for (const Lane& l : r.lanes)
            n += l.name == "steps" ? 0 : l.intervals.size();
        QCOMPARE(n, std::uint64_t(events));
        const Lane* pl = laneEndingWith(r, ", pp-comm");
        const Lane* dl = laneEndingWith(r, ", dp-comm");
        QVERIFY(pl && dl && laneEndingWith(r, ", compute"));
        QCOMPARE(pl->commRole, CommRole::PP);
        QCOMPARE(dl->commRole, CommRole::DP);
        QCOMPARE(laneBusy(*pl), TimeNs(ppComm));
        QCOMPARE(laneBusy(*dl), TimeNs(dpComm));
        QCOMPARE(laneBusy(*laneEndingWith(r, ", compute")), TimeNs(computeBusy));
        const WindowStats s = computeStats(t, *m_run.analysis, rank, t.extent);
        QCOMPARE(s.computeBusyNs, TimeNs(computeBusy));
        QCOMPARE(s.commBusyNs, TimeNs(commBusy));
        const RankAnalysis& ra = m_run.analysis->ranks[std::size_t(rank)];
        QCOMPARE(ra.stepSource, StepSource::Regions);
        QCOMPARE(ra.steps.size(), std::size_t(32));
        QCOMPARE(ra.steps.front().name, std::string("step 23"));
        QCOMPARE(ra.steps.back().name, std::string("step 1048"));
        // Communication by role and the pipeline bubbles, from the statistics report over the whole-trace window.
        const RankReport& rr = m_report.ranks[std::size_t(rank)];
        auto role = [&](const char* name) -> const CommRoleReport* {
            for (const CommRoleReport& c : rr.commOps.roles)
                if (c.role == name)
                    return &c;
            return nullptr;
        };
        QVERIFY(role("pp") && role("dp") && !role("tp"));
        QCOMPARE(role("pp")->busyNs, TimeNs(ppComm));
        QCOMPARE(role("dp")->busyNs, TimeNs(dpComm));
        QCOMPARE(role("pp")->exposedNs, TimeNs(ppExposed));
        QCOMPARE(role("dp")->exposedNs, TimeNs(dpExposed));
        QCOMPARE(rr.steps.size(), std::size_t(32));
        TimeNs bubbles = 0;
        for (const StepReport& st : rr.steps)
            bubbles += st.bubbleNs;
        QCOMPARE(bubbles, TimeNs(bubbleSum));
        QCOMPARE(rr.steps.front().bubbleNs, TimeNs(firstBubble));
    }

    // The timers matched by identity: every send with its recv, the dp-comm collectives with their group (all but the
    // layernorm all-reduces: one per worker and step over a tensor-parallel group of one); the members of each start
    // together, as that format records them.
    void timersMatchedByIdentity()
    {
        const CollectiveMatch match = matchCollectives(*m_run.trace, *m_run.analysis);
        QCOMPARE(match.processGroups.size(), std::size_t(2));
        std::uint64_t matched = 0, unmatched = 0;
        for (const RankCollectiveStats& r : match.ranks) {
            matched += r.matched;
            unmatched += r.unmatched;
        }
        QCOMPARE(matched, std::uint64_t(3072 + 896));
        QCOMPARE(unmatched, std::uint64_t(256));
        for (const CollectiveGroup& g : match.groups) {
            QVERIFY(g.waitBeforeStart);
            for (const CollectiveMember& m : g.members)
                QVERIFY2(std::abs(m.start - g.members.front().start) <= 1'000,
                    qPrintable(QString::fromStdString(m_run.trace->name(g.name))));
        }
    }

    // The straggler what-if: the last stage (the loss; its compute 1.39x the typical) costs the job most.
    void lastStageIsTheStraggler()
    {
        const whatif::WhatIfModel model(m_run.trace, m_run.analysis);
        const whatif::EvenResult e = model.even(2);
        QVERIFY2(e.slowdown > 1.15 && e.slowdown < 1.2, qPrintable(QString::number(e.slowdown)));
        for (const auto& [dim, groups] : e.by)
            if (dim == "pp")
                QCOMPARE(groups.front().name, std::string("3"));
    }

    // The attribution's incremental replays equal a full replay per group on the recorded job (DP 2 x PP 4).
    void incrementalEqualsFullReplays()
    {
        const whatif::WhatIfModel model(m_run.trace, m_run.analysis);
        const whatif::EvenResult e = testing::compareWithFullReplays(model);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(e.grid.dpCount, 2);
        QCOMPARE(e.grid.ppCount, 4);
        std::printf("megatron timeline: attribution replays computed %llu events, full replays %llu\n",
            static_cast<unsigned long long>(e.replayedEvents),
            static_cast<unsigned long long>((e.replays - 2) * e.graphEvents));
    }

private:
    OpenedRun m_run;
    StatsReport m_report;
};

EXPOSURE_DATA_GUILESS_MAIN(TestMegatronTimeline)
#include "tst_megatron_timeline.moc"
