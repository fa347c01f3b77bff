// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers shared by every exposure-cli command (and by exposure-cli-render).
#include "commands.h"

#include <QCommandLineParser>
#include <cstdio>
#include <iostream>

namespace exposure::cli {

bool printedHelpOrVersion(const QCommandLineParser& parser, const char* command)
{
    if (parser.isSet(QStringLiteral("help"))) {
        // The parser names the program after argv[0], which is the sub-command here.
        QString help = parser.helpText();
        help.replace(QStringLiteral("Usage: ") + QLatin1String(command) + QLatin1Char(' '),
            QStringLiteral("Usage: exposure-cli ") + QLatin1String(command) + QLatin1Char(' '));
        std::fputs(qPrintable(help), stdout);
        return true;
    }
    if (parser.isSet(QStringLiteral("version"))) {
        std::printf("exposure-cli %s\n", EXPOSURE_VERSION);
        return true;
    }
    return false;
}

int fail(const std::string& message)
{
    std::cerr << "exposure-cli: " << message << std::endl;
    return 2;
}

} // namespace exposure::cli
