// SPDX-License-Identifier: GPL-3.0-or-later
// The heat map figure (figure/heatmapfigure.h): at 85 mm its image size and DPI, its legibility, the colour bar and
// every cell's colour at its computed pixel place on a generated 20-rank run with one slow rank, byte-identical
// remakes, refusals; and `exposure-cli render --heatmap` end to end on a demo archive.
#include "analysis/collectives.h"
#include "figure/heatmapfigure.h"
#include "run/openrun.h"
#include "support/demoarchive.h"
#include "support/figurespecs.h"
#include "support/heatmaptraces.h"
#include "support/pipelinejob.h"
#include "support/processrun.h"
#include "whatif/whatif.h"

#include <QApplication>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

using namespace exposure;

namespace {

constexpr int kRanks = 20, kSteps = 4, kSlow = 13;

struct Fixture
{
    std::shared_ptr<Trace> trace;
    std::shared_ptr<const StepHeatMap> map;
};

Fixture straggler()
{
    Fixture f;
    f.trace = testing::makeStragglerTrace(kRanks, kSteps, kSlow);
    const auto analysis = analyze(*f.trace, Rules::defaults());
    const CollectiveMatch match = matchCollectives(*f.trace, *analysis);
    f.map = std::make_shared<const StepHeatMap>(computeStepHeatMap(*f.trace, *analysis, &match));
    return f;
}

FigureSpec heatSpec(
    HeatMetric metric, double widthMm, double heightMm, FigureSpec::Format format = FigureSpec::Format::Png)
{
    FigureSpec s = testing::millimetreSpec(widthMm, heightMm, 300, format);
    s.heatmap = metric;
    return s;
}

QPoint devicePixel(const HeatMapFigure& f, QPointF logical)
{
    return QPoint(int(std::floor(logical.x() * f.scaleX())), int(std::floor(logical.y() * f.scaleY())));
}

} // namespace

class TestHeatMapFigure : public QObject
{
    Q_OBJECT
private slots:
    void sizeAndLegibilityAt85mm();
    void cellColoursAtTheirPixels();
    void outliersOutlined();
    void colourBar();
    void deterministicBytes();
    void refusals();
    void specRoundTrip();
    void cliRendersHeatMap();
    void cliRendersSlowdown();
    void cliRendersDpPpGrid();
};

void TestHeatMapFigure::sizeAndLegibilityAt85mm()
{
    const Fixture f = straggler();
    HeatMapFigure figure(f.trace, f.map);
    const QImage image = figure.renderImage(heatSpec(HeatMetric::Compute, 85, 60));
    // 85 mm × 60 mm at 300 dpi: round(85 / 25.4 × 300) × round(60 / 25.4 × 300).
    QCOMPARE(image.size(), QSize(1004, 709));
    QCOMPARE(image.dotsPerMeterX(), 11811);
    QVERIFY2(figure.legible(), qPrintable(figure.check().problem()));
    QVERIFY(figure.check().overlaps.empty());
    QVERIFY(figure.check().clipped.empty());
    QCOMPARE(figure.check().minFontPt, 9.0);
    QCOMPARE(figure.check().rowCount, kRanks);
    QVERIFY(figure.check().rowMm >= HeatMapFigure::kMinCellMm);
    // Axis titles, the colour bar's metric and unit, every step labelled (0..3), rank labels.
    QStringList texts;
    for (const PlotText& t : figure.check().texts)
        texts << t.text;
    for (const char* expected : { "Rank", "Step", "Compute (ms)", "0", "1", "2", "3" })
        QVERIFY2(texts.contains(QString::fromLatin1(expected)), qPrintable(texts.join(QLatin1Char('|'))));
    // Cells are all the same size, left of the colour bar.
    const HeatMapLayout& l = figure.layout();
    QVERIFY(l.cellW > 0 && l.cellH > 0);
    QCOMPARE(l.cells.width(), l.cellW * kSteps);
    QCOMPARE(l.cells.height(), l.cellH * kRanks);
    QVERIFY(l.bar.left() > l.cells.right());
    QCOMPARE(l.bar.top(), l.cells.top());
    QCOMPARE(l.bar.height(), l.cells.height());
}

