// SPDX-License-Identifier: GPL-3.0-or-later
// RowPaint, the seam between what a timeline row shows and how it is painted: a figure drawn from RowPaints that went
// through bytes (as exposure-mpi's processes send them) is the figure drawn locally, pixel for pixel and SVG byte for
// byte; the bytes come back equal and malformed bytes are refused; and a row's paint does not grow with its events.
#include "analysis/analysis.h"
#include "figure/figurerenderer.h"
#include "run/openrun.h"
#include "support/demoarchive.h"
#include "support/figurespecs.h"
#include "support/testtraces.h"
#include "timeline/rowpaint.h"
#include "timeline/timelineplot.h"
#include "timeline/timelineplottable.h"

#include <QTemporaryDir>
#include <QTest>
#include <set>

using namespace exposure;

namespace {

// `kernels` back-to-back kernels of alternating names filling [0, 10 ms) on one stream.
std::shared_ptr<const Trace> denseTrace(int kernels)
{
    TraceBuilder b;
    const int rank = b.addRank("Rank 0");
    const int g = b.addLane(rank, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
    const TimeNs step = 10'000'000 / kernels;
    for (int k = 0; k < kernels; ++k)
        b.addInterval(rank, g, k * step, k * step + step / 2, k % 2 ? "ampere_sgemm_128x64_nn" : "nccl_AllReduce",
            RegionKind::Kernel);
    return b.finish();
}

// What a process of exposure-mpi would send for every row of the plot, through bytes.
TimelinePlottable::PaintSource viaBytes(const TimelinePlot* plot, int* calls)
{
    return [plot, calls](const DrawListParams& p, const ColumnGrid& g, double lo, double hi) {
        ++*calls;
        std::vector<int> all(plot->rows().size());
        for (std::size_t i = 0; i < all.size(); ++i)
            all[i] = int(i);
        const std::string bytes = rowPaintsToBytes(paintRows(plot->scene(), all, p, g, lo, hi));
        std::vector<RowPaint> out(all.size());
        for (auto& [row, paint] : rowPaintsFromBytes(bytes))
            out.at(std::size_t(row)) = std::move(paint);
        return out;
    };
}

// The legend's classes as exposure-mpi render finds them: the rows split between two "processes", each part through
// bytes, merged.
TimelinePlot::DrawnClassesSource drawnViaBytes(const TimelinePlot* plot, int* calls)
{
    return [plot, calls](TimeRange range) {
        ++*calls;
        std::vector<int> even, odd;
        for (std::size_t i = 0; i < plot->rows().size(); ++i)
            (i % 2 ? odd : even).push_back(int(i));
        DrawnClasses merged;
        for (const auto* part : { &even, &odd })
            merged.merge(DrawnClasses::fromBytes(drawnClasses(plot->scene(), *part, range).toBytes()));
        return merged;
    };
}

} // namespace

class TestRowPaint : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    std::shared_ptr<const Trace> m_demo;
    std::shared_ptr<const Analysis> m_demoAnalysis;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_demo = loadTrace(testing::writeDemoArchives(m_dir, QStringLiteral("demo"), 3, 3));
        m_demoAnalysis = analyze(*m_demo, Rules::defaults());
    }

    void figureFromBytesIsTheLocalFigure_data()
    {
        QTest::addColumn<int>("which");
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("rows");
        QTest::newRow("demo png") << 0 << QStringLiteral("png") << QStringLiteral("all");
        QTest::newRow("demo svg") << 0 << QStringLiteral("svg") << QStringLiteral("all");
        QTest::newRow("demo png, gpu rows, step 1") << 0 << QStringLiteral("png") << QStringLiteral("gpu");
        QTest::newRow("peer copy png") << 1 << QStringLiteral("png") << QStringLiteral("all");
    }

    void figureFromBytesIsTheLocalFigure()
    {
        QFETCH(int, which);
        QFETCH(QString, format);
        QFETCH(QString, rows);
        std::shared_ptr<const Trace> trace = which == 0 ? m_demo : testing::makePeerCopyTrace();
        std::shared_ptr<const Analysis> analysis
            = which == 0 ? m_demoAnalysis : std::shared_ptr<const Analysis>(analyze(*trace, Rules::defaults()));
        FigureSpec spec;
        QVERIFY(figureFormatFromName(format, &spec.format));
        spec.sizeUnit = FigureSpec::SizeUnit::Pixels;
        spec.widthPx = 1000;
        spec.heightPx = 500;
        spec.dpi = 96;
        if (rows == QLatin1String("gpu")) {
            spec.rows = FigureSpec::RowsKind::Gpu;
            spec.rangeKind = FigureSpec::RangeKind::Step;
            spec.step = 1;
        }
        FigureRenderer local(trace, analysis);
        const QByteArray expected = local.render(spec);
        QVERIFY(expected.size() > 1000);

        FigureRenderer remote(trace, analysis);
        int calls = 0;
        remote.plot()->plottable()->setPaintSource(viaBytes(remote.plot(), &calls));
        int classCalls = 0;
        remote.plot()->setDrawnClassesSource(drawnViaBytes(remote.plot(), &classCalls));
        const QByteArray got = remote.render(spec);
        QVERIFY(calls >= 1);
        QVERIFY(classCalls >= 1);
        QVERIFY(got == expected);

        // There was something to carry: stacks, wide blocks and the labels of the widest, the arrow.
        const auto paints = remote.plot()->plottable()->computeRowPaints();
        QCOMPARE(paints.size(), remote.plot()->rows().size());
        std::size_t visible = 0, blocks = 0, labelled = 0, arrows = 0;
        for (const RowPaint& p : paints) {
            arrows += p.arrows.size();
            if (!p.visible)
                continue;
            ++visible;
            QVERIFY(!p.columns.empty());
            QCOMPARE(p.columns.size() % p.classes.size(), std::size_t(0));
            blocks += p.blocks.size();
            for (const auto& b : p.blocks)
                labelled += b.label.empty() ? 0 : 1;
        }
        QVERIFY(visible >= 2);
        QVERIFY(blocks > 0);
        QVERIFY(labelled > 0 && labelled <= blocks); // narrow blocks carry no text
        QCOMPARE(arrows, std::size_t(which == 1 ? 1 : 0));
    }

    void bytesRoundTripAndMalformed()
    {
        FigureRenderer r(m_demo, m_demoAnalysis);
        (void)r.renderImage(testing::pixelSpec(800, 400));
        const auto paints = r.plot()->plottable()->computeRowPaints();
        std::vector<std::pair<int, RowPaint>> rows;
        for (std::size_t i = 0; i < paints.size(); ++i)
            rows.emplace_back(int(i), paints[i]);
        const std::string bytes = rowPaintsToBytes(rows);
        QVERIFY(rowPaintsFromBytes(bytes) == rows);
        // Cut short, or with something after the end: refused.
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, rowPaintsFromBytes(bytes.substr(0, bytes.size() - 1)));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, rowPaintsFromBytes(bytes + '\0'));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, rowPaintsFromBytes(bytes.substr(0, 20)));
        QVERIFY(rowPaintsFromBytes(rowPaintsToBytes({})).empty());
    }

    // The classes drawn by parts of the rows, merged, are those of all rows; through bytes unchanged.
    void drawnClassesMergeIsTheWhole()
    {
        FigureRenderer r(m_demo, m_demoAnalysis);
        (void)r.renderImage(testing::pixelSpec(800, 400));
        const TimelineScene& scene = r.plot()->scene();
        std::vector<int> all, even, odd;
        for (std::size_t i = 0; i < scene.rows.size(); ++i) {
            all.push_back(int(i));
            (i % 2 ? odd : even).push_back(int(i));
        }
        const TimeRange extent = m_demo->extent;
        const DrawnClasses whole = drawnClasses(scene, all, extent);
        const auto key = [](Category c, const char* sg) { return std::pair<int, std::string>(int(c), sg); };
        const std::set<std::pair<int, std::string>> expected { key(Category::Compute, "attention"),
            key(Category::Compute, "elementwise"), key(Category::Compute, "gemm"),
            key(Category::Compute, "normalization"), key(Category::Compute, "optimizer"),
            key(Category::Communication, "AllReduce"), key(Category::Memcpy, "HtoD"), key(Category::Idle, ""),
            key(Category::Host, "") };
        const auto text = [](const std::set<std::pair<int, std::string>>& set) {
            QStringList out;
            for (const auto& [c, sg] : set)
                out << QStringLiteral("%1/%2").arg(c).arg(QString::fromStdString(sg));
            return out.join(QLatin1Char(' '));
        };
        QCOMPARE(text(whole.blocks), text(expected));
        QVERIFY(whole.compute && whole.communication && whole.idleBlocks);
        QVERIFY(whole.hidden && whole.exposed && whole.computeOnly && whole.otherGpu && whole.idle);
        DrawnClasses merged = drawnClasses(scene, even, extent);
        merged.merge(DrawnClasses::fromBytes(drawnClasses(scene, odd, extent).toBytes()));
        QVERIFY(merged == whole);
        QVERIFY(DrawnClasses::fromBytes(whole.toBytes()) == whole);
        // After the trace's end nothing is drawn; no row is listed, nothing is.
        const DrawnClasses after = drawnClasses(scene, all, { extent.end + 1000, extent.end + 2000 });
        QVERIFY(after.blocks.empty());
        QVERIFY(!after.compute && !after.communication && !after.hidden && !after.exposed && !after.computeOnly);
        QVERIFY(drawnClasses(scene, {}, extent) == DrawnClasses());
        const std::string bytes = whole.toBytes();
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, DrawnClasses::fromBytes(bytes.substr(0, bytes.size() - 1)));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, DrawnClasses::fromBytes(bytes + '\0'));
    }

    // A row's paint is columns × classes plus the wide blocks: 100 times the events, the same bytes.
    void paintDoesNotGrowWithEvents()
    {
        std::size_t sizes[2] = { 0, 0 };
        const int counts[2] = { 2'000, 200'000 };
        for (int i = 0; i < 2; ++i) {
            std::shared_ptr<const Trace> trace = denseTrace(counts[i]);
            FigureRenderer r(trace, analyze(*trace, Rules::defaults()));
            FigureSpec spec = testing::pixelSpec(800, 300);
            spec.overlapLanes = false;
            (void)r.renderImage(spec);
            const auto paints = r.plot()->plottable()->computeRowPaints();
            QCOMPARE(paints.size(), std::size_t(1));
            QCOMPARE(paints[0].classes.size(), std::size_t(2)); // gemm and AllReduce
            QVERIFY(paints[0].blocks.empty()); // every kernel is narrower than a pixel
            sizes[i] = rowPaintsToBytes({ { 0, paints[0] } }).size();
        }
        QCOMPARE(sizes[1], sizes[0]);
        QVERIFY(sizes[0] < 20'000);
    }
};

QTEST_MAIN(TestRowPaint)
#include "tst_rowpaint.moc"
