// SPDX-License-Identifier: GPL-3.0-or-later
// Chrome Trace Event Format import on small generated traces: exact nanoseconds (rounded to the nearest), B/E nesting
// and metadata, the built-in Megatron-LM timeline mapping (workers, coordinates, lane roles, steps), a rules file's
// mapping that overrides it, detection next to torch.profiler traces, and bad input as one line naming the file.
#include "analysis/analysis.h"
#include "import/chromeimporter.h"
#include "import/jsonstream.h"
#include "run/openrun.h"
#include "support/kinetotraces.h"

#include <QTemporaryDir>
#include <QTest>

using namespace exposure;
using namespace exposure::testing;

namespace {

const Lane* laneNamed(const Rank& r, const std::string& name)
{
    for (const auto& l : r.lanes)
        if (l.name == name)
            return &l;
    return nullptr;
}

QString loadError(const QString& path)
{
    try {
        (void)loadTrace(path.toStdString(), {});
    } catch (const LoadError& e) {
        return QString::fromStdString(e.what());
    }
    return QStringLiteral("(loaded)");
}

// A Megatron-LM timeline of DP 2 x PP 2 (TP 1), steps 7 and 8, in the object form. Per worker and step, from
// b = 1000 us * (step - 7) + dp * 3 us + pp * 5 us: compute forward [b, b+100), backward [b+200, b+400) with gc
// [b+250, b+260) inside, optimizer [b+500, b+550); pp-comm forward-send [b+100, b+120) and forward-recv
// [b+110, b+130); dp-comm grads-reduce-scatter [b+380, b+450) and params-all-gather [b+560, b+570); misc "log"
// [b+600, b+601). Compute busy 350 us per step, comm busy 110 us (pp 30, dp 80), overlapped 20 us.
QByteArray megatronTimeline()
{
    QByteArray events;
    const char* lanes[] = { "compute", "pp-comm", "tp-comm", "dp-comm", "misc" };
    auto add = [&](const QByteArray& e) { events += (events.isEmpty() ? "" : ",\n") + e; };
    for (int dp = 0; dp < 2; ++dp) {
        add(QByteArray(R"({"name": "process_name", "ph": "M", "pid": )") + QByteArray::number(dp)
            + R"(, "args": {"name": "DP rank [)" + QByteArray::number(dp) + "]\"}}");
        for (int pp = 0; pp < 2; ++pp) {
            for (int l = 0; l < 5; ++l)
                add(QByteArray(R"({"name": "thread_name", "ph": "M", "pid": )") + QByteArray::number(dp)
                    + R"(, "tid": )" + QByteArray::number(pp * 5 + l) + R"(, "args": {"name": "PP rank )"
                    + QByteArray::number(pp) + ", TP rank 0, " + lanes[l] + "\"}}");
            for (int step = 7; step <= 8; ++step) {
                const int b = 1000 * (step - 7) + dp * 3 + pp * 5;
                auto x = [&](const char* name, int lane, int start, int dur) {
                    add(QByteArray(R"({"name": ")") + name + R"(", "cat": ")" + name + R"(", "ph": "X", "pid": )"
                        + QByteArray::number(dp) + R"(, "tid": )" + QByteArray::number(pp * 5 + lane) + R"(, "ts": )"
                        + QByteArray::number(b + start) + ".0, \"dur\": " + QByteArray::number(dur)
                        + R"(, "args": {"step": )" + QByteArray::number(step) + R"(, "mb_id": -1}})");
                };
                x("forward-compute", 0, 0, 100);
                x("backward-compute", 0, 200, 200);
                x("gc", 0, 250, 10);
                x("optimizer", 0, 500, 50);
                x("forward-send", 1, 100, 20);
                x("forward-recv", 1, 110, 20);
                x("grads-reduce-scatter", 3, 380, 70);
                x("params-all-gather", 3, 560, 10);
                x("log", 4, 600, 1);
            }
        }
    }
    return "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n" + events + "\n]}";
}

} // namespace

