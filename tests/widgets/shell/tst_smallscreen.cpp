// SPDX-License-Identifier: GPL-3.0-or-later
// Small screens and high DPI: a 1280 × 720 window (CTest runs this twice: at 100 %, and with QT_SCALE_FACTOR=2, where
// 1280 × 720 device pixels are 640 × 360 logical ones) on the demo trace. The docks start tabbed on the right, the
// timeline keeps at least 60 % of the window's height, the legend shows every entry, and the status text is elided
// with the whole text in its tooltip. Screenshots go to screenshots/ in the test's build folder.
#include "common/elidedlabel.h"
#include "panels/exposedpanel.h"
#include "shell/findbar.h"
#include "shell/mainwindow.h"
#include "timeline/timelineplot.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QLabel>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTest>
#include <QWheelEvent>
#include <cstdio>

using namespace exposure;

class TestSmallScreen : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }
    void timelineDominatesAt1280x720();
    void largeWindowKeepsPanelsBelow();
};

void TestSmallScreen::timelineDominatesAt1280x720()
{
    const double dpr = qApp->devicePixelRatio();
    const QSize logical(int(1280 / dpr), int(720 / dpr));
    MainWindow w;
    w.setRemembersRecentFiles(false);
    w.resize(logical);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy loaded(&w, &MainWindow::traceLoaded);
    w.openTrace(QStringLiteral(EXPOSURE_DEMO_TRACE_DIR));
    QVERIFY(loaded.wait(30000));
    bool idle = false;
    w.whenIdle([&idle] { idle = true; });
    QTRY_VERIFY_WITH_TIMEOUT(idle, 30000);
    w.timeline()->replot();
    QCoreApplication::processEvents();
    if (w.size() != logical) // what holds the window larger than asked
        for (QWidget* child : w.findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly))
            std::printf("  %s %s: minimum %dx%d\n", child->metaObject()->className(), qPrintable(child->objectName()),
                child->minimumSizeHint().width(), child->minimumSizeHint().height());
    QCOMPARE(w.size(), logical);
    // The docks: tabbed, on the right, beside the timeline rather than under it.
    QVERIFY(w.isCompactLayout());
    const QList<QDockWidget*> docks = w.findChildren<QDockWidget*>();
    QVERIFY(docks.size() >= 9);
    for (QDockWidget* d : docks) {
        QCOMPARE(w.dockWidgetArea(d), Qt::RightDockWidgetArea);
        QVERIFY2(!w.tabifiedDockWidgets(d).isEmpty(), qPrintable(d->objectName()));
    }
    // The timeline's share of the window's height.
    const double share = double(w.timeline()->height()) / double(w.height());
    std::printf("%dx%d logical at %.0f %%: timeline %d of %d px (%.1f %%), %d px wide\n", w.width(), w.height(),
        dpr * 100, w.timeline()->height(), w.height(), share * 100, w.timeline()->width());
    QVERIFY2(share >= 0.6, qPrintable(QString::number(share)));
    const QString dir = QStringLiteral(EXPOSURE_SCREENSHOT_DIR);
    QVERIFY(QDir().mkpath(dir));
    const QString file
        = dir + QStringLiteral("/smallscreen-1280x720%1.png").arg(dpr > 1 ? QStringLiteral("-200") : QString());
    const QImage image = w.grab().toImage();
    QCOMPARE(image.size(), QSize(1280, 720));
    QVERIFY(image.save(file));
    std::printf("saved %s\n", qPrintable(file));
    // Every legend entry is in reach: wrapped into lines, and where those would take more than a fifth of the plot's
    // height, a window of lines that the wheel over the legend scrolls (its last entry says which are shown). The
    // demo trace's legend has 17 entries.
    TimelinePlot* plot = w.timeline();
    QSet<QString> entries;
    for (int step = 0; step < 20; ++step) {
        for (const PlotText& t : plot->textBoxes())
            if (t.role == PlotText::Role::Legend) {
                QVERIFY2(t.rect.right() <= plot->width(), qPrintable(t.text));
                if (!t.text.startsWith(QStringLiteral("↕")))
                    entries.insert(t.text);
            }
        QVERIFY(plot->legend->outerRect().height() <= plot->height() / 5 + 8);
        if (!plot->legendScrolls())
            break;
        const QPointF at = plot->legend->outerRect().center();
        QWheelEvent wheel(at, plot->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
            Qt::NoScrollPhase, false);
        QApplication::sendEvent(plot, &wheel);
        plot->replot();
    }
    std::printf("legend: %d entries, %s\n", int(entries.size()), plot->legendScrolls() ? "scrolls" : "all shown");
    QCOMPARE(int(entries.size()), 17);
    QVERIFY(entries.contains(QStringLiteral("attention")));
    QVERIFY(entries.contains(QStringLiteral("overlaps comm.")));
    // With the find bar open (Ctrl+F, "gemm" found): the window keeps its size, the timeline still dominates.
    QTest::keyClick(&w, Qt::Key_F, Qt::ControlModifier);
    QSignalSpy found(w.findBar()->search(), &TraceSearch::finished);
    w.findBar()->find(QStringLiteral("gemm"), false);
    QVERIFY(found.wait(10000));
    QTest::keyClick(&w, Qt::Key_F3);
    QCoreApplication::processEvents();
    w.timeline()->replot();
    QCOMPARE(w.size(), logical);
    const double findShare = double(w.timeline()->height()) / double(w.height());
    std::printf(
        "with the find bar: timeline %d of %d px (%.1f %%)\n", w.timeline()->height(), w.height(), findShare * 100);
    QVERIFY2(findShare >= 0.6, qPrintable(QString::number(findShare)));
    QVERIFY(w.findBar()->geometry().right() <= w.centralWidget()->width());
    QVERIFY(w.findBar()->grab().toImage().save(QStringLiteral(EXPOSURE_SCREENSHOT_DIR)
        + QStringLiteral("/smallscreen-find%1.png").arg(dpr > 1 ? QStringLiteral("-200") : QString())));
    QVERIFY(w.grab().toImage().save(QStringLiteral(EXPOSURE_SCREENSHOT_DIR)
        + QStringLiteral("/smallscreen-1280x720-find%1.png").arg(dpr > 1 ? QStringLiteral("-200") : QString())));
    // The Exposed panel's scope row: its labels (the caption of the scope included) beside the scope box, never on
    // it, whatever the scope (the step scope's caption is the longest).
    QDockWidget* exposedDock = nullptr;
    for (QWidget* p = w.exposedPanel(); p && !exposedDock; p = p->parentWidget())
        exposedDock = qobject_cast<QDockWidget*>(p);
    QVERIFY(exposedDock);
    exposedDock->raise();
    auto* scopeBox = w.exposedPanel()->findChild<QComboBox*>();
    QVERIFY(scopeBox);
    int panelMinimum = -1;
    for (int scope = 0; scope < 3; ++scope) {
        scopeBox->setCurrentIndex(scope == 2 ? scopeBox->count() - 1 : scope);
        emit scopeBox->activated(scopeBox->currentIndex());
        QCoreApplication::processEvents();
        QVERIFY(w.exposedPanel()->isVisible());
        QVERIFY(scopeBox->isVisible() && scopeBox->width() >= scopeBox->minimumSizeHint().width());
        int labels = 0;
        for (QWidget* label : w.exposedPanel()->findChildren<QWidget*>())
            if (label->isVisible() && (qobject_cast<QLabel*>(label) || qobject_cast<ElidedLabel*>(label))
                && label->parentWidget() == scopeBox->parentWidget()) {
                ++labels;
                QVERIFY2(!label->geometry().intersects(scopeBox->geometry()),
                    qPrintable(QStringLiteral("%1 at %2,%3 %4x%5 on the scope box at %6,%7 %8x%9")
                                   .arg(QString::fromLatin1(label->metaObject()->className()))
                                   .arg(label->x())
                                   .arg(label->y())
                                   .arg(label->width())
                                   .arg(label->height())
                                   .arg(scopeBox->x())
                                   .arg(scopeBox->y())
                                   .arg(scopeBox->width())
                                   .arg(scopeBox->height())));
                QVERIFY(label->geometry().right() <= w.exposedPanel()->width());
            }
        QCOMPARE(labels, 3); // "Scope:", the caption, and "Split:" on a row of its own
        // The caption does not widen the panel (it did to 875 px with the step's caption): the panel fits its dock.
        if (panelMinimum < 0)
            panelMinimum = w.exposedPanel()->minimumSizeHint().width();
        QCOMPARE(w.exposedPanel()->minimumSizeHint().width(), panelMinimum);
        QVERIFY(w.exposedPanel()->width() <= exposedDock->width());
        auto* caption = w.exposedPanel()->findChild<ElidedLabel*>();
        QVERIFY(caption);
        if (scope
            == 2) { // the step's caption is longer than its room at both sizes: cut with "…", whole in the tooltip
            QVERIFY(caption->isElided());
            QVERIFY(caption->shownText().endsWith(QChar(0x2026)));
            QVERIFY(caption->toolTip().startsWith(QStringLiteral("step ")));
            QCOMPARE(caption->toolTip(), caption->text());
        }
        QVERIFY(w.exposedPanel()->grab().toImage().save(QStringLiteral(EXPOSURE_SCREENSHOT_DIR)
            + QStringLiteral("/smallscreen-exposed-scope%1%2.png")
                  .arg(scope)
                  .arg(dpr > 1 ? QStringLiteral("-200") : QString())));
    }
    // The status text: elided to its room, the whole text in the tooltip; every status-bar widget inside the window.
    const QString text
        = QStringLiteral("Loaded demo-trace: 2 ranks, 12 345 intervals; ") + QString(200, QLatin1Char('x'));
    w.statusLabel()->setText(text);
    QCoreApplication::processEvents();
    QVERIFY(w.statusLabel()->isElided());
    QCOMPARE(w.statusLabel()->toolTip(), text);
    QCOMPARE(w.statusText(), text);
    for (QWidget* child : w.statusBar()->findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly))
        if (child->isVisible())
            QVERIFY2(child->geometry().right() < w.statusBar()->width(), child->metaObject()->className());
}

// A large window (1600 × 1000 logical) keeps the panels tabbed below the timeline.
void TestSmallScreen::largeWindowKeepsPanelsBelow()
{
    MainWindow w;
    w.resize(1600, 1000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(!w.isCompactLayout());
    QCOMPARE(w.dockWidgetArea(w.bookmarksDock()), Qt::BottomDockWidgetArea);
    // Shrinking the window below the threshold moves them; growing it again moves them back.
    w.resize(1600, MainWindow::kCompactHeight - 40);
    QTRY_VERIFY(w.isCompactLayout());
    QCOMPARE(w.dockWidgetArea(w.bookmarksDock()), Qt::RightDockWidgetArea);
    w.resize(1600, 1000);
    QTRY_VERIFY(!w.isCompactLayout());
    QCOMPARE(w.dockWidgetArea(w.bookmarksDock()), Qt::BottomDockWidgetArea);
}

QTEST_MAIN(TestSmallScreen)
#include "tst_smallscreen.moc"
