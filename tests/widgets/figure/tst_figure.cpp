// SPDX-License-Identifier: GPL-3.0-or-later
// Figure export: exact sizes and DPI, pixel colours, palettes, SVG/PDF structure, determinism, the spec file,
// the Export Figure dialog, and `exposure-cli render` end to end on a generated OTF2 archive.
#include "analysis/analysis.h"
#include "figure/exportfiguredialog.h"
#include "figure/figurerenderer.h"
#include "figure/figurespec.h"
#include "run/openrun.h"
#include "shell/mainwindow.h"
#include "support/figurespecs.h"
#include "support/files.h"
#include "support/testtraces.h"
#include "synth/archivewriter.h"
#include "timeline/timelineplot.h"
#include "view/rankgroups.h"

#include <QBuffer>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QImageReader>
#include <QLineEdit>
#include <QMenu>
#include <QPainter>
#include <QProcess>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStandardPaths>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>
#include <set>

using namespace exposure;
using L = testing::DdpTraceLayout;

namespace {

std::shared_ptr<const Analysis> analysisOf(const Trace& t)
{
    return analyze(t, Rules::defaults());
}

// One rank, compute kernels only (no NCCL), and a CPU thread.
std::shared_ptr<Trace> makeComputeOnlyTrace()
{
    TraceBuilder b;
    const int rank = b.addRank("Rank 0", "node0", 0);
    const int gpu = b.addLane(rank, "CUDA[0:7]", LaneKind::GpuStream, 0, 7);
    const int cpu = b.addLane(rank, "Master thread", LaneKind::CpuThread);
    for (int k = 0; k < 40; ++k) {
        const TimeNs t = k * 500'000;
        b.addInterval(rank, gpu, t, t + 300'000, k % 2 ? "ampere_sgemm_128x64_nn" : "vectorized_elementwise_kernel",
            RegionKind::Kernel);
        b.addInterval(rank, cpu, t, t + 50'000, "cudaLaunchKernel", RegionKind::HostRegion);
    }
    return b.finish();
}

QImage decodePng(const QByteArray& png)
{
    QBuffer buf;
    buf.setData(png);
    buf.open(QIODevice::ReadOnly);
    QImageReader reader(&buf, "png");
    return reader.read();
}

QString cliPath()
{
    return QStringLiteral(EXPOSURE_CLI);
}

struct CliResult
{
    int exitCode = -1;
    QByteArray out, err;
};

CliResult runCli(const QStringList& args)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    // The CLI must pick the offscreen platform itself when there is no display.
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    p.setProcessEnvironment(env);
    p.start(cliPath(), args);
    if (!p.waitForFinished(120000))
        return {};
    return { p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError() };
}

} // namespace

class TestFigure : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void pixelSizeAndDpiAreExact_data();
    void pixelSizeAndDpiAreExact();
    void kernelHasCategoryColourAndGapIsBackground();
    void noCommunicationColourWithoutNccl();
    void grayscaleHasNoSaturatedPixel();
    void svgIsXmlWithVectorsAndLegendText();
    void pdfHasHeaderAndRequestedPageSize();
    void rendersAreByteIdentical_data();
    void rendersAreByteIdentical();
    void rowSelections();
    void groupRowsForManyRanks();
    void stepRange();
    void neverOverwritesSilently();
    void specRoundTrip();
    void specErrorsNameTheFile_data();
    void specErrorsNameTheFile();
    void dialogSpecRendersSameThroughCli();
    void dialogRemembersSettings();
    void mainWindowHasExportFigureAction();
    void cliErrors_data();
    void cliErrors();
    void cliRefusesExistingFileUnlessForced();

private:
    QTemporaryDir m_dir;
    QString m_archive; // a generated 2-rank OTF2 trace
};

void TestFigure::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QStandardPaths::setTestModeEnabled(true); // QSettings of the dialog and the window: not the user's
    // Layout happens at 96 DPI under the offscreen platform: a 96 DPI figure is drawn 1:1.
    QCOMPARE(figureLayoutDpi(), 96);
    synth::DemoOptions demo;
    demo.ranks = 2;
    demo.steps = 3;
    m_archive = m_dir.filePath(QStringLiteral("trace"));
    synth::writeArchive(m_archive.toStdString(), synth::makeDemoSpec(demo));
}

void TestFigure::pixelSizeAndDpiAreExact_data()
{
    QTest::addColumn<bool>("mm");
    QTest::addColumn<double>("w");
    QTest::addColumn<double>("h");
    QTest::addColumn<int>("dpi");
    QTest::addColumn<QSize>("expected");
    QTest::newRow("px 1234x567 @150") << false << 1234.0 << 567.0 << 150 << QSize(1234, 567);
    QTest::newRow("px 800x600 @96") << false << 800.0 << 600.0 << 96 << QSize(800, 600);
    // 85 mm × 300 / 25.4 = 1003.9 -> 1004; 40 mm -> 472.4 -> 472
    QTest::newRow("85x40 mm @300") << true << 85.0 << 40.0 << 300 << QSize(1004, 472);
    // 178 mm × 600 / 25.4 = 4204.7 -> 4205; 60 mm -> 1417.3 -> 1417
    QTest::newRow("178x60 mm @600") << true << 178.0 << 60.0 << 600 << QSize(4205, 1417);
}

