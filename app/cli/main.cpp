// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-cli: the headless front end (info, stats, compare; render runs exposure-cli-render).
#include "commands.h"

#include <QCommandLineParser>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

namespace {

void printUsage(std::FILE* out)
{
    std::fputs("Usage: exposure-cli <command> [options] TRACE\n"
               "\n"
               "Where the wall-clock time of multi-GPU training goes: compute, communication,\n"
               "and how much of the communication is hidden behind compute.\n"
               "\n"
               "Commands:\n"
               "  info     ranks, lanes, event and kernel counts, time span and warnings of a trace\n"
               "  stats    exact exposed-communication statistics per rank, per step and per kernel\n"
               "  render   a timeline figure as PNG, SVG or PDF, without a display\n"
               "  compare  one summary row per run (e.g. 1, 4, 8 GPUs): step time, exposed communication,\n"
               "           waiting for peers vs transfer, scaling efficiency\n"
               "  whatif   what an edit (a region removed, kernels faster, communication hidden, ...) would\n"
               "           change in the step time: trace-driven replay and the critical path of each step\n"
               "\n"
               "TRACE is an OTF2 archive (its anchor .otf2 file or its folder), a folder holding\n"
               "one archive per rank, torch.profiler (Kineto) traces: a .json / .json.gz file or a\n"
               "folder of them, one per rank, or Nsight Systems reports: a .sqlite export (or a\n"
               ".nsys-rep, exported when nsys is on the PATH) or a folder of them.\n"
               "'exposure-cli <command> --help' describes each command.\n"
               "\n"
               "Options:\n"
               "  -h, --help     show this help\n"
               "  -v, --version  show the version\n",
        out);
}

} // namespace

int main(int argc, char** argv)
{
    using namespace exposure::cli;
    if (argc < 2) {
        printUsage(stderr);
        return 2;
    }
    const std::string cmd = argv[1];
    if (cmd == "-h" || cmd == "--help" || cmd == "help") {
        printUsage(stdout);
        return 0;
    }
    if (cmd == "-v" || cmd == "--version") {
        std::printf("exposure-cli %s\n", EXPOSURE_VERSION);
        return 0;
    }
    if (cmd == "info")
        return runInfo(argc - 1, argv + 1);
    if (cmd == "stats")
        return runStats(argc - 1, argv + 1);
    if (cmd == "render") // drawing needs Qt Widgets and QCustomPlot: they live in a separate program
        return execRenderer(argc, argv);
    if (cmd == "compare")
        return runCompare(argc - 1, argv + 1);
    if (cmd == "whatif")
        return runWhatIf(argc - 1, argv + 1);
    return fail("unknown command '" + cmd + "' (expected info, stats, render, compare or whatif; see --help)");
}
