// SPDX-License-Identifier: GPL-3.0-or-later
// Figures that tell the story of the screen (issue 31): the waiting for peers is its own state in the overlap rows and
// in the legend, in every palette and at 85 mm, area-true; automatic rows drop CPU rows before GPU rows get thin; a
// step is numbered as recorded everywhere; a step's figure reads time from the step's start; a file name whose
// extension contradicts the format is refused. On makeWaitingPairTrace (rank 0 waits for rank 1 in every step).
#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "analysis/statsparts.h"
#include "figure/exportfiguredialog.h"
#include "figure/figurerenderer.h"
#include "support/areameasure.h"
#include "support/figurespecs.h"
#include "support/testtraces.h"
#include "timeline/timelineplot.h"

#include <QComboBox>
#include <QTemporaryDir>
#include <QtTest>

using namespace exposure;
using namespace exposure::testing;

namespace {

constexpr TimeNs kUs = WaitingPairLayout::kUs;

struct Loaded
{
    std::shared_ptr<const Trace> trace;
    std::shared_ptr<const Analysis> analysis;
    std::shared_ptr<const CollectiveMatch> match;
};

Loaded load(std::shared_ptr<Trace> trace)
{
    Loaded l;
    l.analysis = analyze(*trace, Rules::defaults());
    l.match = std::make_shared<const CollectiveMatch>(matchCollectives(*trace, *l.analysis));
    l.trace = std::move(trace);
    return l;
}

// One step (ProfilerStep#5), overlap rows only, 85 mm wide at 96 dpi: layout pixels are image pixels.
FigureSpec stepSpec(PaletteKind palette, double widthMm = 85, double heightMm = 40)
{
    FigureSpec s;
    s.sizeUnit = FigureSpec::SizeUnit::Millimetres;
    s.widthMm = widthMm;
    s.heightMm = heightMm;
    s.dpi = 96;
    s.rows = FigureSpec::RowsKind::Overlap;
    s.rangeKind = FigureSpec::RangeKind::Step;
    s.step = 5;
    s.palette = palette;
    return s;
}

// Pixels of an overlap state (its colour, and in greyscale its hatch lines) in a box.
long statePixels(const std::map<QRgb, long>& counts, const Palette& pal, OverlapState st)
{
    long n = countOf(counts, pal.overlap(st));
    const QBrush pattern = pal.overlapPattern(st);
    if (pattern.style() != Qt::NoBrush && pattern.color() != pal.overlap(st))
        n += countOf(counts, pattern.color());
    return n;
}

} // namespace

