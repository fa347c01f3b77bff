// SPDX-License-Identifier: GPL-3.0-or-later
// End to end: `mpirun -n K exposure-mpi stats` on generated multi-rank traces (folders of OTF2 archives and of
// torch.profiler files) prints the same bytes as `exposure-cli stats` for K = 1, 2, 3 (fewer, as many and more
// processes than archives), and a truncated archive or file on one process ends every process with the serial tool's
// one-line message and status 2.
#include "nodelay.h"
#include "support/demoarchive.h"
#include "support/kinetotraces.h"
#include "support/mpiprocess.h"
#include "synth/archivewriter.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <arpa/inet.h>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace exposure;
using namespace exposure::synth;

namespace {

const testing::MpiCommand tool { QStringLiteral("stats"), 60'000, 120'000 };

// Four ranks whose data the loader warns about: rank 0's stream has overlapping kernels (written as an Enter without
// a Leave and a Leave without an Enter, two import warnings, and two clipped ends), rank 1 an Enter without a Leave
// on its thread (an import warning) and a clipped kernel, rank 2 a clock jump; the clocks of ranks 0 and 3 overlap
// no other rank's.
QString writeWarnings(const QString& dir)
{
    ArchiveSpec spec;
    spec.timerResolution = 1'000'000'000;
    auto& r0 = spec.addRank(0).addStream(0, 7);
    r0.kernels = { { "k0", 1'000, 4'000 }, { "k1", 3'000, 9'000 }, { "k2", 10'000, 20'000 }, { "k3", 12'000, 15'000 } };
    auto& rank1 = spec.addRank(1);
    rank1.threads[0].raw
        = { { RawEvent::Enter, 50'000, "a" }, { RawEvent::Enter, 51'000, "b" }, { RawEvent::Leave, 52'000, "b" } };
    rank1.addStream(1, 7).kernels = { { "k0", 50'000, 60'000 }, { "k1", 52'000, 55'000 } };
    const Ns hour = 3600LL * 1'000'000'000LL;
    spec.addRank(2).addStream(2, 7).kernels = { { "k0", 54'000, 58'000 }, { "k1", 2 * hour, 2 * hour + 1'000 } };
    spec.addRank(3).addStream(3, 7).kernels = { { "k0", 3 * hour, 3 * hour + 10'000 } };
    writeArchive(dir.toStdString(), spec);
    return dir;
}

// testing::writeFile into a folder made as needed.
bool put(const QString& path, const QByteArray& text)
{
    return QDir().mkpath(QFileInfo(path).path()) && testing::writeFile(path, text);
}

// A rank of ten all-reduces of process group 0 (one every 400 us, rank 1 arriving 50 us later), all its times moved
// by `offsetNs` (the clock of another host).
QByteArray allReduceRank(int rank, qint64 offsetNs)
{
    QByteArray events;
    for (int k = 0; k < 10; ++k) {
        const qint64 start = 1'000'000 + k * 400'000 + (rank == 0 ? 0 : 50'000) + offsetNs;
        const qint64 end = 1'000'000 + k * 400'000 + 200'000 + offsetNs;
        events += QByteArray(k ? ",\n" : "\n")
            + R"({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 17,)"
            + R"( "ts": )" + QByteArray::number(double(start) / 1000.0, 'f', 3) + R"(, "dur": )"
            + QByteArray::number(double(end - start) / 1000.0, 'f', 3)
            + R"(, "args": {"device": 0, "stream": 17, "Collective name": "allreduce", "Group size": 2,)"
            + R"( "Process Group Name": "0", "Process Group Ranks": "[0, 1]"}})";
    }
    return R"({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": )" + QByteArray::number(rank)
        + R"(, "world_size": 2}, "traceEvents": [)" + events + "]}";
}

} // namespace

class TestMpiStats : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_two, m_three, m_five, m_warnings, m_hosts;

private Q_SLOTS:
    // After MPI_Init, exposure-mpi sets TCP_NODELAY on the process's TCP sockets (Open MPI's PMIx connection lacks it):
    // both ends of a loopback connection get it; a listening TCP socket too; UDP and Unix sockets are left alone.
    void tcpSocketsSendAtOnce()
    {
        const auto noDelay = [](int fd) {
            int v = -1;
            socklen_t len = sizeof v;
            return getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len) == 0 ? v : -1;
        };
        const int listener = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr {};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        QCOMPARE(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        QCOMPARE(listen(listener, 1), 0);
        QCOMPARE(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
        const int client = socket(AF_INET, SOCK_STREAM, 0);
        QCOMPARE(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        const int server = accept(listener, nullptr, nullptr);
        QVERIFY(server >= 0);
        const int udp = socket(AF_INET, SOCK_DGRAM, 0);
        int pair[2];
        QCOMPARE(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
        QCOMPARE(noDelay(client), 0);
        QCOMPARE(noDelay(server), 0);
        QVERIFY(mpi::setNoDelayOnTcpSockets() >= 3);
        QCOMPARE(noDelay(client), 1);
        QCOMPARE(noDelay(server), 1);
        QCOMPARE(noDelay(listener), 1);
        QCOMPARE(noDelay(udp), -1); // not a TCP socket: the option does not exist there
        QCOMPARE(noDelay(pair[0]), -1);
        for (const int fd : { listener, client, server, udp, pair[0], pair[1] })
            ::close(fd);
    }

    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        testing::writeMpiDemoRuns(m_dir);
        m_two = m_dir.filePath(QStringLiteral("two"));
        m_three = m_dir.filePath(QStringLiteral("three"));
        m_five = m_dir.filePath(QStringLiteral("five"));
        m_warnings = writeWarnings(m_dir.filePath(QStringLiteral("warnings")));
        // Four ranks on two hosts whose clocks are 3 ms apart: aligned from the all-reduces, as exposure-cli does.
        m_hosts = m_dir.filePath(QStringLiteral("hosts"));
        DemoOptions hosts;
        hosts.ranks = 4;
        hosts.steps = 3;
        ArchiveSpec spec = makeDemoSpec(hosts);
        for (std::size_t r = 2; r < spec.ranks.size(); ++r) {
            spec.ranks[r].host = "node1";
            spec.ranks[r].clockOffsetNs = 3'000'000;
        }
        writeArchive(m_hosts.toStdString(), spec);
    }

    void sameBytes_data()
    {
        QTest::addColumn<QString>("trace");
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<int>("ranks");
        const QStringList formats[] = {
            { QStringLiteral("--json") },
            { QStringLiteral("--per-step") },
            { QStringLiteral("--csv"), QStringLiteral("--per-step") },
            { QStringLiteral("--json"), QStringLiteral("--from"), QStringLiteral("2ms"), QStringLiteral("--to"),
                QStringLiteral("9ms") },
        };
        const std::pair<const char*, int> traces[]
            = { { "two", 2 }, { "three", 3 }, { "five", 5 }, { "warnings", 4 }, { "hosts", 4 } };
        for (const auto& [name, ranks] : traces)
            for (std::size_t f = 0; f < std::size(formats); ++f)
                QTest::addRow("%s ranks, format %zu", name, f)
                    << m_dir.filePath(QLatin1String(name)) << formats[f] << ranks;
        // --ranks chooses archives before they are dealt out; a generous --memory-limit changes nothing.
        const QStringList chosen[] = {
            { QStringLiteral("--json"), QStringLiteral("--ranks"), QStringLiteral("1,3-4") },
            { QStringLiteral("--per-step"), QStringLiteral("--ranks"), QStringLiteral("0,2") },
            { QStringLiteral("--json"), QStringLiteral("--memory-limit"), QStringLiteral("8G") },
        };
        for (std::size_t f = 0; f < std::size(chosen); ++f)
            QTest::addRow("five ranks, chosen %zu", f) << m_five << chosen[f] << (f == 0 ? 3 : f == 1 ? 2 : 5);
        QTest::addRow("warnings, ranks 1-2")
            << m_warnings << QStringList { QStringLiteral("--json"), QStringLiteral("--ranks"), QStringLiteral("1-2") }
            << 2;
    }

    void sameBytes()
    {
        QFETCH(QString, trace);
        QFETCH(QStringList, options);
        QFETCH(int, ranks);
        const ProcessResult expected = tool.serial(options + QStringList { trace });
        QCOMPARE(expected.exitCode, 0);
        // The serial report is a real one: every rank is in it (--ranks: as many as chosen).
        int seen = 0;
        for (int r = 0; r < 5; ++r)
            seen += expected.out.contains(QByteArray("Rank " + QByteArray::number(r))) ? 1 : 0;
        QCOMPARE(seen, ranks);
        for (int k = 1; k <= 3; ++k) {
            const ProcessResult got = tool.parallel(k, options + QStringList { trace });
            QVERIFY2(got.exitCode == 0, got.err.constData());
            QVERIFY2(got.out == expected.out, qPrintable(QStringLiteral("K=%1 differs from exposure-cli").arg(k)));
        }
    }

    // The warnings trace gives trace warnings of every kind, in exposure-cli's order (importer's per archive, then
    // each rank's lanes, then the unaligned ranks), and exposure-mpi gathers them in that order (checked byte by byte
    // above; here that there is something to check).
    void traceWarningsGathered()
    {
        const ProcessResult expected = tool.serial({ QStringLiteral("--json"), m_warnings });
        QCOMPARE(expected.exitCode, 0);
        const QJsonArray w
            = QJsonDocument::fromJson(expected.out).object().value(QStringLiteral("trace_warnings")).toArray();
        QStringList text;
        for (const auto& v : w)
            text << v.toString();
        const QString root = m_warnings + QStringLiteral("/rank");
        const QStringList want = {
            root + QStringLiteral("0/traces.otf2: CUDA[0:7]: 1 Enter events without a matching Leave"),
            root + QStringLiteral("0/traces.otf2: CUDA[0:7]: 1 Leave events without a matching Enter"),
            root + QStringLiteral("1/traces.otf2: Master thread: 1 Enter events without a matching Leave"),
            root + QStringLiteral("0/traces.otf2: Rank 0 CUDA[0:7]: 2 kernels or copies end after a later one"),
            root + QStringLiteral("1/traces.otf2: Rank 1 CUDA[1:7]: 1 kernels or copies end after a later one"),
            root + QStringLiteral("2/traces.otf2: Rank 2 CUDA[2:7]: the clock jumps forward 1 time"),
            root + QStringLiteral("0/traces.otf2: Rank 0: its events do not overlap"),
            root + QStringLiteral("3/traces.otf2: Rank 3: its events do not overlap"),
        };
        QCOMPARE(text.size(), want.size());
        for (int i = 0; i < want.size(); ++i)
            QVERIFY2(text[i].startsWith(want[i]), qPrintable(text[i]));
        const ProcessResult table = tool.parallel(3, { m_warnings });
        QCOMPARE(table.exitCode, 0);
        QCOMPARE(table.out.count("\nwarning: "), 8);
    }

    // Archives of two hosts 3 ms apart: exposure-mpi aligns their clocks as exposure-cli does (the bytes are compared
    // above; here that the serial tool did align them, and that the times moved).
    void clocksAlignedAcrossHosts()
    {
        const ProcessResult expected = tool.serial({ m_hosts });
        QCOMPARE(expected.exitCode, 0);
        QVERIFY2(expected.out.contains("clocks aligned across 2 hosts"), expected.out.constData());
        QVERIFY(expected.out.contains("offsets up to 3"));
        const ProcessResult recorded
            = tool.parallel(2, { QStringLiteral("--clock"), QStringLiteral("recorded"), m_hosts });
        QCOMPARE(recorded.exitCode, 0);
        QVERIFY2(recorded.out.contains("clocks as recorded (--clock recorded"), recorded.out.constData());
        QCOMPARE(recorded.out, tool.serial({ QStringLiteral("--clock"), QStringLiteral("recorded"), m_hosts }).out);
    }

    // Each process checks the memory its own archives need against --memory-limit: too small a limit ends every
    // process with one line and status 2.
    void memoryLimitPerProcess()
    {
        const ProcessResult got = tool.parallel(2, { QStringLiteral("--memory-limit"), QStringLiteral("1M"), m_three });
        QVERIFY(got.exitCode > 0);
        QVERIFY2(testing::messageOf(got.err, "exposure-mpi").contains("allowed by the given memory limit"),
            got.err.constData());
        QCOMPARE(got.err.count("exposure-mpi: "), 1);
        QVERIFY(got.out.isEmpty());
    }

    // Collectives are matched across ranks that live in different processes: the JSON has matched instances and
    // waiting on every rank, and the same numbers as the serial tool (checked above byte by byte).
    void collectivesAcrossProcesses()
    {
        const ProcessResult got = tool.parallel(3, { QStringLiteral("--json"), m_three });
        QCOMPARE(got.exitCode, 0);
        const QJsonArray ranks = QJsonDocument::fromJson(got.out).object().value(QStringLiteral("ranks")).toArray();
        QCOMPARE(ranks.size(), 3);
        for (const auto& r : ranks) {
            const QJsonObject c = r.toObject().value(QStringLiteral("collectives")).toObject();
            QVERIFY(c.value(QStringLiteral("matched")).toInteger() > 0);
            QCOMPARE(c.value(QStringLiteral("unmatched")).toInteger(), 0);
        }
    }

    // A folder of torch.profiler files is spread over the processes (each reads its share of the files; process 0
    // numbers the ranks and aligns the clocks across them) and gives exposure-cli's bytes, warnings and errors.
    void kinetoFilesSpread_data()
    {
        QTest::addColumn<QString>("trace");
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<QByteArray>("expect"); // in exposure-cli's output
        const QString five = testing::writeKinetoRun(m_dir, QStringLiteral("kineto5"), 5);
        // Rank 1's clock 5 ms ahead: the all-reduces tie it to rank 0, and the offset is applied.
        const QString shifted = m_dir.filePath(QStringLiteral("kinetoShifted"));
        QVERIFY(put(shifted + QStringLiteral("/rank0.json"), allReduceRank(0, 0)));
        QVERIFY(put(shifted + QStringLiteral("/rank1.json"), allReduceRank(1, 5'000'000)));
        // Files of two world sizes: ranks in the files' order, and the job check's warning.
        const QString mixed = m_dir.filePath(QStringLiteral("kinetoMixed"));
        for (int r = 0; r < 2; ++r)
            QVERIFY(put(mixed + QStringLiteral("/a_rank%1.json").arg(r), testing::rankTrace(r, 2)));
        for (int r = 0; r < 3; ++r)
            QVERIFY(put(mixed + QStringLiteral("/b_rank%1.json").arg(r), testing::rankTrace(r, 3)));
        // No distributedInfo and no rank in the names: the files' natural order.
        const QString unnamed = m_dir.filePath(QStringLiteral("kinetoUnnamed"));
        for (const char* name : { "worker10.json", "worker2.json", "worker1.json" })
            QVERIFY(put(unnamed + QLatin1Char('/') + QLatin1String(name),
                testing::rankTrace(int(std::strlen(name)), 3, false)));
        const QStringList json { QStringLiteral("--json") };
        QTest::newRow("5 ranks, JSON") << five << json << QByteArray("\"rank\": 4");
        QTest::newRow("5 ranks, table") << five << QStringList { QStringLiteral("--per-step") } << QByteArray("Rank 4");
        QTest::newRow("5 ranks, window") << five
                                         << QStringList { QStringLiteral("--csv"), QStringLiteral("--from"),
                                                QStringLiteral("1030us"), QStringLiteral("--to"),
                                                QStringLiteral("1060us") }
                                         << QByteArray("4,");
        QTest::newRow("clocks aligned") << shifted << QStringList() << QByteArray("clocks aligned across 2 ranks");
        QTest::newRow("clocks as recorded")
            << shifted
            << QStringList { QStringLiteral("--json"), QStringLiteral("--clock"), QStringLiteral("recorded") }
            << QByteArray("\"method\": \"recorded\"");
        QTest::newRow("two world sizes") << mixed << QStringList() << QByteArray("different world sizes");
        QTest::newRow("natural order") << unnamed << json << QByteArray("\"rank\": 2");
    }

    void kinetoFilesSpread()
    {
        QFETCH(QString, trace);
        QFETCH(QStringList, options);
        QFETCH(QByteArray, expect);
        const ProcessResult expected = tool.serial(options + QStringList { trace });
        QCOMPARE(expected.exitCode, 0);
        QVERIFY2(expected.out.contains(expect), expected.out.constData());
        for (int k = 1; k <= 3; ++k) {
            qputenv("EXPOSURE_MPI_TIMINGS", "1");
            const ProcessResult got = tool.parallel(k, options + QStringList { trace });
            qunsetenv("EXPOSURE_MPI_TIMINGS");
            QVERIFY2(got.exitCode == 0, got.err.constData());
            QVERIFY2(got.out == expected.out, qPrintable(QStringLiteral("K=%1 differs from exposure-cli").arg(k)));
            // From two processes on, every process read files of its own (not process 0 alone); one reads with all
            // its cores, as exposure-cli does.
            for (int p = 0; p < k && k > 1; ++p)
                QVERIFY2(got.err.contains(QByteArray(QByteArray("process ") + QByteArray::number(p) + ": read ")),
                    got.err.constData());
            // The job check's warning on stderr, as exposure-cli gives it.
            QCOMPARE(got.err.count("warning: "), expected.err.count("warning: "));
        }
    }

    // Two files of one rank, or a file that is no JSON: every process ends with exposure-cli's message, status 2.
    void kinetoFilesErrors_data()
    {
        QTest::addColumn<QString>("trace");
        QTest::addColumn<QByteArray>("message");
        const QString twice = m_dir.filePath(QStringLiteral("kinetoTwice"));
        QVERIFY(put(twice + QStringLiteral("/rank0.json"), testing::rankTrace(0, 2)));
        QVERIFY(put(twice + QStringLiteral("/rank1.json"), testing::rankTrace(1, 2)));
        QVERIFY(put(twice + QStringLiteral("/rank1b.json"), testing::rankTrace(1, 2)));
        const QString cut = m_dir.filePath(QStringLiteral("kinetoCut"));
        QVERIFY(put(cut + QStringLiteral("/rank0.json"), testing::rankTrace(0, 3)));
        QVERIFY(put(cut + QStringLiteral("/rank1.json"), testing::rankTrace(1, 3).left(700)));
        QVERIFY(put(cut + QStringLiteral("/rank2.json"), testing::rankTrace(2, 3)));
        QTest::newRow("two files of rank 1") << twice << QByteArray("rank 1 also comes from");
        QTest::newRow("cut file") << cut << QByteArray("rank1.json: invalid JSON");
    }

    void kinetoFilesErrors()
    {
        QFETCH(QString, trace);
        QFETCH(QByteArray, message);
        const ProcessResult expected = tool.serial({ trace });
        QCOMPARE(expected.exitCode, 2);
        const QByteArray line = testing::messageOf(expected.err, "exposure-cli");
        QVERIFY2(line.contains(message), line.constData());
        for (int k = 2; k <= 3; ++k) {
            const ProcessResult got = tool.parallel(k, { trace });
            QVERIFY2(got.exitCode > 0, got.err.constData());
            QCOMPARE(testing::messageOf(got.err, "exposure-mpi"), line);
            QCOMPARE(got.err.count("exposure-mpi: "), 1);
            QVERIFY(got.out.isEmpty());
        }
    }

    void truncatedArchive_data()
    {
        QTest::addColumn<int>("processes");
        QTest::newRow("2 processes") << 2;
        QTest::newRow("3 processes") << 3;
    }

    void truncatedArchive()
    {
        QFETCH(int, processes);
        const QString bad = m_dir.filePath(QStringLiteral("bad"));
        if (!QDir(bad).exists()) {
            testing::writeDemoRun(bad, 3, 3, false);
            // Cut the event file of one GPU stream of rank 1 in half: the loader refuses it.
            const QStringList evts = QDir(bad + QStringLiteral("/rank1/traces"))
                                         .entryList({ QStringLiteral("*.evt") }, QDir::Files, QDir::Size);
            QVERIFY(!evts.isEmpty());
            QFile f(bad + QStringLiteral("/rank1/traces/") + evts.front());
            QVERIFY(f.resize(f.size() / 2));
        }
        const ProcessResult expected = tool.serial({ bad });
        QCOMPARE(expected.exitCode, 2);
        const QByteArray message = testing::messageOf(expected.err, "exposure-cli");
        QVERIFY(message.contains("rank1"));
        const ProcessResult got = tool.parallel(processes, { bad }); // a hang ends as exitCode -1 after the timeout
        QVERIFY2(got.exitCode > 0, got.err.constData());
        QCOMPARE(testing::messageOf(got.err, "exposure-mpi"), message);
        QCOMPARE(got.err.count("exposure-mpi: "), 1); // one line, from process 0 only
        QVERIFY(got.out.isEmpty());
    }

    void badArgumentsOnce()
    {
        const ProcessResult got = tool.parallel(2, { QStringLiteral("--json"), QStringLiteral("--csv"), m_two });
        QVERIFY(got.exitCode > 0);
        QCOMPARE(testing::messageOf(got.err, "exposure-mpi"), QByteArray("stats: --json and --csv exclude each other"));
        QCOMPARE(got.err.count("exposure-mpi: "), 1);
    }
};

QTEST_GUILESS_MAIN(TestMpiStats)
#include "tst_mpi_stats.moc"