class TestChromeImport : public QObject
{
    Q_OBJECT
private slots:
    void microsecondsRoundToTheNearestNanosecond();
    void beginEndNestingAndMetadata();
    void megatronLayoutGivesWorkersRolesAndSteps();
    void mappingRuleOverridesTheBuiltInOne();
    void mappingRulesAreChecked();
    void detectionLeavesTorchProfilerTraces();
    void badInput_data();
    void badInput();
};

void TestChromeImport::microsecondsRoundToTheNearestNanosecond()
{
    auto nearest = [](const char* text) {
        TimeNs v = -12345;
        return microsToNs(text, std::strlen(text), v, NsRounding::Nearest) ? v : TimeNs(-12345);
    };
    QCOMPARE(nearest("848671.6747283936"), TimeNs(848671675));
    QCOMPARE(nearest("138679.68320846558"), TimeNs(138679683));
    QCOMPARE(nearest("1.0004"), TimeNs(1000));
    QCOMPARE(nearest("1.0005"), TimeNs(1001));
    QCOMPARE(nearest("1.00049999"), TimeNs(1000));
    QCOMPARE(nearest("-1.0005"), TimeNs(-1001));
    QCOMPARE(nearest("44"), TimeNs(44000));
    QCOMPARE(nearest("1.5e-3"), TimeNs(2));
    TimeNs v = 0;
    QVERIFY(microsToNs("1.0009", 6, v, NsRounding::Truncate));
    QCOMPARE(v, TimeNs(1000)); // torch.profiler keeps dropping the digits beyond nanoseconds
}

void TestChromeImport::beginEndNestingAndMetadata()
{
    QTemporaryDir dir;
    // No mapping rule matches: one rank per process, every thread a GPU lane whose names the ordinary rules classify.
    const QString path = write(dir, QStringLiteral("plain.json"), R"([
  {"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "trainer"}},
  {"ph": "M", "name": "thread_name", "pid": 7, "tid": 1, "args": {"name": "stream A"}},
  {"ph": "B", "name": "forward", "pid": 7, "tid": 1, "ts": 10.0},
  {"ph": "B", "name": "ampere_sgemm_128x64_nn", "pid": 7, "tid": 1, "ts": 10.5004},
  {"ph": "E", "pid": 7, "tid": 1, "ts": 12.0006},
  {"ph": "E", "pid": 7, "tid": 1, "ts": 20},
  {"ph": "X", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 7, "tid": 2, "ts": 15.25, "dur": 10.0005},
  {"ph": "i", "name": "marker", "pid": 7, "tid": 2, "ts": 30, "s": "t"},
  {"ph": "E", "pid": 7, "tid": 2, "ts": 31},
  {"ph": "C", "name": "counter", "pid": 7, "ts": 32, "args": {"v": 1}},
  {"ph": "B", "name": "tail", "pid": 7, "tid": 1, "ts": 35},
  {"ph": "X", "name": "late", "pid": 7, "tid": 2, "ts": 36, "dur": 4}
])");
    QVERIFY(isChromeTraceFile(path.toStdString()));
    const auto t = loadTrace(path.toStdString(), {});
    QCOMPARE(t->ranks.size(), std::size_t(1));
    const Rank& r = t->ranks[0];
    QCOMPARE(r.label, std::string("Rank 0"));
    QVERIFY(!r.coords.known());
    QCOMPARE(t->originAbsNs, TimeNs(10000));
    const Lane* a = laneNamed(r, "stream A");
    const Lane* b = laneNamed(r, "thread 2");
    QVERIFY(a && b && a->isGpu() && b->isGpu());
    QCOMPARE(a->commRole, CommRole::None);
    // forward [10000, 20000) with the GEMM [10500, 12001) inside it; "tail" never ended: closed at 40000.
    QCOMPARE(a->intervals.size(), std::size_t(3));
    QCOMPARE(t->name(a->intervals.name(0)), std::string("forward"));
    QCOMPARE(a->intervals.start(0), TimeNs(0));
    QCOMPARE(a->intervals.end(0), TimeNs(10000));
    QCOMPARE(a->intervals.depth(0), std::uint8_t(0));
    QCOMPARE(a->intervals.start(1), TimeNs(500));
    QCOMPARE(a->intervals.end(1), TimeNs(2001));
    QCOMPARE(a->intervals.depth(1), std::uint8_t(1));
    QCOMPARE(a->intervals.start(2), TimeNs(25000));
    QCOMPARE(a->intervals.end(2), TimeNs(30000));
    // nccl [15250, 25251), the instant [30000, 30000), late [36000, 40000); the lone E and the counter are no events.
    QCOMPARE(b->intervals.size(), std::size_t(3));
    QCOMPARE(b->intervals.start(0), TimeNs(5250));
    QCOMPARE(b->intervals.end(0), TimeNs(15251));
    QCOMPARE(b->intervals.duration(1), TimeNs(0));
    QCOMPARE(t->eventCount, std::uint64_t(12));
    const auto has = [&](const std::string& w) {
        return std::find(t->warnings.begin(), t->warnings.end(), w) != t->warnings.end();
    };
    QVERIFY(has("plain.json: 1 E events without an open B event on their thread were skipped"));
    QVERIFY(has("plain.json: 1 B events were never ended; each was closed at the last timestamp of the file"));

    const auto an = analyze(*t, Rules::defaults());
    QCOMPARE(an->classOf(a->intervals.name(1)).subgroup, std::string("gemm"));
    QCOMPARE(an->classOf(b->intervals.name(0)).category, Category::Communication);
    const WindowStats s = computeStats(*t, *an, 0, t->extent);
    QCOMPARE(s.computeBusyNs, TimeNs(15000)); // [10000, 20000) and [35000, 40000)
    QCOMPARE(s.commBusyNs, TimeNs(10001));
    QCOMPARE(s.overlappedNs, TimeNs(4750)); // [15250, 20000)
    QCOMPARE(s.exposedNs, TimeNs(5251));
}

