// SPDX-License-Identifier: GPL-3.0-or-later
// The statistics report assembled from parts computed on separate partial traces (what the processes of exposure-mpi
// do, here in one process): a 4-rank generated run read as two halves {rank0, rank2} and {rank1, rank3} gives the
// same rank reports, kernel table, collective matching and JSON bytes as the whole trace read at once.
#include "analysis/statsparts.h"
#include "mpi/wire.h"
#include "run/openrun.h"
#include "support/demoarchive.h"

#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <map>
#include <random>

using namespace exposure;
using namespace exposure::mpi;

namespace {

struct Part
{
    std::shared_ptr<Trace> trace;
    std::shared_ptr<Analysis> analysis;
    std::vector<int> global; // global rank index of each local rank
};

} // namespace

class TestStatsParts : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    std::string m_path;
    std::shared_ptr<Trace> m_whole;
    std::shared_ptr<const Analysis> m_wholeAnalysis;
    std::vector<Part> m_parts;
    StatsReportOptions m_options;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_path = testing::writeDemoArchives(m_dir, QStringLiteral("run"), 4, 4);
        m_whole = loadTrace(m_path);
        m_wholeAnalysis = analyze(*m_whole, Rules::defaults());
        m_options.window = m_whole->extent;

        const auto archives = findArchives(m_path);
        QCOMPARE(archives.size(), std::size_t(4));
        for (const std::vector<int>& ranks : { std::vector<int> { 0, 2 }, std::vector<int> { 1, 3 } }) {
            Part p;
            std::vector<ArchiveRef> mine;
            for (int r : ranks)
                mine.push_back(archives[std::size_t(r)]);
            RunOptions part;
            part.part = &mine;
            part.analyse = false;
            p.trace = openRun(m_path, part).trace;
            QCOMPARE(p.trace->ranks.size(), ranks.size());
            // Onto the whole run's time origin (exposure-mpi agrees on it with an all-reduce).
            const TimeNs delta = p.trace->originAbsNs - m_whole->originAbsNs;
            QVERIFY(delta >= 0);
            for (Rank& rank : p.trace->ranks)
                for (Lane& lane : rank.lanes)
                    lane.intervals.shift(delta);
            p.analysis = analyzeRanks(*p.trace, Rules::defaults(), 1);
            p.global = ranks;
            m_parts.push_back(std::move(p));
        }
    }

    void rankReportsAreTheSame()
    {
        for (const Part& p : m_parts) {
            for (std::size_t r = 0; r < p.trace->ranks.size(); ++r) {
                const RankReport local = rankReport(*p.trace, *p.analysis, int(r), m_options, true);
                const RankReport whole = rankReport(*m_whole, *m_wholeAnalysis, p.global[r], m_options, true);
                QCOMPARE(local.rank, p.global[r]);
                QVERIFY(local.stats.kernelCount > 0);
                QVERIFY(local.stats.commBusyNs > 0);
                QCOMPARE(local.stepCount, std::uint64_t(4));
                QCOMPARE(serialize(local), serialize(whole));
                // A report survives the trip through bytes.
                QCOMPARE(serialize(deserializeRankReport(serialize(local))), serialize(local));
            }
        }
    }

    void kernelTableMergesByName()
    {
        KernelParts merged;
        for (auto it = m_parts.rbegin(); it != m_parts.rend(); ++it) // the merge order does not matter
            mergeKernelParts(
                merged, deserializeKernelParts(serialize(kernelParts(*it->trace, *it->analysis, m_options.window))));
        const auto rows = kernelRows(merged);
        const auto expected = kernelTable(*m_whole, *m_wholeAnalysis, m_options.window);
        QCOMPARE(rows.size(), expected.size());
        QVERIFY(rows.size() > 5);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            QCOMPARE(rows[i].name, m_whole->name(expected[i].name));
            QCOMPARE(rows[i].count, expected[i].count);
            QCOMPARE(rows[i].totalNs, expected[i].totalNs);
            QCOMPARE(rows[i].minNs, expected[i].minNs);
            QCOMPARE(rows[i].maxNs, expected[i].maxNs);
            QCOMPARE(rows[i].phase, expected[i].phase);
            QCOMPARE(rows[i].gpuShare, expected[i].gpuShare);
        }
    }

    // Candidates from both halves, names mapped into one table and shuffled: the same groups per rank as
    // matchCollectives() on the whole trace, and the same exposed waiting computed from each half's analysis.
    void collectivesMatchAcrossParts()
    {
        std::vector<CollectiveCandidate> all;
        std::map<std::string, std::uint32_t> names;
        for (const Part& p : m_parts) {
            const CollectiveCandidates c
                = deserializeCollectiveCandidates(serialize(collectiveCandidates(*p.trace, *p.analysis, p.global)));
            QVERIFY(!c.items.empty());
            for (CollectiveCandidate item : c.items) {
                item.name = names.try_emplace(c.names[item.name], std::uint32_t(names.size())).first->second;
                all.push_back(item);
            }
        }
        std::shuffle(all.begin(), all.end(), std::mt19937(7));
        const CollectiveMatch match = matchCandidates(all, 4, false);
        const CollectiveMatch expected = matchCollectives(*m_whole, *m_wholeAnalysis);
        QCOMPARE(match.groups.size(), expected.groups.size());
        QVERIFY(!match.groups.empty());
        const auto waits = waitParts(match);
        for (const Part& p : m_parts) {
            for (std::size_t r = 0; r < p.trace->ranks.size(); ++r) {
                const auto g = std::size_t(p.global[r]);
                const RankCollectiveStats& got = match.ranks[g];
                const RankCollectiveStats& want = expected.ranks[g];
                QVERIFY(got.matched > 0);
                QCOMPARE(got.matched, want.matched);
                QCOMPARE(got.unmatched, want.unmatched);
                QCOMPARE(got.waitNs, want.waitNs);
                QCOMPARE(got.transferNs, want.transferNs);
                QCOMPARE(got.causedWaits, want.causedWaits);
                QCOMPARE(got.causedWaitNs, want.causedWaitNs);
                QCOMPARE(exposedWait(waits[g], p.analysis->ranks[r]), want.exposedWaitNs);
            }
        }
    }

    void assembledReportIsByteIdentical()
    {
        StatsReport report;
        report.tracePath = m_path;
        report.rulesSource = m_wholeAnalysis->rules.source();
        report.ranks.resize(4);
        KernelParts kernels;
        std::vector<CollectiveCandidate> all;
        std::map<std::string, std::uint32_t> names;
        for (const Part& p : m_parts) {
            for (std::size_t r = 0; r < p.trace->ranks.size(); ++r)
                report.ranks[std::size_t(p.global[r])] = rankReport(*p.trace, *p.analysis, int(r), m_options, true);
            mergeKernelParts(kernels, kernelParts(*p.trace, *p.analysis, m_options.window));
            const CollectiveCandidates c = collectiveCandidates(*p.trace, *p.analysis, p.global);
            for (CollectiveCandidate item : c.items) {
                auto remap = [&](std::uint32_t i) {
                    return names.try_emplace(c.names[i], std::uint32_t(names.size())).first->second;
                };
                item.name = remap(item.name);
                item.group = item.group == kNoKey ? kNoKey : remap(item.group);
                item.signature = item.signature == kNoKey ? kNoKey : remap(item.signature);
                all.push_back(item);
            }
        }
        report.kernels = kernelRows(kernels);
        std::vector<std::string> keys(names.size());
        for (const auto& [text, index] : names)
            keys[index] = text;
        const CollectiveMatch match = matchCandidates(all, 4, false, 200'000, keys);
        addCrossRank(report, match, m_parts.front().analysis->rules);
        const auto waits = waitParts(match);
        for (const Part& p : m_parts)
            for (std::size_t r = 0; r < p.trace->ranks.size(); ++r) {
                auto& c = report.ranks[std::size_t(p.global[r])].collectives;
                c = match.ranks[std::size_t(p.global[r])];
                c.exposedWaitNs = exposedWait(waits[std::size_t(p.global[r])], p.analysis->ranks[r]);
                // Each step's waiting and transfer, from the same matching (as exposure-mpi's process 0 does).
                fillStepCollectives(report.ranks[std::size_t(p.global[r])], match, p.global[r], m_options.window);
            }
        fillPeerWaits(report, match, m_options.window);
        // The steps' bubbles from the job's step windows, computed where each rank lives (as exposure-mpi does).
        const auto jobWindows = reportJobWindows(report);
        for (const Part& p : m_parts)
            for (std::size_t r = 0; r < p.trace->ranks.size(); ++r)
                fillStepBubbles(report.ranks[std::size_t(p.global[r])], *p.trace, *p.analysis, int(r), jobWindows,
                    m_options.window);
        const std::string expected = statsJson(*m_whole, *m_wholeAnalysis, m_options);
        QVERIFY(expected.find("\"rank\": 3") != std::string::npos);
        QCOMPARE(statsJson(report, m_options), expected);
        QCOMPARE(statsTable(report, m_options), statsTable(*m_whole, *m_wholeAnalysis, m_options));
    }
};

QTEST_GUILESS_MAIN(TestStatsParts)
#include "tst_statsparts.moc"
