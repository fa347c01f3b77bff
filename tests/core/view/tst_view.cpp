// SPDX-License-Identifier: GPL-3.0-or-later
// Pure view logic: draw-list folding (data-driven), LOD equivalence, hit testing, zoom history, ticks, the recorded
// activity that Zoom to Fit shows.
#include "view/drawlist.h"
#include "view/hittest.h"
#include "view/timeaxis.h"
#include "view/viewindex.h"
#include "view/zoomhistory.h"

#include <QTest>
#include <random>

using namespace exposure;

using Spans = QList<QPair<qint64, qint64>>;
using Rows = QList<QList<int>>;

namespace {

// Intervals given as "start-end" pairs; names are the index so results can be checked.
IntervalTable table(const QList<QPair<qint64, qint64>>& spans)
{
    IntervalTable t;
    for (int i = 0; i < spans.size(); ++i)
        t.append(spans[i].first, spans[i].second, StringId(i));
    return t;
}

struct Expect
{
    int x0, x1;
    std::uint32_t first, count, largest;
};

QString describe(const std::vector<DrawItem>& items)
{
    QStringList out;
    for (const auto& i : items)
        out << QStringLiteral("[%1,%2) first=%3 count=%4 largest=%5 t=%6..%7")
                   .arg(i.x0)
                   .arg(i.x1)
                   .arg(i.first)
                   .arg(i.count)
                   .arg(i.largest)
                   .arg(i.start)
                   .arg(i.end);
    return out.join(QStringLiteral("; "));
}

} // namespace

class TestView : public QObject
{
    Q_OBJECT
private slots:
    void folding_data();
    void folding();
    void lodMatchesLinearWalk_data();
    void lodMatchesLinearWalk();
    void foldingBoundsTheListAtMillions();
    void lowPriorityNamesDoNotRepresentFolds();
    void hitItem_data();
    void hitItem();
    void hitInterval();
    void zoomHistory();
    void tickLabels_data();
    void tickLabels();
    void niceSteps();
    void activityLeavesOutPollingThreads_data();
    void activityLeavesOutPollingThreads();
};

void TestView::folding_data()
{
    QTest::addColumn<Spans>("spans");
    QTest::addColumn<qint64>("t0");
    QTest::addColumn<qint64>("t1");
    QTest::addColumn<double>("nsPerPixel");
    QTest::addColumn<double>("minPixels");
    QTest::addColumn<Rows>("expected"); // x0, x1, first, count, largest

    using S = Spans;
    using E = Rows;
    // 10 ns per pixel, minimum 2 px = 20 ns.
    QTest::newRow("wide intervals stay single") << S { { 0, 100 }, { 200, 300 } } << qint64(0) << qint64(1000) << 10.0
                                                << 2.0 << E { { 0, 10, 0, 1, 0 }, { 20, 30, 1, 1, 1 } };
    QTest::newRow("exactly minPixels is wide") << S { { 0, 20 }, { 25, 45 } } << qint64(0) << qint64(1000) << 10.0
                                               << 2.0 << E { { 0, 2, 0, 1, 0 }, { 2, 4, 1, 1, 1 } };
    QTest::newRow("narrow neighbours fold, largest is the longest") << S { { 0, 5 }, { 10, 22 - 3 },
        { 30, 35 } } << qint64(0) << qint64(1000) << 10.0 << 2.0 << E { { 0, 3, 0, 3, 1 } };
    QTest::newRow("gap of minPixels splits runs")
        << S { { 0, 5 }, { 10, 15 }, { 35, 40 }, { 45, 50 } } << qint64(0) << qint64(1000) << 10.0 << 2.0
        << E { { 0, 1, 0, 2, 0 }, { 3, 5, 2, 2, 2 } };
    QTest::newRow("gap just under minPixels joins")
        << S { { 0, 5 }, { 24, 29 } } << qint64(0) << qint64(1000) << 10.0 << 2.0 << E { { 0, 2, 0, 2, 0 } };
    QTest::newRow("single narrow interval is one pixel wide")
        << S { { 101, 103 } } << qint64(0) << qint64(1000) << 10.0 << 2.0 << E { { 10, 11, 0, 1, 0 } };
    QTest::newRow("wide interval ends a run")
        << S { { 0, 5 }, { 8, 12 }, { 14, 100 }, { 101, 104 } } << qint64(0) << qint64(1000) << 10.0 << 2.0
        << E { { 0, 1, 0, 2, 0 }, { 1, 10, 2, 1, 2 }, { 10, 11, 3, 1, 3 } };
    QTest::newRow("equal durations: first longest wins")
        << S { { 0, 4 }, { 6, 10 }, { 12, 16 } } << qint64(0) << qint64(1000) << 10.0 << 2.0 << E { { 0, 1, 0, 3, 0 } };
    QTest::newRow("outside the range is culled, overlap at t0 kept")
        << S { { 0, 50 }, { 90, 150 }, { 400, 500 }, { 1000, 1100 } } << qint64(100) << qint64(1000) << 10.0 << 2.0
        << E { { -1, 5, 1, 1, 1 }, { 30, 40, 2, 1, 2 } };
    QTest::newRow("fractional pixels floor")
        << S { { 15, 47 } } << qint64(0) << qint64(1000) << 10.0 << 2.0 << E { { 1, 4, 0, 1, 0 } };
    QTest::newRow("one pixel folding threshold") << S { { 0, 5 }, { 6, 9 }, { 20, 40 } } << qint64(0) << qint64(1000)
                                                 << 10.0 << 1.0 << E { { 0, 1, 0, 2, 0 }, { 2, 4, 2, 1, 2 } };
}