void TestChromeImport::megatronLayoutGivesWorkersRolesAndSteps()
{
    QTemporaryDir dir;
    const QString path = write(dir, QStringLiteral("timeline.json.gz"), megatronTimeline());
    QVERIFY(isChromeTraceFile(path.toStdString()));
    RunOptions options;
    options.viewIndex = false;
    const OpenedRun run = openRun(path.toStdString(), options);
    const Trace& t = *run.trace;
    QCOMPARE(t.ranks.size(), std::size_t(4));
    // Megatron-LM's global rank: tp fastest, then dp, then pp.
    const ParallelCoords expected[]
        = { { 0, 0, 0, -1, -1 }, { 1, 0, 0, -1, -1 }, { 0, 1, 0, -1, -1 }, { 1, 1, 0, -1, -1 } };
    for (int k = 0; k < 4; ++k) {
        const Rank& r = t.ranks[std::size_t(k)];
        QCOMPARE(r.rank, k);
        QVERIFY(r.coords == expected[k]);
        QCOMPARE(r.lanes.size(), std::size_t(5)); // steps, misc, compute, pp-comm, dp-comm (tp-comm has no events)
        QCOMPARE(r.lanes[0].name, std::string("steps"));
        QVERIFY(!r.lanes[0].isGpu());
        const std::string prefix = "PP rank " + std::to_string(r.coords.pp) + ", TP rank 0, ";
        QVERIFY(!laneNamed(r, prefix + "misc")->isGpu());
        QVERIFY(laneNamed(r, prefix + "compute")->isGpu());
        QCOMPARE(laneNamed(r, prefix + "compute")->commRole, CommRole::None);
        QCOMPARE(laneNamed(r, prefix + "pp-comm")->commRole, CommRole::PP);
        QCOMPARE(laneNamed(r, prefix + "dp-comm")->commRole, CommRole::DP);
        QVERIFY(!laneNamed(r, prefix + "tp-comm"));
    }
    QCOMPARE(t.ranks[2].label, std::string("Rank 2 (dp 0, pp 1, tp 0)"));
    const Analysis& a = *run.analysis;
    const Lane& compute = *laneNamed(t.ranks[0], "PP rank 0, TP rank 0, compute");
    const Lane& pp = *laneNamed(t.ranks[0], "PP rank 0, TP rank 0, pp-comm");
    for (std::size_t i = 0; i < compute.intervals.size(); ++i) // gc and optimizer included
        QCOMPARE(a.classOf(compute.intervals.name(i)).category, Category::Compute);
    for (std::size_t i = 0; i < pp.intervals.size(); ++i) // forward-send: no rule knows the name
        QCOMPARE(a.classOf(pp.intervals.name(i)).category, Category::Communication);
    for (int k = 0; k < 4; ++k) {
        const RankAnalysis& ra = a.ranks[std::size_t(k)];
        QCOMPARE(ra.stepSource, StepSource::Regions);
        QCOMPARE(ra.steps.size(), std::size_t(2));
        QCOMPARE(ra.steps[0].name, std::string("step 7"));
        QCOMPARE(ra.steps[1].name, std::string("step 8"));
        const TimeNs b
            = TimeNs(t.ranks[std::size_t(k)].coords.dp) * 3000 + TimeNs(t.ranks[std::size_t(k)].coords.pp) * 5000;
        QCOMPARE(ra.steps[1].hostRange.start + t.originAbsNs, 1000000 + b);
        QCOMPARE(ra.steps[1].hostRange.end + t.originAbsNs, 1601000 + b);
        const WindowStats s = computeStats(t, a, k, t.extent);
        QCOMPARE(s.computeBusyNs, TimeNs(700000));
        QCOMPARE(s.commBusyNs, TimeNs(220000));
        QCOMPARE(s.overlappedNs, TimeNs(40000));
        QCOMPARE(s.exposedNs, TimeNs(180000));
        QCOMPARE(s.kernelCount, std::uint64_t(16)); // compute 8 + pp 4 + dp 4; the host lane's "log" is none
    }
}

