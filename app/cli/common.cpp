// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers shared by every exposure-cli command (and by exposure-cli-render).
#include "commands.h"
#include "run/jobcheck.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace exposure::cli {

namespace {
const char* g_program = "exposure-cli";
bool g_quiet = false;
} // namespace

void setQuiet(bool quiet)
{
    g_quiet = quiet;
}

void setProgramName(const char* name)
{
    g_program = name;
}

bool printedHelpOrVersion(const QCommandLineParser& parser, const char* command)
{
    if (g_quiet)
        return parser.isSet(QStringLiteral("help")) || parser.isSet(QStringLiteral("version"));
    if (parser.isSet(QStringLiteral("help"))) {
        // The parser names the program after argv[0], which is the sub-command here.
        QString help = parser.helpText();
        help.replace(QStringLiteral("Usage: ") + QLatin1String(command) + QLatin1Char(' '),
            QStringLiteral("Usage: ") + QLatin1String(g_program) + QLatin1Char(' ') + QLatin1String(command)
                + QLatin1Char(' '));
        std::fputs(qPrintable(help), stdout);
        return true;
    }
    if (parser.isSet(QStringLiteral("version"))) {
        std::printf("%s %s\n", g_program, EXPOSURE_VERSION);
        return true;
    }
    return false;
}

void setUpCommand(QCommandLineParser& parser, const char* command, const QString& description)
{
    QCoreApplication::setApplicationName(QStringLiteral("exposure-cli ") + QLatin1String(command));
    QCoreApplication::setApplicationVersion(QStringLiteral(EXPOSURE_VERSION));
    parser.setApplicationDescription(description);
    parser.addHelpOption();
    parser.addVersionOption();
}

void addTraceArgument(QCommandLineParser& parser)
{
    parser.addPositionalArgument(QStringLiteral("TRACE"),
        QStringLiteral("An OTF2 anchor file, an archive folder, or a folder of per-rank archives; or "
                       "torch.profiler traces: a .json / .json.gz file or a folder of them; or Nsight "
                       "Systems reports: a .sqlite export, a .nsys-rep or a folder of them."));
}

std::optional<int> parseTraceCommand(QCommandLineParser& parser, const char* command, std::string& path)
{
    addTraceArgument(parser);
    const std::string name(command);
    if (!parser.parse(QCoreApplication::arguments()))
        return fail(name + ": " + parser.errorText().toStdString());
    if (printedHelpOrVersion(parser, command))
        return 0;
    const auto args = parser.positionalArguments();
    if (args.size() != 1)
        return fail(name + ": expected exactly one TRACE argument (see 'exposure-cli " + name + " --help')");
    path = args.front().toStdString();
    return std::nullopt;
}

void LoadArgs::addTo(QCommandLineParser& parser) const
{
    for (const QCommandLineOption* o : { &rules, &extendRules, &clock, &ranks, &memoryLimit })
        parser.addOption(*o);
}

namespace {

// --memory-limit SIZE: "512M", "8G", "1.5GiB", "4096" (bytes); nullopt when it is no size.
std::optional<std::uint64_t> parseSize(QString text)
{
    text = text.trimmed().toUpper();
    if (text.endsWith(QStringLiteral("IB")))
        text.chop(2);
    else if (text.endsWith(QLatin1Char('B')))
        text.chop(1);
    double factor = 1;
    if (!text.isEmpty() && QStringLiteral("KMGT").contains(text.back())) {
        factor = std::pow(1024.0, QStringLiteral("KMGT").indexOf(text.back()) + 1);
        text.chop(1);
    }
    bool ok = false;
    const double value = text.toDouble(&ok) * factor;
    if (!ok || !(value >= 1) || value > 1e18)
        return std::nullopt;
    return std::uint64_t(value);
}

} // namespace

std::string LoadArgs::apply(const QCommandLineParser& parser, RunOptions& options) const
{
    if (parser.isSet(rules) && parser.isSet(extendRules))
        return "--rules and --extend-rules exclude each other";
    if (parser.isSet(clock)) {
        const QString mode = parser.value(clock);
        if (mode != QStringLiteral("aligned") && mode != QStringLiteral("recorded"))
            return "--clock '" + mode.toStdString() + "': expected aligned or recorded";
        options.clock = mode == QStringLiteral("aligned") ? ClockMode::Aligned : ClockMode::Recorded;
    }
    if (parser.isSet(ranks)) {
        const auto list = parseRankList(parser.value(ranks).toStdString());
        if (!list)
            return "--ranks '" + parser.value(ranks).toStdString() + "': expected rank numbers such as 0,2,4-7";
        options.load.ranks = *list;
    }
    if (parser.isSet(memoryLimit)) {
        const auto size = parseSize(parser.value(memoryLimit));
        if (!size)
            return "--memory-limit '" + parser.value(memoryLimit).toStdString()
                + "': expected a size such as 512M or 8G";
        options.load.memoryLimit = *size;
    }
    // The rules file last: the cheap checks first.
    try {
        if (parser.isSet(rules))
            options.rules = Rules::fromFile(parser.value(rules).toStdString(), false);
        else if (parser.isSet(extendRules))
            options.rules = Rules::fromFile(parser.value(extendRules).toStdString(), true);
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

void warnJobs(const std::vector<std::string>& warnings)
{
    // Still one loadable run; but files of different jobs read as one are worth saying where it is seen at once.
    for (const auto& w : warnings)
        if (isJobWarning(w) && !g_quiet)
            std::cerr << g_program << ": warning: " << w << std::endl;
}

std::optional<OpenedRun> openRunOrFail(const std::string& path, const RunOptions& options)
{
    std::string error;
    bool stalled = false;
    auto run = openRunOrError(path, options, error, &stalled);
    if (run) {
        warnJobs(run->trace->warnings);
        return run;
    }
    fail(error);
    if (stalled) {
        std::fflush(nullptr);
        std::_Exit(2); // the reading thread cannot be stopped from outside
    }
    return std::nullopt;
}

int fail(const std::string& message)
{
    if (!g_quiet)
        std::cerr << g_program << ": " << message << std::endl;
    return 2;
}

} // namespace exposure::cli