void TestFigure::pixelSizeAndDpiAreExact()
{
    QFETCH(bool, mm);
    QFETCH(double, w);
    QFETCH(double, h);
    QFETCH(int, dpi);
    QFETCH(QSize, expected);
    auto trace = testing::makeDdpTrace(2, 2);
    FigureRenderer r(trace, analysisOf(*trace));
    FigureSpec s;
    s.sizeUnit = mm ? FigureSpec::SizeUnit::Millimetres : FigureSpec::SizeUnit::Pixels;
    if (mm) {
        s.widthMm = w;
        s.heightMm = h;
    } else {
        s.widthPx = int(w);
        s.heightPx = int(h);
    }
    s.dpi = dpi;
    QCOMPARE(s.pixelSize(), expected);
    const QByteArray png = r.render(s);
    QBuffer buf;
    buf.setData(png);
    buf.open(QIODevice::ReadOnly);
    QImageReader reader(&buf, "png");
    QCOMPARE(reader.size(), expected);
    const QImage img = reader.read();
    QCOMPARE(img.size(), expected);
    const int dpm = int(std::lround(dpi / 0.0254));
    QCOMPARE(img.dotsPerMeterX(), dpm);
    QCOMPARE(img.dotsPerMeterY(), dpm);
}

void TestFigure::kernelHasCategoryColourAndGapIsBackground()
{
    auto trace = testing::makeDdpTrace(1, 1);
    auto analysis = analysisOf(*trace);
    FigureRenderer r(trace, analysis);
    FigureSpec s = testing::pixelSpec(1000, 300);
    s.dpi = 96; // 1:1 with the layout, so plot geometry is image geometry
    s.legend = false;
    s.rangeKind = FigureSpec::RangeKind::Custom;
    s.range = { 0, L::kStep };
    s.rows = FigureSpec::RowsKind::List;
    s.rowList = { QStringLiteral("0:0"), QStringLiteral("0:1") };
    const QImage img = r.renderImage(s);
    QCOMPARE(r.plot()->rowLabels().size(), 2);
    const auto* p = r.plot()->plottable();

    // Forward GEMM 2 of step 0: [2 ms, 2.8 ms). Sample near the top edge of its box (the name is centred).
    const QRect box = p->boxRect(0, 2 * L::kMs, 2 * L::kMs + 800'000);
    QVERIFY(box.width() > 40);
    const QPoint inKernel(box.center().x(), box.top() + 2);
    const std::string sg = analysis->names[trace->ranks[0].lanes[L::kCompute].intervals.name(2)].subgroup;
    QCOMPARE(sg, std::string("gemm"));
    const QColor gemm = r.plot()->scene().palette.block(Category::Compute, sg);
    QCOMPARE(gemm.name(), QStringLiteral("#1f5fa6"));
    QCOMPARE(QColor(img.pixel(inKernel)).name(), gemm.name());

    // The gap [2.8 ms, 3 ms) between GEMM 2 and GEMM 3: background (white in figures).
    const QRect gap = p->boxRect(0, 2 * L::kMs + 800'000, 3 * L::kMs);
    QVERIFY(gap.width() >= 10);
    QCOMPARE(QColor(img.pixel(gap.center())).name(), QStringLiteral("#ffffff"));

    // The exposed AllReduce [8.2 ms, 9.2 ms) on the NCCL row: communication colour in the upper half,
    // exposed colour in the lower half (two-tone).
    const QRect comm = p->boxRect(1, 8'200'000, 9'200'000);
    QCOMPARE(QColor(img.pixel(comm.center().x(), comm.top() + 2)).name(),
        r.plot()->scene().palette.block(Category::Communication, "AllReduce").name());
    QCOMPARE(QColor(img.pixel(comm.center().x(), comm.bottom() - 1)).name(),
        r.plot()->scene().palette.overlap(OverlapState::Exposed).name());

    // The SVG of the same figure, drawn back with QSvgRenderer, has the same colours at the same places
    // (user units are layout pixels; at 96 DPI those are the PNG's pixels).
    s.format = FigureSpec::Format::Svg;
    QSvgRenderer svg(r.render(s));
    QVERIFY(svg.isValid());
    QCOMPARE(svg.viewBox(), QRect(0, 0, 1000, 300));
    QImage back(1000, 300, QImage::Format_RGB32);
    back.fill(Qt::magenta);
    {
        QPainter painter(&back);
        svg.render(&painter, QRectF(0, 0, 1000, 300));
    }
    if (qEnvironmentVariableIsSet("EXPOSURE_FIGURE_DUMP"))
        back.save(qEnvironmentVariable("EXPOSURE_FIGURE_DUMP") + QStringLiteral("/svg-back.png"));
    QCOMPARE(QColor(back.pixel(inKernel)).name(), gemm.name());
    QCOMPARE(QColor(back.pixel(gap.center())).name(), QStringLiteral("#ffffff"));
    QCOMPARE(QColor(back.pixel(comm.center().x(), comm.bottom() - 1)).name(),
        r.plot()->scene().palette.overlap(OverlapState::Exposed).name());
}

void TestFigure::noCommunicationColourWithoutNccl()
{
    auto trace = makeComputeOnlyTrace();
    FigureRenderer r(trace, analysisOf(*trace));
    FigureSpec s = testing::pixelSpec(900, 300);
    s.title = QStringLiteral("Compute only");
    const QImage img = r.renderImage(s).convertToFormat(QImage::Format_RGB32);
    const Palette& pal = r.plot()->scene().palette;
    std::set<QRgb> forbidden;
    for (const char* sg : { "", "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "SendRecv" })
        forbidden.insert(pal.block(Category::Communication, sg).rgb() & 0xFFFFFF);
    forbidden.insert(pal.overlap(OverlapState::Hidden).rgb() & 0xFFFFFF);
    forbidden.insert(pal.overlap(OverlapState::Exposed).rgb() & 0xFFFFFF);
    const QRgb gemm = pal.block(Category::Compute, "gemm").rgb() & 0xFFFFFF;
    int commPixels = 0, gemmPixels = 0;
    for (int y = 0; y < img.height(); ++y) {
        const auto* line = reinterpret_cast<const QRgb*>(img.constScanLine(y));
        for (int x = 0; x < img.width(); ++x) {
            const QRgb c = line[x] & 0xFFFFFF;
            commPixels += forbidden.count(c) ? 1 : 0;
            gemmPixels += c == gemm ? 1 : 0;
        }
    }
    QCOMPARE(commPixels, 0);
    QVERIFY2(gemmPixels > 1000, "the compute kernels must be drawn (else this test proves nothing)");
}

void TestFigure::grayscaleHasNoSaturatedPixel()
{
    auto trace = testing::makeDdpTrace(2, 3);
    FigureRenderer r(trace, analysisOf(*trace));
    FigureSpec s = testing::pixelSpec(1200, 500);
    s.palette = PaletteKind::Grayscale;
    s.title = QStringLiteral("Grey");
    const QImage img = r.renderImage(s).convertToFormat(QImage::Format_RGB32);
    int saturated = 0, nonWhite = 0;
    for (int y = 0; y < img.height(); ++y) {
        const auto* line = reinterpret_cast<const QRgb*>(img.constScanLine(y));
        for (int x = 0; x < img.width(); ++x) {
            const int rr = qRed(line[x]), gg = qGreen(line[x]), bb = qBlue(line[x]);
            if (std::abs(rr - gg) > 1 || std::abs(gg - bb) > 1 || std::abs(rr - bb) > 1)
                ++saturated;
            nonWhite += (rr < 250) ? 1 : 0;
        }
    }
    QCOMPARE(saturated, 0);
    QVERIFY(nonWhite > 50000);
    // The same figure in the default palette is coloured (so the check above can fail).
    s.palette = PaletteKind::Default;
    const QImage colour = r.renderImage(s);
    int coloured = 0;
    for (int y = 0; y < colour.height(); y += 2)
        for (int x = 0; x < colour.width(); x += 2)
            coloured += QColor(colour.pixel(x, y)).hsvSaturation() > 60 ? 1 : 0;
    QVERIFY(coloured > 1000);
}

void TestFigure::svgIsXmlWithVectorsAndLegendText()
{
    auto trace = testing::makeDdpTrace(2, 3);
    FigureRenderer r(trace, analysisOf(*trace));
    FigureSpec s = testing::millimetreSpec(178, 70, 300, FigureSpec::Format::Svg);
    s.title = QStringLiteral("DDP & <overlap>");
    const QByteArray svg = r.render(s);
    QXmlStreamReader xml(svg);
    QStringList texts;
    int rects = 0, images = 0;
    QString rootWidth;
    bool first = true;
    while (!xml.atEnd()) {
        if (xml.readNext() != QXmlStreamReader::StartElement)
            continue;
        if (first) {
            QCOMPARE(xml.name().toString(), QStringLiteral("svg"));
            rootWidth = xml.attributes().value(QStringLiteral("width")).toString();
            first = false;
        }
        if (xml.name() == QLatin1String("rect") || xml.name() == QLatin1String("path")
            || xml.name() == QLatin1String("polyline"))
            ++rects;
        else if (xml.name() == QLatin1String("image"))
            ++images;
        else if (xml.name() == QLatin1String("text"))
            texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QCOMPARE(rootWidth, QStringLiteral("178mm"));
    QCOMPARE(images, 0); // real vector, no embedded bitmap
    QVERIFY(rects > 50);
    for (const char* legend : { "hidden comm.", "exposed comm.", "compute only", "AllReduce" })
        QVERIFY2(texts.contains(QString::fromLatin1(legend)), legend);
    QVERIFY(texts.contains(QStringLiteral("DDP & <overlap>")));
    QVERIFY(texts.contains(QStringLiteral("Time since trace start")));
}

void TestFigure::pdfHasHeaderAndRequestedPageSize()
{
    auto trace = testing::makeDdpTrace(2, 3);
    FigureRenderer r(trace, analysisOf(*trace));
    FigureSpec s = testing::millimetreSpec(85, 40, 600, FigureSpec::Format::Pdf);
    const QByteArray pdf = r.render(s);
    QVERIFY(pdf.startsWith("%PDF-"));
    const auto m = QRegularExpression(QStringLiteral("/MediaBox \\[\\s*0 0 ([0-9.]+) ([0-9.]+)\\s*\\]"))
                       .match(QString::fromLatin1(pdf));
    QVERIFY(m.hasMatch());
    // 85 mm = 240.94 pt, 40 mm = 113.39 pt; Qt writes whole points.
    QCOMPARE(m.captured(1).toDouble(), 241.0);
    QCOMPARE(m.captured(2).toDouble(), 113.0);
    QVERIFY(!pdf.contains("/Subtype /Image")); // vector: no bitmap
    QVERIFY(pdf.contains("/FontFile")); // text is text, with an embedded font
    QVERIFY(pdf.contains("(D:20000101000000Z)") || !pdf.contains("/CreationDate"));
}

void TestFigure::rendersAreByteIdentical_data()
{
    QTest::addColumn<int>("format");
    QTest::newRow("png") << int(FigureSpec::Format::Png);
    QTest::newRow("svg") << int(FigureSpec::Format::Svg);
    QTest::newRow("pdf") << int(FigureSpec::Format::Pdf);
}

void TestFigure::rendersAreByteIdentical()
{
    QFETCH(int, format);
    auto trace = testing::makeDdpTrace(2, 3);
    auto analysis = analysisOf(*trace);
    FigureSpec s;
    s.format = FigureSpec::Format(format);
    s.title = QStringLiteral("Twice");
    s.palette = PaletteKind::ColorBlind;
    FigureRenderer a(trace, analysis);
    const QByteArray first = a.render(s);
    FigureSpec other = s; // render something else in between: no state may leak into the next render
    other.palette = PaletteKind::Grayscale;
    other.rows = FigureSpec::RowsKind::Overlap;
    QVERIFY(a.render(other) != first);
    const QByteArray second = a.render(s);
    FigureRenderer b(trace, analysis);
    const QByteArray third = b.render(s);
    QVERIFY(first.size() > 1000);
    if (qEnvironmentVariableIsSet("EXPOSURE_FIGURE_DUMP") && s.format == FigureSpec::Format::Png) {
        decodePng(first).save(qEnvironmentVariable("EXPOSURE_FIGURE_DUMP") + QStringLiteral("/first.png"));
        decodePng(second).save(qEnvironmentVariable("EXPOSURE_FIGURE_DUMP") + QStringLiteral("/second.png"));
    }
    QVERIFY(first == second);
    QVERIFY(first == third);
    // Through files too.
    const QString p1 = m_dir.filePath(QStringLiteral("same1.") + figureFormatName(s.format));
    const QString p2 = m_dir.filePath(QStringLiteral("same2.") + figureFormatName(s.format));
    a.renderToFile(s, p1, true);
    b.renderToFile(s, p2, true);
    QCOMPARE(testing::readAll(p1), testing::readAll(p2));
    QCOMPARE(testing::readAll(p1), first);
}

void TestFigure::rowSelections()
{
    auto trace = testing::makeDdpTrace(2, 1);
    FigureRenderer r(trace, analysisOf(*trace));
    FigureSpec s = testing::pixelSpec(800, 400);
    r.renderImage(s);
    QCOMPARE(r.plot()->rowLabels(),
        QStringList({ QStringLiteral("Rank 0 \u00B7 CUDA[0:7] compute"), QStringLiteral("CUDA[0:17] NCCL"),
            QStringLiteral("overlap"), QStringLiteral("Master thread"),
            QStringLiteral("Rank 1 \u00B7 CUDA[1:7] compute"), QStringLiteral("CUDA[1:17] NCCL"),
            QStringLiteral("overlap"), QStringLiteral("Master thread") }));
    s.rows = FigureSpec::RowsKind::Gpu;
    s.overlapLanes = false;
    r.renderImage(s);
    QCOMPARE(r.plot()->rowLabels().size(), 4);
    s.rows = FigureSpec::RowsKind::Overlap;
    r.renderImage(s);
    QCOMPARE(r.plot()->rowLabels(),
        QStringList({ QStringLiteral("Rank 0 \u00B7 overlap"), QStringLiteral("Rank 1 \u00B7 overlap") }));
    QString err;
    QVERIFY(parseRowsArgument(QStringLiteral("1:1,0:overlap"), &s, &err));
    s.overlapLanes = true;
    r.renderImage(s);
    QCOMPARE(r.plot()->rowLabels(),
        QStringList({ QStringLiteral("Rank 0 \u00B7 overlap"), QStringLiteral("Rank 1 \u00B7 CUDA[1:17] NCCL") }));
    QVERIFY(!parseRowsArgument(QStringLiteral("1:x"), &s, &err));
    QVERIFY(err.contains(QStringLiteral("'1:x'")));
    QVERIFY(parseRowsArgument(QStringLiteral("5"), &s, &err));
    QVERIFY_THROWS_EXCEPTION(FigureSpecError, r.renderImage(s)); // rank 5 does not exist
}

void TestFigure::groupRowsForManyRanks()
{
    // 24 ranks (more than kGroupRanksAbove): at 150 px even one overlap row per rank is under 1.5 mm, so Automatic
    // rows fall back to one collapsed row per group of ranks, and the figure is written.
    auto trace = testing::makeDdpTrace(24, 1);
    FigureRenderer r(trace, analysisOf(*trace));
    FigureSpec s = testing::pixelSpec(800, 150);
    s.dpi = 96;
    s.legend = false;
    s.rangeKind = FigureSpec::RangeKind::Custom;
    s.range = { 0, L::kStep };
    const QImage img = r.renderImage(s);
    QCOMPARE(r.rowsUsed(), FigureSpec::RowsKind::Groups);
    const std::vector<RankGroup> groups = groupRanks(*trace, RankGrouping::Auto);
    QCOMPARE(groups.size(), std::size_t(3));
    QCOMPARE(r.plot()->rowLabels(),
        QStringList({ QStringLiteral("ranks 0\u20137 \u00B7 8 ranks"), QStringLiteral("ranks 8\u201315 \u00B7 8 ranks"),
            QStringLiteral("ranks 16\u201323 \u00B7 8 ranks") }));
    // Every rank of the generated job has its AllReduce exposed over [8.2 ms, 9.2 ms): the group row is the exposed
    // colour there, top to bottom; over the forward GEMM at [2 ms, 2.8 ms) it is all "compute only".
    const auto* p = r.plot()->plottable();
    const QRect exposed = p->boxRect(1, 8'200'000, 9'200'000);
    const QRect compute = p->boxRect(1, 2 * L::kMs, 2 * L::kMs + 800'000);
    QVERIFY(exposed.width() > 10 && exposed.height() >= 4);
    for (int y = exposed.top() + 1; y < exposed.bottom(); ++y) {
        QCOMPARE(QColor(img.pixel(exposed.center().x(), y)).name(),
            r.plot()->scene().palette.overlap(OverlapState::Exposed).name());
        QCOMPARE(QColor(img.pixel(compute.center().x(), y)).name(),
            r.plot()->scene().palette.overlap(OverlapState::ComputeOnly).name());
    }
    // Asked for by name, with a grouping; the spec keeps it through JSON.
    s.rows = FigureSpec::RowsKind::Groups;
    s.grouping = RankGrouping::Blocks;
    r.renderImage(s);
    QCOMPARE(r.plot()->rowLabels().size(), int(groupRanks(*trace, RankGrouping::Blocks).size()));
    QVERIFY(s.toJson().contains("\"groups\": \"blocks\""));
    QVERIFY(FigureSpec::fromJson(s.toJson(), QStringLiteral("g.json")) == s);
    QVERIFY_THROWS_EXCEPTION(FigureSpecError,
        FigureSpec::fromJson(
            R"({"exposureFigure": 1, "rows": {"select": "groups", "groups": "none"}})", QStringLiteral("g.json")));
    // A few ranks never fall back to groups: 2 ranks at the same size keep their (refused) per-rank rows.
    auto two = testing::makeDdpTrace(2, 1);
    FigureRenderer small(two, analysisOf(*two));
    FigureSpec a = testing::pixelSpec(800, 150);
    small.renderImage(a);
    QVERIFY(small.rowsUsed() != FigureSpec::RowsKind::Groups);
}

void TestFigure::stepRange()
{
    auto trace = testing::makeDdpTrace(2, 3);
    auto analysis = analysisOf(*trace);
    FigureSpec s;
    s.rangeKind = FigureSpec::RangeKind::Step;
    QVERIFY(!analysis->ranks[0].steps.empty());
    const StepWindow st = analysis->ranks[0].steps[1];
    s.step = st.index;
    const TimeRange r = s.resolveRange(*trace, analysis.get());
    QCOMPARE(r.start, st.range.start);
    QCOMPARE(r.end, std::max(st.range.end, analysis->ranks[1].steps[1].range.end));
    s.step = 999;
    try {
        s.resolveRange(*trace, analysis.get());
        QFAIL("step 999 must not resolve");
    } catch (const FigureSpecError& e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("step 999 is not in the trace")), e.what());
    }
}

void TestFigure::neverOverwritesSilently()
{
    auto trace = testing::makeDdpTrace(1, 1);
    FigureRenderer r(trace, analysisOf(*trace));
    const QString path = m_dir.filePath(QStringLiteral("exists.png"));
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("keep me");
    }
    FigureSpec s;
    QVERIFY_THROWS_EXCEPTION(FigureRenderError, r.renderToFile(s, path, false));
    QCOMPARE(testing::readAll(path), QByteArray("keep me"));
    r.renderToFile(s, path, true);
    QVERIFY(testing::readAll(path).startsWith("\x89PNG"));
}

void TestFigure::specRoundTrip()
{
    FigureSpec s;
    s.tracePath = QStringLiteral("/data/run 3/trace");
    s.format = FigureSpec::Format::Pdf;
    s.rangeKind = FigureSpec::RangeKind::Custom;
    s.range = { 1'500'000, 123'456'789'012 };
    s.rows = FigureSpec::RowsKind::List;
    s.rowList = { QStringLiteral("0"), QStringLiteral("1:2"), QStringLiteral("1:overlap") };
    s.overlapLanes = false;
    s.palette = PaletteKind::Grayscale;
    s.sizeUnit = FigureSpec::SizeUnit::Millimetres;
    s.widthMm = 85.5;
    s.heightMm = 42;
    s.dpi = 600;
    s.fontFamily = QStringLiteral("Liberation Serif");
    s.fontSize = 7.5;
    s.legend = false;
    s.legendPosition = LegendPosition::Bottom;
    s.title = QStringLiteral("Überschrift \"quoted\"");
    s.timeAxisLabel = QStringLiteral("t");
    s.timeUnit = TimeUnit::Microseconds;
    const FigureSpec back = FigureSpec::fromJson(s.toJson(), QStringLiteral("x.json"));
    QVERIFY(back == s);
    const QString path = m_dir.filePath(QStringLiteral("spec.json"));
    s.save(path);
    QVERIFY(FigureSpec::load(path) == s);
    // Steps and the defaults survive too.
    FigureSpec d;
    d.rangeKind = FigureSpec::RangeKind::Step;
    d.step = 4;
    QVERIFY(FigureSpec::fromJson(d.toJson(), QStringLiteral("d.json")) == d);
    // A hand-written minimal spec with a time string.
    const FigureSpec m = FigureSpec::fromJson(
        R"({"exposureFigure": 1, "range": {"kind": "range", "from": "1.5ms", "to": "2ms"}})", QStringLiteral("m"));
    QCOMPARE(m.range.start, TimeNs(1'500'000));
    QCOMPARE(m.range.end, TimeNs(2'000'000));
    QCOMPARE(m.palette, PaletteKind::Default);
}

void TestFigure::specErrorsNameTheFile_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("problem");
    QTest::newRow("not json") << QByteArray("{") << QStringLiteral("not valid JSON");
    QTest::newRow("no version") << QByteArray("{}") << QStringLiteral("no \"exposureFigure\" version key");
    QTest::newRow("future version") << QByteArray(R"({"exposureFigure": 2})")
                                    << QStringLiteral("version 2 is not supported");
    QTest::newRow("typo") << QByteArray(R"({"exposureFigure": 1, "size": {"heigth": 3}})")
                          << QStringLiteral("unknown key 'heigth' in 'size'");
    QTest::newRow("palette") << QByteArray(R"({"exposureFigure": 1, "palette": "rainbow"})")
                             << QStringLiteral("palette 'rainbow' is not default, colorblind or grayscale");
    QTest::newRow("dpi") << QByteArray(R"({"exposureFigure": 1, "size": {"dpi": 5}})")
                         << QStringLiteral("dpi 5 is out of range");
    QTest::newRow("empty range") << QByteArray(
        R"({"exposureFigure": 1, "range": {"kind": "range", "fromNs": 5, "toNs": 5}})")
                                 << QStringLiteral("is empty");
    QTest::newRow("bad row") << QByteArray(R"({"exposureFigure": 1, "rows": {"select": "list", "list": ["a:b"]}})")
                             << QStringLiteral("'a:b' is not a row");
}

void TestFigure::specErrorsNameTheFile()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, problem);
    const QString path = m_dir.filePath(QStringLiteral("bad.json"));
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(json);
    }
    try {
        FigureSpec::load(path);
        QFAIL("a bad spec must not load");
    } catch (const FigureSpecError& e) {
        const QString msg = QString::fromUtf8(e.what());
        QVERIFY2(msg.startsWith(path + QStringLiteral(": ")), e.what());
        QVERIFY2(msg.contains(problem), e.what());
    }
}

