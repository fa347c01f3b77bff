// SPDX-License-Identifier: GPL-3.0-or-later
// Every exposure-cli command that loads a trace (info, stats, whatif, compare, render) takes the same load options,
// parsed once (cli::LoadArgs into RunOptions): --rules, --extend-rules, --clock, --ranks, --memory-limit. Each
// command runs with --rules X --clock recorded --ranks 0,1 on a generated 3-rank run of two hosts (rank 1's clock
// 40 µs late), and its output shows each option honoured: the ranks it lists, the classification of X (the NCCL
// kernels compute, the custom kernel a reduce-scatter) and the recorded clocks (rank 1's waiting not shifted away).
#include "support/customcomm.h"
#include "support/processrun.h"
#include "synth/archivewriter.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace exposure::synth;
namespace testing = exposure::testing;

namespace {

using Run = ProcessResult;

Run cli(const QString& command, const QStringList& args)
{
    return runProcess(QStringLiteral(EXPOSURE_CLI), QStringList { command } + args, 120'000);
}

QJsonObject jsonOf(const Run& r)
{
    return QJsonDocument::fromJson(r.out).object();
}

QJsonObject kernelRow(const QJsonObject& stats, const QString& name)
{
    for (const QJsonValue& k : stats.value(QLatin1String("kernels")).toArray())
        if (k.toObject().value(QLatin1String("name")).toString() == name)
            return k.toObject();
    return {};
}

const QString kCustom = QLatin1String(exposure::testing::kCustomCommKernel);

} // namespace

class TestLoadOptionsCli : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace, m_rules, m_badRules;
    QStringList m_options;

