// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// torch.profiler (Kineto) Chrome-trace JSON, one file per rank (`*.json` or `*.json.gz`), streamed through zlib and a
// RapidJSON SAX reader: no DOM of the file, exact integer nanoseconds from the microsecond timestamps.

#include "import/loadoptions.h"
#include "model/trace.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace exposure {

// Reads Kineto files into `trace`, one rank per file, and finalizes it.
//
// Rank numbers come from each file's `distributedInfo.rank`, else from "rank<N>" in the file name, else from the
// natural order of the files (also where the files declare different world sizes: files of different jobs, read as
// one run with a warning). GPU events (`kernel`, `gpu_memcpy`, `gpu_memset`) go to one lane per device and stream
// ("CUDA[d:s]"); CPU events (`cpu_op`, `user_annotation`, `cuda_runtime`, `cuda_driver`, `python_function`) to one
// lane per thread, nested by time (an event that outlasts its parent is clipped to the parent's end, counted and
// reported in Trace::warnings). Each kernel's, copy's and memset's `args.correlation` names its launch call
// (Lane::launchByInterval); one call may launch many (a CUDA graph launch, a library call).
//
// Throws LoadError naming the file for: unreadable or truncated gzip, invalid JSON (with the byte offset), a JSON
// file that is not a Kineto trace (no `traceEvents`), two files of the same rank.
// Honours LoadOptions::cancel (LoadCancelled) and reports progress by bytes read.
void importKineto(Trace& trace, const std::vector<std::string>& files, const LoadOptions& options);

// What numbering a run's ranks needs from one of its files.
struct KinetoFileRank
{
    std::int64_t declared = -1; // distributedInfo.rank
    std::int64_t worldSize = -1; // distributedInfo.world_size
    int named = -1; // "rank<N>" in the file name
};

// The rank number of each file of a run (`files`, in the run's order), as importKineto numbers them. `warning` gets
// the run's warning where the files declare different world sizes (else it is cleared). Throws LoadError for two
// files of the same rank.
std::vector<int> kinetoRankNumbers(const std::vector<std::string>& files, const std::vector<KinetoFileRank>& meta,
    const std::string& sourcePath, std::string& warning);

// Some files of a run read apart from the others (a process of exposure-mpi), in importKineto's two halves: read()
// the files, then build() their ranks once the whole run's numbers are known (kinetoRankNumbers over every file).
// importKineto is read(), the numbering, build().
class KinetoPart
{
public:
    KinetoPart(Trace& trace, std::vector<std::string> files, const LoadOptions& options);
    ~KinetoPart();
    void read();
    std::vector<KinetoFileRank> fileRanks() const; // one per file, in the order given
    // Builds the files' ranks in the order of `numbers` (one per file), appends their warnings to trace.warnings
    // (warningsPerRank: how many each rank added, in rank order) and finalizes the trace.
    void build(const std::vector<int>& numbers, std::vector<std::size_t>* warningsPerRank = nullptr);

private:
    struct State;
    std::unique_ptr<State> m;
};

} // namespace exposure
