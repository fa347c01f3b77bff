// SPDX-License-Identifier: GPL-3.0-or-later
// 'exposure-cli info' end to end: text and --json output on a generated archive, exit codes, one-line errors.
#include "support/nsystraces.h"
#include "support/processrun.h"
#include "synth/archivewriter.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>

using namespace exposure::synth;

namespace {

using Run = ProcessResult;

Run runCli(const QStringList& args)
{
    return runProcess(QStringLiteral(EXPOSURE_CLI), args);
}

ArchiveSpec twoRanks()
{
    ArchiveSpec spec;
    for (int rank = 0; rank < 2; ++rank) {
        auto& r = spec.addRank(rank, "host-a");
        r.threads[0].regions
            = { { "ProfilerStep#1", 0, 90'000 }, { "cuLaunchKernel", 1'000, 2'000, RegionRole::Wrapper, 0 },
                  { "cuLaunchKernel", 3'000, 4'000, RegionRole::Wrapper, 1 } };
        auto& s = r.addStream(rank, 7);
        s.kernels = { { "gemm", 5'000, 15'000 }, { "gelu", 15'000, 16'000 } };
        s.copies = { { CopyKind::HtoD, 20'000, 21'000, 64 } };
        auto& n = r.addStream(rank, 17);
        n.kernels = { { "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 10'000, 30'000 + rank * 1'000 } };
    }
    return spec;
}

} // namespace

class TestCliInfo : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void text();
    void json();
    void help();
    void badInput();
    void demoTrace();
    void nsightReports();
    void differentJobs();
};

void TestCliInfo::text()
{
    QTemporaryDir dir;
    writeArchive(dir.path().toStdString(), twoRanks());
    const Run r = runCli({ QStringLiteral("info"), dir.path() });
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.err.isEmpty());
    const QString out = QString::fromUtf8(r.out);
    QVERIFY2(out.contains(QLatin1String("Ranks:      2")), qPrintable(out));
    QVERIFY(out.contains(QLatin1String("Rank 1  host host-a  device 1  clock 3700000000 ticks/s")));
    QVERIFY(out.contains(QLatin1String("Kernels:    6")));
    QVERIFY(out.contains(QLatin1String("Memcpys:    2")));
    QVERIFY(out.contains(QString::fromUtf8("Time span:  90 µs (90000 ns)")));
    QVERIFY(out.contains(QLatin1String("Warnings:   0")));
}

void TestCliInfo::json()
{
    QTemporaryDir dir;
    writeArchive(dir.path().toStdString(), twoRanks());
    const Run r = runCli({ QStringLiteral("info"), QStringLiteral("--json"), dir.path() });
    QCOMPARE(r.exitCode, 0);
    QJsonParseError perr;
    const auto doc = QJsonDocument::fromJson(r.out, &perr);
    QCOMPARE(perr.error, QJsonParseError::NoError);
    const QJsonObject o = doc.object();
    QCOMPARE(o[QStringLiteral("kernels")].toInt(), 6);
    QCOMPARE(o[QStringLiteral("memcpys")].toInt(), 2);
    QCOMPARE(o[QStringLiteral("intervals")].toInt(), 2 * (3 + 3 + 1));
    QCOMPARE(o[QStringLiteral("span")].toObject()[QStringLiteral("durationNs")].toInteger(), 90'000);
    QCOMPARE(o[QStringLiteral("clockResolutions")].toArray().first().toInteger(), 3'700'000'000ll);
    QCOMPARE(o[QStringLiteral("warnings")].toArray().size(), 0);
    const QJsonArray ranks = o[QStringLiteral("ranks")].toArray();
    QCOMPARE(ranks.size(), 2);
    const QJsonObject r1 = ranks[1].toObject();
    QCOMPARE(r1[QStringLiteral("rank")].toInt(), 1);
    QCOMPARE(r1[QStringLiteral("host")].toString(), QStringLiteral("host-a"));
    QCOMPARE(r1[QStringLiteral("devices")].toArray(), QJsonArray { 1 });
    QVERIFY(r1[QStringLiteral("archive")].toString().endsWith(QLatin1String("rank1/traces.otf2")));
    const QJsonArray lanes = r1[QStringLiteral("lanes")].toArray();
    QCOMPARE(lanes.size(), 3);
    QCOMPARE(lanes[0].toObject()[QStringLiteral("kind")].toString(), QStringLiteral("cpu-thread"));
    QCOMPARE(lanes[0].toObject()[QStringLiteral("intervals")].toInt(), 3);
    QCOMPARE(lanes[0].toObject()[QStringLiteral("events")].toInt(), 6);
    const QJsonObject s7 = lanes[1].toObject();
    QCOMPARE(s7[QStringLiteral("name")].toString(), QStringLiteral("CUDA[1:7]"));
    QCOMPARE(s7[QStringLiteral("kind")].toString(), QStringLiteral("gpu-stream"));
    QCOMPARE(s7[QStringLiteral("stream")].toInt(), 7);
    QCOMPARE(s7[QStringLiteral("nullStream")].toBool(), true);
    QCOMPARE(s7[QStringLiteral("kernels")].toInt(), 2);
    QCOMPARE(s7[QStringLiteral("memcpys")].toInt(), 1);
    QCOMPARE(s7[QStringLiteral("launches")].toInt(), 1);
    QCOMPARE(s7[QStringLiteral("events")].toInt(), 2 * 9 + 2);
}

void TestCliInfo::help()
{
    const Run r = runCli({ QStringLiteral("info"), QStringLiteral("--help") });
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("--json"));
    QVERIFY(r.out.contains("TRACE"));
}

void TestCliInfo::badInput()
{
    QTemporaryDir dir;
    const Run empty = runCli({ QStringLiteral("info"), dir.path() });
    QCOMPARE(empty.exitCode, 2);
    QCOMPARE(QString::fromUtf8(empty.err),
        QStringLiteral("exposure-cli: ") + dir.path() + QStringLiteral(": the folder is empty\n"));
    QVERIFY(empty.out.isEmpty());

    writeArchive(dir.path().toStdString(), twoRanks());
    const std::string def = dir.path().toStdString() + "/rank1/traces.def";
    std::filesystem::resize_file(def, std::filesystem::file_size(def) / 3);
    const Run truncated = runCli({ QStringLiteral("info"), QStringLiteral("--json"), dir.path() });
    QCOMPARE(truncated.exitCode, 2);
    const QByteArray prefix = QByteArray("exposure-cli: ") + QByteArray::fromStdString(def) + QByteArray(": ");
    QVERIFY2(truncated.err.startsWith(prefix), truncated.err.constData());
    QCOMPARE(truncated.err.count('\n'), 1); // one line, and OTF2's own error printing is silenced
    QVERIFY(truncated.out.isEmpty());

    const Run noArg = runCli({ QStringLiteral("info") });
    QCOMPARE(noArg.exitCode, 2);
    QVERIFY(noArg.err.startsWith("exposure-cli: "));
}

void TestCliInfo::demoTrace()
{
    const QString demo = QStringLiteral(EXPOSURE_DEMO_TRACE);
    if (!std::filesystem::exists(demo.toStdString() + "/rank1/traces.otf2"))
        QSKIP("demo trace not generated");
    const Run r = runCli({ QStringLiteral("info"), QStringLiteral("--json"), demo });
    QCOMPARE(r.exitCode, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(o[QStringLiteral("ranks")].toArray().size(), 2);
    QCOMPARE(o[QStringLiteral("warnings")].toArray().size(), 0);
    // 6 steps x (6 layers x (9 forward + 9 backward) + 2 optimizer) compute kernels + 18 NCCL kernels per rank.
    QCOMPARE(o[QStringLiteral("kernels")].toInt(), 2 * (6 * (6 * 18 + 2) + 18));
    QCOMPARE(o[QStringLiteral("memcpys")].toInt(), 2 * 6 * 2);
}

// Nsight Systems exports open in info, stats and compare like any trace: two runs of one and two ranks.
void TestCliInfo::nsightReports()
{
    using namespace exposure::testing;
    QTemporaryDir one, two;
    auto report = [](const QString& path, std::int64_t pid) {
        NsysWriter w(path.toStdString());
        const std::int64_t main = nsysTid(pid, pid);
        w.nvtx(main, 1'000, 100'000, "ProfilerStep#1");
        w.runtime(main, 2'000, 2'010, 1, "cudaLaunchKernel_v7000");
        w.kernel(pid, 0, 7, 3'000, 53'000, 1, "ampere_sgemm_128x64_nn");
        w.runtime(main, 4'000, 4'010, 2, "cudaLaunchKernel_v7000");
        w.kernel(pid, 0, 17, 40'000, 70'000, 2, "ncclKernel_AllReduce_RING_LL_Sum_float");
    };
    report(one.filePath(QStringLiteral("run.sqlite")), 10);
    report(two.filePath(QStringLiteral("run_rank0.sqlite")), 20);
    report(two.filePath(QStringLiteral("run_rank1.sqlite")), 30);
    const Run info = runCli({ QStringLiteral("info"), two.path() });
    QCOMPARE(info.exitCode, 0);
    const QString out = QString::fromUtf8(info.out);
    QVERIFY2(out.contains(QLatin1String("Ranks:      2")), qPrintable(out));
    QVERIFY(out.contains(QLatin1String("Kernels:    4")));
    const Run stats
        = runCli({ QStringLiteral("stats"), QStringLiteral("--json"), one.filePath(QStringLiteral("run.sqlite")) });
    QCOMPARE(stats.exitCode, 0);
    const QJsonObject total = QJsonDocument::fromJson(stats.out).object().value(QStringLiteral("total")).toObject();
    QVERIFY2(!total.isEmpty(), stats.out.constData());
    // Compute [3, 53) us, communication [40, 70) us: 13 us hidden, 17 us exposed.
    QCOMPARE(total.value(QStringLiteral("compute_busy_ns")).toInteger(), 50'000);
    QCOMPARE(total.value(QStringLiteral("exposed_ns")).toInteger(), 17'000);
    const Run compare = runCli({ QStringLiteral("compare"), one.filePath(QStringLiteral("run.sqlite")), two.path() });
    QCOMPARE(compare.exitCode, 0);
    // Not an export: one line naming the file, exit status 2.
    const QString bad = one.filePath(QStringLiteral("bad.sqlite"));
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("not a database");
    f.close();
    const Run refused = runCli({ QStringLiteral("info"), bad });
    QCOMPARE(refused.exitCode, 2);
    QCOMPARE(refused.err.count('\n'), 1);
    QVERIFY(refused.err.contains(QByteArray(bad.toUtf8() + ": not an SQLite database")));
}

// Two unrelated reports in one folder: info and stats still read them (exit 0) and say on stderr that they are two
// jobs.
void TestCliInfo::differentJobs()
{
    using namespace exposure::testing;
    QTemporaryDir dir;
    auto report = [&](const QString& name, const std::string& program, const std::string& host) {
        NsysWriter w(dir.filePath(name).toStdString());
        w.process(7, program);
        w.host(host);
        w.runtime(nsysTid(7, 7), 2'000, 2'010, 1, "cudaLaunchKernel_v7000");
        w.kernel(7, 0, 7, 3'000, 53'000, 1, "ampere_sgemm_128x64_nn");
    };
    report(QStringLiteral("cloverleaf.sqlite"), "cloverleaf", "h1");
    report(QStringLiteral("saxpy.sqlite"), "saxpy", "h2");
    const QByteArray expected = "exposure-cli: warning: " + dir.path().toUtf8()
        + ": the files look like 2 different jobs (different programs): cloverleaf.sqlite (program cloverleaf, host "
          "h1) and saxpy.sqlite (program saxpy, host h2); they were opened as one run, though their ranks are not one "
          "job's (open each job separately, or compare them)\n";
    for (const char* command : { "info", "stats" }) {
        const Run run = runCli({ QString::fromLatin1(command), dir.path() });
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.err, expected);
    }
}

QTEST_APPLESS_MAIN(TestCliInfo)
#include "tst_cliinfo.moc"
