// SPDX-License-Identifier: GPL-3.0-or-later
// The What If dock: edits replayed in the background, predicted step times per rank, the predicted timeline of the
// visible steps.
#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "common/labels.h"
#include "figure/figurerenderer.h"
#include "panels/whatifpanel.h"
#include "support/whatiftraces.h"
#include "timeline/timelineplot.h"
#include "timeline/timelineplottable.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

using namespace exposure;
using testing::kUs;

class TestWhatIfPanel : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void replaysEditsAndDrawsThePrediction()
    {
        const auto trace = testing::launchBoundSteps();
        const auto analysis = analyze(*trace, Rules::defaults());
        WhatIfPanel panel;
        QAbstractItemModelTester tester(panel.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        panel.resize(900, 600);
        panel.setTrace(trace, analysis);
        QCOMPARE(panel.model()->rowCount(), 0); // nothing replayed before Replay is pressed
        whatif::Edits e;
        e.regions.push_back({ "^inject$", 0.0 });
        panel.setEdits(e);
        QSignalSpy spy(&panel, &WhatIfPanel::replayed);
        panel.findChild<QPushButton*>(QStringLiteral("whatIfReplay"))->click();
        QVERIFY(spy.wait(10000));
        QCOMPARE(panel.model()->rowCount(), 1);
        QCOMPARE(panel.model()->text(0, WhatIfPanel::Measured), durationText(1000 * kUs));
        QCOMPARE(panel.model()->text(0, WhatIfPanel::Replay), durationText(1000 * kUs));
        QCOMPARE(panel.model()->text(0, WhatIfPanel::Predicted), durationText(600 * kUs));
        QCOMPARE(panel.model()->text(0, WhatIfPanel::Change), QStringLiteral("-40.0 %"));
        QCOMPARE(panel.model()->text(0, WhatIfPanel::Fidelity), QStringLiteral("100.0 %"));

        // The predicted timeline: step 1 runs from 600 to 1200 µs; it is what the plot shows when step 1 is visible.
        QVERIFY(panel.predictedTrace());
        QCOMPARE(panel.predictedPlot()->trace(), panel.predictedTrace());
        panel.setVisibleRange({ 1100 * kUs, 1900 * kUs });
        QCOMPARE(panel.predictedRange(), (TimeRange { 600 * kUs, 1200 * kUs }));
        QCOMPARE(panel.predictedPlot()->visibleRange(), (TimeRange { 600 * kUs, 1200 * kUs }));
        // The main timeline's palette carries over; the predicted range stays.
        TimelineOptions o;
        o.palette = PaletteKind::Grayscale;
        o.range = TimeRange { 0, 10 };
        panel.followTimelineOptions(o);
        QVERIFY(panel.predictedPlot()->options().palette == PaletteKind::Grayscale);
        QCOMPARE(panel.predictedPlot()->options().title, QStringLiteral("Predicted: remove regions '^inject$'"));
        QCOMPARE(panel.predictedPlot()->visibleRange(), (TimeRange { 600 * kUs, 1200 * kUs }));
        // The inject regions are gone (zero length), the launches follow the step's start.
        const IntervalTable& cpu = panel.predictedTrace()->ranks[0].lanes[0].intervals;
        QCOMPARE(cpu.start(4), 600 * kUs); // ProfilerStep#1
        QCOMPARE(cpu.duration(5), TimeNs(0)); // its inject
        QCOMPARE(cpu.start(6), 600 * kUs); // its first launch

        // Host regions: ';'-separated, REGEX removes, REGEX=F scales; the controls give back what was set.
        whatif::Edits two;
        two.regions.push_back({ "^inject$", 0.5 });
        two.regions.push_back({ "Step", 0.0 });
        two.comm = whatif::Edits::Comm::Faster;
        two.commFactor = 3;
        panel.setEdits(two);
        const whatif::Edits back = panel.edits();
        QCOMPARE(back.regions.size(), std::size_t(2));
        QCOMPARE(back.regions[0].pattern, std::string("^inject$"));
        QCOMPARE(back.regions[0].factor, 0.5);
        QCOMPARE(back.regions[1].pattern, std::string("Step"));
        QCOMPARE(back.regions[1].factor, 0.0);
        QVERIFY(back.comm == whatif::Edits::Comm::Faster);
        QCOMPARE(back.commFactor, 3.0);

        // The predicted timeline renders as a figure like any other.
        FigureRenderer renderer(
            panel.predictedTrace(), panel.predictedPlot()->analysis(), panel.predictedPlot()->viewIndex());
        FigureSpec spec;
        spec.rangeKind = FigureSpec::RangeKind::Custom;
        spec.range = { 600 * kUs, 1200 * kUs };
        const QImage img = renderer.renderImage(spec);
        QVERIFY(!img.isNull());
        QCOMPARE(img.size(), spec.pixelSize());
        // Exact pixels at computed places: the middle of each predicted kernel of step 1, on the GPU row, in the
        // kernel's colour; the middle of the gap between them, in the background colour (a blank figure fails).
        const TimelinePlot* fp = renderer.plot();
        QVERIFY(fp);
        const auto& rows = fp->rows();
        int gpuRow = -1;
        for (std::size_t r = 0; r < rows.size(); ++r)
            if (rows[r].kind == TimelineRow::Kind::Lane
                && panel.predictedTrace()->ranks[0].lanes[std::size_t(rows[r].lane)].isGpu())
                gpuRow = int(r);
        QVERIFY(gpuRow >= 0);
        const QRect box = fp->plottable()->rowBox(gpuRow);
        const IntervalTable& gpu
            = panel.predictedTrace()->ranks[0].lanes[std::size_t(rows[std::size_t(gpuRow)].lane)].intervals;
        const double scale = double(img.width()) / fp->width();
        const auto at = [&](TimeNs t) {
            return QPoint(int(fp->xAxis->coordToPixel(double(t)) * scale), int(box.center().y() * scale));
        };
        int kernelsSeen = 0;
        TimeNs lastEnd = -1;
        for (std::size_t i = 0; i < gpu.size(); ++i) {
            if (gpu.start(i) < spec.range.start || gpu.end(i) > spec.range.end)
                continue;
            const QColor kernel = fp->scene().nameColors.at(gpu.name(i));
            QCOMPARE(QColor(img.pixel(at((gpu.start(i) + gpu.end(i)) / 2))).name(), kernel.name());
            if (lastEnd >= 0 && gpu.start(i) - lastEnd >= 4 * kUs)
                QCOMPARE(QColor(img.pixel(at((lastEnd + gpu.start(i)) / 2))).name(),
                    fp->scene().palette.background().name());
            lastEnd = gpu.end(i);
            ++kernelsSeen;
        }
        QCOMPARE(kernelsSeen, 2);
    }

    // In a short, wide dock the predicted timeline is in view beside the table without scrolling; the summary ends
    // with each rank's finding (the Idle panel's and stats' words); another trace clears table, plot and findings.
    void predictionInViewAndClearedByANewTrace()
    {
        const auto trace = testing::launchBoundSteps();
        const auto analysis = analyze(*trace, Rules::defaults());
        WhatIfPanel panel;
        panel.setTrace(trace, analysis);
        QVERIFY(!panel.predictedPlot()->isVisibleTo(&panel)); // nothing predicted yet
        whatif::Edits e;
        e.regions.push_back({ "^inject$", 0.0 });
        panel.setEdits(e);
        QSignalSpy spy(&panel, &WhatIfPanel::replayed);
        panel.apply();
        QVERIFY(spy.wait(10000));
        QVERIFY(panel.minimumSizeHint().height() <= 320);
        panel.resize(1200, 320);
        panel.QWidget::show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const QRect plot = panel.predictedPlot()->geometry().translated(
            panel.predictedPlot()->parentWidget()->mapTo(&panel, QPoint(0, 0)));
        QVERIFY2(panel.rect().contains(plot) && plot.height() >= 100,
            qPrintable(QStringLiteral("%1,%2 %3x%4").arg(plot.x()).arg(plot.y()).arg(plot.width()).arg(plot.height())));
        const QString finding = QStringLiteral("\nRank 0: ")
            + QString::fromStdString(rankFinding(*trace, *analysis, nullptr, 0, trace->extent));
        QVERIFY2(panel.summary().endsWith(finding), qPrintable(panel.summary()));
        panel.setTrace(testing::gpuBoundSteps(), analyze(*testing::gpuBoundSteps(), Rules::defaults()));
        QVERIFY(!panel.predictedTrace());
        QVERIFY(!panel.predictedPlot()->isVisibleTo(&panel));
        QCOMPARE(panel.model()->rowCount(), 0);
        QVERIFY(!panel.summary().contains(QStringLiteral("Rank 0:")));
    }
};

QTEST_MAIN(TestWhatIfPanel)
#include "tst_whatifpanel.moc"
