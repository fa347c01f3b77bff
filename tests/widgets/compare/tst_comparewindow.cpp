// SPDX-License-Identifier: GPL-3.0-or-later
// Compare Runs window on demo runs of 1 and 2 ranks made by exposure-make-demo: the table equals summarizeRun,
// a bad path is reported in its row, the CSV is complete, and the chart draws exposed communication.
#include "compare/comparewindow.h"
#include "model/timeformat.h"
#include "run/openrun.h"
#include "shell/mainwindow.h"
#include "timeline/palette.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QDir>
#include <QFile>
#include <QFutureWatcher>
#include <QListWidget>
#include <QMenu>
#include <QProcess>
#include <QSemaphore>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace exposure;

// The File menu's Compare Runs action.
static QAction* compareAction(MainWindow& mw)
{
    for (QAction* a : mw.fileMenu()->actions())
        if (a->shortcut() == QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C))
            return a;
    return nullptr;
}

class TestCompareWindow : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void tableEqualsSummaries();
    void badPathShowsError();
    void csvAndJson();
    void chartShowsExposedBar();
    void orderAndSkipSteps();
    void mainWindowAction();
    void compareWhilePreviewing();
    void loadsWithTheMainWindowsOptions();
    void removeWhileLoading();
    void runsByGpuCount();
    void sameGpuCountHasNoEfficiency();
    void addFolderStartsBesideTheRuns();

private:
    // Row of the table whose Run cell is `name` (the table may be sorted), or -1.
    static int rowOf(const TableModel* table, const QString& name);
    static QString cell(const TableModel* table, int row, int col);
    bool addDemoRuns(CompareWindow& w);
    RunSummary summary(const QString& path, int skip = -1) const;

    QTemporaryDir m_dir;
    QString m_run1, m_run2;
};

void TestCompareWindow::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_dir.isValid());
    for (const char* n : { "1", "2" }) {
        QProcess gen;
        const QString out = m_dir.filePath(QStringLiteral("gpus") + QLatin1String(n));
        gen.start(QStringLiteral(EXPOSURE_MAKE_DEMO),
            { out, QStringLiteral("--ranks"), QLatin1String(n), QStringLiteral("--steps"), QStringLiteral("4") });
        QVERIFY(gen.waitForFinished(60000));
        QCOMPARE(gen.exitCode(), 0);
    }
    m_run1 = m_dir.filePath(QStringLiteral("gpus1"));
    m_run2 = m_dir.filePath(QStringLiteral("gpus2"));
}

int TestCompareWindow::rowOf(const TableModel* table, const QString& name)
{
    for (int r = 0; r < table->rowCount(); ++r)
        if (table->cell(r, CompareWindow::ColRun).present() && table->text(r, CompareWindow::ColRun) == name)
            return r;
    return -1;
}

// The text the view shows (the model's DisplayRole).
QString TestCompareWindow::cell(const TableModel* table, int row, int col)
{
    return table->data(table->index(row, col)).toString();
}

bool TestCompareWindow::addDemoRuns(CompareWindow& w)
{
    w.addRun(m_run1);
    w.addRun(m_run2);
    return QTest::qWaitFor([&] { return !w.isLoading(); }, 60000);
}

RunSummary TestCompareWindow::summary(const QString& path, int skip) const
{
    const auto trace = loadTrace(path.toStdString());
    const auto analysis = analyze(*trace, Rules::defaults());
    CompareOptions o;
    o.skipSteps = skip;
    return summarizeRun(*trace, *analysis, o);
}