void TestFigure::dialogSpecRendersSameThroughCli()
{
    std::shared_ptr<Trace> trace = loadTrace(m_archive.toStdString());
    auto analysis = analysisOf(*trace);
    ExportFigureDialog dialog(trace, analysis, nullptr, TimeRange { 0, trace->extent.end / 2 });
    // As the main window gives it (the CLI matches them when it loads): the waiting for peers is drawn.
    dialog.setCollectives(std::make_shared<const CollectiveMatch>(matchCollectives(*trace, *analysis)));
    dialog.setSpec(FigureSpec()); // start from the defaults, whatever the settings say
    // Drive the widgets as a user would.
    dialog.findChild<QComboBox*>(QStringLiteral("format"))->setCurrentIndex(0); // PNG
    dialog.findChild<QRadioButton*>(QStringLiteral("sizeMm"))->setChecked(true);
    dialog.findChild<QDoubleSpinBox*>(QStringLiteral("widthMm"))->setValue(85);
    dialog.findChild<QDoubleSpinBox*>(QStringLiteral("heightMm"))->setValue(45);
    dialog.findChild<QSpinBox*>(QStringLiteral("dpi"))->setValue(200);
    auto* range = dialog.findChild<QComboBox*>(QStringLiteral("rangeKind"));
    range->setCurrentIndex(range->findData(int(FigureSpec::RangeKind::Visible)));
    auto* rows = dialog.findChild<QComboBox*>(QStringLiteral("rows"));
    rows->setCurrentIndex(rows->findData(int(FigureSpec::RowsKind::Gpu)));
    auto* palette = dialog.findChild<QComboBox*>(QStringLiteral("palette"));
    palette->setCurrentIndex(palette->findData(int(PaletteKind::ColorBlind)));
    auto* legendPos = dialog.findChild<QComboBox*>(QStringLiteral("legendPosition"));
    legendPos->setCurrentIndex(legendPos->findData(int(LegendPosition::Bottom)));
    dialog.findChild<QLineEdit*>(QStringLiteral("title"))->setText(QStringLiteral("Two ranks"));
    dialog.findChild<QDoubleSpinBox*>(QStringLiteral("fontSize"))->setValue(7);

    const FigureSpec spec = dialog.spec();
    QCOMPARE(spec.sizeUnit, FigureSpec::SizeUnit::Millimetres);
    QCOMPARE(spec.rangeKind, FigureSpec::RangeKind::Visible);
    QCOMPARE(spec.range.end, trace->extent.end / 2);
    QCOMPARE(spec.palette, PaletteKind::ColorBlind);
    QCOMPARE(spec.tracePath, QString::fromStdString(trace->sourcePath));
    QVERIFY(!dialog.previewImage().isNull());
    if (qEnvironmentVariableIsSet("EXPOSURE_FIGURE_DUMP")) { // to look at the dialog
        dialog.resize(dialog.sizeHint());
        dialog.show();
        QCoreApplication::processEvents();
        dialog.grab().save(qEnvironmentVariable("EXPOSURE_FIGURE_DUMP") + QStringLiteral("/dialog.png"));
    }

    const QString specPath = m_dir.filePath(QStringLiteral("dialog-spec.json"));
    QVERIFY(dialog.saveSpecTo(specPath));
    const QString inProcess = m_dir.filePath(QStringLiteral("dialog.png"));
    QVERIFY(dialog.exportTo(inProcess, true));

    const QString viaCli = m_dir.filePath(QStringLiteral("cli.png"));
    QFile::remove(viaCli);
    const CliResult res
        = runCli({ QStringLiteral("render"), QStringLiteral("--spec"), specPath, QStringLiteral("-o"), viaCli });
    QVERIFY2(res.exitCode == 0, res.err.constData());
    QVERIFY2(res.err.isEmpty(), res.err.constData());
    const QImage a = decodePng(testing::readAll(inProcess));
    const QImage b = decodePng(testing::readAll(viaCli));
    QCOMPARE(a.size(), QSize(669, 354)); // 85 × 45 mm at 200 DPI
    QCOMPARE(b.size(), a.size());
    QCOMPARE(b.dotsPerMeterX(), a.dotsPerMeterX());
    QVERIFY(a == b);
    QCOMPARE(testing::readAll(viaCli), testing::readAll(inProcess)); // the very same bytes
}