void TestHeatMapFigure::cellColoursAtTheirPixels()
{
    const Fixture f = straggler();
    HeatMapFigure figure(f.trace, f.map);
    const QImage image = figure.renderImage(heatSpec(HeatMetric::Compute, 85, 60));
    const HeatMapScene& scene = figure.scene();
    const HeatMatrix& m = scene.matrix;
    // Number order: row r is rank r.
    for (int row = 0; row < kRanks; ++row) {
        QCOMPARE(scene.order[std::size_t(row)], row);
        for (int c = 0; c < kSteps; ++c) {
            const TimeNs v = m.values[m.at(std::size_t(row), std::size_t(c))];
            const QColor expected = heatColour(scene.scaleOf(v));
            const QPoint p = devicePixel(figure, figure.layout().cellRect(row, c).center());
            QCOMPARE(image.pixelColor(p), expected);
        }
    }
    // The slow rank (8 ms) is the top of the scale, the ranks with the most jitter (6.38 ms) its bottom.
    const QPoint slow = devicePixel(figure, figure.layout().cellRect(kSlow, 0).center());
    QCOMPARE(image.pixelColor(slow), heatColour(1.0));
    QCOMPARE(image.pixelColor(slow), QColor(0xfd, 0xe7, 0x25));
    const QPoint low = devicePixel(figure, figure.layout().cellRect(2, 0).center());
    QCOMPARE(image.pixelColor(low), QColor(0x44, 0x01, 0x54));
    // Rank 0 (6.40 ms): t = 20 us / 1.62 ms.
    const QPoint rank0 = devicePixel(figure, figure.layout().cellRect(0, 0).center());
    QCOMPARE(image.pixelColor(rank0), heatColour(20.0 / 1620.0));
}

void TestHeatMapFigure::outliersOutlined()
{
    const Fixture f = straggler();
    HeatMapFigure figure(f.trace, f.map);
    const QImage image = figure.renderImage(heatSpec(HeatMetric::Compute, 85, 60));
    const HeatMapLayout& l = figure.layout();
    const double ring = std::clamp(std::min(l.cellW, l.cellH) / 6, 0.5, 2.0);
    for (int row = 0; row < kRanks; ++row)
        for (int c = 0; c < kSteps; ++c) {
            const QRectF cell = l.cellRect(row, c);
            // Half a ring inside the cell's left edge, at its middle height: the black ring on outliers only.
            const QPoint edge = devicePixel(figure, QPointF(cell.left() + ring / 2, cell.center().y()));
            const QPoint inner = devicePixel(figure, QPointF(cell.left() + ring * 1.5, cell.center().y()));
            if (row == kSlow) {
                QCOMPARE(image.pixelColor(edge), QColor(Qt::black));
                QCOMPARE(image.pixelColor(inner), QColor(Qt::white));
            } else {
                QCOMPARE(image.pixelColor(edge), image.pixelColor(devicePixel(figure, cell.center())));
            }
        }
}

