// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-make-demo OUTDIR [--ranks N] [--steps N] [--scale K] [--launch-bound]
// Writes the demo DDP trace folder (OUTDIR/rank0, OUTDIR/rank1, ...). With a large --scale it also makes the
// benchmark archive.
#include "synth/archivewriter.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

int usage(std::FILE* out, int rc)
{
    std::fputs("Usage: exposure-make-demo OUTDIR [--ranks N] [--steps N] [--scale K] [--launch-bound]\n"
               "Writes a small Score-P-like 2-rank DDP trace folder (one OTF2 archive per rank).\n"
               "--launch-bound: a small-batch run whose CPU cannot launch kernels as fast as the GPU runs them.\n",
        out);
    return rc;
}

} // namespace

int main(int argc, char** argv)
{
    std::string out;
    exposure::synth::DemoOptions options;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto number = [&](int& target) {
            if (i + 1 >= argc)
                return false;
            char* end = nullptr;
            const long v = std::strtol(argv[++i], &end, 10);
            if (!end || *end || v < 1 || v > 1'000'000)
                return false;
            target = int(v);
            return true;
        };
        if (a == "-h" || a == "--help")
            return usage(stdout, 0);
        if (a == "--launch-bound") {
            options.launchBound = true;
            continue;
        }
        if (a == "--ranks" || a == "--steps" || a == "--scale") {
            int& t = a == "--ranks" ? options.ranks : a == "--steps" ? options.steps : options.scale;
            if (!number(t)) {
                std::fprintf(stderr, "exposure-make-demo: %s needs a positive number\n", a.c_str());
                return 2;
            }
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "exposure-make-demo: unknown option %s\n", a.c_str());
            return usage(stderr, 2);
        } else if (out.empty()) {
            out = a;
        } else {
            return usage(stderr, 2);
        }
    }
    if (out.empty())
        return usage(stderr, 2);
    try {
        const auto spec = exposure::synth::makeDemoSpec(options);
        const auto events = exposure::synth::writeArchive(out, spec);
        std::printf("exposure-make-demo: wrote %zu rank archives, %llu events to %s\n", spec.ranks.size(),
            static_cast<unsigned long long>(events), out.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "exposure-make-demo: %s: %s\n", out.c_str(), e.what());
        return 2;
    }
    return 0;
}
