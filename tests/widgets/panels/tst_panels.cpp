// SPDX-License-Identifier: GPL-3.0-or-later
// Details and Exposed Communication panels on traces built in memory (issues 13.4, 13.5): long kernel names wrap
// between their parts, never inside an identifier, and copy without the break marks; hidden/exposed time reads like
// every other time; the Scope box names steps once and grows to show them.
#include "common/labels.h"
#include "panels/detailspanel.h"
#include "panels/exposedpanel.h"
#include "support/testtraces.h"

#include <QAbstractTextDocumentLayout>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextLayout>

using namespace exposure;

namespace {

const std::string kLongName
    = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
      "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
      "(at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, float*, "
      "float*>(at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous "
      "namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double)";

// One rank: the long-named kernel on a compute stream, an AllReduce on a second stream that overlaps it by 300 ns.
std::shared_ptr<Trace> longNameTrace()
{
    TraceBuilder b;
    b.addRank("Rank 0", "node0", 0);
    const int compute = b.addLane(0, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
    const int nccl = b.addLane(0, "CUDA[0:17]", LaneKind::GpuStream, 0, 17);
    b.addInterval(0, compute, 0, 335'323, kLongName, RegionKind::Kernel);
    b.addInterval(0, nccl, 100'000, 444'323, testing::kNcclAllReduce, RegionKind::Kernel);
    return b.finish();
}

bool isIdentifierChar(QChar c)
{
    return c.isLetterOrNumber() || c == QLatin1Char('_');
}

} // namespace

class TestPanels : public QObject
{
    Q_OBJECT
private slots:
    // A kernel replayed from a CUDA graph names its graph launch and its place in the replay (issue 24); a kernel
    // launched on its own names its call; one without a call says so.
    void graphKernelNamesItsReplay()
    {
        TraceBuilder b;
        b.addRank("Rank 0", "node0", 0);
        const int cpu = b.addLane(0, "main", LaneKind::CpuThread);
        const int gpu = b.addLane(0, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
        const auto graph = b.addInterval(0, cpu, 1'000, 11'000, "cudaGraphLaunch", RegionKind::HostApi);
        const auto single = b.addInterval(0, cpu, 20'000, 25'000, "cudaLaunchKernel", RegionKind::HostApi);
        for (int k = 0; k < 3; ++k)
            b.setLaunchOf(0, gpu,
                b.addInterval(0, gpu, 12'000 + 2'000 * k, 13'000 + 2'000 * k, "gemm", RegionKind::Kernel), cpu, graph);
        b.setLaunchOf(0, gpu, b.addInterval(0, gpu, 30'000, 31'000, "gemm", RegionKind::Kernel), cpu, single);
        b.addInterval(0, gpu, 40'000, 41'000, "gemm", RegionKind::Kernel); // no call in the trace
        const auto trace = b.finish();
        const auto analysis = analyze(*trace, Rules::defaults());
        DetailsPanel panel;
        panel.showInterval(*trace, analysis.get(), nullptr, { 0, gpu, 1 });
        QCOMPARE(panel.field(QStringLiteral("Launched by")),
            QStringLiteral("replayed from a CUDA graph launched at %1 (cudaGraphLaunch on main), node 2 of 3")
                .arg(durationText(1'000)));
        panel.showInterval(*trace, analysis.get(), nullptr, { 0, gpu, 3 });
        QCOMPARE(panel.field(QStringLiteral("Launched by")),
            QStringLiteral("cudaLaunchKernel at %1 on main").arg(durationText(20'000)));
        QCOMPARE(panel.field(QStringLiteral("Same call")), QString());
        panel.showInterval(*trace, analysis.get(), nullptr, { 0, gpu, 4 });
        QCOMPARE(panel.field(QStringLiteral("Launched by")), QStringLiteral("unknown (no launch call in the trace)"));
    }

    // Hidden / exposed in the details were raw nanoseconds ("335 323 ns (97.4 %)"), unlike every other time.
    void hiddenAndExposedReadLikeOtherTimes()
    {
        const auto trace = longNameTrace();
        const auto analysis = analyze(*trace, Rules::defaults());
        DetailsPanel panel;
        panel.showInterval(*trace, analysis.get(), nullptr, { 0, 1, 0 });
        // The AllReduce [100 000, 444 323) overlaps compute until 335 323: 235 323 ns hidden, 109 000 exposed.
        QCOMPARE(panel.field(QStringLiteral("Hidden")),
            QStringLiteral("%1 (235 323 ns, 68.3 %)").arg(durationText(235'323)));
        QCOMPARE(panel.field(QStringLiteral("Exposed")),
            QStringLiteral("%1 (109 000 ns, 31.7 %)").arg(durationText(109'000)));
        QVERIFY(panel.field(QStringLiteral("Hidden")).startsWith(QStringLiteral("235.3 µs")));
    }

    // Small truths (issue 20): a kernel without a launch record says its phase came from its name or a heuristic;
    // only the launch parameters the trace has are shown, sizes human-readable; a CPU region is titled a region.
    void detailsSayWhereFactsComeFrom()
    {
        TraceBuilder b;
        b.addRank("Rank 0", "node0", 0);
        const int gpu = b.addLane(0, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
        const int cpu = b.addLane(0, "Master thread", LaneKind::CpuThread);
        b.addInterval(0, cpu, 0, 900'000, "autograd::engine::evaluate_function: MmBackward0", RegionKind::HostRegion);
        b.addInterval(0, gpu, 10'000, 60'000, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_dgrad",
            RegionKind::Kernel);
        b.addInterval(0, gpu, 70'000, 90'000, "ampere_sgemm_128x64_nn", RegionKind::Kernel);
        auto trace = b.finish();
        KernelLaunchParams p;
        p.blocksPerGrid = 1320;
        p.threadsPerBlock = 256;
        p.registersPerThread = 168;
        p.dynamicSharedMemory = 98'304;
        trace->launchParams.push_back(p);
        const int g = trace->ranks[0].lanes[0].isGpu() ? 0 : 1;
        trace->ranks[0].lanes[std::size_t(g)].launchParamIds = { 0, kNoLaunchParams };
        const auto analysis = analyze(*trace, Rules::defaults());
        DetailsPanel panel;
        panel.showInterval(*trace, analysis.get(), nullptr, { 0, g, 0 });
        QCOMPARE(panel.field(QStringLiteral("Phase")), QStringLiteral("backward"));
        QCOMPARE(panel.field(QStringLiteral("Phase decided by")), QStringLiteral("kernel name (no launch record)"));
        QCOMPARE(panel.field(QStringLiteral("Grid")), QStringLiteral("1 320 blocks"));
        QCOMPARE(panel.field(QStringLiteral("Block")), QStringLiteral("256 threads"));
        QCOMPARE(panel.field(QStringLiteral("Registers per thread")), QStringLiteral("168"));
        QCOMPARE(panel.field(QStringLiteral("Dynamic shared memory")), QStringLiteral("98.3 kB (98 304 bytes)"));
        // Not recorded (zero): not shown as "0 B".
        QVERIFY(panel.field(QStringLiteral("Static shared memory")).isEmpty());
        QVERIFY(panel.field(QStringLiteral("Local memory")).isEmpty());
        QVERIFY(panel.field(QStringLiteral("Estimated occupancy")).isEmpty());
        // The second kernel has no parameters: no such section.
        panel.showInterval(*trace, analysis.get(), nullptr, { 0, g, 1 });
        QVERIFY(panel.field(QStringLiteral("Grid")).isEmpty());
        // What torch.profiler records: the shapes, shared memory as one sum, the estimated occupancy.
        KernelLaunchParams k;
        k.grid = { 320, 2, 1 };
        k.block = { 512, 1, 1 };
        k.blocksPerGrid = 640;
        k.threadsPerBlock = 512;
        k.registersPerThread = 27;
        k.sharedMemory = 49'152;
        k.occupancyPercent = 61;
        trace->launchParams.push_back(k);
        trace->ranks[0].lanes[std::size_t(g)].launchParamIds = { 0, 1 };
        panel.showInterval(*trace, analysis.get(), nullptr, { 0, g, 1 });
        QCOMPARE(panel.field(QStringLiteral("Grid")), QStringLiteral("320 × 2 × 1 (640 blocks)"));
        QCOMPARE(panel.field(QStringLiteral("Block")), QStringLiteral("512 × 1 × 1 (512 threads)"));
        QCOMPARE(panel.field(QStringLiteral("Registers per thread")), QStringLiteral("27"));
        QCOMPARE(panel.field(QStringLiteral("Shared memory")), QStringLiteral("49.2 kB (49 152 bytes)"));
        QCOMPARE(
            panel.field(QStringLiteral("Estimated occupancy")), QStringLiteral("61 % (torch.profiler's estimate)"));
        // A CPU region: its section says Region, and it has no phase line.
        panel.showInterval(*trace, analysis.get(), nullptr, { 0, 1 - g, 0 });
        QVERIFY(panel.browser()->toHtml().contains(QStringLiteral(">Region<")));
        QVERIFY(!panel.browser()->toHtml().contains(QStringLiteral(">Kernel<")));
        QVERIFY(panel.field(QStringLiteral("Phase")).isEmpty());
        QCOMPARE(panel.field(QStringLiteral("Thread")), QStringLiteral("Master thread"));
    }

    void byteCountsAreHumanReadable()
    {
        QCOMPARE(byteCountText(0), QStringLiteral("0 B"));
        QCOMPARE(byteCountText(999), QStringLiteral("999 B"));
        QCOMPARE(byteCountText(4096), QStringLiteral("4.10 kB"));
        QCOMPARE(byteCountText(999'499), QStringLiteral("999 kB"));
        QCOMPARE(byteCountText(999'999), QStringLiteral("1.00 MB"));
        QCOMPARE(byteCountText(26'411'008), QStringLiteral("26.4 MB"));
        QCOMPARE(byteCountText(4'000'000, true), QStringLiteral("4.00 MB (4 000 000 bytes)"));
        QCOMPARE(byteCountText(1'500'000'000'000ull), QStringLiteral("1.50 TB"));
    }

    // A long C++ kernel name wraps after "::" or ", " or before "<" / "(", never inside an identifier.
    void longNamesWrapBetweenParts()
    {
        const auto trace = longNameTrace();
        const auto analysis = analyze(*trace, Rules::defaults());
        DetailsPanel panel;
        panel.resize(380, 700); // the Details dock's width in the main window
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        // Counts the line breaks of the panel's text and fails on one between two identifier characters; in the lines
        // of a name, on any break but after "::" or ", " or before "<" or "(" (the panel marks those with U+200B).
        auto checkBreaks = [&](int& breaks, const QString& nameStart = QString()) {
            QTextDocument* doc = panel.browser()->document();
            doc->setTextWidth(panel.browser()->viewport()->width());
            doc->documentLayout()->documentSize(); // lays the document out
            for (QTextBlock block = doc->begin(); block.isValid(); block = block.next()) {
                const QTextLayout* layout = block.layout();
                const QString text = block.text();
                for (int i = 1; layout && i < layout->lineCount(); ++i) {
                    const int at = layout->lineAt(i).textStart();
                    if (at <= 0 || at >= text.size())
                        continue;
                    ++breaks;
                    QVERIFY2(!(isIdentifierChar(text[at - 1]) && isIdentifierChar(text[at])),
                        qPrintable(QStringLiteral("line break inside an identifier: …%1|%2…")
                                       .arg(text.mid(std::max(0, at - 20), std::min(at, 20)), text.mid(at, 20))));
                    if (!nameStart.isEmpty() && text.startsWith(nameStart))
                        QVERIFY2(
                            text[at - 1] == QChar(0x200B) || (at > 1 && text.mid(at - 2, 2) == QStringLiteral(", ")),
                            qPrintable(QStringLiteral("a name broken elsewhere than at ::, <, ( or ,: …%1|%2…")
                                           .arg(text.mid(std::max(0, at - 20), std::min(at, 20)), text.mid(at, 20))));
                }
            }
        };
        panel.showInterval(*trace, analysis.get(), nullptr, { 0, 0, 0 });
        QCOMPARE(panel.field(QStringLiteral("Name")), QString::fromStdString(kLongName)); // the text is intact
        // The name is printed once (the heading), not again as "Name" and as an identical "Full name".
        QVERIFY(panel.field(QStringLiteral("Full name")).isEmpty());
        QCOMPARE(panel.browser()->toPlainText().count(QStringLiteral("multi_tensor_apply_kernel")), 1);
        int breaks = 0;
        checkBreaks(breaks, QStringLiteral("void"));
        QVERIFY2(breaks >= 6, qPrintable(QString::number(breaks))); // the name does wrap, many times
        // A name with spaces, "/" and "-" inside its parts wraps at its parts only.
        {
            TraceBuilder b;
            b.addRank("Rank 0", "", 0);
            const int lane = b.addLane(0, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
            b.addInterval(0, lane, 0, 1000,
                "cutlass::Kernel<cutlass_tensorop_gemm_bias_T / NT-fused, unsigned long long, "
                "cutlass::gemm::GemmShape<128, 128, 64>>(cutlass::gemm::kernel::Gemm<unsigned long long>::Params, "
                "long double, cutlass::epilogue::thread::LinearCombination<float, 4, float, float>::Params)",
                RegionKind::Kernel);
            const auto odd = std::shared_ptr<const Trace>(b.finish());
            const auto oddAnalysis = analyze(*odd, Rules::defaults());
            panel.showInterval(*odd, oddAnalysis.get(), nullptr, { 0, 0, 0 });
            int oddBreaks = 0;
            checkBreaks(oddBreaks, QStringLiteral("cutlass"));
            QVERIFY2(oddBreaks >= 2, qPrintable(QString::number(oddBreaks)));
            // The trace names no host: no empty Host row.
            QVERIFY(!panel.browser()->toPlainText().contains(QStringLiteral("Host")));
        }
        // An NCCL kernel's one long identifier (ncclDevKernel_AllReduce_Sum_f32_RING_LL) stays whole too.
        panel.showInterval(*trace, analysis.get(), nullptr, { 0, 1, 0 });
        int ncclBreaks = 0;
        checkBreaks(ncclBreaks);
        QVERIFY(ncclBreaks >= 1);
        panel.showInterval(*trace, analysis.get(), nullptr, { 0, 0, 0 });
        // Copying gives the name without the invisible break marks.
        panel.browser()->selectAll();
        panel.browser()->copy();
        const QString copied = QApplication::clipboard()->text();
        QVERIFY(!copied.contains(QChar(0x200B)));
        QVERIFY(copied.contains(QString::fromStdString(kLongName)));
    }

    // The Scope box repeated detected step names ("Step 0 (step 0)") and, sized before the steps arrived, clipped them.
    void scopeBoxNamesStepsOnceAndFits()
    {
        ExposedPanel panel;
        panel.resize(900, 260);
        static_cast<QWidget&>(panel).show(); // ExposedPanel::show(stats, waits) hides it
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto* box = panel.findChild<QComboBox*>();
        QVERIFY(box);
        // Steps from ProfilerStep regions keep their name; detected ones ("step N") are just "Step N".
        const auto trace = testing::makeDdpTrace(2, 3);
        panel.setTrace(trace, analyze(*trace, Rules::defaults()));
        QCOMPARE(box->itemText(2), QStringLiteral("Step 0 (ProfilerStep#0)"));
        TraceBuilder b;
        b.addRank("Rank 0", "node0", 0);
        const int lane = b.addLane(0, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
        for (int s = 0; s < 3; ++s) { // a forward gemm, then an optimizer kernel ends each iteration
            b.addInterval(0, lane, s * 1000, s * 1000 + 500, "ampere_sgemm_128x64_nn", RegionKind::Kernel);
            b.addInterval(0, lane, s * 1000 + 600, s * 1000 + 900,
                "void at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor>", RegionKind::Kernel);
        }
        const auto detected = std::shared_ptr<const Trace>(b.finish());
        const auto detectedAnalysis = analyze(*detected, Rules::defaults());
        QVERIFY(!detectedAnalysis->ranks[0].steps.empty());
        QCOMPARE(QString::fromStdString(detectedAnalysis->ranks[0].steps[0].name).left(5), QStringLiteral("step "));
        panel.setTrace(detected, detectedAnalysis);
        QVERIFY(box->count() >= 3);
        for (int i = 2; i < box->count(); ++i)
            QVERIFY2(!box->itemText(i).contains(QLatin1Char('(')), qPrintable(box->itemText(i)));
        QCOMPARE(box->itemText(2), QStringLiteral("Step %1").arg(detectedAnalysis->ranks[0].steps[0].index));
        // Back to the ProfilerStep trace: the box grows to its longest entry.
        panel.setTrace(trace, analyze(*trace, Rules::defaults()));
        QApplication::processEvents();
        int longest = 0;
        for (int i = 0; i < box->count(); ++i)
            longest = std::max(longest, box->fontMetrics().horizontalAdvance(box->itemText(i)));
        QVERIFY2(
            box->width() > longest, qPrintable(QStringLiteral("box %1 px, text %2 px").arg(box->width()).arg(longest)));
    }
};

QTEST_MAIN(TestPanels)
#include "tst_panels.moc"