void TestChromeImport::mappingRuleOverridesTheBuiltInOne()
{
    QTemporaryDir dir;
    const QString path = write(dir, QStringLiteral("timeline.json"), megatronTimeline());
    // The same threads, but pp-comm is host work, dp-comm communication of no known role, and the process name gives
    // the DP rank.
    const QByteArray rules = "{\"rules\": [], \"chrome_mapping\": [{\"id\": \"mine\", "
                             "\"process\": \"^DP rank \\\\[(?<dp>\\\\d+)\\\\]$\", "
                             "\"thread\": \"^PP rank (?<pp>\\\\d+), TP rank (?<tp>\\\\d+), (?<role>\\\\S+)$\", "
                             "\"roles\": {\"compute\": \"compute\", \"pp-comm\": \"host\", \"dp-comm\": \"comm\", "
                             "\"misc\": \"host\"}, \"step\": \"step\"}]}";
    const QString rulesPath = write(dir, QStringLiteral("rules.json"), rules);
    RunOptions options;
    options.viewIndex = false;
    options.rules = Rules::fromFile(rulesPath.toStdString(), true);
    QCOMPARE(options.rules.chromeMapping().size(), std::size_t(1));
    const OpenedRun run = openRun(path.toStdString(), options);
    const Trace& t = *run.trace;
    QCOMPARE(t.ranks.size(), std::size_t(4));
    for (int k = 0; k < 4; ++k) {
        const Rank& r = t.ranks[std::size_t(k)];
        const std::string prefix = "PP rank " + std::to_string(r.coords.pp) + ", TP rank 0, ";
        QVERIFY(!laneNamed(r, prefix + "pp-comm")->isGpu());
        QCOMPARE(laneNamed(r, prefix + "dp-comm")->commRole, CommRole::Other);
        const WindowStats s = computeStats(t, *run.analysis, k, t.extent);
        QCOMPARE(s.computeBusyNs, TimeNs(700000));
        QCOMPARE(s.commBusyNs, TimeNs(160000)); // dp-comm alone
        QCOMPARE(run.analysis->ranks[std::size_t(k)].steps.size(), std::size_t(2));
    }
    QCOMPARE(t.ranks[3].label, std::string("Rank 3 (dp 1, pp 1, tp 0)"));
}

