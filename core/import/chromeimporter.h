// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The Chrome Trace Event Format (a JSON array of events, or an object whose "traceEvents" lacks torch.profiler's
// fields), `*.json` or `*.json.gz`, streamed through zlib and a RapidJSON SAX reader like torch.profiler traces.

#include "import/loadoptions.h"
#include "model/trace.h"

#include <string>

namespace exposure {

// Whether `path` holds a Chrome trace that is not a torch.profiler one: a JSON array starting with an event object
// (or empty), or an object whose "traceEvents" holds a complete X, B, E or instant event and where the first MiB shows
// none of Kineto's fields (schemaVersion, deviceProperties, distributedInfo, baseTimeNanoseconds, a Kineto event
// category such as "kernel" or "cpu_op"). False for anything unreadable: the torch.profiler reader reports it.
bool isChromeTraceFile(const std::string& path);

// Reads one Chrome trace into `trace` and finalizes it.
//
// Events: X (complete), B/E pairs (per thread, an E closes the latest open B; an E without a B is skipped and an open
// B is closed at the last timestamp of the file, each counted in a warning), instants (i, I: zero-length) and M
// metadata (process_name, thread_name). Microseconds with fractions become integer nanoseconds rounded to the nearest
// (start = round(ts), end = start + round(dur)). Threads map to ranks, coordinates and lane roles through
// LoadOptions::chromeMapping, then the built-in Megatron-LM timeline mapping (thread names "PP rank P, TP rank T,
// LANE", pid = DP rank, args.step the step); a thread no rule matches is a GPU lane of its process's rank whose names
// the ordinary rules classify. One rank per worker: per (dp, pp, tp, ep, cp) where the mapping gives coordinates,
// numbered as Megatron-LM numbers global ranks (tp fastest, then cp, ep, dp, pp slowest), else per process. Events
// with a step get a CPU lane "steps" with one region "step N" per step, from the first start to the last end of the
// rank's events of that step (the step regions of the analysis).
//
// Throws LoadError naming the file for unreadable or truncated gzip, invalid JSON (with the byte offset), JSON that
// is no Chrome trace, a trace without events. Honours LoadOptions::cancel (LoadCancelled).
void importChrome(Trace& trace, const std::string& file, const LoadOptions& options);

} // namespace exposure
