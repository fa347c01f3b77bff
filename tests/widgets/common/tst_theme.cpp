// SPDX-License-Identifier: GPL-3.0-or-later
// Dark theme and HiDPI (issue 13.6): WCAG contrast of every text role of the app's dark palette, of the labels the
// timeline draws on its block colours (every palette kind), of dimmed and signal-coloured text in the panels; and
// screenshots of the GUI with the dark theme and with QT_SCALE_FACTOR=2, written to the test's output folder
// (screenshots/ in the build tree) and checked for a dark background and a timeline drawn at device resolution.
#include "common/theme.h"
#include "panels/detailspanel.h"
#include "support/testtraces.h"
#include "timeline/palette.h"

#include <QApplication>
#include <QDir>
#include <QProcess>
#include <QRegularExpression>
#include <QTest>
#include <QTextBrowser>

using namespace exposure;

namespace {

QString describe(const char* what, const QColor& a, const QColor& b)
{
    return QStringLiteral("%1: %2 on %3 = %4:1")
        .arg(QLatin1String(what), a.name(), b.name())
        .arg(contrastRatio(a, b), 0, 'f', 2);
}

// Every fill the timeline writes a label on: block colours of all categories and sub-groups, overlap states.
std::vector<QColor> labelFills(const Palette& p)
{
    std::vector<QColor> fills;
    for (const char* sg : { "gemm", "convolution", "attention", "elementwise", "reduction", "normalization", "layout",
             "pooling", "optimizer", "other", "" })
        fills.push_back(p.block(Category::Compute, sg));
    for (const char* sg : { "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "SendRecv", "" })
        fills.push_back(p.block(Category::Communication, sg));
    for (const char* sg : { "HtoD", "DtoH", "DtoD", "PtoP", "" })
        fills.push_back(p.block(Category::Memcpy, sg));
    fills.push_back(p.block(Category::Idle, ""));
    fills.push_back(p.block(Category::Host, ""));
    for (const OverlapState s :
        { OverlapState::ComputeOnly, OverlapState::Hidden, OverlapState::Exposed, OverlapState::Other })
        fills.push_back(p.overlap(s));
    return fills;
}

// Mean relative luminance of a rectangle of `image`.
double meanLuminance(const QImage& image, const QRect& r)
{
    double sum = 0;
    int n = 0;
    for (int y = r.top(); y <= r.bottom(); y += 3)
        for (int x = r.left(); x <= r.right(); x += 3, ++n)
            sum += relativeLuminance(image.pixelColor(x, y));
    return n ? sum / n : 0;
}

} // namespace

class TestTheme : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase() { QDir().mkpath(m_out); }

    void contrastRatioIsWcag()
    {
        QCOMPARE(contrastRatio(Qt::black, Qt::white), 21.0);
        QCOMPARE(contrastRatio(Qt::white, Qt::white), 1.0);
        // #767676 is the lightest grey with 4.5:1 on white (a WCAG reference value).
        QVERIFY(contrastRatio(QColor(0x76, 0x76, 0x76), Qt::white) >= 4.5);
        QVERIFY(contrastRatio(QColor(0x77, 0x77, 0x77), Qt::white) < 4.5);
    }

    void darkPaletteTextReads()
    {
        const QPalette p = darkPalette();
        QVERIFY(isDark(p));
        const std::pair<QPalette::ColorRole, QPalette::ColorRole> pairs[]
            = { { QPalette::WindowText, QPalette::Window }, { QPalette::Text, QPalette::Base },
                  { QPalette::Text, QPalette::AlternateBase }, { QPalette::ButtonText, QPalette::Button },
                  { QPalette::ToolTipText, QPalette::ToolTipBase }, { QPalette::HighlightedText, QPalette::Highlight },
                  { QPalette::PlaceholderText, QPalette::Base }, { QPalette::Link, QPalette::Base },
                  { QPalette::LinkVisited, QPalette::Base }, { QPalette::WindowText, QPalette::Button },
                  { QPalette::BrightText, QPalette::Window } };
        for (const auto& [fg, bg] : pairs) {
            const QColor a = p.color(QPalette::Active, fg), b = p.color(QPalette::Active, bg);
            QVERIFY2(contrastRatio(a, b) >= kMinTextContrast, qPrintable(describe("role pair", a, b)));
        }
    }

    // Labels on blocks are black or white, whichever reads better: never below 4.5:1 (the exposed vermillion got
    // white at 3.9:1 before).
    void timelineLabelsReadOnTheirFills()
    {
        for (const QPalette& base : { QPalette(Qt::white), darkPalette() })
            for (const PaletteKind kind : { PaletteKind::Default, PaletteKind::ColorBlind, PaletteKind::Grayscale }) {
                const Palette p(kind, base);
                for (const QColor& fill : labelFills(p)) {
                    const QColor text = Palette::textOn(fill);
                    QVERIFY2(contrastRatio(text, fill) >= kMinTextContrast, qPrintable(describe("label", text, fill)));
                }
            }
        // Row labels and axis text on the timeline's background and rank bands.
        const Palette dark(PaletteKind::Default, darkPalette());
        QVERIFY2(contrastRatio(dark.text(), dark.background()) >= kMinTextContrast,
            qPrintable(describe("row label", dark.text(), dark.background())));
        QVERIFY2(contrastRatio(dark.text(), dark.rowShade()) >= kMinTextContrast,
            qPrintable(describe("row label on shade", dark.text(), dark.rowShade())));
    }

    // Dimmed labels and signal colours (exposed orange, error red) are adjusted to the background they sit on.
    void dimmedAndSignalTextRead()
    {
        for (const QPalette& p : { QApplication::palette(), darkPalette() }) {
            const QColor base = p.color(QPalette::Base), window = p.color(QPalette::Window);
            QVERIFY2(contrastRatio(dimmedText(p), base) >= kMinTextContrast,
                qPrintable(describe("dimmed", dimmedText(p), base)));
            const QColor exposed = readableOn(Palette(PaletteKind::Default, p).overlap(OverlapState::Exposed), base);
            QVERIFY2(contrastRatio(exposed, base) >= kMinTextContrast, qPrintable(describe("exposed", exposed, base)));
            const QColor error = readableOn(QColor(0xC0, 0x20, 0x20), window);
            QVERIFY2(contrastRatio(error, window) >= kMinTextContrast, qPrintable(describe("error", error, window)));
        }
    }

    // The details panel's field labels were 'gray' (4.2:1 on the dark Base).
    void detailsLabelsReadOnDark()
    {
        const auto trace = testing::makeDdpTrace(1, 1);
        const auto analysis = analyze(*trace, Rules::defaults());
        DetailsPanel panel;
        panel.setPalette(darkPalette());
        panel.resize(380, 700);
        panel.showInterval(*trace, analysis.get(), nullptr, { 0, testing::DdpTraceLayout::kNccl, 1 });
        panel.grab().save(QDir(m_out).filePath(QStringLiteral("details-dark.png")));
        const QString html = panel.browser()->toHtml();
        static const QRegularExpression colour(QStringLiteral("color:(#[0-9a-fA-F]{6})"));
        int seen = 0;
        for (auto it = colour.globalMatch(html); it.hasNext(); ++seen) {
            const QColor c(it.next().captured(1));
            const QColor base = darkPalette().color(QPalette::Base);
            QVERIFY2(contrastRatio(c, base) >= kMinTextContrast, qPrintable(describe("details label", c, base)));
        }
        QVERIFY(seen > 0);
        QVERIFY(!html.contains(QStringLiteral("color:gray")));
    }

    // The GUI with --theme dark at 1400x900: saved to screenshots/dark-1400x900.png; its timeline and panels are
    // dark and the rows' labels are light.
    void darkScreenshot()
    {
        const QImage image
            = shoot(QStringLiteral("dark-1400x900.png"), { QStringLiteral("--theme"), QStringLiteral("dark") }, {});
        QCOMPARE(image.size(), QSize(1400, 900));
        QVERIFY2(meanLuminance(image, QRect(0, 0, 1400, 900)) < 0.2,
            qPrintable(QString::number(meanLuminance(image, QRect(0, 0, 1400, 900)))));
        // Somewhere in the row labels (left of the timeline) there are light text pixels on the dark background.
        int light = 0;
        for (int y = 110; y < 560; ++y)
            for (int x = 0; x < 190; ++x)
                light += relativeLuminance(image.pixelColor(x, y)) > 0.6;
        QVERIFY2(light > 200, qPrintable(QString::number(light)));
    }

    // QT_SCALE_FACTOR=2: a 2800x1800 PNG (screenshots/scale2-1400x900.png) in which the timeline is drawn at device
    // resolution, not a 1400x900 picture scaled up: some horizontally adjacent device pixels (2k, 2k+1) differ.
    void scaleFactorTwoScreenshot()
    {
        const QImage image = shoot(
            QStringLiteral("scale2-1400x900.png"), {}, { { QStringLiteral("QT_SCALE_FACTOR"), QStringLiteral("2") } });
        QCOMPARE(image.size(), QSize(2800, 1800));
        // The timeline's row labels and blocks (left/top part of the window, in device pixels).
        int oddEdges = 0;
        for (int y = 240; y < 1100; ++y)
            for (int x = 0; x + 1 < 1900; x += 2)
                oddEdges += image.pixel(x, y) != image.pixel(x + 1, y);
        QVERIFY2(oddEdges > 1000, qPrintable(QString::number(oddEdges)));
    }

private:
    QImage shoot(const QString& name, const QStringList& args, const QList<QPair<QString, QString>>& env)
    {
        const QString png = QDir(m_out).filePath(name);
        QFile::remove(png);
        QProcess gui;
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        e.insert(QStringLiteral("XDG_CONFIG_HOME"), m_out); // no settings from (or for) the user
        for (const auto& [k, v] : env)
            e.insert(k, v);
        gui.setProcessEnvironment(e);
        gui.start(QStringLiteral(EXPOSURE_GUI),
            args
                + QStringList { QStringLiteral("--screenshot"), png, QStringLiteral("--size"),
                    QStringLiteral("1400x900"), QStringLiteral(EXPOSURE_DEMO_TRACE_DIR) });
        if (!gui.waitForFinished(60000) || gui.exitCode() != 0)
            qWarning() << gui.readAllStandardError();
        return QImage(png);
    }

    QString m_out = QStringLiteral(EXPOSURE_SCREENSHOT_DIR);
};

QTEST_MAIN(TestTheme)
#include "tst_theme.moc"