void TestHeatMapFigure::colourBar()
{
    const Fixture f = straggler();
    HeatMapFigure figure(f.trace, f.map);
    const QImage image = figure.renderImage(heatSpec(HeatMetric::Compute, 85, 60));
    const HeatMapLayout& l = figure.layout();
    const int bands = int(std::ceil(l.bar.height()));
    auto bandPixel = [&](int b) {
        return devicePixel(figure, QPointF(l.bar.center().x(), l.bar.top() + l.bar.height() * (b + 0.5) / bands));
    };
    // (The outermost bands are partly under the bar's frame.)
    QCOMPARE(bands, int(std::ceil(figure.layout().cells.height())));
    for (const int b : { 1, bands / 2, bands - 2 })
        QCOMPARE(image.pixelColor(bandPixel(b)), heatColour(1.0 - (b + 0.5) / bands));
    // The top is the largest value (the slow rank's yellow), the bottom the smallest (viridis's dark purple).
    QCOMPARE(image.pixelColor(bandPixel(1)).red() > 0xf0, true);
    QCOMPARE(image.pixelColor(bandPixel(bands - 2)).red() < 0x50, true);
    // Ticks in ms from 6.38 to 8: every label a number inside the range, in ascending order up the bar.
    QVERIFY(l.barTicks.size() >= 2);
    double last = 0;
    for (std::size_t i = 0; i < l.barTicks.size(); ++i) {
        bool ok = false;
        const double v = l.barTicks[i].second.toDouble(&ok);
        QVERIFY(ok);
        QVERIFY(v >= 6.38 - 1e-9 && v <= 8 + 1e-9);
        if (i > 0)
            QVERIFY(v > last && l.barTicks[i].first < l.barTicks[i - 1].first);
        last = v;
    }
}

void TestHeatMapFigure::deterministicBytes()
{
    const Fixture f = straggler();
    for (const auto format : { FigureSpec::Format::Png, FigureSpec::Format::Svg, FigureSpec::Format::Pdf }) {
        HeatMapFigure a(f.trace, f.map), b(f.trace, f.map);
        const QByteArray first = a.render(heatSpec(HeatMetric::Waiting, 85, 60, format));
        QVERIFY(!first.isEmpty());
        QCOMPARE(b.render(heatSpec(HeatMetric::Waiting, 85, 60, format)), first);
        if (format == FigureSpec::Format::Svg) {
            QVERIFY(first.contains("<svg width=\"85mm\" height=\"60mm\""));
            QVERIFY(first.contains("Waiting for peers (ms)"));
        }
    }
}

void TestHeatMapFigure::refusals()
{
    const Fixture f = straggler();
    HeatMapFigure figure(f.trace, f.map);
    // The bubble metric is drawn like any other (the analysis' per-step pipeline bubble).
    QVERIFY(!figure.render(heatSpec(HeatMetric::Bubble, 85, 60)).isEmpty());
    // 20 ranks and three lines of text do not fit 12 mm.
    try {
        figure.render(heatSpec(HeatMetric::Step, 85, 12));
        QFAIL("an illegible heat map was rendered");
    } catch (const FigureLegibilityError& e) {
        const QString message = QString::fromUtf8(e.what());
        QVERIFY2(message.contains(QStringLiteral("not legible at 85 × 12 mm")), e.what());
        QVERIFY2(message.contains(QStringLiteral("cells of 0.00 mm (at least 0.3 mm)")), e.what());
        QVERIFY2(!message.contains(QStringLiteral("rows of")), e.what()); // the timeline's row rule does not apply
        // The proposed height holds the text and 20 cells of 0.3 mm: the figure is legible at it.
        QVERIFY(e.proposal.heightMm > 12);
        figure.renderImage(heatSpec(HeatMetric::Step, 85, e.proposal.heightMm));
        QVERIFY2(figure.legible(), qPrintable(figure.check().problem()));
        QVERIFY(figure.check().rowMm >= HeatMapFigure::kMinCellMm);
    }
    FigureSpec timeline = testing::millimetreSpec(85, 60, 300);
    QVERIFY_THROWS_EXCEPTION(FigureRenderError, figure.render(timeline));

    // Its file is written as the timeline's is (writeFigureFile): a name that says another format, an existing file
    // without overwrite and an illegible figure are refused, each naming the file, and nothing is written.
    QTemporaryDir dir;
    const FigureSpec pdf = heatSpec(HeatMetric::Step, 85, 60, FigureSpec::Format::Pdf);
    const QString png = dir.filePath(QStringLiteral("heat.png"));
    try {
        figure.renderToFile(pdf, png, false);
        QFAIL("written");
    } catch (const FigureRenderError& e) {
        QCOMPARE(QString::fromUtf8(e.what()),
            png + QStringLiteral(": the name says png but the format is pdf (not written)"));
    }
    QVERIFY(!QFileInfo::exists(png));
    const QString path = dir.filePath(QStringLiteral("heat.pdf"));
    figure.renderToFile(pdf, path, false);
    QFile written(path);
    QVERIFY(written.open(QIODevice::ReadOnly));
    QCOMPARE(written.read(5), QByteArray("%PDF-"));
    try {
        figure.renderToFile(pdf, path, false);
        QFAIL("overwritten");
    } catch (const FigureRenderError& e) {
        QCOMPARE(QString::fromUtf8(e.what()),
            path + QStringLiteral(": already exists (not overwritten; use --force to replace it)"));
    }
    const QString small = dir.filePath(QStringLiteral("small.pdf"));
    const FigureSpec illegible = heatSpec(HeatMetric::Step, 85, 12, FigureSpec::Format::Pdf);
    try {
        figure.renderToFile(illegible, small, false);
        QFAIL("an illegible heat map was written");
    } catch (const FigureLegibilityError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).startsWith(small + QStringLiteral(": not written, ")), e.what());
        QVERIFY(e.proposal.heightMm > 12);
    }
    QVERIFY(!QFileInfo::exists(small));
}