void TestFigure::dialogRemembersSettings()
{
    auto trace = testing::makeDdpTrace(1, 1);
    auto analysis = analysisOf(*trace);
    {
        ExportFigureDialog d(trace, analysis, nullptr, trace->extent);
        FigureSpec s;
        s.palette = PaletteKind::Grayscale;
        s.title = QStringLiteral("remembered");
        s.sizeUnit = FigureSpec::SizeUnit::Millimetres;
        s.widthMm = 123;
        d.setSpec(s);
        d.rememberSettings();
    }
    ExportFigureDialog again(trace, analysis, nullptr, trace->extent);
    const FigureSpec s = again.spec();
    QCOMPARE(s.palette, PaletteKind::Grayscale);
    QCOMPARE(s.title, QStringLiteral("remembered"));
    QCOMPARE(s.widthMm, 123.0);
    QCOMPARE(s.sizeUnit, FigureSpec::SizeUnit::Millimetres);
}

void TestFigure::mainWindowHasExportFigureAction()
{
    MainWindow window;
    QAction* action = nullptr;
    for (QAction* a : window.fileMenu()->actions())
        if (a->objectName() == QLatin1String("exportFigure"))
            action = a;
    QVERIFY(action);
    QCOMPARE(action->text(), QStringLiteral("Export &Figure\u2026"));
    QCOMPARE(action->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    // It sits before the extension anchor (the separator above Quit), and needs a trace.
    const auto actions = window.fileMenu()->actions();
    QCOMPARE(actions.indexOf(action) + 1, actions.indexOf(window.fileMenuExtensionAnchor()));
    emit window.fileMenu()->aboutToShow();
    QVERIFY(!action->isEnabled());
}

void TestFigure::cliErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    const QString out = QStringLiteral("/nonexistent-dir/x.png");
    // The trace and an output that cannot be written, then the options under test.
    const auto withOutput = [&out](std::initializer_list<const char*> options) {
        QStringList args { QStringLiteral("TRACE"), QStringLiteral("-o"), out };
        for (const char* o : options)
            args << QString::fromUtf8(o);
        return args;
    };
    QTest::newRow("no output") << QStringList { QStringLiteral("TRACE") } << QStringLiteral("-o FILE is required");
    QTest::newRow("palette") << withOutput({ "--palette", "rainbow" })
                             << QStringLiteral("--palette 'rainbow': expected default, colorblind or grayscale");
    QTest::newRow("format") << withOutput({ "--format", "gif" })
                            << QStringLiteral("--format 'gif': expected png, svg or pdf");
    QTest::newRow("width alone") << withOutput({ "--width", "800" })
                                 << QStringLiteral("--width and --height go together");
    QTest::newRow("px and mm") << withOutput({ "--width", "800", "--height", "600", "--width-mm", "85" })
                               << QStringLiteral("exclude each other");
    QTest::newRow("bad time") << withOutput({ "--from", "soon", "--to", "2ms" })
                              << QStringLiteral("--from 'soon': not a time");
    QTest::newRow("step and range") << withOutput({ "--from", "1ms", "--to", "2ms", "--step", "1" })
                                    << QStringLiteral("--from/--to and --step exclude each other");
    QTest::newRow("dpi") << withOutput({ "--width-mm", "85", "--dpi", "0" })
                         << QStringLiteral("--dpi '0': expected a whole number from 30 to 2400");
    QTest::newRow("rows") << withOutput({ "--rows", "gpu,cpu" }) << QStringLiteral("--rows: 'gpu' is not a row");
    QTest::newRow("group") << withOutput({ "--group", "rack" })
                           << QStringLiteral("--group 'rack': expected auto, host, stage, dp or blocks");
    QTest::newRow("group with rows") << withOutput({ "--rows", "gpu", "--group", "host" })
                                     << QStringLiteral("--group draws a row per group: it goes with --rows groups");
    QTest::newRow("missing trace") << QStringList { QStringLiteral("/nonexistent/trace"), QStringLiteral("-o"), out }
                                   << QStringLiteral("/nonexistent/trace");
    QTest::newRow("missing spec") << QStringList { QStringLiteral("--spec"), QStringLiteral("/nonexistent/spec.json"),
        QStringLiteral("-o"), out }
                                  << QStringLiteral("/nonexistent/spec.json: cannot read the figure spec");
    QTest::newRow("unknown step") << QStringList { QStringLiteral("TRACE"), QStringLiteral("-o"), QStringLiteral("OUT"),
        QStringLiteral("--step"), QStringLiteral("777") }
                                  << QStringLiteral("step 777 is not in the trace");
}

