// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers shared by every exposure-cli command (and by exposure-cli-render).
#include "commands.h"

#include <QCommandLineParser>
#include <cstdio>
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

int fail(const std::string& message)
{
    if (!g_quiet)
        std::cerr << g_program << ": " << message << std::endl;
    return 2;
}

} // namespace exposure::cli