void TestHeatMapFigure::specRoundTrip()
{
    FigureSpec s = heatSpec(HeatMetric::Idle, 85, 60);
    s.heatmapOrder = RankOrder::Value;
    const QByteArray json = s.toJson();
    QVERIFY(json.contains("\"heatmap\""));
    QCOMPARE(FigureSpec::fromJson(json, QStringLiteral("test")), s);
    // A timeline spec stays without the key.
    QVERIFY(!testing::millimetreSpec(85, 60, 300).toJson().contains("heatmap"));
    QVERIFY_THROWS_EXCEPTION(FigureSpecError,
        FigureSpec::fromJson(R"({"exposureFigure": 1, "heatmap": {"metric": "slow"}})", QStringLiteral("test")));
}

void TestHeatMapFigure::cliRendersHeatMap()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString run = testing::writeDemoRun(dir.filePath(QStringLiteral("run")), 4, 3);
    const QString out = dir.filePath(QStringLiteral("heat.png"));
    auto r = synth::runProcess(QStringLiteral(EXPOSURE_CLI),
        { QStringLiteral("render"), run, QStringLiteral("--heatmap"), QStringLiteral("compute"),
            QStringLiteral("--order"), QStringLiteral("value"), QStringLiteral("--width-mm"), QStringLiteral("85"),
            QStringLiteral("--height-mm"), QStringLiteral("40"), QStringLiteral("-o"), out });
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QImage image(out);
    QCOMPARE(image.size(), QSize(1004, 472));
    r = synth::runProcess(QStringLiteral(EXPOSURE_CLI),
        { QStringLiteral("render"), run, QStringLiteral("--heatmap"), QStringLiteral("bubble"), QStringLiteral("-o"),
            dir.filePath(QStringLiteral("bubble.png")) });
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("bubble.png"))));
    r = synth::runProcess(QStringLiteral(EXPOSURE_CLI),
        { QStringLiteral("render"), run, QStringLiteral("--heatmap"), QStringLiteral("slowness"), QStringLiteral("-o"),
            dir.filePath(QStringLiteral("x.png")) });
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("expected step, compute, exposed, waiting, idle, bubble or slowdown"), r.err.constData());
}