class TestWaitingFigure : public QObject
{
    Q_OBJECT

private slots:
    // The overlap table of rank 0 with the waiting split off: every nanosecond keeps its place, the waiting-exposed
    // time is exposedWait() and both waiting states add up to the union of the wait parts.
    void splitWaitingKeepsEveryNanosecond()
    {
        const Loaded l = load(makeWaitingPairTrace());
        const auto index = ViewIndex::build(*l.trace, l.analysis.get());
        const auto waits = waitParts(*l.match);
        QCOMPARE(waits[0].size(), std::size_t(3));
        QCOMPARE(waits[1].size(), std::size_t(0));
        const IntervalTable split = splitWaiting(index->overlap[0], waits[0]);
        std::map<StringId, TimeNs> byState, before;
        for (std::size_t i = 0; i < split.size(); ++i)
            byState[split.name(i)] += split.duration(i);
        for (std::size_t i = 0; i < index->overlap[0].size(); ++i)
            before[index->overlap[0].name(i)] += index->overlap[0].duration(i);
        const auto ms = [](int n) { return TimeNs(n) * 1'000 * kUs; };
        QCOMPARE(byState[StringId(OverlapState::WaitingExposed)], ms(9));
        QCOMPARE(byState[StringId(OverlapState::WaitingHidden)], ms(3));
        QCOMPARE(byState[StringId(OverlapState::Exposed)], ms(3));
        QCOMPARE(byState.count(StringId(OverlapState::Hidden)), std::size_t(0));
        QCOMPARE(byState[StringId(OverlapState::ComputeOnly)], before[StringId(OverlapState::ComputeOnly)]);
        QCOMPARE(before[StringId(OverlapState::Exposed)], ms(12));
        QCOMPARE(before[StringId(OverlapState::Hidden)], ms(3));
        QCOMPARE(byState[StringId(OverlapState::WaitingExposed)], exposedWait(waits[0], l.analysis->ranks[0]));
        // In place: the pieces are sorted, disjoint and cover what the segments covered.
        for (std::size_t i = 1; i < split.size(); ++i)
            QVERIFY(split.start(i) >= split.end(i - 1));
        QCOMPARE(split.start(0), index->overlap[0].start(0));
        QCOMPARE(split.end(split.size() - 1), index->overlap[0].end(index->overlap[0].size() - 1));
        // Rank 1 waits for nobody: its table is unchanged.
        const IntervalTable same = splitWaiting(index->overlap[1], waits[1]);
        QCOMPARE(same.size(), index->overlap[1].size());
    }

    void overlapRowsPaintWaiting_data()
    {
        QTest::addColumn<int>("palette");
        QTest::addColumn<double>("widthMm");
        for (const auto& [name, p] :
            { std::pair { "default", PaletteKind::Default }, std::pair { "colorblind", PaletteKind::ColorBlind },
                std::pair { "grayscale", PaletteKind::Grayscale } })
            for (const double w : { 85.0, 178.0 })
                QTest::addRow("%s %g mm", name, w) << int(p) << w;
    }

    // The figure of a step where rank 0 waits: its overlap row paints the waiting states with their time shares, a
    // pixel inside the waiting-exposed part has that state's colour, and the legend names exactly the drawn states.
    void overlapRowsPaintWaiting()
    {
        QFETCH(int, palette);
        QFETCH(double, widthMm);
        const Loaded l = load(makeWaitingPairTrace());
        FigureRenderer r(l.trace, l.analysis);
        r.setCollectives(l.match);
        const FigureSpec spec = stepSpec(PaletteKind(palette), widthMm);
        const QImage image = r.renderImage(spec).convertToFormat(QImage::Format_RGB32);
        QVERIFY2(r.check().legible(), qPrintable(r.check().problem()));
        const TimelinePlot& plot = *r.plot();
        const Palette& pal = plot.scene().palette;
        const TimeRange window = plot.visibleRange();
        QCOMPARE(window, (TimeRange { 10'000 * kUs, 19'000 * kUs })); // ProfilerStep#5's host window
        QCOMPARE(int(plot.rows().size()), 2);
        const double span = double(window.duration());
        // rank 0: compute only 2 ms, hidden waiting 1 ms, waiting for peers 3 ms, exposed 1 ms, idle 2 ms of 9 ms.
        const std::vector<std::pair<OverlapState, double>> rank0 = { { OverlapState::ComputeOnly, 2'000 },
            { OverlapState::WaitingHidden, 1'000 }, { OverlapState::WaitingExposed, 3'000 },
            { OverlapState::Exposed, 1'000 }, { OverlapState::Hidden, 0 } };
        const std::vector<std::pair<OverlapState, double>> rank1 = { { OverlapState::ComputeOnly, 6'000 },
            { OverlapState::Exposed, 1'000 }, { OverlapState::WaitingExposed, 0 }, { OverlapState::WaitingHidden, 0 } };
        for (int row = 0; row < 2; ++row) {
            const QRect box = plot.plottable()->rowBox(row);
            const auto counts = countColours(image, box);
            const double area = double(box.width()) * box.height();
            for (const auto& [st, us] : row == 0 ? rank0 : rank1) {
                const double time = us * double(kUs) / span;
                const double painted = double(statePixels(counts, pal, st)) / area;
                QVERIFY2(std::abs(painted - time) <= 0.015,
                    qPrintable(QStringLiteral("row %1 %2: painted %3 vs time %4")
                                   .arg(row)
                                   .arg(QString::fromLatin1(overlapStateName(st)))
                                   .arg(painted)
                                   .arg(time)));
            }
            // The stats' waiting share of the row: the waiting-exposed time is what collectiveWaitInWindow calls
            // exposed waiting.
            const CollectiveWaitStats w = collectiveWaitInWindow(*l.match, *l.analysis, row, window);
            QCOMPARE(w.exposedWaitNs, row == 0 ? 3'000 * kUs : 0);
            QCOMPARE(w.waitNs, row == 0 ? 4'000 * kUs : 0);
        }
        // In the middle of rank 0's waiting (14.5 ms), the column is the waiting state's colour (or its hatch).
        const QRect box0 = plot.plottable()->rowBox(0);
        const int x = int(std::lround(plot.xAxis->coordToPixel(double(14'500 * kUs))));
        const QColor at = image.pixelColor(x, box0.center().y());
        const QBrush pattern = pal.overlapPattern(OverlapState::WaitingExposed);
        QVERIFY2(at == pal.overlap(OverlapState::WaitingExposed)
                || (pattern.style() != Qt::NoBrush && at == pattern.color()),
            qPrintable(at.name()));
        // The legend: exactly the states drawn (no "hidden comm.": rank 0's hidden communication all waits).
        QStringList legend = legendTexts(r);
        legend.sort();
        QStringList want = { QStringLiteral("compute only"), QStringLiteral("exposed comm."),
            QStringLiteral("hidden waiting"), QStringLiteral("idle"), QStringLiteral("waiting for peers") };
        QCOMPARE(legend, want);
    }

    // Without the matched collectives (a trace of one rank, or none given) nothing is called waiting.
    void noCollectivesNoWaiting()
    {
        const Loaded l = load(makeWaitingPairTrace());
        FigureRenderer r(l.trace, l.analysis);
        r.renderImage(stepSpec(PaletteKind::Default));
        const QStringList legend = legendTexts(r);
        QVERIFY(!legend.contains(QStringLiteral("waiting for peers")));
        QVERIFY(legend.contains(QStringLiteral("hidden comm.")));
    }

    // GPU rows of a step: the NCCL blocks of rank 0 are hatched where they wait, and the legend says so.
    void gpuRowsHatchTheWaiting()
    {
        const Loaded l = load(makeWaitingPairTrace());
        FigureRenderer r(l.trace, l.analysis);
        r.setCollectives(l.match);
        FigureSpec spec = stepSpec(PaletteKind::Default, 178, 80);
        spec.rows = FigureSpec::RowsKind::Gpu;
        const QImage image = r.renderImage(spec).convertToFormat(QImage::Format_RGB32);
        const QStringList legend = legendTexts(r);
        QVERIFY2(legend.contains(QStringLiteral("waiting (hatch)")), qPrintable(legend.join(QStringLiteral(", "))));
        QVERIFY(legend.contains(QStringLiteral("waiting for peers")));
        const TimelinePlot& plot = *r.plot();
        int ncclRow = -1;
        for (int i = 0; i < int(plot.rows().size()); ++i)
            if (plot.rows()[std::size_t(i)].rank == 0
                && plot.rows()[std::size_t(i)].label.find("17") != std::string::npos)
                ncclRow = i;
        QVERIFY(ncclRow >= 0);
        // Hatch lines in the waiting part [12, 16) ms of the block, none in its transfer part [16, 17) ms.
        auto hatchIn = [&](TimeNs a, TimeNs b) {
            const QRect box = plot.plottable()->rowBox(ncclRow);
            const int x0 = int(std::ceil(plot.xAxis->coordToPixel(double(a)))) + 1;
            const int x1 = int(std::floor(plot.xAxis->coordToPixel(double(b)))) - 1;
            return countOf(countColours(image, QRect(QPoint(x0, box.top()), QPoint(x1, box.bottom()))),
                plot.scene().palette.waitingHatch());
        };
        QVERIFY(hatchIn(12'000 * kUs, 16'000 * kUs) > 20);
        QCOMPARE(hatchIn(16'000 * kUs, 17'000 * kUs), 0L);
    }

    // Automatic rows: 2 ranks with 12 nested CPU regions (4 sub-rows each) make every row thinner than kAutoCpuRowMm
    // at 178 × 50 mm, though legible:
    // the CPU rows go, the GPU rows stay (and are at least that tall).
    void autoRowsDropCpuRowsFirst()
    {
        const Loaded l = load(makeWaitingPairTrace(3, 0, 12));
        FigureRenderer r(l.trace, l.analysis);
        r.setCollectives(l.match);
        FigureSpec spec = stepSpec(PaletteKind::Default, 178, 50);
        spec.rows = FigureSpec::RowsKind::All;
        r.renderImage(spec);
        QVERIFY(r.check().legible());
        QVERIFY2(r.check().rowMm < FigureCheck::kAutoCpuRowMm, qPrintable(QString::number(r.check().rowMm)));
        spec.rows = FigureSpec::RowsKind::Auto;
        r.renderImage(spec);
        QCOMPARE(int(r.rowsUsed()), int(FigureSpec::RowsKind::Gpu));
        QVERIFY(r.check().rowMm >= FigureCheck::kAutoCpuRowMm);
        for (const TimelineRow& row : r.plot()->rows())
            QVERIFY(row.kind == TimelineRow::Kind::Overlap
                || l.trace->ranks[std::size_t(row.rank)].lanes[std::size_t(row.lane)].isGpu());
    }

    // One numbering: ProfilerStep#N is step N for findStep (Zoom to Step), figures (--step) and the stats report.
    void stepsAreNumberedAsRecorded()
    {
        const Loaded l = load(makeWaitingPairTrace());
        const auto& steps = l.analysis->ranks[0].steps;
        QCOMPARE(steps.size(), std::size_t(3));
        for (std::size_t k = 0; k < steps.size(); ++k) {
            QCOMPARE(steps[k].index, int(k));
            QCOMPARE(steps[k].number, int(k) + 4);
        }
        QCOMPARE(findStep(steps, "5"), 1);
        QCOMPARE(findStep(steps, "ProfilerStep#6"), 2);
        QCOMPARE(findStep(steps, "1"), -1); // an index is not a number
        QCOMPARE(stepIndexNamed(*l.analysis, "4"), 0);
        FigureSpec spec = stepSpec(PaletteKind::Default);
        spec.step = 6;
        QCOMPARE(spec.resolveRange(*l.trace, l.analysis.get()), (TimeRange { 20'000 * kUs, 29'000 * kUs }));
        spec.step = 1;
        try {
            spec.resolveRange(*l.trace, l.analysis.get());
            QFAIL("step 1 resolved");
        } catch (const FigureSpecError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("steps: 4, 5, 6")), e.what());
        }
        // Steps found without ProfilerStep#N keep their index as number.
        std::vector<StepWindow> plain(2);
        plain[0].index = 0;
        plain[0].name = "step 0";
        plain[1].index = 1;
        plain[1].name = "train#x";
        numberSteps(plain);
        QCOMPARE(plain[0].number, 0);
        QCOMPARE(plain[1].number, 1);
        // The stats report lists each step's number.
        StatsReportOptions o;
        o.window = l.trace->extent;
        const std::string json = statsJson(buildStatsReport(*l.trace, *l.analysis, o), o);
        QVERIFY(json.find("\"index\": 1,\n          \"number\": 5,") != std::string::npos);
    }

    // The dialog's step defaults to the first step that is not start-up, and lists steps by number.
    void dialogDefaultsToTheFirstSteadyStep()
    {
        const Loaded l = load(makeWaitingPairTrace(4, 60'000 * kUs));
        QCOMPARE(l.analysis->ranks[0].steps[0].hostRange.duration(), 59'000 * kUs);
        ExportFigureDialog dialog(l.trace, l.analysis, nullptr, l.trace->extent);
        auto* step = dialog.findChild<QComboBox*>(QStringLiteral("step"));
        QVERIFY(step);
        QCOMPARE(step->count(), 4);
        QCOMPARE(step->itemData(0).toInt(), 4);
        QCOMPARE(step->currentData().toInt(), 5); // ProfilerStep#4 is start-up
    }

    // A step's figure reads time since the step's start (the default), or since the trace's.
    void stepFigureReadsTimeFromItsStart()
    {
        const Loaded l = load(makeWaitingPairTrace());
        FigureRenderer r(l.trace, l.analysis);
        FigureSpec spec = stepSpec(PaletteKind::Default, 178, 60);
        auto ticks = [&] {
            QStringList out;
            QString axis;
            for (const PlotText& t : r.plot()->textBoxes()) {
                if (t.role == PlotText::Role::TickLabel)
                    out << t.text;
                if (t.role == PlotText::Role::AxisLabel)
                    axis = t.text;
            }
            return std::pair { out, axis };
        };
        r.renderImage(spec);
        const auto [fromStep, stepAxis] = ticks();
        QCOMPARE(stepAxis, QStringLiteral("Time since the start of step 5"));
        QVERIFY2(fromStep.size() >= 2, qPrintable(fromStep.join(QLatin1Char('|'))));
        QCOMPARE(fromStep.front(), QStringLiteral("0"));
        spec.stepOrigin = false;
        r.renderImage(spec);
        const auto [fromTrace, traceAxis] = ticks();
        QCOMPARE(traceAxis, QStringLiteral("Time since trace start"));
        QCOMPARE(fromTrace.front(), QStringLiteral("10 ms"));
        // The spec keeps the choice.
        QCOMPARE(FigureSpec::fromJson(spec.toJson(), QStringLiteral("t")).stepOrigin, false);
    }

    // An output name whose extension names another format is refused, and nothing is written.
    void nameContradictingTheFormatIsRefused()
    {
        const Loaded l = load(makeWaitingPairTrace());
        FigureRenderer r(l.trace, l.analysis);
        QTemporaryDir dir;
        FigureSpec spec = stepSpec(PaletteKind::Default);
        spec.format = FigureSpec::Format::Pdf;
        const QString png = dir.filePath(QStringLiteral("fig.png"));
        try {
            r.renderToFile(spec, png, false);
            QFAIL("written");
        } catch (const FigureRenderError& e) {
            QCOMPARE(QString::fromUtf8(e.what()),
                png + QStringLiteral(": the name says png but the format is pdf (not written)"));
        }
        QVERIFY(!QFileInfo::exists(png));
        r.renderToFile(spec, dir.filePath(QStringLiteral("fig.pdf")), false);
        QFile pdf(dir.filePath(QStringLiteral("fig.pdf")));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        QVERIFY(pdf.read(5) == "%PDF-");
    }
};

QTEST_MAIN(TestWaitingFigure)
#include "tst_waitingfigure.moc"