void TestView::folding()
{
    QFETCH(Spans, spans);
    QFETCH(qint64, t0);
    QFETCH(qint64, t1);
    QFETCH(double, nsPerPixel);
    QFETCH(double, minPixels);
    QFETCH(Rows, expected);
    const IntervalTable t = table(spans);
    const DrawListParams p { t0, t1, nsPerPixel, minPixels };
    const auto items = DrawListBuilder::build(t, nullptr, p);
    QVERIFY2(items.size() == std::size_t(expected.size()), qPrintable(describe(items)));
    for (int k = 0; k < expected.size(); ++k) {
        const auto& e = expected[k];
        const auto& i = items[k];
        QVERIFY2(i.x0 == e[0] && i.x1 == e[1] && int(i.first) == e[2] && int(i.count) == e[3] && int(i.largest) == e[4],
            qPrintable(QStringLiteral("item %1: %2").arg(k).arg(describe(items))));
    }
    // The LOD path must give the same answer (these tables are smaller than one block, so also
    // check with a table padded beyond one block below).
    const LodIndex lod(t);
    const auto viaLod = DrawListBuilder::build(t, &lod, p);
    QCOMPARE(describe(viaLod), describe(items));
}

void TestView::lodMatchesLinearWalk_data()
{
    QTest::addColumn<int>("seed");
    QTest::addColumn<int>("count");
    QTest::addColumn<double>("nsPerPixel");
    QTest::newRow("dense, zoomed out") << 1 << 200000 << 50000.0;
    QTest::newRow("dense, mid zoom") << 2 << 200000 << 500.0;
    QTest::newRow("sparse with long ones") << 3 << 50000 << 2000.0;
    QTest::newRow("zoomed in") << 4 << 50000 << 5.0;
}

void TestView::lodMatchesLinearWalk()
{
    QFETCH(int, seed);
    QFETCH(int, count);
    QFETCH(double, nsPerPixel);
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> dur(1, 400), gap(0, 300), rare(0, 999);
    IntervalTable t;
    TimeNs now = 0;
    for (int i = 0; i < count; ++i) {
        const TimeNs d = rare(rng) == 0 ? 200000 : dur(rng); // occasional long kernels
        t.append(now, now + d, StringId(i % 97));
        now += d + (rare(rng) < 5 ? 100000 : gap(rng));
    }
    const LodIndex lod(t);
    for (const auto& [a, b] : { std::pair<TimeNs, TimeNs> { 0, now }, { now / 3, now / 3 + TimeNs(nsPerPixel * 1920) },
             { now / 2 + 17, now } }) {
        const DrawListParams p { a, b, nsPerPixel, 2 };
        const auto linear = DrawListBuilder::build(t, nullptr, p);
        const auto fast = DrawListBuilder::build(t, &lod, p);
        QCOMPARE(fast.size(), linear.size());
        for (std::size_t k = 0; k < linear.size(); ++k) {
            QCOMPARE(fast[k].first, linear[k].first);
            QCOMPARE(fast[k].count, linear[k].count);
            QCOMPARE(fast[k].largest, linear[k].largest);
            QCOMPARE(fast[k].x0, linear[k].x0);
            QCOMPARE(fast[k].x1, linear[k].x1);
            QCOMPARE(fast[k].end, linear[k].end);
        }
    }
}

void TestView::foldingBoundsTheListAtMillions()
{
    // 2 million back-to-back 100 ns kernels over 1000 px: one fold covers them all.
    IntervalTable t;
    t.reserve(2000000);
    for (TimeNs i = 0; i < 2000000; ++i)
        t.append(i * 110, i * 110 + 100, 0);
    const LodIndex lod(t);
    const DrawListParams p { 0, 2000000 * 110, 2000000.0 * 110 / 1000, 2 };
    const auto items = DrawListBuilder::build(t, &lod, p);
    QCOMPARE(items.size(), std::size_t(1));
    QCOMPARE(items[0].count, 2000000u);
    QCOMPARE(items[0].x0, 0);
    QCOMPARE(items[0].x1, 999);
}