void TestFigure::cliErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    for (QString& a : args) {
        if (a == QLatin1String("TRACE"))
            a = m_archive;
        if (a == QLatin1String("OUT"))
            a = m_dir.filePath(QStringLiteral("never-written.png"));
    }
    args.prepend(QStringLiteral("render"));
    const CliResult r = runCli(args);
    QCOMPARE(r.exitCode, 2);
    const QString err = QString::fromUtf8(r.err);
    QCOMPARE(err.count(QLatin1Char('\n')), 1); // one line
    QVERIFY2(err.startsWith(QStringLiteral("exposure-cli: ")), r.err.constData());
    QVERIFY2(err.contains(message), r.err.constData());
    QVERIFY(r.out.isEmpty());
    QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("never-written.png"))));
}

void TestFigure::cliRefusesExistingFileUnlessForced()
{
    const QString out = m_dir.filePath(QStringLiteral("cli-existing.svg"));
    {
        QFile f(out);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write("old");
    }
    const QStringList args = { QStringLiteral("render"), m_archive, QStringLiteral("-o"), out, QStringLiteral("--rows"),
        QStringLiteral("overlap"), QStringLiteral("--legend") };
    CliResult r = runCli(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("already exists"), r.err.constData());
    QCOMPARE(testing::readAll(out), QByteArray("old"));
    r = runCli(QStringList(args) << QStringLiteral("--force"));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QByteArray svg = testing::readAll(out);
    QVERIFY(svg.contains("<svg")); // the format follows the file name
    QVERIFY(svg.contains(">hidden comm.</text>"));
    // Rendering again gives the same bytes.
    const QString again = m_dir.filePath(QStringLiteral("cli-again.svg"));
    QFile::remove(again);
    r = runCli({ QStringLiteral("render"), m_archive, QStringLiteral("-o"), again, QStringLiteral("--rows"),
        QStringLiteral("overlap"), QStringLiteral("--legend") });
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(testing::readAll(again), svg);
    // PDF bytes are the same from one process to the next too (font objects, dates, document id).
    const QString pdf1 = m_dir.filePath(QStringLiteral("cli1.pdf")), pdf2 = m_dir.filePath(QStringLiteral("cli2.pdf"));
    for (const QString& p : { pdf1, pdf2 }) {
        r = runCli({ QStringLiteral("render"), m_archive, QStringLiteral("-o"), p, QStringLiteral("--title"),
            QStringLiteral("Bold title, regular labels"), QStringLiteral("--force") });
        QVERIFY2(r.exitCode == 0, r.err.constData());
    }
    QVERIFY(testing::readAll(pdf1).startsWith("%PDF-"));
    QCOMPARE(testing::readAll(pdf1), testing::readAll(pdf2));
}

QTEST_MAIN(TestFigure)
#include "tst_figure.moc"
