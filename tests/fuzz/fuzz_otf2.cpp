// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzz target: the OTF2 import (anchor, global and local definitions, event files) of an archive built from the
// input (see fuzzfiles.h for the container format; tests/fuzz/corpus/otf2 holds packed one-rank archives), then
// the analysis of whatever the importer accepts. Bad input must end in a one-line LoadError.
#include "fuzzcheck.h"
#include "import/kinetoimporter.h"

#include <cstddef>
#include <cstdint>

using namespace exposure;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    fuzz::readOtf2AnchorsInProcess();
    auto files = fuzz::splitFiles({ reinterpret_cast<const char*>(data), size }, {});
    // A folder with torch.profiler files goes to the Kineto reader, which has its own target.
    std::erase_if(files, [](const fuzz::FuzzFile& f) { return isKinetoFileName(f.name); });
    fuzz::loadAndAnalyse(files);
    return 0;
}