void TestView::lowPriorityNamesDoNotRepresentFolds()
{
    // Kernels (name 0, 3 ns) separated by idle intervals (name 1, 6 ns), 10 ns per pixel: one fold.
    IntervalTable t;
    for (int i = 0; i < 4000; ++i) {
        t.append(i * 10, i * 10 + 3, 0);
        t.append(i * 10 + 3, i * 10 + 9, 1);
    }
    t.append(40000, 40005, 0); // a kernel ending the run
    const std::vector<std::uint8_t> low = { 0, 1 };
    DrawListParams p { 0, 50000, 1000.0, 2 };
    auto plain = DrawListBuilder::build(t, nullptr, p);
    QCOMPARE(plain.size(), std::size_t(1));
    QCOMPARE(t.name(plain[0].largest), StringId(1)); // without priorities the idle gaps win
    p.lowPriority = &low;
    const auto linear = DrawListBuilder::build(t, nullptr, p);
    const LodIndex lod(t, &low);
    const auto fast = DrawListBuilder::build(t, &lod, p);
    QCOMPARE(linear.size(), std::size_t(1));
    QCOMPARE(linear[0].count, 8001u);
    QCOMPARE(t.name(linear[0].largest), StringId(0));
    QCOMPARE(linear[0].largest, 8000u); // the 5 ns kernel at the end is the longest non-idle one
    QCOMPARE(describe(fast), describe(linear));
    // Only idle in the run: idle represents it.
    IntervalTable idleOnly;
    idleOnly.append(0, 5, 1);
    idleOnly.append(6, 9, 1);
    const auto onlyIdle = DrawListBuilder::build(idleOnly, nullptr, p);
    QCOMPARE(onlyIdle.size(), std::size_t(1));
    QCOMPARE(onlyIdle[0].largest, 0u);
    // An index built without the priorities is not used with them (results stay exact).
    const LodIndex plainLod(t);
    QCOMPARE(describe(DrawListBuilder::build(t, &plainLod, p)), describe(linear));
}

void TestView::hitItem_data()
{
    QTest::addColumn<double>("x");
    QTest::addColumn<double>("tolerance");
    QTest::addColumn<int>("expected"); // -1: none
    QTest::newRow("inside first") << 3.0 << 0.0 << 0;
    QTest::newRow("last covered column") << 9.0 << 0.0 << 0;
    QTest::newRow("first free column, no tolerance") << 10.0 << 0.0 << -1;
    QTest::newRow("gap, within tolerance of first") << 11.0 << 3.0 << 0;
    QTest::newRow("gap, nearer second") << 18.0 << 3.0 << 1;
    QTest::newRow("gap, too far") << 14.5 << 3.0 << -1;
    QTest::newRow("inside second") << 25.0 << 3.0 << 1;
    QTest::newRow("before everything") << -5.0 << 3.0 << -1;
}

void TestView::hitItem()
{
    QFETCH(double, x);
    QFETCH(double, tolerance);
    QFETCH(int, expected);
    std::vector<DrawItem> items(2);
    items[0] = { 0, 10, 0, 1, 0, 0, 100 };
    items[1] = { 20, 30, 1, 5, 3, 200, 300 };
    const auto hit = HitTester::itemAt(items, x, tolerance);
    QCOMPARE(hit ? int(*hit) : -1, expected);
}

void TestView::hitInterval()
{
    IntervalTable t;
    t.append(0, 1000, 0, 0); // outer
    t.append(100, 200, 1, 1); // nested
    t.append(2000, 2100, 2, 0);
    QCOMPARE(HitTester::intervalAt(t, 150, 0).value(), std::size_t(1)); // deepest wins
    QCOMPARE(HitTester::intervalAt(t, 500, 0).value(), std::size_t(0));
    QVERIFY(!HitTester::intervalAt(t, 1500, 100));
    QCOMPARE(HitTester::intervalAt(t, 1950, 100).value(), std::size_t(2));
    QCOMPARE(HitTester::intervalAt(t, 1050, 100).value(), std::size_t(0));
}

