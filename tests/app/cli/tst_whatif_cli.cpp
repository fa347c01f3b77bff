// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-cli whatif end to end on a generated torch.profiler trace: exact JSON values, the table, bad arguments.
#include "support/pipelinejob.h"
#include "support/processrun.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace exposure::synth;

namespace {

// A launch-bound rank: three 1000 µs ProfilerSteps, each with a 400 µs "inject" annotation, two 50 µs
// cudaLaunchKernel calls and their 40 µs kernels (correlation ids), 500 µs of the step's own time.
QByteArray launchBoundTrace()
{
    QByteArray ev;
    auto add = [&ev](const QByteArray& e) { ev += (ev.isEmpty() ? "" : ",\n") + e; };
    for (int k = 0; k < 3; ++k) {
        const int b = 1000 + k * 1000;
        const QByteArray B = QByteArray::number(b);
        add(R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#)" + QByteArray::number(k)
            + R"(", "pid": 1, "tid": 1, "ts": )" + B + R"(, "dur": 1000})");
        add(R"({"ph": "X", "cat": "user_annotation", "name": "inject", "pid": 1, "tid": 1, "ts": )" + B
            + R"(, "dur": 400})");
        for (int i = 0; i < 2; ++i) {
            const QByteArray corr = QByteArray::number(100 + 2 * k + i);
            add(R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )"
                + QByteArray::number(b + 400 + 50 * i) + R"(, "dur": 50, "args": {"correlation": )" + corr + "}}");
            add(R"({"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n", "pid": 0, "tid": 7, "ts": )"
                + QByteArray::number(b + 460 + 50 * i)
                + R"(, "dur": 40, "args": {"device": 0, "stream": 7, "correlation": )" + corr + "}}");
        }
    }
    return "{\"schemaVersion\": 1, \"traceEvents\": [\n" + ev + "\n]}";
}

// launchBoundTrace() written to run.json in `dir`: its path, or an empty string where it could not be written.
QString writeLaunchBoundTrace(const QTemporaryDir& dir)
{
    const QString path = dir.filePath(QStringLiteral("run.json"));
    QFile f(path);
    const QByteArray text = launchBoundTrace();
    return f.open(QIODevice::WriteOnly) && f.write(text) == text.size() ? path : QString();
}

} // namespace

