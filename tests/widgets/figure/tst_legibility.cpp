// SPDX-License-Identifier: GPL-3.0-or-later
// Figures that read at print size: the paper presets on generated 2-, 4- and 8-rank traces have no overlapping or
// cut text, no font under 6 pt and rows of at least 1.5 mm; the legend names what is drawn; an illegible figure is
// refused with a proposal; every two class colours differ by ΔE >= 15; the window scrolls rows instead of
// squashing them.
#include "analysis/analysis.h"
#include "figure/figurerenderer.h"
#include "figure/figurespec.h"
#include "run/openrun.h"
#include "support/figurespecs.h"
#include "support/shareddata.h"
#include "synth/archivewriter.h"
#include "timeline/palette.h"
#include "timeline/timeaxisticker.h"
#include "timeline/timelineplot.h"

#include <QFile>
#include <QFileInfo>
#include <QFontMetrics>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <map>

using namespace exposure;

namespace {

struct Demo
{
    std::shared_ptr<Trace> trace;
    std::shared_ptr<const Analysis> analysis;
};

QString describe(const PlotText& t)
{
    return QStringLiteral("'%1' at %2,%3 %4x%5")
        .arg(t.text)
        .arg(t.rect.x(), 0, 'f', 1)
        .arg(t.rect.y(), 0, 'f', 1)
        .arg(t.rect.width(), 0, 'f', 1)
        .arg(t.rect.height(), 0, 'f', 1);
}

} // namespace

class TestLegibility : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void presetsAreLegible_data();
    void presetsAreLegible();
    void svgTextLint();
    void legendNamesOnlyWhatIsDrawn();
    void thinRowsGetRankLabels();
    void illegibleFigureIsRefusedWithProposal();
    void narrowAxisKeepsTwoTicksThatFit();
    void axisKeepsFourTicksWhereTheyFit();
    void cliRefusesIllegibleFigure();
    void deltaEIsCie76();
    void classColoursDifferByDeltaE15_data();
    void classColoursDifferByDeltaE15();
    void windowScrollsRowsInsteadOfSquashing();

private:
    const Demo& demo(int ranks);
    QTemporaryDir m_dir;
    std::map<int, Demo> m_demos;
};

void TestLegibility::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QCOMPARE(figureLayoutDpi(), 96);
}

const Demo& TestLegibility::demo(int ranks)
{
    auto it = m_demos.find(ranks);
    if (it != m_demos.end())
        return it->second;
    // The archive `exposure-make-demo --ranks N` writes.
    synth::DemoOptions o;
    o.ranks = ranks;
    const QString path = m_dir.filePath(QStringLiteral("demo%1").arg(ranks));
    synth::writeArchive(path.toStdString(), synth::makeDemoSpec(o));
    Demo d;
    d.trace = loadTrace(path.toStdString(), LoadOptions {});
    d.analysis = analyze(*d.trace, Rules::defaults());
    return m_demos.emplace(ranks, d).first->second;
}

void TestLegibility::presetsAreLegible_data()
{
    QTest::addColumn<int>("ranks");
    QTest::addColumn<double>("widthMm");
    QTest::addColumn<double>("heightMm");
    QTest::addColumn<bool>("step");
    for (int ranks : { 2, 4, 8 })
        for (const auto& [w, h] : { std::pair { 85.0, 34.0 }, std::pair { 85.0, 60.0 }, std::pair { 178.0, 80.0 } })
            for (bool step : { false, true })
                QTest::addRow("%d ranks, %gx%g mm, %s", ranks, w, h, step ? "first step" : "whole")
                    << ranks << w << h << step;
}

