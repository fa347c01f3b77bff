// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The two halves of the torch.profiler importer: kinetofile.cpp reads one file (its SAX handler) into a FileData, the
// file's events by lane with ids into the file's own Trace; kinetoimporter.cpp merges the files' names and builds the
// run's ranks from them.

#include "import/jsonstream.h"
#include "import/loadoptions.h"
#include "model/trace.h"

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace exposure::kineto {

constexpr std::uint64_t kNoCorrelation = ~0ull;

// An event's "cat", as the reader tells them apart.
enum class EventCat : std::uint8_t { Other, Kernel, Memcpy, Memset, CpuOp, Annotation, Runtime, Driver, Python };

struct PendingInterval
{
    TimeNs start;
    TimeNs end;
    StringId name;
    std::uint64_t correlation; // kNoCorrelation if none
    std::uint64_t bytes; // copies and memsets
    EventCat cat;
    std::uint32_t collective; // index into Trace::collectiveArgs, kNoCollective if none
    std::uint64_t seq; // the collective's "Seq" number, kNoSeq if none
    std::uint32_t params; // kernels: index into the file's Trace::launchParams, kNoLaunchParams if none
};

constexpr std::uint64_t kNoSeq = ~0ull;

constexpr std::uint32_t kNoCollective = 0xFFFFFFFFu;

struct PendingLane
{
    std::string key; // "pid/tid" (CPU) or "device/stream" (GPU)
    bool gpu = false;
    int device = -1;
    int stream = -1;
    std::string pid, tid;
    std::vector<PendingInterval> intervals;
};

// One file's events, collected by the SAX handler.
struct FileData
{
    bool sawTraceEvents = false;
    std::int64_t rank = -1;
    std::int64_t worldSize = -1;
    std::vector<PendingLane> lanes;
    std::unordered_map<std::string, std::size_t> laneByKey;
    std::map<std::string, std::string> threadNames; // "pid/tid" -> name from thread_name metadata
    std::uint64_t events = 0;
    std::uint64_t badTimes = 0; // events whose ts/dur could not be read exactly
    std::uint64_t negativeDurations = 0; // events that end before they start (skipped: no sane reading)
    std::uint64_t badCorrelations = 0; // correlation ids that are not 64-bit integers
    // distributedInfo.pg_config: process group name -> (description, "[r0, r1, ...]").
    struct PgConfig
    {
        std::string name, desc, ranks;
    };
    std::vector<PgConfig> pgConfig;
    bool hip = false; // ROCm: the runtime calls are hip* (GPU streams are named HIP[d:s], not CUDA[d:s])
};

// Reads one torch.profiler file: names, region kinds, collective arguments and launch parameters into `trace` (the
// file's own), its events into the result. Throws LoadError naming the file for anything it cannot read.
// `scratch`: pages to decompress the file into (PageBufferPool), else its own.
FileData readFile(Trace& trace, const std::string& path, const LoadOptions& options, LoadProgress& progress,
    PageBuffer* scratch = nullptr);

} // namespace exposure::kineto