class TestWhatIfCli : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void removingTheRegionPredictsTheShorterStep()
    {
        QTemporaryDir dir;
        const QString path = writeLaunchBoundTrace(dir);
        QVERIFY(!path.isEmpty());
        const auto r = runProcess(QStringLiteral(EXPOSURE_CLI),
            { QStringLiteral("whatif"), path, QStringLiteral("--remove-region"), QStringLiteral("^inject$"),
                QStringLiteral("--json") });
        QCOMPARE(r.exitCode, 0);
        const QJsonObject root = QJsonDocument::fromJson(r.out).object();
        const QJsonArray ranks = root.value(QStringLiteral("ranks")).toArray();
        QCOMPARE(ranks.size(), 1);
        const QJsonObject rank = ranks[0].toObject();
        QCOMPARE(rank.value(QStringLiteral("steps_used")).toInt(), 3);
        QCOMPARE(rank.value(QStringLiteral("measured_step_ns")).toInteger(), 1'000'000);
        QCOMPARE(rank.value(QStringLiteral("replay_step_ns")).toInteger(), 1'000'000);
        QCOMPARE(rank.value(QStringLiteral("predicted_step_ns")).toInteger(), 600'000);
        QCOMPARE(rank.value(QStringLiteral("change_ns")).toInteger(), -400'000);
        const QJsonObject path1 = rank.value(QStringLiteral("critical_path")).toObject();
        QCOMPARE(path1.value(QStringLiteral("host")).toInteger(), 500'000);
        QCOMPARE(path1.value(QStringLiteral("launch")).toInteger(), 100'000);
        QCOMPARE(path1.value(QStringLiteral("compute")).toInteger(), 0);
        const QJsonObject path0 = rank.value(QStringLiteral("replay_critical_path")).toObject();
        QCOMPARE(path0.value(QStringLiteral("host")).toInteger(), 900'000);

        const auto table = runProcess(QStringLiteral(EXPOSURE_CLI), { QStringLiteral("whatif"), path });
        QCOMPARE(table.exitCode, 0);
        QVERIFY(table.out.contains("Rank 0"));
        QVERIFY(table.out.contains("1 ms")); // measured and replay
    }

    // A DP 2 x PP 4 job whose worker (DP 1, stage 2: rank 5) computes 2x slower: `whatif --even` names it, and
    // `render --even` draws the evened job, which ends earlier than the recorded one.
    void evenJobNamedAndRendered()
    {
        using namespace exposure::testing;
        PipelineJob job;
        job.compute = [](int d, int p, int, int, bool backward) {
            return exposure::TimeNs((backward ? 2'000'000 : 1'000'000) * (d == 1 && p == 2 ? 2 : 1));
        };
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("timeline.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(pipelineTimeline(job, simulate(job)));
        f.close();
        const auto r = runProcess(QStringLiteral(EXPOSURE_CLI),
            { QStringLiteral("whatif"), path, QStringLiteral("--even"), QStringLiteral("--json") });
        QCOMPARE(r.exitCode, 0);
        const QJsonObject by = QJsonDocument::fromJson(r.out).object().value(QStringLiteral("slowdown_by")).toObject();
        QCOMPARE(by.value(QStringLiteral("rank")).toObject().keys().size(), 8);
        double best = 0;
        QString top;
        const QJsonObject ranks = by.value(QStringLiteral("rank")).toObject();
        for (auto it = ranks.begin(); it != ranks.end(); ++it)
            if (it.value().toDouble() > best) {
                best = it.value().toDouble();
                top = it.key();
            }
        QCOMPARE(top, QStringLiteral("5"));

        auto render = [&](const QString& out, bool even) {
            QStringList args { QStringLiteral("render"), path, QStringLiteral("-o"), out, QStringLiteral("--width"),
                QStringLiteral("800"), QStringLiteral("--height"), QStringLiteral("400") };
            if (even)
                args << QStringLiteral("--even");
            return runProcess(QStringLiteral(EXPOSURE_CLI), args).exitCode;
        };
        const QString recorded = dir.filePath(QStringLiteral("recorded.svg")),
                      evened = dir.filePath(QStringLiteral("even.svg"));
        QCOMPARE(render(recorded, false), 0);
        QCOMPARE(render(evened, true), 0);
        // The figures name their window ("... to 59.16 ms"): the evened job is shorter.
        auto windowEnd = [](const QString& svg) {
            QFile in(svg);
            if (!in.open(QIODevice::ReadOnly))
                return QByteArray();
            const QByteArray text = in.readAll();
            const auto desc = text.indexOf("<desc>");
            return text.mid(desc, text.indexOf("</desc>") - desc);
        };
        const QByteArray a = windowEnd(recorded), b = windowEnd(evened);
        QVERIFY2(!a.isEmpty() && !b.isEmpty() && a != b, QByteArray(a + " | " + b).constData());
    }

    void badArgumentsExitWithTwo()
    {
        QTemporaryDir dir;
        const QString path = writeLaunchBoundTrace(dir);
        QVERIFY(!path.isEmpty());
        const QList<QStringList> bad = {
            { QStringLiteral("--comm"), QStringLiteral("fast") },
            { QStringLiteral("--scale-kernels"), QStringLiteral("gemm") },
            { QStringLiteral("--launch"), QStringLiteral("x0") },
            { QStringLiteral("--remove-region"), QStringLiteral("(") },
        };
        for (const QStringList& args : bad) {
            const auto r
                = runProcess(QStringLiteral(EXPOSURE_CLI), QStringList { QStringLiteral("whatif"), path } + args);
            QCOMPARE(r.exitCode, 2);
            QCOMPARE(r.err.count('\n'), 1);
            QVERIFY(r.err.startsWith("exposure-cli: "));
        }
        const auto missing = runProcess(
            QStringLiteral(EXPOSURE_CLI), { QStringLiteral("whatif"), dir.filePath(QStringLiteral("nothere.json")) });
        QCOMPARE(missing.exitCode, 2);
    }
};

QTEST_GUILESS_MAIN(TestWhatIfCli)
#include "tst_whatif_cli.moc"
