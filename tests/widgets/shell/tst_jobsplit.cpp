// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow on a folder of files of different jobs (run/jobcheck.h): the offer to open them separately, to compare
// them or to keep them as one run, through the real dialog and through the injected chooser.
#include "compare/comparewindow.h"
#include "shell/mainwindow.h"
#include "support/kinetotraces.h"
#include "support/nsystraces.h"

#include <QApplication>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace exposure;
using exposure::testing::nsysTid;
using exposure::testing::NsysWriter;

namespace {

void writeReport(const QString& path, const std::string& program, const std::string& host)
{
    NsysWriter w(path.toStdString());
    w.process(7, program);
    w.host(host);
    w.threadName(nsysTid(7, 7), "MPI Rank 0");
    w.runtime(nsysTid(7, 7), 2'000, 2'010, 1, "cudaLaunchKernel_v7000");
    w.kernel(7, 0, 7, 3'000, 53'000, 1, "ampere_sgemm_128x64_nn");
}

// The main windows other than `w`.
QList<MainWindow*> otherWindows(const MainWindow* w)
{
    QList<MainWindow*> out;
    for (QWidget* top : QApplication::topLevelWidgets())
        if (auto* m = qobject_cast<MainWindow*>(top); m && m != w)
            out << m;
    return out;
}

const QString kTail = QStringLiteral("; they were opened as one run, though their ranks are not one job's (open each "
                                     "job separately, or compare them)");

} // namespace

class TestJobSplit : public QObject
{
    Q_OBJECT
private slots:
    void cleanup()
    {
        for (MainWindow* m : otherWindows(nullptr))
            delete m; // what a failed test left open
    }

    // The folder (CloverLeaf and saxpy on two hosts): the dialog names them; Open Separately gives two
    // windows of one rank each.
    void dialogOffersToOpenSeparately()
    {
        QTemporaryDir dir;
        writeReport(dir.filePath(QStringLiteral("cloverleaf.sqlite")), "cloverleaf", "h1");
        writeReport(dir.filePath(QStringLiteral("saxpy.sqlite")), "saxpy", "h2");
        MainWindow w;
        w.setRemembersRecentFiles(false);
        w.show();
        QString shownText, shownDetails;
        QStringList buttons;
        // The real dialog: read, then answered with its "Open Separately" button.
        QTimer poll;
        connect(&poll, &QTimer::timeout, this, [&] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            if (!box)
                return;
            poll.stop();
            shownText = box->text();
            shownDetails = box->informativeText();
            QPushButton* separately = nullptr;
            for (QAbstractButton* b : box->buttons()) {
                buttons << b->text();
                if (b->text() == QLatin1String("Open Separately"))
                    separately = qobject_cast<QPushButton*>(b);
            }
            QVERIFY(separately);
            separately->click();
        });
        poll.start(20);
        QSignalSpy loaded(&w, &MainWindow::traceLoaded);
        w.openTrace(dir.path());
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 20000);
        QCOMPARE(w.trace()->ranks.size(), std::size_t(2)); // first opened as one
        // Then this window opens the first job, a new window the second.
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 2, 20000);
        QCOMPARE(shownText, QStringLiteral("These files look like 2 different jobs, opened as one run."));
        QCOMPARE(shownDetails,
            dir.path()
                + QStringLiteral(": the files look like 2 different jobs (different programs): cloverleaf.sqlite "
                                 "(program cloverleaf, host h1) and saxpy.sqlite (program saxpy, host h2)")
                + kTail);
        buttons.sort(); // in the order of the platform's button layout
        QCOMPARE(buttons,
            QStringList(
                { QStringLiteral("Compare"), QStringLiteral("Open Separately"), QStringLiteral("Open as One") }));
        QCOMPARE(w.tracePath(), dir.filePath(QStringLiteral("cloverleaf.sqlite")));
        QCOMPARE(w.trace()->ranks.size(), std::size_t(1));
        QCOMPARE(w.trace()->ranks[0].host, std::string("h1"));
        const auto others = otherWindows(&w);
        QCOMPARE(others.size(), 1);
        MainWindow* second = others.front();
        QTRY_VERIFY_WITH_TIMEOUT(second->trace() != nullptr, 20000);
        QCOMPARE(second->tracePath(), dir.filePath(QStringLiteral("saxpy.sqlite")));
        QCOMPARE(second->trace()->ranks.size(), std::size_t(1));
        QCOMPARE(second->trace()->ranks[0].host, std::string("h2"));
        // Each alone is one job: no warning, no second offer.
        QCOMPARE(second->trace()->warnings, std::vector<std::string>());
        QCOMPARE(w.trace()->warnings, std::vector<std::string>());
        QVERIFY(!poll.isActive());
        second->close(); // deletes itself
        QTRY_COMPARE(otherWindows(&w).size(), 0);
    }

    // torch.profiler files of world sizes 1 and 2: Compare opens Compare Runs with the two jobs (the second a folder
    // of links to its two files); Open as One keeps the three ranks.
    void compareAndOpenAsOne()
    {
        QTemporaryDir dir;
        testing::write(dir, QStringLiteral("ws1_rank0.json"), testing::rankTrace(0, 1));
        testing::write(dir, QStringLiteral("ws2_rank0.json"), testing::rankTrace(0, 2));
        testing::write(dir, QStringLiteral("ws2_rank1.json"), testing::rankTrace(1, 2));
        for (const auto choice : { MainWindow::JobChoice::Compare, MainWindow::JobChoice::OpenAsOne }) {
            MainWindow w;
            w.setRemembersRecentFiles(false);
            int asked = 0;
            QStringList offered;
            w.setJobChooser([&](const QString&, const QStringList& jobs) {
                ++asked;
                offered = jobs;
                return choice;
            });
            QSignalSpy loaded(&w, &MainWindow::traceLoaded);
            w.openTrace(dir.path());
            QTRY_COMPARE_WITH_TIMEOUT(asked, 1, 20000);
            QCOMPARE(offered.size(), 2);
            QCOMPARE(offered[0], dir.filePath(QStringLiteral("ws1_rank0.json")));
            QCOMPARE(QDir(offered[1]).entryList(QDir::Files),
                QStringList({ QStringLiteral("ws2_rank0.json"), QStringLiteral("ws2_rank1.json") }));
            QCOMPARE(QFileInfo(QDir(offered[1]).filePath(QStringLiteral("ws2_rank1.json"))).symLinkTarget(),
                dir.filePath(QStringLiteral("ws2_rank1.json")));
            auto* compare = w.findChild<CompareWindow*>();
            QCOMPARE(loaded.count(), 1);
            QCOMPARE(w.trace()->ranks.size(), std::size_t(3));
            if (choice == MainWindow::JobChoice::OpenAsOne) {
                QVERIFY(!compare);
                QCOMPARE(otherWindows(&w).size(), 0);
                continue;
            }
            QVERIFY(compare);
            QCOMPARE(compare->runCount(), 2);
            QTRY_VERIFY_WITH_TIMEOUT(!compare->isLoading(), 20000);
            const auto runs = compare->summaries();
            QCOMPARE(runs.size(), std::size_t(2));
            QCOMPARE(runs[0].ranks, 1);
            QCOMPARE(runs[1].ranks, 2);
        }
    }
};

QTEST_MAIN(TestJobSplit)
#include "tst_jobsplit.moc"
