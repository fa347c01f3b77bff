// SPDX-License-Identifier: GPL-3.0-or-later
// Exact time per paint class in pixel columns (ShareIndex) and the error-diffused column stacking.
#include "view/shareindex.h"

#include <QTest>
#include <map>
#include <random>

using namespace exposure;

namespace {

// Reference: time of each class in [a, b), innermost (latest-started) interval winning where they overlap,
// computed nanosecond-segment by segment from all interval edges.
std::map<int, TimeNs> bruteForce(const IntervalTable& t, const std::vector<std::uint8_t>& cls, TimeNs a, TimeNs b)
{
    std::vector<TimeNs> edges { a, b };
    for (std::size_t i = 0; i < t.size(); ++i) {
        edges.push_back(std::clamp(t.start(i), a, b));
        edges.push_back(std::clamp(t.end(i), a, b));
    }
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    std::map<int, TimeNs> out;
    for (std::size_t e = 0; e + 1 < edges.size(); ++e) {
        const TimeNs s = edges[e], f = edges[e + 1];
        int owner = -1;
        for (std::size_t i = 0; i < t.size(); ++i)
            if (t.start(i) <= s && t.end(i) >= f && t.end(i) > t.start(i))
                owner = int(i); // latest start wins (table sorted by start)
        if (owner >= 0)
            out[cls[t.name(std::size_t(owner))]] += f - s;
    }
    return out;
}

std::map<int, TimeNs> asMap(const ShareIndex& idx, const std::vector<TimeNs>& v)
{
    std::map<int, TimeNs> out;
    for (std::size_t k = 0; k < v.size(); ++k)
        if (v[k] != 0)
            out[idx.classAt(k)] = v[k];
    return out;
}

} // namespace

class TestShareIndex : public QObject
{
    Q_OBJECT
private slots:
    void timeInIsExact();
    void columnsMatchBruteForce_data();
    void columnsMatchBruteForce();
    void nestedTablesAreFlattenedInnermostFirst();
    void stackerKeepsAreaWithinAPixel();
    void stackerNeverPaintsAClassWithoutTime();
    void stackerFillsFullColumns();
};

void TestShareIndex::timeInIsExact()
{
    // Names 0..2 map to classes 5, 7, 5: two classes.
    const std::vector<std::uint8_t> cls { 5, 7, 5 };
    IntervalTable t;
    t.append(0, 100, 0);
    t.append(100, 130, 1);
    t.append(200, 260, 2);
    t.append(300, 301, 1);
    ShareIndex idx(t, &cls);
    QCOMPARE(idx.classCount(), std::size_t(2));
    QCOMPARE(int(idx.classAt(0)), 5);
    QCOMPARE(int(idx.classAt(1)), 7);
    QVERIFY(!idx.flattened());
    std::vector<TimeNs> out(2);
    idx.timeIn(t, 50, 250, out.data());
    QCOMPARE(out[0], TimeNs(50 + 50)); // [50,100) and [200,250)
    QCOMPARE(out[1], TimeNs(30));
    idx.timeIn(t, -1000, 1000, out.data());
    QCOMPARE(out[0], TimeNs(160));
    QCOMPARE(out[1], TimeNs(31));
    idx.timeIn(t, 130, 200, out.data()); // a gap
    QCOMPARE(out[0], TimeNs(0));
    QCOMPARE(out[1], TimeNs(0));
    idx.timeIn(t, 300, 301, out.data());
    QCOMPARE(out[1], TimeNs(1));
}

void TestShareIndex::columnsMatchBruteForce_data()
{
    QTest::addColumn<int>("count");
    QTest::addColumn<double>("nsPerPixel");
    QTest::addColumn<int>("width");
    QTest::addColumn<bool>("nested");
    QTest::newRow("sparse, zoomed in") << 40 << 3.0 << 300 << false;
    QTest::newRow("dense, zoomed out") << 3000 << 97.3 << 200 << false;
    QTest::newRow("several blocks per column") << 5000 << 1000.0 << 60 << false;
    QTest::newRow("fractional pixels") << 700 << 0.37 << 900 << false;
    QTest::newRow("nested") << 400 << 23.0 << 250 << true;
}