void TestLegibility::presetsAreLegible()
{
    QFETCH(int, ranks);
    QFETCH(double, widthMm);
    QFETCH(double, heightMm);
    QFETCH(bool, step);
    const Demo& d = demo(ranks);
    FigureRenderer r(d.trace, d.analysis);
    // Otherwise the defaults: rows auto, legend on top, 9 pt.
    FigureSpec s = testing::millimetreSpec(widthMm, heightMm, 300, FigureSpec::Format::Svg);
    if (step) {
        s.rangeKind = FigureSpec::RangeKind::Step;
        s.step = d.analysis->ranks[0].steps.front().number; // the first step, as recorded
    }
    QByteArray svg;
    try {
        svg = r.render(s); // throws rather than make an illegible figure
    } catch (const std::exception& e) {
        QFAIL(e.what());
    }
    QVERIFY(svg.startsWith("<?xml"));
    const FigureCheck& c = r.check();
    // The text as laid out and drawn, checked here box by box (not only through FigureCheck's own verdict).
    const std::vector<PlotText>& texts = c.texts;
    QVERIFY(texts.size() >= 5);
    int legend = 0, rowLabels = 0, ticks = 0;
    const QRectF canvas(QPointF(0, 0), QSizeF(r.logicalSize()));
    for (std::size_t i = 0; i < texts.size(); ++i) {
        legend += texts[i].role == PlotText::Role::Legend;
        rowLabels += texts[i].role == PlotText::Role::RowLabel;
        ticks += texts[i].role == PlotText::Role::TickLabel;
        QVERIFY2(texts[i].pointSize >= 6, qPrintable(describe(texts[i])));
        QVERIFY2(canvas.adjusted(-0.5, -0.5, 0.5, 0.5).contains(texts[i].rect), qPrintable(describe(texts[i])));
        for (std::size_t j = i + 1; j < texts.size(); ++j) {
            const QRectF both = texts[i].rect.intersected(texts[j].rect);
            QVERIFY2(both.width() <= 0.5 || both.height() <= 0.5,
                qPrintable(describe(texts[i]) + QStringLiteral(" overlaps ") + describe(texts[j])));
        }
    }
    QVERIFY(legend >= 3);
    QVERIFY(rowLabels >= 1);
    QVERIFY(ticks >= 2); // a time scale can be read
    // Every row at least the minimum height, measured on the plot (logical pixels are 1/96 inch).
    const TimelinePlot* plot = r.plot();
    QVERIFY(!plot->rows().empty());
    for (std::size_t row = 0; row < plot->rows().size(); ++row) {
        const double mm = plot->plottable()->rowBand(int(row)).height() * 25.4 / 96.0;
        QVERIFY2(mm >= FigureCheck::kMinRowMm - 0.27, qPrintable(QStringLiteral("row %1: %2 mm").arg(row).arg(mm)));
    }
    QVERIFY2(c.legible(), qPrintable(c.problem()));
    // What a paper needs is kept: at least one overlap row per rank.
    int overlapRows = 0;
    for (const TimelineRow& row : plot->rows())
        overlapRows += row.kind == TimelineRow::Kind::Overlap;
    QCOMPARE(overlapRows, ranks);
    QFile out(m_dir.filePath(QStringLiteral("preset-%1-%2x%3-%4.svg").arg(ranks).arg(widthMm).arg(heightMm).arg(step)));
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(svg);
}

void TestLegibility::svgTextLint()
{
    // The shared text lint (an estimate from the SVG alone) agrees where it is available.
    const QString lint = QStringLiteral(EXPOSURE_SOURCE_DIR "/../shared/tools/svg_text_lint.py");
    EXPOSURE_REQUIRE_SHARED(QFileInfo::exists(lint), "../shared/tools/svg_text_lint.py");
    QVERIFY2(QFileInfo::exists(QStringLiteral("/usr/bin/python3")), "python3 is a test dependency (README)");
    const Demo& d = demo(4);
    FigureRenderer r(d.trace, d.analysis);
    for (const auto& [w, h] : { std::pair { 85.0, 34.0 }, std::pair { 85.0, 60.0 }, std::pair { 178.0, 80.0 } }) {
        FigureSpec s = testing::millimetreSpec(w, h, 300, FigureSpec::Format::Svg);
        const QString path = m_dir.filePath(QStringLiteral("lint-%1x%2.svg").arg(w).arg(h));
        r.renderToFile(s, path, true);
        QProcess p;
        p.start(QStringLiteral("/usr/bin/python3"), { lint, path });
        QVERIFY(p.waitForFinished(60000));
        const QJsonObject o = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QVERIFY2(o.contains(QStringLiteral("overlaps")), qPrintable(QString::fromUtf8(p.readAllStandardError())));
        QCOMPARE(o.value(QStringLiteral("overlaps")).toInt(), 0);
        QCOMPARE(o.value(QStringLiteral("outside")).toInt(), 0);
        QVERIFY(o.value(QStringLiteral("min_pt")).toDouble() >= 6);
    }
}