// `render --heatmap slowdown` on a generated DP 2 x PP 4 job whose worker 5 (DP rank 1, stage 2) computes 2x slower:
// an 85 mm figure, the slow worker's largest cell in the colour bar's top colour (the figure drawn here from the same
// replays gives where the cell is).
void TestHeatMapFigure::cliRendersSlowdown()
{
    QTemporaryDir dir;
    testing::PipelineJob job;
    job.compute = [](int d, int p, int, int, bool backward) {
        return TimeNs((backward ? 2'000'000 : 1'000'000) * (d == 1 && p == 2 ? 2 : 1));
    };
    const QString trace = dir.filePath(QStringLiteral("timeline.json"));
    {
        QFile f(trace);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(testing::pipelineTimeline(job, testing::simulate(job)));
    }
    const QString out = dir.filePath(QStringLiteral("slowdown.png"));
    const auto r = synth::runProcess(QStringLiteral(EXPOSURE_CLI),
        { QStringLiteral("render"), trace, QStringLiteral("--heatmap"), QStringLiteral("slowdown"),
            QStringLiteral("--width-mm"), QStringLiteral("85"), QStringLiteral("--height-mm"), QStringLiteral("40"),
            QStringLiteral("-o"), out });
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QImage image(out);
    QCOMPARE(image.size(), QSize(1004, 472));

    RunOptions o;
    o.collectives = true;
    const OpenedRun run = openRun(trace.toStdString(), o);
    auto map = std::make_shared<StepHeatMap>(computeStepHeatMap(*run.trace, *run.analysis, run.collectives.get()));
    whatif::addSlowdown(*map, *run.trace, whatif::WhatIfModel(run.trace, run.analysis, run.collectives).even());
    HeatMapFigure figure(run.trace, map);
    QCOMPARE(figure.renderImage(heatSpec(HeatMetric::Slowdown, 85, 40)), image);
    const HeatMatrix& m = figure.scene().matrix;
    const auto row = std::size_t(
        std::find(figure.scene().order.begin(), figure.scene().order.end(), 5) - figure.scene().order.begin());
    QCOMPARE(run.trace->ranks[5].rank, 5);
    std::size_t top = 0;
    for (std::size_t c = 0; c < m.columns; ++c)
        if (m.values[m.at(5, c)] > m.values[m.at(5, top)])
            top = c;
    QCOMPARE(m.values[m.at(5, top)], m.maxValue);
    const QPoint cell = devicePixel(figure, figure.layout().cellRect(int(row), int(top)).center());
    const QPoint barTop = devicePixel(figure, QPointF(figure.layout().bar.center().x(), figure.layout().bar.top() + 1));
    QCOMPARE(image.pixelColor(cell), heatColour(1.0));
    // The bar's top band (one band per logical pixel row, each at the t of its centre) is the top of the scale.
    const int bands = int(std::ceil(figure.layout().bar.height()));
    QCOMPARE(image.pixelColor(barTop), heatColour(1.0 - 0.5 / bands));
    const QColor a = image.pixelColor(cell), b = image.pixelColor(barTop);
    QVERIFY(
        std::abs(a.red() - b.red()) <= 4 && std::abs(a.green() - b.green()) <= 4 && std::abs(a.blue() - b.blue()) <= 4);
    // Every other worker's cells lie below the top of the scale.
    for (std::size_t rank = 0; rank < m.rows; ++rank)
        for (std::size_t c = 0; c < m.columns; ++c)
            if (rank != 5)
                QVERIFY(m.values[m.at(rank, c)] < m.maxValue);
}

