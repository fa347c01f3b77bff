// SPDX-License-Identifier: GPL-3.0-or-later
// The `exposure` GUI: `exposure [PATH]`, or `exposure --screenshot FILE [--size WxH] PATH` to load a
// trace, lay the window out at that size, save a PNG of the whole window and exit (works under
// QT_QPA_PLATFORM=offscreen; used for documentation and tests).
#include "common/theme.h"
#include "model/timeformat.h"
#include "shell/mainwindow.h"
#include "timeline/timelineplot.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QHashFunctions>
#include <QIcon>
#include <QRegularExpression>
#include <QTimer>
#include <cstdio>
#include <functional>
#include <optional>
#include <unistd.h>
#include <vector>

using namespace exposure;

namespace {

// Milliseconds since this process started (Linux /proc; -1 elsewhere).
double msSinceProcessStart()
{
    QFile stat(QStringLiteral("/proc/self/stat")), uptime(QStringLiteral("/proc/uptime"));
    if (!stat.open(QIODevice::ReadOnly) || !uptime.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray s = stat.readAll();
    const QList<QByteArray> fields = s.mid(s.lastIndexOf(')') + 2).split(' '); // field 3 onwards
    if (fields.size() < 20)
        return -1;
    const double startTicks = fields[19].toDouble(); // field 22: start time in clock ticks after boot
    const double up = uptime.readAll().split(' ').value(0).toDouble();
    return (up - startTicks / double(sysconf(_SC_CLK_TCK))) * 1000.0;
}

class FirstPaintReporter : public QObject
{
public:
    FirstPaintReporter(exposure::TimelinePlot* plot, QObject* parent)
        : QObject(parent)
        , m_plot(plot)
    { }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (!m_done && watched == m_plot && event->type() == QEvent::Paint && m_plot->trace()) {
            m_done = true;
            std::fprintf(
                stderr, "exposure: first timeline painted %.0f ms after the process started\n", msSinceProcessStart());
        }
        return false;
    }

private:
    exposure::TimelinePlot* m_plot;
    bool m_done = false;
};

int fail(const QString& message)
{
    std::fprintf(stderr, "exposure: %s\n", qPrintable(message));
    return 2;
}

// Opens a trace or a session in the window (`open`) at `size`, saves a PNG of the whole window to `file` once the
// panels are done and returns the exit status.
int takeScreenshot(QApplication& app, MainWindow& window, const std::function<bool()>& open, QSize windowSize,
    const QString& file, bool asked)
{
    int rc = 0;
    window.setRemembersRecentFiles(false); // a screenshot run is not the user's history
    window.setFolderChooser([](const QString& missing) { // nobody to ask
        fail(QStringLiteral("%1: the session's trace is not there").arg(missing));
        return QString();
    });
    window.setMessageSink([&](const QString&, const QString& text) {
        rc = fail(text);
        app.exit(rc);
    });
    QObject::connect(&window, &MainWindow::traceLoaded, &app, [&] {
        if (qEnvironmentVariableIsSet("EXPOSURE_STARTUP_TIMING"))
            std::fprintf(stderr, "exposure: trace loaded and analysed %.0f ms after the process started\n",
                msSinceProcessStart());
        // Grab once the panels have delivered their statistics and kernel tables.
        window.whenIdle([&] {
            window.timeline()->replot();
            QApplication::processEvents();
            const QImage image = window.grab().toImage();
            if (!image.save(file, "PNG")) {
                rc = fail(QStringLiteral("%1: cannot write the PNG").arg(file));
            } else if (asked) {
                std::printf("%s\n", qPrintable(file));
            } else {
                std::printf("exposure: saved a %dx%d screenshot of the main window to %s\n", image.width(),
                    image.height(), qPrintable(file));
            }
            app.exit(rc);
        });
    });
    window.resize(windowSize);
    window.show();
    if (qEnvironmentVariableIsSet("EXPOSURE_STARTUP_TIMING"))
        std::fprintf(stderr, "exposure: loading starts %.0f ms after the process started\n", msSinceProcessStart());
    if (!open())
        return rc ? rc : 2;
    const int status = app.exec();
    return rc ? rc : status;
}

// "2ms:9.5ms" -> [2 ms, 9.5 ms]; nullopt unless FROM < TO.
std::optional<TimeRange> parseRange(const QString& text)
{
    const QStringList parts = text.split(QLatin1Char(':'));
    const auto from = parseDuration(parts.value(0).toStdString());
    const auto to = parseDuration(parts.value(1).toStdString());
    if (parts.size() != 2 || !from || !to || to.value_or(0) <= from.value_or(0))
        return std::nullopt;
    return TimeRange { *from, *to };
}

// QGuiApplication takes "-session" / "--session" (X11 session management) out of argv: take `--session FILE` (or
// `--session=FILE`) out first. Returns the file ("" if not given); `args` keeps the other arguments.
QString takeSessionArgument(int argc, char** argv, std::vector<char*>& args)
{
    QString file;
    for (int i = 0; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (i > 0 && (a == "--session" || a == "-session") && i + 1 < argc) {
            file = QString::fromLocal8Bit(argv[++i]);
            continue;
        }
        if (i > 0 && a.startsWith("--session=")) {
            file = QString::fromLocal8Bit(a.mid(10));
            continue;
        }
        args.push_back(argv[i]);
    }
    args.push_back(nullptr);
    return file;
}

} // namespace

