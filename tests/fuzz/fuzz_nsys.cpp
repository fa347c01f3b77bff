// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzz target: the Nsight Systems SQLite reader. The whole input is one report ("rank0.sqlite"), unless it uses the
// container format of fuzzfiles.h to give several files (ranks). Then the analysis of whatever the reader accepts.
#include "fuzzcheck.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

using namespace exposure;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    // An input may also hold OTF2 archives (a folder of mixed kinds); their anchors are read in this process, as in
    // fuzz_otf2. Through exposure-otf2-probe each one cost a program start and, for the leak check libFuzzer then
    // ran, a scan of the whole heap: together two thirds of the time.
    static const bool inProcess = ::setenv("EXPOSURE_OTF2_PROBE", "off", 1) == 0;
    (void)inProcess;
    const auto files = fuzz::splitFiles({ reinterpret_cast<const char*>(data), size }, "rank0.sqlite");
    fuzz::loadAndAnalyse(files);
    return 0;
}