void TestChromeImport::mappingRulesAreChecked()
{
    auto problem = [](const std::string& json) {
        try {
            (void)Rules::fromJson(json, "r.json");
        } catch (const std::runtime_error& e) {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    QCOMPARE(problem(R"({"rules": [], "chrome_mapping": [{"id": "a", "thread": "x", "role": "gpu"}]})"),
        std::string("r.json: chrome_mapping rule 1 (\"a\"): unknown role \"gpu\" (expected compute, dp-comm, pp-comm, "
                    "tp-comm, ep-comm, cp-comm, comm, host or device)"));
    QVERIFY(problem(R"({"rules": [], "chrome_mapping": [{"id": "a", "thread": "[x"}]})").find("bad pattern")
        != std::string::npos);
    QVERIFY(problem(R"({"rules": [], "chrome_mapping": [{"id": "a", "pid": "rank"}]})").find("\"pid\" must be")
        != std::string::npos);
    QVERIFY(problem(R"({"rules": [], "chrome_mapping": [{"id": "a", "threads": "x"}]})").find("unknown key")
        != std::string::npos);
    QCOMPARE(problem(R"({"rules": [], "chrome_mapping": [{"id": "a", "thread": "x", "role": "pp-comm"}]})"),
        std::string("(accepted)"));
    QVERIFY(Rules::defaults().chromeMapping().empty());
}

void TestChromeImport::detectionLeavesTorchProfilerTraces()
{
    QTemporaryDir dir;
    auto chrome = [&](const char* name, const QByteArray& text) {
        return isChromeTraceFile(write(dir, QString::fromLatin1(name), text).toStdString());
    };
    QVERIFY(!chrome("kineto.json", rankTrace(0, 1)));
    QVERIFY(!chrome("kineto2021.json.gz", rankTrace2021()));
    QVERIFY(chrome("array.json", R"([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}])"));
    QVERIFY(
        chrome("object.json", R"({"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]})"));
    QVERIFY(!chrome("kernel.json",
        R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]})"));
    QVERIFY(!chrome("empty-events.json", R"({"traceEvents": []})"));
    QVERIFY(!chrome("nested.json", QByteArray(1000, '[')));
    QVERIFY(!chrome("spec.json", R"({"exposureFigure": 1})"));
    // A torch.profiler trace still loads as one.
    const auto t = loadTrace(write(dir, QStringLiteral("k.json"), rankTrace(0, 1)).toStdString(), {});
    QVERIFY(laneNamed(t->ranks[0], "CUDA[0:7]"));
}

void TestChromeImport::badInput_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("problem");
    QTest::newRow("empty array") << "empty.json" << QByteArray("[]") << "no events (X, B/E or instant)";
    QTest::newRow("metadata only") << "meta.json"
                                   << QByteArray(R"([{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1}])")
                                   << "no events (X, B/E or instant)";
    QTest::newRow("truncated") << "cut.json" << QByteArray(R"([{"ph": "X", "name": "a", "ts": 1, )")
                               << "invalid JSON at byte";
    QTest::newRow("deep nesting in an event")
        << "deep.json" << QByteArray(R"([{"ph": "X", "args": )") + QByteArray(100000, '{').replace("{", "{\"k\": ")
        << "JSON nested deeper than 64 levels";
}

void TestChromeImport::badInput()
{
    QFETCH(QString, name);
    QFETCH(QByteArray, text);
    QFETCH(QString, problem);
    QTemporaryDir dir;
    const QString path = write(dir, name, text);
    const QString message = loadError(path);
    QVERIFY2(message.startsWith(path + QStringLiteral(": ")), qPrintable(message));
    QVERIFY2(message.contains(problem), qPrintable(message));
    QVERIFY(!message.contains(QLatin1Char('\n')));
}

QTEST_GUILESS_MAIN(TestChromeImport)
#include "tst_chromeimport.moc"