int main(int argc, char** argv)
{
    // The resources live in the static widgets library; the linker would drop their initialiser.
    Q_INIT_RESOURCE(resources);
    // Figures exported from the GUI must be byte-identical to `exposure-cli render`'s: QPdfWriter's font order
    // follows QHash iteration, so fix the seed (hash flooding is no concern for a local viewer).
    QHashSeed::setDeterministicGlobalSeed();
    // No display at all (a server, a container, CI): render the window headlessly instead of failing to start.
    const bool headless = qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")
        && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
    if (headless)
        qputenv("QT_QPA_PLATFORM", "offscreen");
    std::vector<char*> appArgs;
    const QString sessionFile = takeSessionArgument(argc, argv, appArgs);
    int appArgc = int(appArgs.size()) - 1;
    QApplication app(appArgc, appArgs.data());
    QApplication::setApplicationName(QStringLiteral("exposure"));
    QApplication::setOrganizationName(QStringLiteral("exposure"));
    QApplication::setApplicationDisplayName(QStringLiteral("Exposure"));
    QApplication::setApplicationVersion(QStringLiteral(EXPOSURE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Trace viewer for multi-GPU training: compute vs. exposed communication."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(
        QStringLiteral("path"), QStringLiteral("OTF2 anchor file or trace folder to open"), QStringLiteral("[PATH]"));
    const QCommandLineOption shot(QStringLiteral("screenshot"),
        QStringLiteral("Load PATH, save a PNG of the whole window to FILE and exit."), QStringLiteral("FILE"));
    const QCommandLineOption size(QStringLiteral("size"),
        QStringLiteral("Window size for --screenshot (default 1600x1000)."), QStringLiteral("WxH"),
        QStringLiteral("1600x1000"));
    const QCommandLineOption range(QStringLiteral("range"),
        QStringLiteral("Initial visible range, e.g. 2ms:9.5ms (times since trace start)."), QStringLiteral("FROM:TO"));
    const QCommandLineOption theme(QStringLiteral("theme"),
        QStringLiteral("Colours: system (the default), dark (Fusion style, dark palette) or "
                       "light (Fusion style)."),
        QStringLiteral("NAME"), QStringLiteral("system"));
    const QCommandLineOption session(QStringLiteral("session"),
        QStringLiteral("Open a session saved by File > Save Session (its trace, view, panels and bookmarks)."),
        QStringLiteral("FILE"));
    parser.addOption(session);
    parser.addOption(theme);
    parser.addOption(shot);
    parser.addOption(size);
    parser.addOption(range);
    parser.process(app);
    const QStringList args = parser.positionalArguments();
    if (args.size() > 1)
        return fail(QStringLiteral("expected at most one PATH, got %1").arg(args.size()));
    if (!sessionFile.isEmpty() && !args.isEmpty())
        return fail(QStringLiteral("give either --session FILE or a PATH, not both"));

    if (!applyTheme(parser.value(theme)))
        return fail(QStringLiteral("--theme: expected system, dark or light, got \"%1\"").arg(parser.value(theme)));

    std::optional<TimeRange> initialRange;
    if (parser.isSet(range)) {
        initialRange = parseRange(parser.value(range));
        if (!initialRange)
            return fail(QStringLiteral("--range: expected FROM:TO with FROM < TO, e.g. 2ms:9.5ms, got \"%1\"")
                            .arg(parser.value(range)));
    }

    MainWindow window;
    // EXPOSURE_STARTUP_TIMING=1: print when the first timeline with a trace is painted, in ms since the process
    // started (from /proc, so library loading and Qt's start-up count too). What bench runs measure.
    if (qEnvironmentVariableIsSet("EXPOSURE_STARTUP_TIMING"))
        window.timeline()->installEventFilter(new FirstPaintReporter(window.timeline(), &window));
    // EXPOSURE_NO_PREVIEWS=1: no previews while a run of many files is read (the first timeline is the full trace's),
    // to measure what progressive loading saves.
    if (qEnvironmentVariableIsSet("EXPOSURE_NO_PREVIEWS"))
        window.loader()->setProgressive(false);
    if (initialRange) // applied once per loaded trace, before the first paint
        QObject::connect(
            &window, &MainWindow::traceLoaded, &window, [&] { window.timeline()->setVisibleRange(*initialRange); });
    // What to open: the session, or the trace PATH.
    const std::function<bool()> open = [&]() -> bool {
        if (!sessionFile.isEmpty())
            return window.openSession(sessionFile);
        window.openTrace(args.first());
        return true;
    };
    if (!parser.isSet(shot) && !headless) {
        window.show();
        if (!sessionFile.isEmpty() || !args.isEmpty())
            open();
        return app.exec();
    }

    // --- headless screenshot ---
    if (args.isEmpty() && sessionFile.isEmpty())
        return fail(headless ? QStringLiteral("no display (DISPLAY and WAYLAND_DISPLAY are unset): give a trace PATH "
                                              "to render the window to a PNG, or use exposure-cli")
                             : QStringLiteral("--screenshot needs a trace PATH"));
    const auto m = QRegularExpression(QStringLiteral("^(\\d+)x(\\d+)$")).match(parser.value(size));
    if (!m.hasMatch() || m.captured(1).toInt() < 200 || m.captured(2).toInt() < 150)
        return fail(QStringLiteral("--size: expected WxH of at least 200x150, got \"%1\"").arg(parser.value(size)));
    const QSize windowSize(m.captured(1).toInt(), m.captured(2).toInt());
    const QString file = parser.isSet(shot)
        ? parser.value(shot)
        : QDir::current().absoluteFilePath(QStringLiteral("exposure-screenshot.png"));
    if (!parser.isSet(shot))
        std::fprintf(
            stderr, "exposure: no display (DISPLAY and WAYLAND_DISPLAY are unset); rendering the window headlessly\n");
    return takeScreenshot(app, window, open, windowSize, file, parser.isSet(shot));
}
