// SPDX-License-Identifier: GPL-3.0-or-later
// JobSlot: results and errors reach the GUI thread; a newer job, cancel() and LoadCancelled deliver nothing of the
// older one; progress of a superseded job is dropped.
#include "import/loadoptions.h"
#include "jobs/jobslot.h"

#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <atomic>
#include <chrono>
#include <thread>

using namespace exposure;

namespace {

// Polls the job's cancel flag until it is set (or `limit` passes); returns whether it was set.
bool waitForCancel(const JobContext& job, std::chrono::milliseconds limit = std::chrono::seconds(10))
{
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!job.cancelled() && std::chrono::steady_clock::now() < end)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return job.cancelled();
}

} // namespace

class TestJobSlot : public QObject
{
    Q_OBJECT

private slots:
    void deliversOnTheGuiThread()
    {
        JobSlot slot;
        QThread* workThread = nullptr;
        QThread* doneThread = nullptr;
        int result = 0;
        QSignalSpy idle(&slot, &JobSlot::idle);
        slot.start<int>(
            [&](const JobContext&) {
                workThread = QThread::currentThread();
                return 42;
            },
            [&](const int& r) {
                doneThread = QThread::currentThread();
                result = r;
            });
        QVERIFY(slot.busy());
        QVERIFY(idle.wait(10000));
        QCOMPARE(result, 42);
        QCOMPARE(doneThread, QThread::currentThread());
        QVERIFY(workThread != QThread::currentThread());
        QCOMPARE(slot.deliveredCount(), quint64(1));
        QVERIFY(!slot.busy());
    }

    void newerJobSupersedesOlder()
    {
        JobSlot slot;
        std::atomic<bool> firstSawCancel { false };
        std::vector<int> delivered;
        slot.start<int>(
            [&](const JobContext& job) {
                firstSawCancel = waitForCancel(job);
                return 1;
            },
            [&](const int& r) { delivered.push_back(r); });
        slot.start<int>([](const JobContext&) { return 2; }, [&](const int& r) { delivered.push_back(r); });
        QSignalSpy idle(&slot, &JobSlot::idle);
        QVERIFY(idle.wait(10000));
        slot.waitForIdle();
        QCoreApplication::processEvents();
        QVERIFY(firstSawCancel.load());
        QCOMPARE(delivered, std::vector<int> { 2 });
        QCOMPARE(slot.deliveredCount(), quint64(1));
    }

    void errorsBecomeTheFailureText()
    {
        JobSlot slot;
        QString error;
        bool done = false;
        QSignalSpy idle(&slot, &JobSlot::idle);
        slot.start<int>([](const JobContext&) -> int { throw LoadError("trace.otf2", "truncated"); },
            [&](const int&) { done = true; }, [&](const QString& e) { error = e; });
        QVERIFY(idle.wait(10000));
        QCOMPARE(error, QStringLiteral("trace.otf2: truncated"));
        QVERIFY(!done);
        QCOMPARE(slot.deliveredCount(), quint64(1)); // an error is handed over too
    }

    void cancelledJobsEndSilently()
    {
        JobSlot slot;
        int calls = 0;
        QSignalSpy idle(&slot, &JobSlot::idle);
        slot.start<int>([](const JobContext&) -> int { throw LoadCancelled(); }, [&](const int&) { ++calls; },
            [&](const QString&) { ++calls; });
        QVERIFY(idle.wait(10000));
        QCOMPARE(calls, 0);
        QCOMPARE(slot.deliveredCount(), quint64(0));

        std::atomic<bool> sawCancel { false };
        slot.start<int>(
            [&](const JobContext& job) {
                sawCancel = waitForCancel(job);
                return 7;
            },
            [&](const int&) { ++calls; });
        QVERIFY(slot.busy());
        slot.cancel(); // takes effect at once in the GUI
        QVERIFY(!slot.busy());
        slot.waitForIdle();
        QCoreApplication::processEvents();
        QVERIFY(sawCancel.load());
        QCOMPARE(calls, 0);
        QCOMPARE(slot.deliveredCount(), quint64(0));
    }

    void progressOfTheCurrentJobOnly()
    {
        JobSlot slot;
        QSignalSpy progress(&slot, &JobSlot::progress);
        std::atomic<bool> reported { false };
        slot.start<int>(
            [&](const JobContext& job) {
                job.progress(100, QStringLiteral("old"));
                reported = true;
                waitForCancel(job);
                job.progress(200, QStringLiteral("stale"));
                return 0;
            },
            [](const int&) {});
        while (!reported.load())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        QTRY_COMPARE(progress.count(), 1);
        QCOMPARE(progress.at(0).at(0).toInt(), 100);
        QCOMPARE(progress.at(0).at(1).toString(), QStringLiteral("old"));
        slot.start<int>(
            [](const JobContext& job) {
                job.progress(500, QStringLiteral("new"));
                return 1;
            },
            [](const int&) {});
        QSignalSpy idle(&slot, &JobSlot::idle);
        QVERIFY(idle.wait(10000));
        slot.waitForIdle();
        QCoreApplication::processEvents();
        QCOMPARE(progress.count(), 2);
        QCOMPARE(progress.at(1).at(0).toInt(), 500);
        QCOMPARE(progress.at(1).at(1).toString(), QStringLiteral("new"));
    }
};

QTEST_MAIN(TestJobSlot)
#include "tst_jobslot.moc"
