// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-make-kineto-fixture DIR: writes the 2-rank torch.profiler test run of tests/support/kinetotraces.h to DIR
// (rank 0 as plain .json, rank 1 as .json.gz), the input of the torch.profiler corrupt-file matrix.
#include "support/kinetotraces.h"

#include <QDir>
#include <cstdio>

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fputs("Usage: exposure-make-kineto-fixture DIR\n", stderr);
        return 2;
    }
    const QString dir = QString::fromLocal8Bit(argv[1]);
    if (!QDir().mkpath(dir)) {
        std::fprintf(stderr, "exposure-make-kineto-fixture: %s: cannot create the folder\n", argv[1]);
        return 2;
    }
    using namespace exposure::testing;
    if (!writeFile(dir + QStringLiteral("/rank0.pt.trace.json"), rankTrace(0, 2))
        || !writeFile(dir + QStringLiteral("/rank1.pt.trace.json.gz"), rankTrace(1, 2))) {
        std::fprintf(stderr, "exposure-make-kineto-fixture: %s: cannot write the trace files\n", argv[1]);
        return 2;
    }
    return 0;
}
