// SPDX-License-Identifier: GPL-3.0-or-later
// End to end: `mpirun -n K exposure-mpi render` on generated multi-rank traces writes the same bytes as
// `exposure-cli render` (PNG, and SVG/PDF) for K = 1, 2, 3 and more processes than archives; bad input ends every
// process with the serial tool's one-line message and status 2; torch.profiler traces are drawn by process 0.
#include "support/files.h"
#include "support/kinetotraces.h"
#include "support/mpiprocess.h"
#include "synth/archivewriter.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>
#include <set>

using namespace exposure;
using namespace exposure::synth;

namespace {

const testing::MpiCommand tool { QStringLiteral("render"), 120'000, 180'000 };

} // namespace

class TestMpiRender : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        testing::writeMpiDemoRuns(m_dir);
    }

    void sameBytes_data()
    {
        QTest::addColumn<QString>("trace");
        QTest::addColumn<QString>("suffix");
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<QList<int>>("processes");
        const QList<int> k123 { 1, 2, 3 };
        for (const char* name : { "two", "three", "five" }) {
            const QString trace = m_dir.filePath(QLatin1String(name));
            QTest::addRow("%s ranks, png", name) << trace << QStringLiteral("png") << QStringList {} << k123;
            QTest::addRow("%s ranks, step 1, grayscale", name)
                << trace << QStringLiteral("png")
                << QStringList { QStringLiteral("--step"), QStringLiteral("1"), QStringLiteral("--width"),
                       QStringLiteral("800"), QStringLiteral("--height"), QStringLiteral("400"),
                       QStringLiteral("--palette"), QStringLiteral("grayscale") }
                << k123;
        }
        const QString five = m_dir.filePath(QStringLiteral("five"));
        QTest::addRow("five ranks, gpu rows, legend right, title")
            << five << QStringLiteral("png")
            << QStringList { QStringLiteral("--rows"), QStringLiteral("gpu"), QStringLiteral("--legend-position"),
                   QStringLiteral("right"), QStringLiteral("--title"), QStringLiteral("Five ranks") }
            << QList<int> { 2, 3 };
        QTest::addRow("five ranks, row list, colorblind, from/to")
            << five << QStringLiteral("png")
            << QStringList { QStringLiteral("--rows"), QStringLiteral("0,1:2,3:overlap"), QStringLiteral("--palette"),
                   QStringLiteral("colorblind"), QStringLiteral("--from"), QStringLiteral("1ms"),
                   QStringLiteral("--to"), QStringLiteral("4ms") }
            << QList<int> { 3 };
        // More processes than archives: some hold nothing.
        QTest::addRow("two ranks, 4 processes")
            << m_dir.filePath(QStringLiteral("two")) << QStringLiteral("png") << QStringList {} << QList<int> { 4 };
        QTest::addRow("three ranks, svg")
            << m_dir.filePath(QStringLiteral("three")) << QStringLiteral("svg") << QStringList {} << QList<int> { 2 };
        QTest::addRow("three ranks, pdf, 85 mm")
            << m_dir.filePath(QStringLiteral("three")) << QStringLiteral("pdf")
            << QStringList { QStringLiteral("--width-mm"), QStringLiteral("85") } << QList<int> { 3 };
    }

    void sameBytes()
    {
        QFETCH(QString, trace);
        QFETCH(QString, suffix);
        QFETCH(QStringList, options);
        QFETCH(QList<int>, processes);
        const QString want = m_dir.filePath(QStringLiteral("serial.") + suffix);
        QFile::remove(want);
        const ProcessResult expected = tool.serial(options + QStringList { trace, QStringLiteral("-o"), want });
        QVERIFY2(expected.exitCode == 0, expected.err.constData());
        const QByteArray bytes = testing::readAll(want);
        QVERIFY(bytes.size() > 1000);
        if (suffix == QLatin1String("png")) {
            // A real figure: many colours (rows, legend, text), not a blank page.
            const QImage image = QImage::fromData(bytes);
            QVERIFY(!image.isNull());
            std::set<QRgb> colours;
            for (int y = 0; y < image.height(); y += 3)
                for (int x = 0; x < image.width(); x += 3)
                    colours.insert(image.pixel(x, y));
            QVERIFY2(colours.size() >= 8, qPrintable(QString::number(colours.size())));
        }
        for (const int k : processes) {
            const QString out = m_dir.filePath(QStringLiteral("mpi%1.").arg(k) + suffix);
            QFile::remove(out);
            const ProcessResult got = tool.parallel(k, options + QStringList { trace, QStringLiteral("-o"), out });
            QVERIFY2(got.exitCode == 0, got.err.constData());
            // Known gap: the processes of exposure-mpi render do not match collectives across ranks yet, so their
            // figures lack the waiting-for-peers state that exposure-cli render now draws (every demo rank 0 waits).
            QEXPECT_FAIL("", "exposure-mpi render does not draw the waiting for peers yet (issue 31)", Continue);
            QVERIFY2(
                testing::readAll(out) == bytes, qPrintable(QStringLiteral("K=%1 differs from exposure-cli").arg(k)));
        }
    }

    void badInput_data()
    {
        QTest::addColumn<QStringList>("args");
        const QString three = m_dir.filePath(QStringLiteral("three"));
        const QString out = m_dir.filePath(QStringLiteral("bad.png"));
        QTest::newRow("no such trace") << QStringList { m_dir.filePath(QStringLiteral("missing")), QStringLiteral("-o"),
            out };
        QTest::newRow("no such step") << QStringList { three, QStringLiteral("--step"), QStringLiteral("99"),
            QStringLiteral("-o"), out };
        QTest::newRow("no such rank") << QStringList { three, QStringLiteral("--rows"), QStringLiteral("7"),
            QStringLiteral("-o"), out };
        QTest::newRow("bad option") << QStringList { three, QStringLiteral("--palette"), QStringLiteral("pink"),
            QStringLiteral("-o"), out };
    }

    void badInput()
    {
        QFETCH(QStringList, args);
        const ProcessResult expected = tool.serial(args);
        QCOMPARE(expected.exitCode, 2);
        const QByteArray message = testing::messageOf(expected.err, "exposure-cli");
        QVERIFY(!message.isEmpty());
        const ProcessResult got = tool.parallel(3, args);
        QVERIFY(got.exitCode > 0);
        QCOMPARE(testing::messageOf(got.err, "exposure-mpi"), message);
        QCOMPARE(got.err.count("exposure-mpi: "), 1);
        QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("bad.png"))));
    }

    // An existing file is kept without --force (checked by every process before loading).
    void existingOutputKept()
    {
        const QString out = m_dir.filePath(QStringLiteral("existing.png"));
        {
            QFile f(out);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("keep me");
        }
        const ProcessResult got
            = tool.parallel(2, { m_dir.filePath(QStringLiteral("two")), QStringLiteral("-o"), out });
        QVERIFY(got.exitCode > 0);
        QVERIFY(testing::messageOf(got.err, "exposure-mpi").contains("already exists"));
        QCOMPARE(testing::readAll(out), QByteArray("keep me"));
    }

    // torch.profiler traces are not spread over processes: process 0 draws them as exposure-cli does.
    void kinetoOnProcessZero()
    {
        const QString trace = testing::writeKinetoRun(m_dir, QStringLiteral("kineto"), 2);
        QVERIFY(!trace.isEmpty());
        const QString want = m_dir.filePath(QStringLiteral("kineto-serial.png"));
        const QString out = m_dir.filePath(QStringLiteral("kineto-mpi.png"));
        const ProcessResult expected = tool.serial({ trace, QStringLiteral("-o"), want });
        QVERIFY2(expected.exitCode == 0, expected.err.constData());
        const ProcessResult got = tool.parallel(2, { trace, QStringLiteral("-o"), out });
        QVERIFY2(got.exitCode == 0, got.err.constData());
        QVERIFY(testing::readAll(want).size() > 1000);
        QCOMPARE(testing::readAll(out), testing::readAll(want));
    }
};

QTEST_GUILESS_MAIN(TestMpiRender)
#include "tst_mpi_render.moc"
