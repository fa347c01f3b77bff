// SPDX-License-Identifier: GPL-3.0-or-later
// The What If dock: edits replayed in the background, predicted step times per rank, the predicted timeline of the
// visible steps.
#include "analysis/analysis.h"
#include "common/labels.h"
#include "figure/figurerenderer.h"
#include "panels/whatifpanel.h"
#include "timeline/timelineplot.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

using namespace exposure;

namespace {

constexpr TimeNs kUs = 1000;

// Launch-bound: 1000 µs steps, each with a 400 µs "inject" region, two launches and 500 µs of its own host time.
std::shared_ptr<Trace> cpuBound()
{
    TraceBuilder b;
    b.addRank("Rank 0");
    const int cpu = b.addLane(0, "Master thread", LaneKind::CpuThread);
    const int gpu = b.addLane(0, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
    for (int k = 0; k < 3; ++k) {
        const TimeNs B = k * 1000 * kUs;
        b.addInterval(0, cpu, B, B + 1000 * kUs, "ProfilerStep#" + std::to_string(k), RegionKind::HostRegion, 0);
        b.addInterval(0, cpu, B, B + 400 * kUs, "inject", RegionKind::HostRegion, 1);
        const auto l1 = b.addInterval(0, cpu, B + 400 * kUs, B + 450 * kUs, "cudaLaunchKernel", RegionKind::HostApi, 1);
        const auto l2 = b.addInterval(0, cpu, B + 450 * kUs, B + 500 * kUs, "cudaLaunchKernel", RegionKind::HostApi, 1);
        b.addInterval(
            0, gpu, B + 460 * kUs, B + 500 * kUs, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n", RegionKind::Kernel);
        b.addInterval(
            0, gpu, B + 510 * kUs, B + 550 * kUs, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n", RegionKind::Kernel);
        b.addLaunch(0, gpu, cpu, l1);
        b.addLaunch(0, gpu, cpu, l2);
    }
    return b.finish();
}

} // namespace

class TestWhatIfPanel : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void replaysEditsAndDrawsThePrediction()
    {
        const auto trace = cpuBound();
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
    }
};

QTEST_MAIN(TestWhatIfPanel)
#include "tst_whatifpanel.moc"