// `render --heatmap slowdown --grid dp-pp` on the same job: an 85 mm figure of 2 DP ranks x 4 stages, legible, the
// same bytes as the grid drawn here; the slow worker's cell (DP rank 1, stage 2) in the scale's top colour, every
// other cell (exactly 0: the evened step) in its bottom one; labelled axes. Refused for a trace without (dp, pp)
// coordinates and without --heatmap slowdown.
void TestHeatMapFigure::cliRendersDpPpGrid()
{
    QTemporaryDir dir;
    testing::PipelineJob job;
    job.compute = [](int d, int p, int, int, bool backward) {
        return TimeNs((backward ? 2'000'000 : 1'000'000) * (d == 1 && p == 2 ? 2 : 1));
    };
    const QString trace = dir.filePath(QStringLiteral("timeline.json"));
    {
        QFile f(trace);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(testing::pipelineTimeline(job, testing::simulate(job)));
    }
    const QString out = dir.filePath(QStringLiteral("grid.png"));
    auto r = synth::runProcess(QStringLiteral(EXPOSURE_CLI),
        { QStringLiteral("render"), trace, QStringLiteral("--heatmap"), QStringLiteral("slowdown"),
            QStringLiteral("--grid"), QStringLiteral("dp-pp"), QStringLiteral("--width-mm"), QStringLiteral("85"),
            QStringLiteral("--height-mm"), QStringLiteral("40"), QStringLiteral("-o"), out });
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QImage image(out);
    QCOMPARE(image.size(), QSize(1004, 472));

    RunOptions o;
    o.collectives = true;
    const OpenedRun run = openRun(trace.toStdString(), o);
    auto map = std::make_shared<StepHeatMap>(computeStepHeatMap(*run.trace, *run.analysis, run.collectives.get()));
    whatif::EvenOptions options;
    options.grid = true;
    const whatif::EvenResult even = whatif::WhatIfModel(run.trace, run.analysis, run.collectives).even(options);
    HeatMapFigure figure(HeatMapScene::makeSlowdownGrid(run.trace, map, even));
    QCOMPARE(figure.renderImage(heatSpec(HeatMetric::Slowdown, 85, 40)), image);
    QVERIFY(figure.legible());
    QVERIFY(figure.check().overlaps.empty());
    const HeatMatrix& m = figure.scene().matrix;
    QCOMPARE(m.rows, std::size_t(2));
    QCOMPARE(m.columns, std::size_t(4));
    for (int d = 0; d < 2; ++d)
        for (int p = 0; p < 4; ++p) {
            const TimeNs v = m.values[m.at(std::size_t(d), std::size_t(p))];
            QCOMPARE(v, even.grid.cell(d, p).meanStep - even.evenedMean);
            QCOMPARE(v == 0, !(d == 1 && p == 2));
            const QPoint cell = devicePixel(figure, figure.layout().cellRect(d, p).center());
            QCOMPARE(image.pixelColor(cell), heatColour(d == 1 && p == 2 ? 1.0 : 0.0));
        }
    QStringList texts;
    for (const PlotText& t : figure.layout().texts)
        texts << t.text;
    for (const QString& want : { QStringLiteral("DP rank"), QStringLiteral("Pipeline stage"),
             QStringLiteral("Slowdown (ms)"), QStringLiteral("0"), QStringLiteral("1"), QStringLiteral("3") })
        QVERIFY2(texts.contains(want), qPrintable(want));

    r = synth::runProcess(QStringLiteral(EXPOSURE_CLI),
        { QStringLiteral("render"), trace, QStringLiteral("--heatmap"), QStringLiteral("step"),
            QStringLiteral("--grid"), QStringLiteral("dp-pp"), QStringLiteral("-o"),
            dir.filePath(QStringLiteral("x.png")) });
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--grid applies to --heatmap slowdown only"), r.err.constData());
    const QString demo = testing::writeDemoRun(dir.filePath(QStringLiteral("demo")), 2, 3);
    r = synth::runProcess(QStringLiteral(EXPOSURE_CLI),
        { QStringLiteral("render"), demo, QStringLiteral("--heatmap"), QStringLiteral("slowdown"),
            QStringLiteral("--grid"), QStringLiteral("dp-pp"), QStringLiteral("-o"),
            dir.filePath(QStringLiteral("y.png")) });
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("needs ranks with data- and pipeline-parallel coordinates"), r.err.constData());
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("y.png"))));
}

QTEST_MAIN(TestHeatMapFigure)
#include "tst_heatmapfigure.moc"
