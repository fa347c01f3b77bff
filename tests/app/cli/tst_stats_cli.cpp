// SPDX-License-Identifier: GPL-3.0-or-later
// End to end: write a Score-P-like OTF2 archive whose answer is known by construction, run the real
// `exposure-cli stats`, and check its JSON, CSV, table and error exits.
#include "support/processrun.h"
#include "synth/archivewriter.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <cstring>

using namespace exposure::synth;

namespace {

using Run = ProcessResult;

Run cli(const QStringList& args)
{
    return runProcess(QStringLiteral(EXPOSURE_CLI), QStringList { QStringLiteral("stats") } + args);
}

qint64 num(const QJsonObject& o, const char* key)
{
    return o.value(QLatin1String(key)).toInteger(-1);
}

} // namespace

class TestStatsCli : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        ArchiveSpec spec;
        // Rank 0: a backward region launches a GEMM on stream 7 and an all-reduce on stream 17.
        RankSpec& r0 = spec.addRank(0);
        auto& cpu = r0.threads[0].regions;
        cpu.push_back({ "ProfilerStep#1", 0, 100'000 });
        cpu.push_back({ "autograd::engine::evaluate_function: AddmmBackward0", 10'000, 20'000 });
        cpu.push_back({ "cuLaunchKernel", 11'000, 11'500, RegionRole::Wrapper, 0 });
        cpu.push_back({ "cuLaunchKernel", 12'000, 12'500, RegionRole::Wrapper, 1 });
        StreamSpec& s7 = r0.addStream(0, 7);
        s7.copies.push_back({ CopyKind::HtoD, 1'000, 2'000, 4096 });
        s7.idle.push_back({ 2'000, 20'000 });
        s7.kernels.push_back({ "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_NNT", 20'000, 30'000 });
        StreamSpec& s17 = r0.addStream(0, 17);
        s17.kernels.push_back(
            { "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 25'000, 40'000 });
        // Rank 1: compute only.
        RankSpec& r1 = spec.addRank(1);
        r1.addStream(1, 7).kernels.push_back({ "my_renamed_kernel", 50'000, 60'000 });
        writeArchive(m_dir.path().toStdString(), spec);
        m_trace = m_dir.path();
    }

    void json()
    {
        const Run r = cli({ QStringLiteral("--json"), m_trace });
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.isEmpty(), r.err.constData());
        QJsonParseError e;
        const QJsonDocument doc = QJsonDocument::fromJson(r.out, &e);
        QVERIFY2(e.error == QJsonParseError::NoError, qPrintable(e.errorString()));
        const QJsonObject top = doc.object();
        QCOMPARE(top.keys(),
            (QStringList { QStringLiteral("clock_alignment"), QStringLiteral("collective_summary"),
                QStringLiteral("kernels"), QStringLiteral("rank_summary"), QStringLiteral("ranks"),
                QStringLiteral("rules"), QStringLiteral("total"), QStringLiteral("trace"),
                QStringLiteral("trace_warnings"), QStringLiteral("window") }));
        // Both ranks on one host: one clock, nothing shifted.
        const QJsonObject clock = top.value(QLatin1String("clock_alignment")).toObject();
        QCOMPARE(clock.value(QLatin1String("method")).toString(), QStringLiteral("single_host"));
        QCOMPARE(clock.value(QLatin1String("reference_rank")).toInt(), 0);
        QCOMPARE(clock.value(QLatin1String("ranks")).toArray().size(), 2);
        QCOMPARE(
            clock.value(QLatin1String("ranks")).toArray()[1].toObject().value(QLatin1String("offset_ns")).toInt(), 0);
        const QJsonArray ranks = top.value(QLatin1String("ranks")).toArray();
        QCOMPARE(ranks.size(), 2);
        const QJsonObject r0 = ranks[0].toObject();
        QCOMPARE(num(r0, "rank"), 0);
        QCOMPARE(num(r0, "kernel_count"), 2);
        QCOMPARE(num(r0, "comm_kernel_count"), 1);
        QCOMPARE(num(r0, "comm_kernel_sum_ns"), 15'000);
        QCOMPARE(num(r0, "comm_busy_ns"), 15'000);
        QCOMPARE(num(r0, "compute_busy_ns"), 10'000);
        QCOMPARE(num(r0, "overlapped_ns"), 5'000);
        QCOMPARE(num(r0, "exposed_ns"), 10'000);
        QCOMPARE(r0.value(QLatin1String("overlap_ratio")).toDouble(), 0.333333);
        QCOMPARE(num(r0, "backward_overlapped_ns"), 5'000);
        QCOMPARE(num(r0, "memcpy_busy_ns"), 1'000);
        QCOMPARE(num(r0, "gpu_busy_ns"), 21'000);
        QCOMPARE(num(r0, "span_ns"), 39'000);
        QCOMPARE(num(r0, "idle_ns"), 18'000);
        QCOMPARE(num(r0, "unclassified_ns"), 0);
        QCOMPARE(r0.value(QLatin1String("phase_source")).toString(), QStringLiteral("launch"));
        QCOMPARE(r0.value(QLatin1String("launch_pairing")).toString(), QStringLiteral("stream references"));
        QCOMPARE(r0.value(QLatin1String("step_source")).toString(), QStringLiteral("regions"));
        QCOMPARE(r0.value(QLatin1String("step_assignment")).toString(), QStringLiteral("launch"));
        const QJsonArray steps = r0.value(QLatin1String("steps")).toArray();
        QCOMPARE(steps.size(), 1);
        const QJsonObject st = steps[0].toObject();
        QCOMPARE(st.value(QLatin1String("name")).toString(), QStringLiteral("ProfilerStep#1"));
        // On the GPU the step ends with the all-reduce it launched; its CPU region lasts 100 µs.
        QCOMPARE(num(st, "start_ns"), 0);
        QCOMPARE(num(st, "end_ns"), 40'000);
        QCOMPARE(num(st, "host_end_ns") - num(st, "host_start_ns"), 100'000);
        QCOMPARE(r0.value(QLatin1String("step_windows")).toString(), QStringLiteral("gpu by launch"));
        QCOMPARE(num(st, "overlapped_ns"), 5'000);
        QCOMPARE(num(st, "kernel_count"), 2);
        // Which steps the mean step covers (one step: it stays, whatever its length).
        QCOMPARE(st.value(QLatin1String("startup")).toBool(), false);
        const QJsonObject mean = r0.value(QLatin1String("step_mean")).toObject();
        QCOMPARE(num(mean, "mean_ns"), 40'000);
        QCOMPARE(num(mean, "steps_used"), 1);
        // Steps by their number as recorded (ProfilerStep#1 -> 1), as everywhere.
        QCOMPARE(num(mean, "first_step"), 1);
        QCOMPARE(num(mean, "last_step"), 1);
        QCOMPARE(mean.value(QLatin1String("startup_steps")).toArray().size(), 0);
        QCOMPARE(mean.value(QLatin1String("covers")).toString(), QStringLiteral("step 1"));
        QCOMPARE(num(ranks[1].toObject().value(QLatin1String("step_mean")).toObject(), "steps_used"), 0); // no steps

        const QJsonObject r1 = ranks[1].toObject();
        QCOMPARE(num(r1, "rank"), 1);
        QCOMPARE(num(r1, "comm_busy_ns"), 0);
        QCOMPARE(num(r1, "comm_kernel_count"), 0);
        QVERIFY(r1.value(QLatin1String("overlap_ratio")).isNull());
        QCOMPARE(num(r1, "unclassified_ns"), 10'000);
        QCOMPARE(r1.value(QLatin1String("steps")).toArray().size(), 0);

        const QJsonObject total = top.value(QLatin1String("total")).toObject();
        QCOMPARE(num(total, "compute_busy_ns"), 20'000);
        QCOMPARE(num(total, "comm_busy_ns"), 15'000);
        QCOMPARE(num(total, "kernel_count"), 3);

        const QJsonArray kernels = top.value(QLatin1String("kernels")).toArray();
        QCOMPARE(kernels.size(), 4); // 3 kernels and the copy
        const QJsonObject k0 = kernels[0].toObject();
        QCOMPARE(k0.value(QLatin1String("category")).toString(), QStringLiteral("communication"));
        QCOMPARE(k0.value(QLatin1String("subgroup")).toString(), QStringLiteral("AllReduce"));
        QCOMPARE(k0.value(QLatin1String("phase")).toString(), QStringLiteral("backward"));
        QCOMPARE(num(k0, "total_ns"), 15'000);
        QCOMPARE(num(k0, "count"), 1);
        for (const char* key : { "name", "category", "subgroup", "phase", "count", "total_ns", "mean_ns", "min_ns",
                 "max_ns", "gpu_share" })
            QVERIFY2(k0.contains(QLatin1String(key)), key);
    }

    // --from/--to clip every rank: only the all-reduce runs in [30 µs, 35 µs) of the trace's relative time.
    void window()
    {
        // Relative time 0 is the earliest event of the folder: the ProfilerStep#1 region at 0.
        const Run r = cli({ QStringLiteral("--json"), QStringLiteral("--from"), QStringLiteral("30us"),
            QStringLiteral("--to"), QStringLiteral("35000ns"), m_trace });
        QCOMPARE(r.exitCode, 0);
        const QJsonObject top = QJsonDocument::fromJson(r.out).object();
        const QJsonObject w = top.value(QLatin1String("window")).toObject();
        QCOMPARE(num(w, "start_ns"), 30'000);
        QCOMPARE(num(w, "end_ns"), 35'000);
        const QJsonObject total = top.value(QLatin1String("total")).toObject();
        QCOMPARE(num(total, "comm_busy_ns"), 5'000);
        QCOMPARE(num(total, "comm_kernel_sum_ns"), 5'000);
        QCOMPARE(num(total, "compute_busy_ns"), 0);
        QCOMPARE(num(total, "exposed_ns"), 5'000);
        QCOMPARE(total.value(QLatin1String("overlap_ratio")).toDouble(), 0.0);
        QCOMPARE(num(total, "kernel_count"), 1);
    }

    // "Whole trace" is one window: stats and render both use the recorded activity, from the first event of the
    // launching thread (the ProfilerStep#1 region at 0) to the end of the last GPU work (rank 1's kernel at 60 us),
    // not the CPU region that runs on to 100 us; the figure's SVG says which window it drew.
    void wholeWindowIsTheRecordedActivity()
    {
        const Run r = cli({ QStringLiteral("--json"), m_trace });
        QCOMPARE(r.exitCode, 0);
        const QJsonObject w = QJsonDocument::fromJson(r.out).object().value(QLatin1String("window")).toObject();
        QCOMPARE(num(w, "start_ns"), 0);
        QCOMPARE(num(w, "end_ns"), 60'000);
        QCOMPARE(w.value(QLatin1String("kind")).toString(), QStringLiteral("recorded_activity"));
        const Run table = cli({ m_trace });
        QVERIFY2(table.out.contains("Window: whole trace, the recorded activity 0 ns to 60 µs (60 µs)"),
            table.out.constData());
        const QString svg = m_dir.filePath(QStringLiteral("whole.svg"));
        const Run render = runProcess(QStringLiteral(EXPOSURE_CLI),
            { QStringLiteral("render"), m_trace, QStringLiteral("-o"), svg, QStringLiteral("--force") });
        QVERIFY2(render.exitCode == 0, render.err.constData());
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QVERIFY2(text.contains("window 0 ns to 60 µs (whole trace: the recorded activity, 0 ns to 60000 ns)"),
            text.left(2000).constData());
    }

    void csvAndTable()
    {
        const Run c = cli({ QStringLiteral("--csv"), QStringLiteral("--per-step"), m_trace });
        QCOMPARE(c.exitCode, 0);
        const QList<QByteArray> lines = c.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 5); // header, rank 0, its step, rank 1, total
        QVERIFY(lines[0].startsWith("scope,rank,step,name,start_ns,end_ns,kernel_count,comm_kernel_count,"));
        QVERIFY(lines[2].startsWith("step,0,0,ProfilerStep#1,"));
        QVERIFY(lines[4].startsWith("total,,,all ranks,"));
        const QList<QByteArray> header = lines[0].split(',');
        const QList<QByteArray> rank0 = lines[1].split(',');
        QCOMPARE(rank0.size(), header.size());
        QCOMPARE(rank0[header.indexOf("overlapped_ns")], QByteArray("5000"));
        QCOMPARE(lines[3].split(',')[header.indexOf("overlap_ratio")], QByteArray()); // null

        const Run t = cli({ m_trace });
        QCOMPARE(t.exitCode, 0);
        QVERIFY(t.out.contains("Rank 0"));
        QVERIFY(t.out.contains("33.3 %"));
        QVERIFY(t.out.contains("ncclDevKernel_AllReduce"));
    }

    void errors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("bad time") << QStringList { QStringLiteral("--from"), QStringLiteral("3 parsecs"),
            QStringLiteral("T") } << "exposure-cli: --from '3 parsecs': not a time";
        QTest::newRow("from after to") << QStringList { QStringLiteral("--from"), QStringLiteral("2ms"),
            QStringLiteral("--to"), QStringLiteral("1ms"), QStringLiteral("T") }
                                       << "exposure-cli: --from 2 ms is not before --to 1 ms";
        QTest::newRow("missing rules") << QStringList { QStringLiteral("--rules"), QStringLiteral("/nonexistent.json"),
            QStringLiteral("T") } << "exposure-cli: /nonexistent.json: cannot open the rules file";
        QTest::newRow("no trace") << QStringList {} << "exposure-cli: stats: expected exactly one TRACE argument";
        QTest::newRow("bad trace") << QStringList { QStringLiteral("/nonexistent/trace") }
                                   << "exposure-cli: /nonexistent/trace: ";
        QTest::newRow("window past the end") << QStringList { QStringLiteral("--from"), QStringLiteral("10s"),
            QStringLiteral("T") } << "is empty (the recorded activity spans";
    }
    void errors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        for (QString& a : args)
            if (a == QStringLiteral("T"))
                a = m_trace;
        const Run r = cli(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.out.isEmpty());
        const QString err = QString::fromUtf8(r.err);
        QVERIFY2(err.contains(message), qPrintable(err));
        QCOMPARE(err.count(u'\n'), 1); // one line
    }

    // A rules file that calls the renamed kernel a collective: rank 1 now has communication and nothing else.
    void rulesFile()
    {
        const QString path = m_dir.filePath(QStringLiteral("my-rules.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"description\": \"test\", \"rules\": [{\"id\": \"mine\", \"pattern\": \"^my_renamed\", "
                "\"category\": \"communication\", \"subgroup\": \"AllToAll\"}]}");
        f.close();
        for (const char* option : { "--extend-rules", "--rules" }) {
            const Run r = cli({ QString::fromLatin1(option), path, QStringLiteral("--json"), m_trace });
            QCOMPARE(r.exitCode, 0);
            const QJsonObject top = QJsonDocument::fromJson(r.out).object();
            const QJsonObject r1 = top.value(QLatin1String("ranks")).toArray()[1].toObject();
            QCOMPARE(num(r1, "comm_busy_ns"), 10'000);
            QCOMPARE(num(r1, "compute_busy_ns"), 0);
            QCOMPARE(num(r1, "unclassified_ns"), 0);
            QCOMPARE(r1.value(QLatin1String("overlap_ratio")).toDouble(-1), 0.0);
            const QJsonObject r0 = top.value(QLatin1String("ranks")).toArray()[0].toObject();
            // Replacing the rules loses the NCCL rule: rank 0's all-reduce becomes unclassified compute.
            QCOMPARE(num(r0, "comm_busy_ns"), std::strcmp(option, "--rules") == 0 ? 0 : 15'000);
            QVERIFY(top.value(QLatin1String("rules")).toString().startsWith(path));
        }
    }

    void badRulesFile()
    {
        const QString path = m_dir.filePath(QStringLiteral("bad-rules.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"rules\": [{\"id\": \"x\", \"pattern\": \"[\", \"category\": \"compute\"}]}");
        f.close();
        const Run r = cli({ QStringLiteral("--extend-rules"), path, m_trace });
        QCOMPARE(r.exitCode, 2);
        const QByteArray expected
            = QByteArray("exposure-cli: ") + path.toUtf8() + QByteArray(": rule 1 (\"x\"): bad pattern");
        QVERIFY2(r.err.startsWith(expected), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestStatsCli)
#include "tst_stats_cli.moc"
