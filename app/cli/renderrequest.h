// SPDX-License-Identifier: GPL-3.0-or-later
// `render` in parts, shared by exposure-cli-render and exposure-mpi.
#pragma once

#include "figure/figurespec.h"
#include "run/openrun.h"

#include <QString>

namespace exposure::cli {

struct RenderRequest
{
    FigureSpec spec; // the command line applied over --spec, validated
    QString output; // -o FILE
    bool force = false; // --force
    QString saveSpec; // --save-spec FILE ("" without)
    bool dpPpGrid = false; // --grid dp-pp: the slowdown heat map per DP rank × pipeline stage (not in the spec)
    bool even = false; // --even: the predicted timeline of the straggler what-if instead of the recorded one
    RunOptions run; // the load options (cli::LoadArgs), the clock as the spec says, the collectives matched
};

// Before the QApplication exists: a fixed QHash seed (PDF bytes), Qt's headless notes kept off stderr, and the
// offscreen platform when nothing names a display.
void prepareRenderProcess();
// Parses the render command line (the QApplication must exist; its name and version are set here). Returns -1 to
// go on, else the exit status (help, version: 0; a bad argument or spec, an output that exists without --force:
// 2, with the message printed).
int parseRenderRequest(RenderRequest& request);

} // namespace exposure::cli