void TestCompareWindow::tableEqualsSummaries()
{
    CompareWindow w;
    QAbstractItemModelTester tester(w.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    w.addRun(m_run1);
    w.addRun(m_run2);
    QCOMPARE(w.model()->rowCount(), 2);
    QTRY_COMPARE_WITH_TIMEOUT(w.summaries().size(), std::size_t(2), 60000);
    QVERIFY(!w.isLoading());
    QVERIFY(w.table()->isColumnHidden(CompareWindow::ColStatus)); // nothing to report: both loaded
    const TableModel* t = w.model();
    QVERIFY(w.table()->model() == t);
    const int r1 = rowOf(t, QStringLiteral("gpus1")), r2 = rowOf(t, QStringLiteral("gpus2"));
    QVERIFY(r1 >= 0 && r2 >= 0);

    const RunSummary s1 = summary(m_run1), s2 = summary(m_run2);
    QCOMPARE(s1.ranks, 1);
    QCOMPARE(s2.ranks, 2);
    QCOMPARE(s2.stepsUsed, 8); // 2 ranks x 4 steps: the demo has no start-up step
    QVERIFY(s1.exposedNs == 0);
    QVERIFY(s2.exposedNs > 0);
    auto d = [](TimeNs ns) { return QString::fromStdString(formatDuration(ns)); };
    for (const auto& [row, s] : { std::pair { r1, s1 }, std::pair { r2, s2 } }) {
        QCOMPARE(cell(t, row, CompareWindow::ColRanks), QString::number(s.ranks));
        QCOMPARE(cell(t, row, CompareWindow::ColSteps), QString::number(s.stepsUsed));
        QCOMPARE(cell(t, row, CompareWindow::ColStep), d(s.stepNs));
        QCOMPARE(cell(t, row, CompareWindow::ColCompute), d(s.computeNs));
        QCOMPARE(cell(t, row, CompareWindow::ColCommBusy), d(s.commBusyNs));
        QCOMPARE(cell(t, row, CompareWindow::ColHidden), d(s.hiddenNs));
        QCOMPARE(cell(t, row, CompareWindow::ColExposed), d(s.exposedNs));
        QCOMPARE(cell(t, row, CompareWindow::ColExposedShare),
            QString::asprintf("%.1f %%", 100.0 * double(s.exposedNs) / double(s.stepNs)));
    }
    QCOMPARE(cell(t, r1, CompareWindow::ColWaiting), QStringLiteral("-")); // one rank: nobody to wait for
    QCOMPARE(cell(t, r1, CompareWindow::ColOverlap), QStringLiteral("-")); // and no communication at all
    QCOMPARE(cell(t, r2, CompareWindow::ColWaiting), d(s2.waitNs));
    QCOMPARE(cell(t, r2, CompareWindow::ColTransfer), d(s2.transferNs));
    QCOMPARE(cell(t, r2, CompareWindow::ColOverlap),
        QString::asprintf("%.1f %%", 100.0 * double(s2.hiddenNs) / double(s2.commBusyNs)));
    // Efficiency against the first run (the baseline).
    QCOMPARE(cell(t, r1, CompareWindow::ColEfficiency), QStringLiteral("baseline"));
    QCOMPARE(cell(t, r2, CompareWindow::ColEfficiency),
        QString::asprintf("%.1f %%", 100.0 * double(s1.stepNs) / double(s2.stepNs)));
    QVERIFY(cell(t, r2, CompareWindow::ColEfficiency) != QStringLiteral("100.0 %"));
    QCOMPARE(w.finding(),
        QStringLiteral("From 1 GPU to 2 GPUs: step time %1 → %2 (efficiency %3); exposed communication 0 ns → %4 "
                       "per step (0.0 % → %5 of the step).")
            .arg(d(s1.stepNs), d(s2.stepNs), cell(t, r2, CompareWindow::ColEfficiency), d(s2.exposedNs),
                cell(t, r2, CompareWindow::ColExposedShare)));

    // Sorting by step time puts the faster run first, whatever the run order.
    w.table()->sortByColumn(CompareWindow::ColStep, Qt::DescendingOrder);
    QCOMPARE(
        cell(t, 0, CompareWindow::ColRun), s2.stepNs > s1.stepNs ? QStringLiteral("gpus2") : QStringLiteral("gpus1"));
}

void TestCompareWindow::badPathShowsError()
{
    CompareWindow w;
    QAbstractItemModelTester tester(w.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    const QString bad = m_dir.filePath(QStringLiteral("no-such-run"));
    QFile junk(m_dir.filePath(QStringLiteral("junk.otf2")));
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write("this is not an OTF2 anchor\n");
    junk.close();
    w.addRun(m_run1);
    w.addRun(bad);
    w.addRun(junk.fileName());
    QVERIFY(QTest::qWaitFor([&] { return !w.isLoading(); }, 60000));
    QCOMPARE(w.model()->rowCount(), 3);
    QCOMPARE(w.summaries().size(), std::size_t(1));
    QVERIFY(!w.table()->isColumnHidden(CompareWindow::ColStatus));
    const int rb = rowOf(w.model(), QStringLiteral("no-such-run"));
    QVERIFY(rb >= 0);
    // A failed run: its status in the error colour with an error icon, its numbers absent.
    QVERIFY(w.model()->index(rb, CompareWindow::ColStatus).data(Qt::ForegroundRole).isValid());
    QVERIFY(!w.model()->cell(rb, CompareWindow::ColStep).present());
    const QString err = cell(w.model(), rb, CompareWindow::ColStatus);
    QVERIFY2(err.startsWith(bad + QStringLiteral(": ")), qPrintable(err));
    QVERIFY(cell(w.model(), rb, CompareWindow::ColStep).isEmpty());
    // Also listed under the table, one line per failed run.
    QCOMPARE(w.errorText().split(QLatin1Char('\n')).size(), 2);
    QVERIFY(w.errorText().split(QLatin1Char('\n')).contains(err));
    const int rj = rowOf(w.model(), QStringLiteral("%1/junk.otf2").arg(QDir(m_dir.path()).dirName()));
    QVERIFY(rj >= 0);
    const QString err2 = cell(w.model(), rj, CompareWindow::ColStatus);
    // The loader names the archive file it could not read (junk.def beside the anchor) and the problem.
    QVERIFY2(err2.startsWith(m_dir.filePath(QStringLiteral("junk."))), qPrintable(err2));
    QVERIFY2(err2.contains(QStringLiteral(": missing")), qPrintable(err2));
    // The good run is unaffected and is still the (only) bar of the chart.
    QCOMPARE(cell(w.model(), rowOf(w.model(), QStringLiteral("gpus1")), CompareWindow::ColEfficiency),
        QStringLiteral("baseline"));
    QCOMPARE(w.chart()->barCount(), 1);
}

void TestCompareWindow::csvAndJson()
{
    CompareWindow w;
    QVERIFY(addDemoRuns(w));
    w.addRun(m_dir.filePath(QStringLiteral("missing"))); // failed runs are not rows of the export
    QVERIFY(QTest::qWaitFor([&] { return !w.isLoading(); }, 60000));
    const QStringList lines = w.csv().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);
    QCOMPARE(lines.at(0),
        QStringLiteral("run,trace,ranks,steps_used,step_ns,compute_ns,comm_busy_ns,hidden_ns,"
                       "exposed_ns,overlap_pct,exposed_pct_of_step,waiting_ns,transfer_ns,"
                       "efficiency_pct"));
    const RunSummary s2 = summary(m_run2);
    const QStringList f = lines.at(2).split(QLatin1Char(','));
    QCOMPARE(f.size(), 14);
    QCOMPARE(f.at(0), QStringLiteral("gpus2"));
    QCOMPARE(f.at(1), m_run2);
    QCOMPARE(f.at(2), QStringLiteral("2"));
    QCOMPARE(f.at(3), QStringLiteral("8"));
    QCOMPARE(f.at(4), QString::number(s2.stepNs));
    QCOMPARE(f.at(8), QString::number(s2.exposedNs));
    QCOMPARE(f.at(11), QString::number(s2.waitNs));
    QCOMPARE(lines.at(1).split(QLatin1Char(',')).at(13), QStringLiteral("100.00"));
    QCOMPARE(lines.at(1).split(QLatin1Char(',')).at(11), QString()); // one rank: no waiting column value
    // JSON is compareJson of the loaded runs, in run order.
    const QString json = w.json();
    QVERIFY(json.startsWith(QStringLiteral("{\"runs\": [{")));
    QCOMPARE(json.count(QStringLiteral("\"ranks\": ")), 2);
    QVERIFY(json.indexOf(QStringLiteral("\"ranks\": 1,")) < json.indexOf(QStringLiteral("\"ranks\": 2,")));
}

void TestCompareWindow::chartShowsExposedBar()
{
    CompareWindow w;
    QVERIFY(addDemoRuns(w));
    w.resize(1280, 760);
    const QImage img = w.grab().toImage();
    if (qEnvironmentVariableIsSet("EXPOSURE_TEST_DUMP"))
        img.save(QStringLiteral("/tmp/comparewindow.png"));
    CompareChart* chart = w.chart();
    QCOMPARE(chart->barCount(), 2);
    const QImage c = chart->grab().toImage();
    const Palette pal(PaletteKind::Default, chart->palette());
    const QColor exposedColour = pal.exposedBrush().color();
    // Run 0 has one GPU: no exposed communication, so no exposed segment at all.
    QVERIFY(chart->partRect(0, CompareChart::Exposed).isEmpty());
    QVERIFY(!chart->partRect(0, CompareChart::ComputeOnly).isEmpty());
    const QRectF ex = chart->partRect(1, CompareChart::Exposed);
    QVERIFY(!ex.isEmpty());
    QVERIFY2(ex.width() >= 3, qPrintable(QString::number(ex.width())));
    // Sample near the left edge of the segment, above its centred value label.
    const QPoint inside(int(ex.left() + 1.5), int(ex.top() + 2));
    QCOMPARE(c.pixelColor(inside).rgb(), exposedColour.rgb());
    const QRectF co = chart->partRect(1, CompareChart::ComputeOnly);
    QCOMPARE(c.pixelColor(QPoint(int(co.left() + 1.5), int(co.top() + 2))).rgb(),
        pal.overlap(OverlapState::ComputeOnly).rgb());
    // The parts add up to the step time.
    const RunSummary s2 = w.summaries().at(1);
    const auto p = CompareChart::parts(s2);
    QCOMPARE(p[0] + p[1] + p[2] + p[3], s2.stepNs);
    QCOMPARE(p[CompareChart::Exposed], s2.exposedNs);
}

void TestCompareWindow::orderAndSkipSteps()
{
    CompareWindow w;
    QVERIFY(addDemoRuns(w));
    QCOMPARE(w.runList()->count(), 2);
    // Moving the 2-GPU run first makes it the baseline.
    w.moveRun(1, 0);
    QCOMPARE(w.runPath(0), m_run2);
    const RunSummary s1 = summary(m_run1), s2 = summary(m_run2);
    QCOMPARE(cell(w.model(), rowOf(w.model(), QStringLiteral("gpus1")), CompareWindow::ColEfficiency),
        QString::asprintf("%.1f %%", 100.0 * double(s2.stepNs) / double(s1.stepNs)));
    // The default is the start-up rule (no start-up step in the demo: all 2 x 4 steps); skipping one step is
    // recomputed from the kept analysis.
    QCOMPARE(w.skipSteps(), -1);
    QCOMPARE(cell(w.model(), rowOf(w.model(), QStringLiteral("gpus2")), CompareWindow::ColSteps), QStringLiteral("8"));
    w.setSkipSteps(1);
    QVERIFY(QTest::qWaitFor([&] { return !w.isLoading(); }, 60000));
    QCOMPARE(cell(w.model(), rowOf(w.model(), QStringLiteral("gpus2")), CompareWindow::ColSteps), QStringLiteral("6"));
    QCOMPARE(cell(w.model(), rowOf(w.model(), QStringLiteral("gpus2")), CompareWindow::ColStep),
        QString::fromStdString(formatDuration(summary(m_run2, 1).stepNs)));
    // Changing skip-steps while a run is still loading applies to that run too.
    w.addRun(m_run2);
    w.setSkipSteps(2);
    QVERIFY(QTest::qWaitFor([&] { return !w.isLoading(); }, 60000));
    QCOMPARE(w.summaries().back().stepsUsed, 4); // 2 ranks x (4 steps - 2)
    QCOMPARE(w.summaries().back().stepNs, summary(m_run2, 2).stepNs);
    w.removeRun(2);
    w.removeRun(0);
    QCOMPARE(w.runCount(), 1);
    QCOMPARE(w.model()->rowCount(), 1);
    QCOMPARE(cell(w.model(), 0, CompareWindow::ColEfficiency), QStringLiteral("baseline"));
}

void TestCompareWindow::mainWindowAction()
{
    MainWindow mw;
    QSignalSpy loaded(&mw, &MainWindow::traceLoaded); // the full trace, not a preview of its first ranks
    mw.openTrace(m_run2);
    QVERIFY(loaded.wait(60000));
    QAction* action = compareAction(mw);
    QVERIFY(action);
    QCOMPARE(action->text(), QStringLiteral("Co&mpare Runs…"));
    action->trigger();
    auto* cw = mw.findChild<CompareWindow*>();
    QVERIFY(cw);
    QVERIFY(cw->isVisible());
    // The open trace is the first run, summarised from the main window's analysis (no second load).
    QCOMPARE(cw->runCount(), 1);
    QCOMPARE(cw->runPath(0), mw.tracePath());
    QTRY_COMPARE_WITH_TIMEOUT(cw->summaries().size(), std::size_t(1), 60000);
    const RunSummary s2 = summary(m_run2);
    QCOMPARE(cw->summaries().front().stepNs, s2.stepNs);
    QCOMPARE(cw->summaries().front().exposedNs, s2.exposedNs);
    // Triggering again shows the same window, with its runs.
    cw->close();
    action->trigger();
    QCOMPARE(mw.findChildren<CompareWindow*>().size(), qsizetype(1));
    QCOMPARE(cw->runCount(), 1);
}

// Compare Runs opened while the main window shows a preview (the ranks read so far) reads the run whole: its summary
// is the full run's, not the preview's.
void TestCompareWindow::compareWhilePreviewing()
{
    MainWindow mw;
    TraceLoader* loader = mw.loader();
    loader->setReaderThreads(1); // archives one after another: a preview after the first
    loader->setPreviewIntervalMs(0);
    loader->setPreviewShare(1.0);
    QSemaphore shown;
    loader->setAfterPreview([&shown](std::size_t) { shown.tryAcquire(1, 60000); });
    CompareWindow* cw = nullptr;
    int previews = 0;
    connect(&mw, &MainWindow::previewShown, &mw, [&](int read, int total) {
        if (previews++ == 0) {
            QCOMPARE(read, 1);
            QCOMPARE(total, 2);
            QCOMPARE(int(mw.trace()->ranks.size()), 1); // the preview is open
            compareAction(mw)->trigger();
            cw = mw.findChild<CompareWindow*>();
        }
        shown.release();
    });
    QSignalSpy loaded(&mw, &MainWindow::traceLoaded);
    mw.openTrace(m_run2);
    QVERIFY(loaded.wait(60000));
    QCOMPARE(previews, 1);
    QVERIFY(cw);
    QCOMPARE(cw->runCount(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(cw->summaries().size(), std::size_t(1), 60000);
    const RunSummary full = summary(m_run2);
    QCOMPARE(cw->summaries().front().stepNs, full.stepNs);
    QCOMPARE(cw->summaries().front().exposedNs, full.exposedNs);
    QCOMPARE(cw->summaries().front().ranks, 2);
}

// Runs added to Compare Runs load as the main window loads: its rules (here every kernel is compute, so no run has
// communication), its clock mode and its memory limit (a tiny one refuses the run, naming it).
void TestCompareWindow::loadsWithTheMainWindowsOptions()
{
    const QString rulesPath = m_dir.filePath(QStringLiteral("all-compute.json"));
    {
        QFile f(rulesPath);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"rules": [{"id": "all", "pattern": "", "target": "kernel", "category": "compute",
            "subgroup": "other"}]})");
    }
    const Rules allCompute = Rules::fromFile(rulesPath.toStdString(), false);
    MainWindow mw;
    mw.loader()->setRules(allCompute);
    QSignalSpy loaded(&mw, &MainWindow::traceLoaded);
    mw.openTrace(m_run2);
    QVERIFY(loaded.wait(60000));
    mw.loader()->setClockMode(ClockMode::Recorded);
    mw.loader()->setMemoryLimit(1024);
    QAction* action = compareAction(mw);
    QVERIFY(action);
    action->trigger();
    auto* cw = mw.findChild<CompareWindow*>();
    QVERIFY(cw);
    QCOMPARE(cw->runOptions().rules.source(), rulesPath.toStdString());
    QCOMPARE(cw->runOptions().clock, ClockMode::Recorded);
    QCOMPARE(cw->runOptions().load.memoryLimit, std::uint64_t(1024));
    // 1 KiB is less than any trace needs: the run is refused by the memory check, with its file named.
    cw->addRun(m_run1);
    QVERIFY(QTest::qWaitFor([&] { return !cw->isLoading(); }, 60000));
    QVERIFY2(cw->errorText().contains(QStringLiteral("gpus1")), qPrintable(cw->errorText()));
    QCOMPARE(cw->summaries().size(), std::size_t(1));

    // Without the limit, a run added next is classified by the main window's rules: all compute.
    mw.loader()->setMemoryLimit(0);
    action->trigger();
    QCOMPARE(cw->runOptions().load.memoryLimit, std::uint64_t(0));
    cw->removeRun(1);
    cw->addRun(m_run2);
    QVERIFY(QTest::qWaitFor([&] { return !cw->isLoading(); }, 60000));
    QCOMPARE(cw->summaries().size(), std::size_t(2));
    const auto trace = loadTrace(m_run2.toStdString());
    const RunSummary byRules = summarizeRun(*trace, *analyze(*trace, allCompute), CompareOptions {});
    const RunSummary byDefaults = summary(m_run2);
    QVERIFY(byDefaults.commBusyNs > 0);
    QCOMPARE(byRules.commBusyNs, TimeNs(0));
    for (const RunSummary& s : cw->summaries()) {
        QCOMPARE(s.commBusyNs, TimeNs(0));
        QCOMPARE(s.computeNs, byRules.computeNs);
    }
}

void TestCompareWindow::removeWhileLoading()
{
    CompareWindow w;
    w.addRun(m_run2);
    w.addRun(m_run1);
    QVERIFY(w.isLoading());
    w.removeRun(0); // cancels its job; its result must not come back as a row
    QCOMPARE(w.runCount(), 1);
    QCOMPARE(w.runPath(0), m_run1);
    QVERIFY(QTest::qWaitFor([&] { return w.findChildren<QFutureWatcherBase*>().isEmpty(); }, 60000));
    QCOMPARE(w.model()->rowCount(), 1);
    QCOMPARE(w.summaries().size(), std::size_t(1));
    QCOMPARE(w.summaries().front().ranks, 1);
    QCOMPARE(w.chart()->barCount(), 1);
}

// Issue 13.3: runs are ordered by GPU count as they load; the one with the fewest GPUs is the baseline.
void TestCompareWindow::runsByGpuCount()
{
    CompareWindow w;
    w.addRun(m_run2);
    w.addRun(m_run1);
    QVERIFY(QTest::qWaitFor([&] { return !w.isLoading(); }, 60000));
    QCOMPARE(w.runPath(0), m_run1);
    QCOMPARE(w.runPath(1), m_run2);
    QCOMPARE(w.summaries().front().ranks, 1);
    QVERIFY(w.runList()->item(0)->text().endsWith(QStringLiteral("(baseline)")));
    const RunSummary s1 = summary(m_run1), s2 = summary(m_run2);
    QCOMPARE(cell(w.model(), rowOf(w.model(), QStringLiteral("gpus2")), CompareWindow::ColEfficiency),
        QString::asprintf("%.1f %%", 100.0 * double(s1.stepNs) / double(s2.stepNs)));
    QVERIFY(w.json().indexOf(QStringLiteral("\"ranks\": 1,")) < w.json().indexOf(QStringLiteral("\"ranks\": 2,")));
}

// Issue 13.3: two runs with one GPU count got a "scaling efficiency" (205.5 %) without a warning.
void TestCompareWindow::sameGpuCountHasNoEfficiency()
{
    CompareWindow w;
    w.addRun(m_run2);
    w.addRun(m_run2);
    QVERIFY(QTest::qWaitFor([&] { return !w.isLoading(); }, 60000));
    QCOMPARE(w.model()->rowCount(), 2);
    const TableCell& second = w.model()->cell(1, CompareWindow::ColEfficiency);
    QVERIFY(second.present());
    QCOMPARE(second.text, QStringLiteral("-"));
    const QString tip = w.model()->data(w.model()->index(1, CompareWindow::ColEfficiency), Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QStringLiteral("different GPU counts")), qPrintable(tip));
    QCOMPARE(cell(w.model(), 0, CompareWindow::ColEfficiency), QStringLiteral("baseline"));
    QVERIFY2(w.finding().contains(QStringLiteral("Scaling efficiency needs runs with different GPU counts")),
        qPrintable(w.finding()));
    QVERIFY(!w.finding().contains(QStringLiteral("(efficiency")));
    QVERIFY(w.csv().split(QLatin1Char('\n')).at(2).endsWith(QLatin1Char(','))); // no efficiency_pct
}

// Issue 13.5: Add Folder… started in the home folder instead of beside the runs (the open trace).
void TestCompareWindow::addFolderStartsBesideTheRuns()
{
    QSettings().remove(QStringLiteral("compare/lastFolder"));
    CompareWindow w;
    QSettings().setValue(QStringLiteral("recentFiles"), QStringList { m_run2 });
    QCOMPARE(QDir(w.lastFolder()), QDir(m_dir.path())); // no run yet: beside the last trace opened
    QSettings().remove(QStringLiteral("recentFiles"));
    w.addRun(m_run1);
    QCOMPARE(QDir(w.lastFolder()), QDir(m_dir.path())); // the folder that holds the run folders
    QVERIFY(QTest::qWaitFor([&] { return !w.isLoading(); }, 60000));
    CompareWindow anchor;
    anchor.addRun(m_dir.filePath(QStringLiteral("gpus1/traces.otf2")));
    QCOMPARE(QDir(anchor.lastFolder()), QDir(m_dir.path())); // an anchor: beside its archive folder
    QVERIFY(QTest::qWaitFor([&] { return !anchor.isLoading(); }, 60000));
}

QTEST_MAIN(TestCompareWindow)
#include "tst_comparewindow.moc"
