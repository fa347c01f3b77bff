// SPDX-License-Identifier: GPL-3.0-or-later
// Figure and figure-spec writes are atomic: a write stopped at any stage — by an error, or by the process dying —
// leaves the old file byte for byte, and a write that completes replaces it whole.
#include "common/atomicwrite.h"
#include "figure/figurespec.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <sys/wait.h>
#include <unistd.h>

using namespace exposure;

namespace {

QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

void writePlain(const QString& path, const QByteArray& data)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(data), data.size());
}

QByteArray pattern(int size)
{
    QByteArray b(size, '\0');
    for (int i = 0; i < size; ++i)
        b[i] = char('a' + i % 23);
    return b;
}

// The stages a write of `size` bytes passes through: Open, one Chunk per 64 KiB, Commit.
int stageCount(int size)
{
    return 2 + (size + 65535) / 65536;
}

} // namespace

class TestAtomicWrite : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { setWriteInterruptionHookForTesting({}); }
    void completeWriteReplacesTheFile();
    void errorAtEveryStageKeepsTheOldFile();
    void deathAtEveryStageKeepsTheOldFile();
    void figureSpecSaveIsAtomic();
};

void TestAtomicWrite::completeWriteReplacesTheFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("figure.png"));
    writePlain(path, "old content");
    const QByteArray data = pattern(200'000);
    QCOMPARE(writeFileAtomically(path, data), QString());
    QCOMPARE(readFile(path), data);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList { QStringLiteral("figure.png") });
}

void TestAtomicWrite::errorAtEveryStageKeepsTheOldFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("figure.png"));
    const QByteArray old = pattern(5'000);
    const QByteArray data = pattern(200'000) + "new";
    const int stages = stageCount(data.size());
    QCOMPARE(stages, 6);
    for (int stop = 0; stop < stages; ++stop) {
        writePlain(path, old);
        int seen = 0;
        setWriteInterruptionHookForTesting([&](WriteStage, qint64) { return seen++ != stop; });
        QCOMPARE(writeFileAtomically(path, data), QStringLiteral("the write was interrupted"));
        QCOMPARE(seen, stop + 1);
        QCOMPARE(readFile(path), old);
        // No temporary file is left behind.
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList { QStringLiteral("figure.png") });
    }
    // A target that cannot be written (its folder is gone) is an error, not a partial file.
    setWriteInterruptionHookForTesting({});
    QVERIFY(!writeFileAtomically(dir.filePath(QStringLiteral("no/such/folder/f.png")), data).isEmpty());
}

void TestAtomicWrite::deathAtEveryStageKeepsTheOldFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("figure.svg"));
    const QByteArray old = pattern(7'000);
    const QByteArray data = pattern(150'000);
    const int stages = stageCount(data.size());
    for (int stop = 0; stop < stages; ++stop) {
        writePlain(path, old);
        const pid_t child = fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            // The child dies abruptly at stage `stop`: no destructor, no cleanup, as under kill -9.
            int seen = 0;
            setWriteInterruptionHookForTesting([&](WriteStage, qint64) {
                if (seen++ == stop)
                    _exit(0);
                return true;
            });
            writeFileAtomically(path, data);
            _exit(3); // not reached: every stop is before the rename
        }
        int status = 0;
        QCOMPARE(waitpid(child, &status, 0), child);
        QVERIFY(WIFEXITED(status));
        QCOMPARE(WEXITSTATUS(status), 0);
        QCOMPARE(readFile(path), old);
    }
    // And a child that lives through the write leaves the new content.
    const pid_t child = fork();
    QVERIFY(child >= 0);
    if (child == 0)
        _exit(writeFileAtomically(path, data).isEmpty() ? 0 : 1);
    int status = 0;
    QCOMPARE(waitpid(child, &status, 0), child);
    QCOMPARE(WEXITSTATUS(status), 0);
    QCOMPARE(readFile(path), data);
}

void TestAtomicWrite::figureSpecSaveIsAtomic()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("fig.json"));
    FigureSpec spec;
    spec.widthPx = 1234;
    spec.save(path);
    const QByteArray first = readFile(path);
    QVERIFY(first.contains("1234"));
    spec.widthPx = 999;
    setWriteInterruptionHookForTesting([](WriteStage stage, qint64) { return stage != WriteStage::Commit; });
    try {
        spec.save(path);
        QFAIL("an interrupted save must throw");
    } catch (const std::exception& e) {
        const QString what = QString::fromUtf8(e.what());
        QVERIFY2(what.startsWith(path
                     + QStringLiteral(": cannot write the figure spec (the write was interrupted); "
                                      "nothing was changed")),
            e.what());
    }
    QCOMPARE(readFile(path), first);
    setWriteInterruptionHookForTesting({});
    spec.save(path);
    QVERIFY(readFile(path).contains("999"));
}

QTEST_GUILESS_MAIN(TestAtomicWrite)
#include "tst_atomicwrite.moc"
