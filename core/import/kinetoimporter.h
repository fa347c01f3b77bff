// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// torch.profiler (Kineto) Chrome-trace JSON, one file per rank (`*.json` or `*.json.gz`), streamed through zlib and a
// RapidJSON SAX reader: no DOM of the file, exact integer nanoseconds from the microsecond timestamps.

#include "import/loadoptions.h"
#include "model/trace.h"

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

} // namespace exposure