void TestShareIndex::columnsMatchBruteForce()
{
    QFETCH(int, count);
    QFETCH(double, nsPerPixel);
    QFETCH(int, width);
    QFETCH(bool, nested);
    std::mt19937 rng(1234u + unsigned(count));
    const std::vector<std::uint8_t> cls { 0, 1, 2, 1, 4, 0 };
    IntervalTable t;
    TimeNs cursor = 17;
    for (int i = 0; i < count; ++i) {
        const TimeNs gap = TimeNs(rng() % 12);
        const TimeNs dur = TimeNs(rng() % 15);
        cursor += gap;
        t.append(cursor, cursor + dur, StringId(rng() % cls.size()));
        if (nested && rng() % 3 == 0 && dur > 2) // a child inside, of another name
            t.append(cursor + 1, cursor + dur - 1, StringId(rng() % cls.size()), 1);
        cursor += dur;
    }
    t.sortByStart();
    const ShareIndex idx(t, &cls);
    QCOMPARE(idx.flattened(), nested);
    const ColumnGrid grid { 5, nsPerPixel, width };
    std::vector<TimeNs> cols;
    idx.columns(t, grid, cols);
    QCOMPARE(cols.size(), std::size_t(width) * idx.classCount());
    std::map<int, TimeNs> total;
    for (int x = 0; x < width; ++x) {
        std::vector<TimeNs> col(
            cols.begin() + x * long(idx.classCount()), cols.begin() + (x + 1) * long(idx.classCount()));
        // A column narrower than a nanosecond shows the nanosecond it lies in (and counts nothing twice below).
        const bool subNs = grid.edge(x + 1) <= grid.edge(x);
        const auto want = bruteForce(t, cls, grid.edge(x), subNs ? grid.edge(x) + 1 : grid.edge(x + 1));
        if (asMap(idx, col) != want) {
            QStringList got, exp;
            for (const auto& [c, v] : asMap(idx, col))
                got << QStringLiteral("%1:%2").arg(c).arg(v);
            for (const auto& [c, v] : want)
                exp << QStringLiteral("%1:%2").arg(c).arg(v);
            QFAIL(qPrintable(QStringLiteral("column %1 [%2, %3): got %4, want %5")
                                 .arg(x)
                                 .arg(grid.edge(x))
                                 .arg(grid.edge(x + 1))
                                 .arg(got.join(QLatin1Char(' ')), exp.join(QLatin1Char(' ')))));
        }
        if (!subNs)
            for (const auto& [c, v] : want)
                total[c] += v;
    }
    QCOMPARE(total, bruteForce(t, cls, grid.edge(0), grid.edge(width)));
}

void TestShareIndex::nestedTablesAreFlattenedInnermostFirst()
{
    const std::vector<std::uint8_t> cls { 3, 9 };
    IntervalTable t;
    t.append(0, 1000, 0); // parent, class 3
    t.append(100, 200, 1, 1); // child, class 9
    t.append(150, 180, 0, 2); // grandchild, class 3
    t.append(1500, 1600, 1);
    ShareIndex idx(t, &cls);
    QVERIFY(idx.flattened());
    std::vector<TimeNs> out(2);
    idx.timeIn(t, 0, 2000, out.data());
    QCOMPARE(out[idx.localOf(3)], TimeNs(1000 - 100 + 30)); // union of the parent minus the child, plus grandchild
    QCOMPARE(out[idx.localOf(9)], TimeNs(70 + 100));
    idx.timeIn(t, 120, 160, out.data());
    QCOMPARE(out[idx.localOf(9)], TimeNs(30));
    QCOMPARE(out[idx.localOf(3)], TimeNs(10));
}

void TestShareIndex::stackerKeepsAreaWithinAPixel()
{
    // 1.8 % of class 0 and 9.1 % of class 1 in every column of 20 px: 0.36 and 1.82 px per column.
    ColumnStacker s(3, 20);
    const TimeNs span = 1000;
    const TimeNs times[3] = { 18, 91, 300 };
    long painted[3] = { 0, 0, 0 };
    int h[3];
    for (int x = 0; x < 1000; ++x) {
        s.stack(times, span, h);
        QVERIFY(h[0] + h[1] + h[2] <= 20);
        for (int k = 0; k < 3; ++k)
            painted[k] += h[k];
        for (int k = 0; k < 3; ++k) // every prefix of columns holds its exact area to within a pixel
            QVERIFY2(std::abs(double(painted[k]) - double(times[k]) / span * 20 * (x + 1)) <= 1.0,
                qPrintable(QStringLiteral("class %1 after %2 columns").arg(k).arg(x + 1)));
    }
    QCOMPARE(painted[0], 360L);
    QCOMPARE(painted[1], 1820L);
    QCOMPARE(painted[2], 6000L);
}

void TestShareIndex::stackerNeverPaintsAClassWithoutTime()
{
    ColumnStacker s(2, 10);
    int h[2];
    const TimeNs some[2] = { 70, 0 }; // 7 px exactly
    const TimeNs other[2] = { 0, 45 };
    const TimeNs none[2] = { 0, 0 };
    s.stack(other, 100, h); // 4.5 px -> rounds, leaves a carry
    s.stack(none, 100, h);
    QCOMPARE(h[0], 0);
    QCOMPARE(h[1], 0);
    s.stack(some, 100, h);
    QCOMPARE(h[0], 7);
    QCOMPARE(h[1], 0);
}

void TestShareIndex::stackerFillsFullColumns()
{
    ColumnStacker s(3, 31);
    int h[3];
    const TimeNs full[3] = { 0, 250, 0 };
    for (int x = 0; x < 5; ++x) {
        s.stack(full, 250, h);
        QCOMPARE(h[1], 31);
    }
    const TimeNs thirds[3] = { 100, 100, 100 };
    s.stack(thirds, 300, h);
    QCOMPARE(h[0] + h[1] + h[2], 31);
}

QTEST_GUILESS_MAIN(TestShareIndex)
#include "tst_shareindex.moc"