void TestView::zoomHistory()
{
    ZoomHistory h(4);
    h.reset({ 0, 1000 });
    QVERIFY(!h.canGoBack());
    h.push({ 100, 200 });
    h.push({ 100, 200 }); // duplicate ignored
    h.push({ 120, 150 });
    QCOMPARE(h.size(), std::size_t(3));
    QCOMPARE(h.back(), (TimeRange { 100, 200 }));
    QCOMPARE(h.back(), (TimeRange { 0, 1000 }));
    QCOMPARE(h.back(), (TimeRange { 0, 1000 })); // stays at the oldest
    QCOMPARE(h.forward(), (TimeRange { 100, 200 }));
    h.push({ 500, 600 }); // drops {120, 150}
    QVERIFY(!h.canGoForward());
    QCOMPARE(h.size(), std::size_t(3));
    h.push({ 1, 2 });
    h.push({ 3, 4 }); // limit 4: oldest dropped
    QCOMPARE(h.size(), std::size_t(4));
    QCOMPARE(h.back(), (TimeRange { 1, 2 }));
    QCOMPARE(h.back(), (TimeRange { 500, 600 }));
    QCOMPARE(h.back(), (TimeRange { 100, 200 }));
    QVERIFY(!h.canGoBack());
}

void TestView::tickLabels_data()
{
    QTest::addColumn<double>("t");
    QTest::addColumn<double>("step");
    QTest::addColumn<QString>("expected");
    QTest::newRow("zero") << 0.0 << 5e6 << QStringLiteral("0");
    QTest::newRow("ms") << 15e6 << 5e6 << QStringLiteral("15 ms");
    QTest::newRow("fractional ms") << 12.5e6 << 0.5e6 << QStringLiteral("12.5 ms");
    QTest::newRow("µs") << 2500.0 << 500.0 << QStringLiteral("2.5 \u00B5s");
    QTest::newRow("ns") << 40.0 << 20.0 << QStringLiteral("40 ns");
    QTest::newRow("s") << 3e9 << 1e9 << QStringLiteral("3 s");
    QTest::newRow("0.2 s steps") << 1.4e9 << 2e8 << QStringLiteral("1.4 s");
    QTest::newRow("50 µs steps") << 1.25e6 << 5e4 << QStringLiteral("1250 \u00B5s");
    QTest::newRow("2 decimals") << 1.25e6 << 0.25e6 << QStringLiteral("1.25 ms");
}

void TestView::tickLabels()
{
    QFETCH(double, t);
    QFETCH(double, step);
    QFETCH(QString, expected);
    QCOMPARE(QString::fromStdString(timeaxis::label(t, step)), expected);
}

void TestView::niceSteps()
{
    QCOMPARE(timeaxis::niceStep(1e9, 10), 1e8);
    QCOMPARE(timeaxis::niceStep(7e6, 10), 1e6);
    QCOMPARE(timeaxis::niceStep(13e6, 10), 2e6);
    QCOMPARE(timeaxis::niceStep(30e3, 10), 5e3);
    QCOMPARE(timeaxis::niceStep(5, 10), 1.0);
    const auto ticks = timeaxis::ticks(1.5e6, 7.2e6, 2e6);
    QCOMPARE(ticks, (std::vector<double> { 2e6, 4e6, 6e6 }));
}

// A NCCL watchdog thread polls (cudaEventQuery) long after the last step: the whole-trace window (stats, Zoom to
// Fit, figures) runs from the first event of the GPU streams and the threads that launch work to the end of the last
// GPU work. Launches are known in launch order (Score-P), per interval by correlation id (torch.profiler, Nsight
// Systems: the watchdog tail of a real 2-rank run stretched the view from 440 to 500 ms), or not at all (every thread
// counts for the start); without GPU work the threads' last event ends it.
void TestView::activityLeavesOutPollingThreads_data()
{
    QTest::addColumn<int>("launchKind");
    QTest::addColumn<qint64>("end");
    QTest::newRow("launch order") << 0 << qint64(90);
    QTest::newRow("by correlation id") << 1 << qint64(90);
    QTest::newRow("no launches") << 2 << qint64(90);
    QTest::newRow("no GPU work") << 3 << qint64(1000);
}

void TestView::activityLeavesOutPollingThreads()
{
    QFETCH(int, launchKind);
    QFETCH(qint64, end);
    Trace trace;
    Rank rank;
    Lane main;
    main.intervals = table({ { 0, 100 } });
    Lane watchdog;
    watchdog.intervals = table({ { 5, 8 }, { 990, 1000 } });
    Lane gpu;
    gpu.kind = LaneKind::GpuStream;
    gpu.intervals = table({ { 10, 90 } });
    if (launchKind == 0)
        gpu.launches = { LaunchRef { 0, 0 } };
    else if (launchKind == 1)
        gpu.launchByInterval = { LaunchRef { 0, 0 } };
    rank.lanes = { main, watchdog, gpu };
    if (launchKind == 3)
        rank.lanes.pop_back();
    trace.ranks.push_back(rank);
    trace.finalize(false);
    QCOMPARE(trace.extent.end, TimeNs(1000));
    const TimeRange r = activityRange(trace);
    QCOMPARE(r.start, TimeNs(0));
    QCOMPARE(r.end, TimeNs(end));
}

QTEST_APPLESS_MAIN(TestView)
#include "tst_view.moc"