    // The commands, each with what it needs besides the load options and the trace; info and stats where asked.
    void addCommands(bool infoAndStats)
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QStringList>("extra");
        if (infoAndStats) {
            QTest::newRow("info") << QStringLiteral("info") << QStringList {};
            QTest::newRow("stats") << QStringLiteral("stats") << QStringList {};
        }
        QTest::newRow("whatif") << QStringLiteral("whatif")
                                << QStringList { QStringLiteral("--comm"), QStringLiteral("hidden") };
        QTest::newRow("compare") << QStringLiteral("compare") << QStringList { m_trace };
        QTest::newRow("render") << QStringLiteral("render")
                                << QStringList { QStringLiteral("-f"), QStringLiteral("-o"),
                                       m_dir.filePath(QStringLiteral("figure.svg")) };
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        // Ranks 0 (node0), 1 and 2 (node1): per step a GEMM, an NCCL all-reduce and the custom kernel, the
        // collectives of rank 1 2 µs after rank 0's; rank 1's host clock reads 40 µs late.
        ArchiveSpec spec;
        for (int r = 0; r < 3; ++r) {
            RankSpec& rank = spec.addRank(r);
            rank.host = r == 0 ? "node0" : "node1";
            rank.clockOffsetNs = r == 1 ? 40'000 : 0;
            rank.addStream(r, 7);
            rank.addStream(r, 17); // (may move the first)
            StreamSpec& compute = rank.streams[0];
            StreamSpec& comm = rank.streams[1];
            auto& cpu = rank.threads[0].regions;
            for (Ns step = 0; step < 6; ++step) {
                const Ns t = step * 100'000;
                const Ns late = r == 0 ? 0 : 2'000;
                cpu.push_back({ "ProfilerStep#" + std::to_string(step + 1), t, t + 100'000 });
                compute.kernels.push_back({ "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_NNT", t + 1'000, t + 30'000 });
                comm.kernels.push_back({ "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                    t + 20'000 + late, t + 50'000 });
                comm.kernels.push_back({ kCustom.toStdString(), t + 60'000 + late, t + 80'000 });
            }
        }
        m_trace = m_dir.filePath(QStringLiteral("run"));
        writeArchive(m_trace.toStdString(), spec);
        // X: the custom kernel is a reduce-scatter; everything else (NCCL's kernels too) is compute.
        m_rules = m_dir.filePath(QStringLiteral("x.json"));
        QFile f(m_rules);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray("{\"rules\": [" + testing::customCommRule()
            + ", {\"id\": \"rest\", \"pattern\": \"\", \"target\": \"kernel\", \"category\": \"compute\", "
              "\"subgroup\": \"other\"}]}"));
        f.close();
        m_badRules = m_dir.filePath(QStringLiteral("bad.json"));
        QFile b(m_badRules);
        QVERIFY(b.open(QIODevice::WriteOnly));
        b.write("{\"rules\": [}");
        b.close();
        m_options = { QStringLiteral("--rules"), m_rules, QStringLiteral("--clock"), QStringLiteral("recorded"),
            QStringLiteral("--ranks"), QStringLiteral("0,1") };
    }

    // Every command takes every load option, and refuses a bad value of each with one line naming it.
    void everyCommandTakesEveryOption_data() { addCommands(true); }
    void everyCommandTakesEveryOption()
    {
        QFETCH(QString, command);
        QFETCH(QStringList, extra);
        const Run ok = cli(command, m_options + extra + QStringList { m_trace });
        QVERIFY2(ok.exitCode == 0, ok.err.constData());
        const Run extend
            = cli(command, QStringList { QStringLiteral("--extend-rules"), m_rules } + extra + QStringList { m_trace });
        QVERIFY2(extend.exitCode == 0, extend.err.constData());
        const std::vector<std::pair<QStringList, QByteArray>> bad = {
            { { QStringLiteral("--rules"), m_badRules }, m_badRules.toUtf8() + ": not valid JSON" },
            { { QStringLiteral("--rules"), m_rules, QStringLiteral("--extend-rules"), m_rules },
                "--rules and --extend-rules exclude each other" },
            { { QStringLiteral("--clock"), QStringLiteral("local") }, "--clock 'local': expected aligned or recorded" },
            { { QStringLiteral("--ranks"), QStringLiteral("x") }, "--ranks 'x': expected rank numbers" },
            { { QStringLiteral("--memory-limit"), QStringLiteral("lots") },
                "--memory-limit 'lots': expected a size such as 512M or 8G" },
            { { QStringLiteral("--memory-limit"), QStringLiteral("1K") }, "" }, // refused by the memory check
        };
        for (const auto& [args, message] : bad) {
            const Run r = cli(command, args + extra + QStringList { m_trace });
            QCOMPARE(r.exitCode, 2);
            QVERIFY2(r.err.startsWith(QByteArray(QByteArray("exposure-cli: ") + message)), r.err.constData());
            QCOMPARE(r.err.count('\n'), 1);
        }
    }

    void info()
    {
        const QJsonObject all = jsonOf(cli(QStringLiteral("info"), { QStringLiteral("--json"), m_trace }));
        QCOMPARE(all.value(QLatin1String("ranks")).toArray().size(), 3);
        const QJsonObject some
            = jsonOf(cli(QStringLiteral("info"), m_options + QStringList { QStringLiteral("--json"), m_trace }));
        const QJsonArray ranks = some.value(QLatin1String("ranks")).toArray();
        QCOMPARE(ranks.size(), 2);
    }

    void stats()
    {
        const QJsonObject plain = jsonOf(cli(QStringLiteral("stats"), { QStringLiteral("--json"), m_trace }));
        const QJsonObject s
            = jsonOf(cli(QStringLiteral("stats"), m_options + QStringList { QStringLiteral("--json"), m_trace }));
        // --ranks
        QCOMPARE(plain.value(QLatin1String("ranks")).toArray().size(), 3);
        QCOMPARE(s.value(QLatin1String("ranks")).toArray().size(), 2);
        // --rules: X classifies
        QCOMPARE(s.value(QLatin1String("rules")).toString(), m_rules);
        const QString nccl
            = QStringLiteral("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
        QCOMPARE(kernelRow(plain, nccl).value(QLatin1String("category")).toString(), QStringLiteral("communication"));
        QCOMPARE(kernelRow(s, nccl).value(QLatin1String("category")).toString(), QStringLiteral("compute"));
        QCOMPARE(kernelRow(s, kCustom).value(QLatin1String("subgroup")).toString(), QStringLiteral("reducescatter"));
        QCOMPARE(kernelRow(s, kCustom).value(QLatin1String("count")).toInt(), 12);
        const QJsonArray groups = s.value(QLatin1String("collective_summary")).toArray();
        QCOMPARE(groups.size(), 1);
        const QJsonArray byType = groups[0].toObject().value(QLatin1String("collectives_by_type")).toArray();
        QCOMPARE(byType.size(), 1);
        QCOMPARE(byType[0].toObject().value(QLatin1String("type")).toString(), QStringLiteral("reducescatter"));
        QCOMPARE(byType[0].toObject().value(QLatin1String("algorithm")).toString(), QStringLiteral("tree_ll128"));
        QCOMPARE(byType[0].toObject().value(QLatin1String("count")).toInt(), 6);
        // --clock: recorded, where the default aligns the two hosts
        const auto method = [](const QJsonObject& o) {
            return o.value(QLatin1String("clock_alignment")).toObject().value(QLatin1String("method")).toString();
        };
        QCOMPARE(method(s), QStringLiteral("recorded"));
        QCOMPARE(method(plain), QStringLiteral("collective_ends"));
        const QJsonObject aligned = jsonOf(cli(QStringLiteral("stats"),
            { QStringLiteral("--rules"), m_rules, QStringLiteral("--ranks"), QStringLiteral("0,1"),
                QStringLiteral("--json"), m_trace }));
        QCOMPARE(method(aligned), QStringLiteral("collective_ends"));
    }

    // whatif, compare and render: the output with the options agrees with itself and differs from the output with
    // any one of them left out (the options, not chance, make the difference); see below for whatif's clock.
    void outputsFollowTheOptions_data() { addCommands(false); }
    void outputsFollowTheOptions()
    {
        QFETCH(QString, command);
        QFETCH(QStringList, extra);
        // render writes its figure to the file after -o: that is its output.
        auto run = [&](const QStringList& options) {
            Run r = cli(command, options + extra + QStringList { m_trace });
            if (command == QLatin1String("render")) {
                QFile figure(extra.last());
                r.out = figure.open(QIODevice::ReadOnly) ? figure.readAll() : QByteArray();
            }
            return r;
        };
        const QStringList rulesAndRanks
            = { QStringLiteral("--rules"), m_rules, QStringLiteral("--ranks"), QStringLiteral("0,1") };
        const Run plain = run({});
        const Run all = run(m_options);
        const Run again = run(m_options);
        const Run alignedClock = run(rulesAndRanks);
        const Run noRules = run({ QStringLiteral("--clock"), QStringLiteral("recorded"), QStringLiteral("--ranks"),
            QStringLiteral("0,1") });
        const Run allRanks
            = run({ QStringLiteral("--rules"), m_rules, QStringLiteral("--clock"), QStringLiteral("recorded") });
        for (const Run* r : { &plain, &all, &again, &alignedClock, &noRules, &allRanks })
            QVERIFY2(r->exitCode == 0, r->err.constData());
        QVERIFY(!all.out.isEmpty());
        if (command == QLatin1String("render"))
            QVERIFY(all.out.startsWith("<?xml"));
        QCOMPARE(all.out, again.out);
        QVERIFY(all.out != plain.out);
        QVERIFY(all.out != noRules.out);
        QVERIFY(all.out != allRanks.out);
        // The what-if replays durations and dependencies, which no clock shift changes: it agrees across clocks;
        // compare (waiting and transfer) and render (where rank 1's blocks are drawn) do not.
        if (command == QLatin1String("whatif"))
            QCOMPARE(all.out, alignedClock.out);
        else
            QVERIFY(all.out != alignedClock.out);
    }
};

QTEST_GUILESS_MAIN(TestLoadOptionsCli)
#include "tst_loadoptions_cli.moc"
