// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-cli-render: `exposure-cli render` (exposure-cli execs this program with its own arguments, argv[1] ==
// "render"), the one command that draws and so links Qt Widgets and QCustomPlot.
#include "commands.h"

int main(int argc, char** argv)
{
    if (argc < 2)
        return exposure::cli::fail("exposure-cli-render is started by `exposure-cli render`");
    return exposure::cli::runRender(argc - 1, argv + 1);
}