void TestLegibility::legendNamesOnlyWhatIsDrawn()
{
    const Demo& d = demo(2);
    FigureRenderer r(d.trace, d.analysis);
    auto legendOf = [&](const FigureSpec& s) {
        r.renderImage(s);
        QStringList out;
        for (const PlotText& t : r.check().texts)
            if (t.role == PlotText::Role::Legend)
                out << t.text;
        return out;
    };
    FigureSpec s = testing::millimetreSpec(178, 80, 150);
    const QStringList whole = legendOf(s);
    QVERIFY2(whole.contains(QStringLiteral("AllReduce")), qPrintable(whole.join(QLatin1Char('|'))));
    QVERIFY(whole.contains(QStringLiteral("exposed comm.")));
    // The grey band of the overlap rows: "idle", or "idle / sync" where idle kernels are drawn too (same grey).
    QVERIFY(whole.contains(QStringLiteral("idle")) != whole.contains(QStringLiteral("idle / sync")));
    // Only the overlap rows: no kernel classes.
    s.rows = FigureSpec::RowsKind::Overlap;
    const QStringList overlap = legendOf(s);
    QVERIFY(!overlap.contains(QStringLiteral("AllReduce")));
    QVERIFY(!overlap.contains(QStringLiteral("gemm")));
    QVERIFY(overlap.contains(QStringLiteral("compute only")));
    // The first 50 µs of the trace: no communication drawn, so none in the legend.
    s.rows = FigureSpec::RowsKind::Gpu;
    s.rangeKind = FigureSpec::RangeKind::Custom;
    s.range = { 0, 50'000 };
    const QStringList start = legendOf(s);
    QVERIFY2(!start.contains(QStringLiteral("AllReduce")), qPrintable(start.join(QLatin1Char('|'))));
    QVERIFY(!start.contains(QStringLiteral("hidden comm.")));
    QVERIFY(!start.contains(QStringLiteral("exposed comm.")));
}

void TestLegibility::thinRowsGetRankLabels()
{
    // 24 GPU and overlap rows of 8 ranks in 178 x 80 mm are thinner than a 9 pt line: one label per rank.
    const Demo& d = demo(8);
    FigureRenderer r(d.trace, d.analysis);
    FigureSpec s = testing::millimetreSpec(178, 80, 300);
    s.rows = FigureSpec::RowsKind::Gpu;
    r.renderImage(s);
    QVERIFY2(r.check().legible(), qPrintable(r.check().problem()));
    QStringList labels;
    for (const PlotText& t : r.check().texts)
        if (t.role == PlotText::Role::RowLabel)
            labels << t.text;
    QCOMPARE(labels.size(), 8);
    for (int k = 0; k < 8; ++k)
        QCOMPARE(labels[k], QStringLiteral("Rank %1").arg(k));
}

void TestLegibility::illegibleFigureIsRefusedWithProposal()
{
    // Every row of 8 ranks in a single-column figure: 1 mm rows at best. Refused, and the proposal works.
    const Demo& d = demo(8);
    FigureRenderer r(d.trace, d.analysis);
    FigureSpec s = testing::millimetreSpec(85, 34, 300);
    s.rows = FigureSpec::RowsKind::All;
    const QString path = m_dir.filePath(QStringLiteral("refused.png"));
    try {
        r.renderToFile(s, path, true);
        QFAIL("an illegible figure was written");
    } catch (const FigureLegibilityError& e) {
        const QString message = QString::fromUtf8(e.what());
        QVERIFY2(
            message.startsWith(path + QStringLiteral(": not written, not legible at 85 × 34 mm")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("--height-mm")), qPrintable(message));
        QVERIFY(!message.contains(QLatin1Char('\n')));
        QVERIFY(e.proposal.heightMm > 34);
        QVERIFY(e.proposal.hasRows);
        // The proposed rows are legible at this size.
        FigureSpec narrower = s;
        narrower.rows = e.proposal.rows;
        r.renderToFile(narrower, path, true);
        QVERIFY(r.check().legible());
        // And so is the proposed height with every row.
        FigureSpec taller = s;
        taller.heightMm = e.proposal.heightMm;
        r.renderToFile(taller, path, true);
        QVERIFY2(r.check().legible(), qPrintable(r.check().problem()));
    }
    QVERIFY(!r.crowdingWarning().isEmpty() || r.check().legible());
}

// A range of 93.9 ms on an axis about 3.5 labels wide: one tick per two labels' width gives a 50 ms step with a
// single tick inside (5.2 to 99.1 ms); two ticks need a smaller step, and 20 ms would overprint its labels. The ticker
// takes 40 ms: ticks at 40 and 80 ms, further apart than a label is wide (an 8-rank step figure at 85 mm with its
// legend on the right was refused for '20 ms' overprinting '40 ms').
void TestLegibility::narrowAxisKeepsTwoTicksThatFit()
{
    QCustomPlot plot;
    const QFontMetrics fm(plot.xAxis->tickLabelFont());
    const int labelPx = fm.horizontalAdvance(QStringLiteral("88.8 ms")) + fm.horizontalAdvance(QStringLiteral("MM"));
    const int width = labelPx * 7 / 2;
    plot.axisRect()->setAutoMargins(QCP::msNone);
    plot.axisRect()->setMargins(QMargins(0, 0, 0, 0));
    plot.setViewport(QRect(0, 0, width, 100)); // laid out at this size without being shown
    plot.replot();
    QCOMPARE(plot.axisRect()->width(), width);
    TimeAxisTicker ticker(plot.xAxis);
    QVector<double> ticks;
    QVector<double> subTicks;
    QVector<QString> labels;
    const QCPRange range(5.2e6, 99.1e6);
    ticker.generate(range, QLocale::c(), QLatin1Char('g'), 6, ticks, &subTicks, &labels);
    QCOMPARE(ticks, (QVector<double> { 40e6, 80e6 }));
    QCOMPARE(labels, (QVector<QString> { QStringLiteral("40 ms"), QStringLiteral("80 ms") }));
    QCOMPARE(subTicks.size(), 7); // 10 ms apart: 10, 20, 30, 50, 60, 70, 90 (those outside the range are dropped)
    QVERIFY(width * 40e6 / range.size() >= labelPx);
}

// A 4.9 s range on an axis six labels wide: one tick per 110 px gives a 2 s step and three labelled ticks (0, 2 and
// 4 s, what a 178 mm whole-trace figure showed); a 1 s step still leaves a label's width between ticks, so the
// ticker takes it: at least four labelled ticks wherever they fit.
void TestLegibility::axisKeepsFourTicksWhereTheyFit()
{
    QCustomPlot plot;
    const QFontMetrics fm(plot.xAxis->tickLabelFont());
    const int labelPx = fm.horizontalAdvance(QStringLiteral("88.8 ms")) + fm.horizontalAdvance(QStringLiteral("MM"));
    const int width = labelPx * 6;
    QVERIFY(width / 110 < 4); // the spacing rule alone asks for fewer than four ticks
    plot.axisRect()->setAutoMargins(QCP::msNone);
    plot.axisRect()->setMargins(QMargins(0, 0, 0, 0));
    plot.setViewport(QRect(0, 0, width, 100));
    plot.replot();
    TimeAxisTicker ticker(plot.xAxis);
    QVector<double> ticks;
    QVector<double> subTicks;
    QVector<QString> labels;
    ticker.generate(QCPRange(0, 4.9e9), QLocale::c(), QLatin1Char('g'), 6, ticks, &subTicks, &labels);
    QCOMPARE(ticks, (QVector<double> { 0, 1e9, 2e9, 3e9, 4e9 }));
    QCOMPARE(labels.back(), QStringLiteral("4 s"));
}

void TestLegibility::cliRefusesIllegibleFigure()
{
    const Demo& d = demo(8);
    (void)d;
    const QString out = m_dir.filePath(QStringLiteral("cli-refused.png"));
    QProcess p;
    p.start(QStringLiteral(EXPOSURE_CLI),
        { QStringLiteral("render"), m_dir.filePath(QStringLiteral("demo8")), QStringLiteral("-o"), out,
            QStringLiteral("--width-mm"), QStringLiteral("60"), QStringLiteral("--rows"), QStringLiteral("all") });
    QVERIFY(p.waitForFinished(120000));
    QCOMPARE(p.exitCode(), 2);
    const QString err = QString::fromUtf8(p.readAllStandardError()).trimmed();
    QVERIFY2(!err.contains(QLatin1Char('\n')), qPrintable(err));
    QVERIFY2(err.contains(QStringLiteral("not legible at 60 × 24 mm")), qPrintable(err));
    QVERIFY2(err.contains(QStringLiteral("try --height-mm")), qPrintable(err));
    QVERIFY(!QFileInfo::exists(out));
    // The default rows (auto) make the same size legible.
    QProcess ok;
    ok.start(QStringLiteral(EXPOSURE_CLI),
        { QStringLiteral("render"), m_dir.filePath(QStringLiteral("demo8")), QStringLiteral("-o"), out,
            QStringLiteral("--width-mm"), QStringLiteral("85") });
    QVERIFY(ok.waitForFinished(120000));
    QVERIFY2(ok.exitCode() == 0, ok.readAllStandardError().constData());
    QVERIFY(QFileInfo::exists(out));
}

void TestLegibility::deltaEIsCie76()
{
    QCOMPARE(std::round(deltaE76(Qt::black, Qt::white) * 100) / 100, 100.0);
    QCOMPARE(std::round(deltaE76(QColor(0xFF0000), QColor(0x00FF00)) * 100) / 100, 170.58);
    QCOMPARE(std::round(deltaE76(QColor(0x0072B2), QColor(0xE69F00)) * 100) / 100, 120.19);
    QCOMPARE(deltaE76(QColor(0x123456), QColor(0x123456)), 0.0);
}

void TestLegibility::classColoursDifferByDeltaE15_data()
{
    QTest::addColumn<int>("kind");
    QTest::newRow("default") << int(PaletteKind::Default);
    QTest::newRow("colour-blind") << int(PaletteKind::ColorBlind);
}

void TestLegibility::classColoursDifferByDeltaE15()
{
    QFETCH(int, kind);
    QPalette base;
    base.setColor(QPalette::Base, Qt::white);
    base.setColor(QPalette::WindowText, Qt::black);
    const Palette pal(PaletteKind(kind), base);
    const auto classes = pal.classColours();
    // Every class a figure can show, the waiting hatch and the overlap states included.
    QVERIFY(classes.size() >= (kind == int(PaletteKind::Default) ? 23u : 10u));
    for (std::size_t i = 0; i < classes.size(); ++i)
        for (std::size_t j = i + 1; j < classes.size(); ++j) {
            const double d = deltaE76(classes[i].colour, classes[j].colour);
            QVERIFY2(d >= 15,
                qPrintable(
                    QStringLiteral("%1 %2 and %3 %4: ΔE %5")
                        .arg(classes[i].name, classes[i].colour.name(), classes[j].name, classes[j].colour.name())
                        .arg(d, 0, 'f', 1)));
        }
    // The pairs the issue named: waiting hatch and exposed communication against the AllReduce fill, compute only
    // on overlap rows against normalization kernels.
    const QColor allReduce = pal.block(Category::Communication, "AllReduce");
    QVERIFY(deltaE76(pal.waitingHatch(), allReduce) >= 15);
    QVERIFY(deltaE76(pal.overlap(OverlapState::Exposed), allReduce) >= 15);
    QVERIFY(deltaE76(pal.overlap(OverlapState::ComputeOnly), pal.block(Category::Compute, "normalization")) >= 15);
    // pixel_truth.py classifies overlap rows by these exact colours.
    if (kind == int(PaletteKind::Default)) {
        QCOMPARE(pal.overlap(OverlapState::ComputeOnly).name(), QStringLiteral("#9cc8e8"));
        QCOMPARE(pal.overlap(OverlapState::Hidden).name(), QStringLiteral("#009e73"));
        QCOMPARE(pal.overlap(OverlapState::Exposed).name(), QStringLiteral("#d55e00"));
        QCOMPARE(pal.idle().name(), QStringLiteral("#dddddd"));
    }
}

void TestLegibility::windowScrollsRowsInsteadOfSquashing()
{
    const Demo& d = demo(8);
    TimelinePlot plot;
    plot.resize(900, 300);
    plot.setTrace(d.trace, d.analysis);
    TimelineOptions o;
    o.minRowPixels = 14;
    plot.setOptions(o);
    plot.replot();
    const int rows = int(plot.rows().size());
    QVERIFY(rows > 40); // every CPU sub-row of 8 ranks
    QVERIFY(plot.shownRowCount() < rows);
    QCOMPARE(plot.firstRow(), 0);
    const QRect band0 = plot.plottable()->rowBand(0);
    QVERIFY2(band0.height() >= 14, qPrintable(QString::number(band0.height())));
    auto* scroll = plot.findChild<QWidget*>(QStringLiteral("rowScroll"));
    QVERIFY(scroll);
    // Scroll to the last rows: the last row is drawn at the bottom, the first is above the plot.
    plot.setFirstRow(rows);
    plot.replot();
    QCOMPARE(plot.firstRow(), rows - plot.shownRowCount());
    const QRect ar = plot.axisRect()->rect();
    const QRect last = plot.plottable()->rowBand(rows - 1);
    QVERIFY2(ar.contains(last.center()), qPrintable(QStringLiteral("%1 %2").arg(last.center().y()).arg(ar.bottom())));
    QVERIFY(plot.plottable()->rowBand(0).bottom() < ar.top());
    QVERIFY(last.height() >= 14);
    // Selecting an instance in a row out of view scrolls it in.
    plot.setFirstRow(0);
    const TimelineRow& target = plot.rows()[std::size_t(rows - 2)];
    if (target.kind == TimelineRow::Kind::Lane
        && !d.trace->ranks[std::size_t(target.rank)].lanes[std::size_t(target.lane)].intervals.empty()) {
        const int lane = target.lane;
        const auto& t = d.trace->ranks[std::size_t(target.rank)].lanes[std::size_t(lane)].intervals;
        for (std::uint32_t i = 0; i < t.size(); ++i)
            if (plot.scene().rowOf({ target.rank, lane, i }) == rows - 2) {
                plot.select({ target.rank, lane, i }, true);
                break;
            }
        QVERIFY(plot.firstRow() > 0);
        QVERIFY(plot.firstRow() <= rows - 2 && rows - 2 < plot.firstRow() + plot.shownRowCount());
    }
}

EXPOSURE_DATA_TEST_MAIN(TestLegibility)
#include "tst_legibility.moc"
