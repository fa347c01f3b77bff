// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzz target: the torch.profiler (Kineto) JSON reader. The whole input is one rank's file ("rank0.pt.trace.json",
// or ".json.gz" when it starts with the gzip magic), unless it uses the container format of fuzzfiles.h to give
// several files (ranks, world sizes). Then the analysis of whatever the reader accepts.
#include "fuzzcheck.h"

#include <cstddef>
#include <cstdint>

using namespace exposure;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    const auto files = fuzz::splitFiles(
        { reinterpret_cast<const char*>(data), size }, gzip ? "rank0.pt.trace.json.gz" : "rank0.pt.trace.json");
    fuzz::loadAndAnalyse(files);
    return 0;
}
