// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzz target: the Nsight Systems SQLite reader. The whole input is one report ("rank0.sqlite"), unless it uses the
// container format of fuzzfiles.h to give several files (ranks). Then the analysis of whatever the reader accepts.
#include "fuzzcheck.h"

#include <cstddef>
#include <cstdint>

using namespace exposure;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    // An input may also hold OTF2 archives (a folder of mixed kinds).
    fuzz::readOtf2AnchorsInProcess();
    const auto files = fuzz::splitFiles({ reinterpret_cast<const char*>(data), size }, "rank0.sqlite");
    fuzz::loadAndAnalyse(files);
    return 0;
}
