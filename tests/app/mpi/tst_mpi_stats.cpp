// SPDX-License-Identifier: GPL-3.0-or-later
// End to end: `mpirun -n K exposure-mpi stats` on generated multi-rank traces prints the same bytes as
// `exposure-cli stats` for K = 1, 2, 3 (fewer, as many and more processes than archives), and a truncated archive on
// one process ends every process with the serial tool's one-line message and status 2.
#include "support/kinetotraces.h"
#include "support/processrun.h"
#include "synth/archivewriter.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace exposure::synth;

namespace {

ProcessResult serial(const QStringList& args)
{
    return runProcess(QStringLiteral(EXPOSURE_CLI), QStringList { QStringLiteral("stats") } + args);
}

ProcessResult parallel(int processes, const QStringList& args)
{
    // Root needs OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM), set by CTest; --oversubscribe: more processes than cores.
    const QStringList mpi { QStringLiteral(MPIEXEC_NUMPROC_FLAG), QString::number(processes),
        QStringLiteral("--oversubscribe"), QStringLiteral(EXPOSURE_MPI), QStringLiteral("stats") };
    return runProcess(QStringLiteral(MPIEXEC), mpi + args, 120'000);
}

QString writeDemo(const QString& dir, int ranks, int steps, bool launchBound)
{
    DemoOptions o;
    o.ranks = ranks;
    o.steps = steps;
    o.launchBound = launchBound;
    writeArchive(dir.toStdString(), makeDemoSpec(o));
    return dir;
}

// The message of a one-line error without the program name ("exposure-cli: " / "exposure-mpi: ").
QByteArray messageOf(const QByteArray& err, const QByteArray& program)
{
    for (const QByteArray& line : err.split('\n'))
        if (line.startsWith(QByteArray(program + ": ")))
            return line.mid(program.size() + 2);
    return {};
}

} // namespace

class TestMpiStats : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_two, m_three, m_five;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_two = writeDemo(m_dir.filePath(QStringLiteral("two")), 2, 4, false);
        m_three = writeDemo(m_dir.filePath(QStringLiteral("three")), 3, 5, false);
        m_five = writeDemo(m_dir.filePath(QStringLiteral("five")), 5, 3, true);
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
        const std::pair<const char*, int> traces[] = { { "two", 2 }, { "three", 3 }, { "five", 5 } };
        for (const auto& [name, ranks] : traces)
            for (std::size_t f = 0; f < std::size(formats); ++f)
                QTest::addRow("%s ranks, format %zu", name, f)
                    << m_dir.filePath(QLatin1String(name)) << formats[f] << ranks;
    }

    void sameBytes()
    {
        QFETCH(QString, trace);
        QFETCH(QStringList, options);
        QFETCH(int, ranks);
        const ProcessResult expected = serial(options + QStringList { trace });
        QCOMPARE(expected.exitCode, 0);
        // The serial report is a real one: every rank is in it.
        for (int r = 0; r < ranks; ++r)
            QVERIFY(expected.out.contains(QByteArray("Rank " + QByteArray::number(r))));
        for (int k = 1; k <= 3; ++k) {
            const ProcessResult got = parallel(k, options + QStringList { trace });
            QVERIFY2(got.exitCode == 0, got.err.constData());
            QVERIFY2(got.out == expected.out, qPrintable(QStringLiteral("K=%1 differs from exposure-cli").arg(k)));
        }
    }

    // Collectives are matched across ranks that live in different processes: the JSON has matched instances and
    // waiting on every rank, and the same numbers as the serial tool (checked above byte by byte).
    void collectivesAcrossProcesses()
    {
        const ProcessResult got = parallel(3, { QStringLiteral("--json"), m_three });
        QCOMPARE(got.exitCode, 0);
        const QJsonArray ranks = QJsonDocument::fromJson(got.out).object().value(QStringLiteral("ranks")).toArray();
        QCOMPARE(ranks.size(), 3);
        for (const auto& r : ranks) {
            const QJsonObject c = r.toObject().value(QStringLiteral("collectives")).toObject();
            QVERIFY(c.value(QStringLiteral("matched")).toInteger() > 0);
            QCOMPARE(c.value(QStringLiteral("unmatched")).toInteger(), 0);
        }
    }

    // torch.profiler traces are not spread over processes: process 0 reads them as exposure-cli does.
    void kinetoOnProcessZero()
    {
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("kineto")));
        for (int r = 0; r < 2; ++r)
            exposure::testing::write(
                m_dir, QStringLiteral("kineto/rank%1.json").arg(r), exposure::testing::rankTrace(r, 2));
        const QString trace = m_dir.filePath(QStringLiteral("kineto"));
        const ProcessResult expected = serial({ QStringLiteral("--json"), trace });
        QCOMPARE(expected.exitCode, 0);
        QVERIFY(expected.out.contains("\"rank\": 1"));
        const ProcessResult got = parallel(2, { QStringLiteral("--json"), trace });
        QCOMPARE(got.exitCode, 0);
        QCOMPARE(got.out, expected.out);
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
            writeDemo(bad, 3, 3, false);
            // Cut the event file of one GPU stream of rank 1 in half: the loader refuses it.
            const QStringList evts = QDir(bad + QStringLiteral("/rank1/traces"))
                                         .entryList({ QStringLiteral("*.evt") }, QDir::Files, QDir::Size);
            QVERIFY(!evts.isEmpty());
            QFile f(bad + QStringLiteral("/rank1/traces/") + evts.front());
            QVERIFY(f.resize(f.size() / 2));
        }
        const ProcessResult expected = serial({ bad });
        QCOMPARE(expected.exitCode, 2);
        const QByteArray message = messageOf(expected.err, "exposure-cli");
        QVERIFY(message.contains("rank1"));
        const ProcessResult got = parallel(processes, { bad }); // a hang ends as exitCode -1 after the timeout
        QVERIFY2(got.exitCode > 0, got.err.constData());
        QCOMPARE(messageOf(got.err, "exposure-mpi"), message);
        QCOMPARE(got.err.count("exposure-mpi: "), 1); // one line, from process 0 only
        QVERIFY(got.out.isEmpty());
    }

    void badArgumentsOnce()
    {
        const ProcessResult got = parallel(2, { QStringLiteral("--json"), QStringLiteral("--csv"), m_two });
        QVERIFY(got.exitCode > 0);
        QCOMPARE(messageOf(got.err, "exposure-mpi"), QByteArray("stats: --json and --csv exclude each other"));
        QCOMPARE(got.err.count("exposure-mpi: "), 1);
    }
};

QTEST_GUILESS_MAIN(TestMpiStats)
#include "tst_mpi_stats.moc"
