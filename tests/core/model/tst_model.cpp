// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/timeformat.h"
#include "model/trace.h"
#include "model/tracefinalize.h"

#include <QTest>
#include <memory>
#include <random>

using namespace exposure;

class TestModel : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void stringPoolInternsOnce()
    {
        StringPool p;
        const auto a = p.intern("ncclKernel_AllReduce_RING_LL_Sum_float");
        const auto b = p.intern("gemm");
        QCOMPARE(p.intern("ncclKernel_AllReduce_RING_LL_Sum_float"), a);
        QCOMPARE(a, 0u);
        QCOMPARE(b, 1u);
        QCOMPARE(p.size(), std::size_t(2));
        QCOMPARE(p.find("gemm"), b);
        QCOMPARE(p.find("absent"), kInvalidString);
        // Many more strings: earlier views must stay valid (deque storage).
        for (int i = 0; i < 10000; ++i)
            p.intern("k" + std::to_string(i));
        QCOMPARE(p.str(a), std::string("ncclKernel_AllReduce_RING_LL_Sum_float"));
        QCOMPARE(p.find("k9999"), StringId(10001));
    }

    void intervalTablePacksTwelveBytes()
    {
        IntervalTable t;
        t.reserve(1000);
        for (int i = 0; i < 1000; ++i)
            t.append(i * 10, i * 10 + 5, StringId(i % 7), std::uint8_t(i % 3));
        QCOMPARE(t.size(), std::size_t(1000));
        QCOMPARE(t.residentBytes(), std::size_t(12000 + 16)); // 4 + 4 + 4 bytes each, one 16-byte block base
        QCOMPARE(t.start(42), TimeNs(420));
        QCOMPARE(t.end(42), TimeNs(425));
        QCOMPARE(t.name(42), StringId(0));
        QCOMPARE(t.depth(43), std::uint8_t(1));
        QCOMPARE(t.maxDuration(), TimeNs(5));
        QCOMPARE(t.lowerBoundStart(421), std::size_t(43));
    }

    // Starts are 32-bit offsets from a base per 1024 entries; a block spanning 2^32 ns or more, or one appended below
    // its first entry, is kept in full. Every entry reads back exactly in all cases.
    void startColumnKeepsEveryStartExactly()
    {
        StartColumn c;
        std::vector<TimeNs> want;
        const auto add = [&](TimeNs t) {
            c.push_back(t);
            want.push_back(t);
        };
        for (int i = 0; i < 1024; ++i) // block 0: dense, 1 µs apart
            add(TimeNs(i) * 1000);
        for (int i = 0; i < 1024; ++i) // block 1: offsets up to exactly 2^32 - 1 still fit
            add(1'000'000'000 + (i == 1023 ? TimeNs(UINT32_MAX) : TimeNs(i)));
        QCOMPARE(c.wideBlocks(), std::size_t(0));
        for (int i = 0; i < 1024; ++i) // block 2: a 10 s gap inside it
            add(20'000'000'000 + (i >= 500 ? 10'000'000'000 : 0) + TimeNs(i));
        QCOMPARE(c.wideBlocks(), std::size_t(1));
        add(-5); // block 3 starts: negative times are fine
        add(-6); // below the block's first entry: block 3 kept in full
        add(INT64_MAX / 2);
        QCOMPARE(c.wideBlocks(), std::size_t(2));
        QCOMPARE(c.size(), want.size());
        QCOMPARE(c.decoded(), want);
        for (std::size_t i = 0; i < want.size(); ++i)
            QCOMPARE(c[i], want[i]);
        QCOMPARE(c.capacityBytes() >= want.size() * 4 + 4 * 16 + 2 * 1024 * 8, true);
        c.shift(-1'000'000'000'000);
        for (std::size_t i = 0; i < want.size(); ++i)
            QCOMPARE(c[i], want[i] - 1'000'000'000'000);
        c.clear();
        QVERIFY(c.empty());
        QCOMPARE(c.wideBlocks(), std::size_t(0));
    }

    // Random starts (small steps, gaps of seconds to hours, steps back) against a plain vector.
    void startColumnMatchesAPlainVector()
    {
        std::mt19937_64 random(99);
        const auto next = [&](std::uint64_t n) { return random() % n; };
        StartColumn c;
        std::vector<TimeNs> want;
        TimeNs t = -1'000'000;
        for (int i = 0; i < 50000; ++i) {
            const auto kind = next(1000);
            if (kind == 0)
                t += TimeNs(next(7'200)) * 1'000'000'000; // up to two hours
            else if (kind < 4)
                t -= TimeNs(next(1'000'000)); // a step back
            else
                t += TimeNs(next(100'000));
            c.push_back(t);
            want.push_back(t);
        }
        QVERIFY(c.wideBlocks() > 0);
        QVERIFY(c.wideBlocks() < want.size() / StartColumn::kBlockSize);
        QCOMPARE(c.decoded(), want);
        c.shift(123);
        for (std::size_t i = 0; i < want.size(); i += 7)
            QCOMPARE(c[i], want[i] + 123);
    }

    void sortedTableWithLongGapsSearchesExactly()
    {
        IntervalTable t;
        // 3000 intervals with a 6 s gap every 700: some blocks span more than 2^32 ns. Appended in reverse order.
        std::vector<TimeNs> starts;
        TimeNs at = 0;
        for (int i = 0; i < 3000; ++i) {
            at += i % 700 == 699 ? 6'000'000'000 : 100;
            starts.push_back(at);
        }
        for (int i = 2999; i >= 0; --i)
            t.append(starts[std::size_t(i)], starts[std::size_t(i)] + 50, StringId(i % 5));
        const auto order = t.sortByStart();
        QCOMPARE(order.size(), std::size_t(3000));
        QCOMPARE(order[0], 2999u);
        QCOMPARE(t.starts(), starts);
        QCOMPARE(t.name(2999), StringId(2999 % 5));
        QCOMPARE(t.lowerBoundStart(starts[699]), std::size_t(699));
        QCOMPARE(t.lowerBoundStart(starts[699] - 1), std::size_t(699));
        QCOMPARE(t.lowerBoundStart(starts[2999] + 1), std::size_t(3000));
        QCOMPARE(t.lowerBoundStart(-1), std::size_t(0));
        t.shift(1'000'000);
        QCOMPARE(t.start(1500), starts[1500] + 1'000'000);
        QCOMPARE(t.end(1500), starts[1500] + 1'000'050);
    }

    // Launch references: an interval per entry, the CPU lane per run; set() splits and merges runs.
    void launchListStoresRunsOfLanes()
    {
        LaunchList l;
        for (std::uint32_t k = 0; k < 10; ++k)
            l.push_back({ k < 6 ? 0u : 3u, 100 + k });
        l.push_back({ kUnknownLaunch, 0 });
        QCOMPARE(l.size(), std::size_t(11));
        QCOMPARE(l.runCount(), std::size_t(3));
        QCOMPARE(l[5], (LaunchRef { 0, 105 }));
        QCOMPARE(l[6], (LaunchRef { 3, 106 }));
        QCOMPARE(l[10].cpuLane, kUnknownLaunch);
        l.set(2, { 7, 7 }); // splits run 0 into three
        QCOMPARE(l.runCount(), std::size_t(5));
        QCOMPARE(l[1], (LaunchRef { 0, 101 }));
        QCOMPARE(l[2], (LaunchRef { 7, 7 }));
        QCOMPARE(l[3], (LaunchRef { 0, 103 }));
        l.set(2, { 0, 102 }); // merges them again
        QCOMPARE(l.runCount(), std::size_t(3));
        l.set(6, { 0, 106 }); // extends run 0 by one
        QCOMPARE(l.runCount(), std::size_t(3));
        QCOMPARE(l[6], (LaunchRef { 0, 106 }));
        QCOMPARE(l[7], (LaunchRef { 3, 107 }));
        std::vector<LaunchRef> seen(l.begin(), l.end());
        QCOMPARE(seen.size(), std::size_t(11));
        for (std::size_t k = 0; k < seen.size(); ++k)
            QCOMPARE(seen[k], l[k]);
        l.remapIntervals([](LaunchRef r) { return r.cpuLane == 3 ? r.interval + 1000 : r.interval; });
        QCOMPARE(l[9], (LaunchRef { 3, 1109 }));
        QCOMPARE(l[0], (LaunchRef { 0, 100 }));
        l.resize(7, {}); // entries 0-6 are all lane 0 now
        QCOMPARE(l.runCount(), std::size_t(1));
        QCOMPARE(l[6], (LaunchRef { 0, 106 }));
        l.resize(9, { kUnknownLaunch, 0 });
        QCOMPARE(l.runCount(), std::size_t(2));
        QCOMPARE(l[8].cpuLane, kUnknownLaunch);
        QCOMPARE(l.capacityBytes() >= 9 * 4 + 2 * 8, true);
        QVERIFY(l
            == (LaunchList { { 0, 100 }, { 0, 101 }, { 0, 102 }, { 0, 103 }, { 0, 104 }, { 0, 105 }, { 0, 106 },
                { kUnknownLaunch, 0 }, { kUnknownLaunch, 0 } }));
    }

    // Random edits against a plain vector: the same entries, and never two neighbouring runs of one lane.
    void launchListMatchesAPlainVector()
    {
        std::mt19937 random(12345);
        const auto next = [&](std::uint32_t n) { return std::uint32_t(random() % n); };
        LaunchList l;
        std::vector<LaunchRef> want;
        for (int step = 0; step < 20000; ++step) {
            const std::uint32_t lane = next(4) == 3 ? kUnknownLaunch : next(3);
            const LaunchRef ref { lane, next(1000) };
            const std::uint32_t op = next(10);
            if (op < 5 || want.empty()) {
                l.push_back(ref);
                want.push_back(ref);
            } else if (op < 9) {
                const std::size_t k = next(std::uint32_t(want.size()));
                l.set(k, ref);
                want[k] = ref;
            } else {
                const std::size_t n = next(std::uint32_t(want.size() + 20));
                l.resize(n, ref);
                want.resize(n, ref);
            }
        }
        QCOMPARE(l.size(), want.size());
        std::size_t runs = want.empty() ? 0 : 1;
        for (std::size_t k = 0; k < want.size(); ++k) {
            QCOMPARE(l[k], want[k]);
            if (k > 0 && want[k].cpuLane != want[k - 1].cpuLane)
                ++runs;
        }
        QCOMPARE(l.runCount(), runs);
        QVERIFY(std::equal(l.begin(), l.end(), want.begin(), want.end()));
    }

    void longDurationsSurviveSorting()
    {
        IntervalTable t;
        const TimeNs tenSeconds = 10'000'000'000;
        t.append(500, 600, 1);
        t.append(0, tenSeconds, 2); // longer than 2^32 ns
        t.append(100, 100 + tenSeconds * 2, 3, 1);
        t.append(100, 150, 4, 0);
        const auto order = t.sortByStart();
        QCOMPARE(order, (std::vector<std::uint32_t> { 1, 3, 2, 0 }));
        QCOMPARE(t.duration(0), tenSeconds);
        QCOMPARE(t.name(0), StringId(2));
        QCOMPARE(t.name(1), StringId(4));
        QCOMPARE(t.duration(2), tenSeconds * 2);
        QCOMPARE(t.depth(2), std::uint8_t(1));
        QCOMPARE(t.end(3), TimeNs(600));
        QCOMPARE(t.maxDuration(), tenSeconds * 2);
        QVERIFY(t.sortByStart().empty()); // already sorted

        // The table remembers whether appends came in order: after the sort, a later start keeps it sorted; the same
        // start at a smaller depth, or an earlier start after a shift, does not.
        t.append(500, 700, 5, 2);
        QVERIFY(t.sortByStart().empty());
        t.append(500, 800, 6, 1);
        QCOMPARE(t.sortByStart(), (std::vector<std::uint32_t> { 0, 1, 2, 3, 5, 4 }));
        t.shift(1'000);
        t.append(1'500, 1'600, 7, 3); // the last start is 1 500 now: in order
        QVERIFY(t.sortByStart().empty());
        t.append(1'499, 1'600, 8, 0);
        QCOMPARE(t.sortByStart().size(), std::size_t(8));
        QCOMPARE(t.name(3), StringId(8));
        QCOMPARE(t.start(7), TimeNs(1'500));
    }

    void finalizeRemapsLaunchesAndRebases()
    {
        TraceBuilder b;
        const int r = b.addRank("Rank 0");
        const int cpu = b.addLane(r, "Master thread", LaneKind::CpuThread);
        const int gpu = b.addLane(r, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
        // Inserted in Leave order: the inner launch first, the enclosing region last.
        const auto launch = b.addInterval(r, cpu, 1100, 1200, "cuLaunchKernel", RegionKind::HostApi, 1);
        b.addInterval(r, cpu, 1000, 2000, "MmBackward0", RegionKind::HostRegion, 0);
        b.addInterval(r, gpu, 1300, 1900, "ampere_sgemm_128x64_tn", RegionKind::Kernel);
        b.addLaunch(r, gpu, cpu, launch);
        auto& t = b.trace();
        t.originAbsNs = 5'000'000;
        t.finalize(true);
        const auto& lanes = t.ranks[0].lanes;
        QCOMPARE(lanes[cpu].intervals.start(0), TimeNs(0));
        QCOMPARE(t.name(lanes[cpu].intervals.name(0)), std::string("MmBackward0"));
        QCOMPARE(lanes[gpu].launches.size(), std::size_t(1));
        QCOMPARE(lanes[gpu].launches[0].interval, 1u); // remapped to the sorted position
        QCOMPARE(t.name(lanes[cpu].intervals.name(1)), std::string("cuLaunchKernel"));
        QCOMPARE(lanes[gpu].intervals.start(0), TimeNs(300));
        QCOMPARE(t.originAbsNs, TimeNs(5'001'000));
        QCOMPARE(t.extent, (TimeRange { 0, 1000 }));
        QCOMPARE(t.regionKind(lanes[gpu].intervals.name(0)), RegionKind::Kernel);
        QCOMPARE(t.canonicalNames.size(), t.strings.size());
        QCOMPARE(t.intervalCount(), std::size_t(3));
    }

    // finalize on several threads gives what it gives on one: each rank sorted and remapped on its own, the earliest
    // start and the extent over all ranks, the activity from the GPU work.
    void finalizeOnThreadsEqualsOneThread()
    {
        const auto build = [](int threads) {
            auto builder = std::make_unique<TraceBuilder>();
            TraceBuilder& b = *builder;
            for (int r = 0; r < 6; ++r) {
                const int rank = b.addRank("Rank " + std::to_string(r));
                const int cpu = b.addLane(rank, "Master thread", LaneKind::CpuThread);
                const int gpu = b.addLane(rank, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
                for (int k = 4; k >= 0; --k) { // inserted in reverse time order: finalize sorts
                    const TimeNs base = 10'000 + TimeNs(r) * 700 + TimeNs(k) * 2'000;
                    const auto launch
                        = b.addInterval(rank, cpu, base, base + 100, "cuLaunchKernel", RegionKind::HostApi);
                    b.addInterval(rank, gpu, base + 300, base + 900 + TimeNs(r), "gemm", RegionKind::Kernel);
                    b.addLaunch(rank, gpu, cpu, launch);
                }
            }
            finalizeTrace(b.trace(), true, threads);
            return builder;
        };
        const auto oneBuilder = build(1);
        const auto fourBuilder = build(4);
        const Trace* one = &oneBuilder->trace();
        const Trace* four = &fourBuilder->trace();
        QCOMPARE(four->extent, one->extent);
        QCOMPARE(four->activity, one->activity);
        QCOMPARE(four->originAbsNs, TimeNs(10'000));
        QCOMPARE(four->extent, (TimeRange { 0, 3'500 + 8'000 + 900 + 5 }));
        QCOMPARE(four->activity, (TimeRange { 0, 3'500 + 8'000 + 900 + 5 }));
        for (std::size_t r = 0; r < one->ranks.size(); ++r)
            for (std::size_t l = 0; l < 2; ++l) {
                const Lane& a = one->ranks[r].lanes[l];
                const Lane& b = four->ranks[r].lanes[l];
                QCOMPARE(b.intervals.size(), std::size_t(5));
                for (std::size_t i = 0; i < 5; ++i) {
                    QCOMPARE(b.intervals.start(i), a.intervals.start(i));
                    QCOMPARE(b.intervals.start(i), TimeNs(r) * 700 + TimeNs(i) * 2'000 + (l ? 300 : 0));
                }
                if (l == 1) {
                    QCOMPARE(b.launches.size(), std::size_t(5));
                    for (std::size_t i = 0; i < 5; ++i) {
                        QCOMPARE(b.launches[i].interval, a.launches[i].interval); // remapped alike
                        const Lane& cpu = four->ranks[r].lanes[0];
                        QCOMPARE(four->name(cpu.intervals.name(b.launches[i].interval)), std::string("cuLaunchKernel"));
                    }
                }
            }
    }

    void parseDuration_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qlonglong>("ns");
        QTest::addColumn<bool>("ok");
        QTest::newRow("ms") << "1.5ms" << 1'500'000ll << true;
        QTest::newRow("s") << "2s" << 2'000'000'000ll << true;
        QTest::newRow("us") << "350us" << 350'000ll << true;
        QTest::newRow("micro sign") << QStringLiteral("350\u00b5s") << 350'000ll << true;
        QTest::newRow("ns") << "120ns" << 120ll << true;
        QTest::newRow("bare") << "120" << 120ll << true;
        QTest::newRow("space") << " 3 ms " << 3'000'000ll << true;
        QTest::newRow("exp") << "1e3us" << 1'000'000ll << true;
        QTest::newRow("negative") << "-2ms" << -2'000'000ll << true;
        QTest::newRow("bad unit") << "3 parsecs" << 0ll << false;
        QTest::newRow("empty") << "" << 0ll << false;
        QTest::newRow("no number") << "ms" << 0ll << false;
        QTest::newRow("overflow") << "1e30s" << 0ll << false;
    }
    void parseDuration()
    {
        QFETCH(QString, text);
        QFETCH(qlonglong, ns);
        QFETCH(bool, ok);
        const auto v = exposure::parseDuration(text.toStdString());
        QCOMPARE(v.has_value(), ok);
        if (ok)
            QCOMPARE(*v, ns);
    }

    void formatDuration()
    {
        QCOMPARE(exposure::formatDuration(812), std::string("812 ns"));
        QCOMPARE(exposure::formatDuration(3250), std::string("3.25 \xC2\xB5s"));
        QCOMPARE(exposure::formatDuration(12'500'000), std::string("12.5 ms"));
        QCOMPARE(exposure::formatDuration(1'204'000'000), std::string("1.204 s"));
    }
};

QTEST_APPLESS_MAIN(TestModel)
#include "tst_model.moc"
