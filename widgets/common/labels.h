// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Texts every part of the GUI writes the same way: durations, counts, categories, overlap states.
#include "analysis/analysis.h"
#include "model/timerange.h"

#include <QString>
#include <cstdint>

namespace exposure {

QString categoryLabel(Category c); // "compute", "communication", "memcpy", "idle / sync", "host"
QString overlapStateLabel(OverlapState s); // "compute only", "hidden communication", ...
QString phaseLabel(Phase p); // "forward", "backward", "optimizer", "unknown"
// The same states where room is short (legends, figure legends, hover texts): "hidden comm.", "other GPU", ...
QString overlapStateShortLabel(OverlapState s);
QString groupDigits(std::uint64_t n); // "1 234" (groups of three digits, for counts)
QString durationText(TimeNs ns); // "1.25 ms", "340 ns" (model/timeformat.h)
// "512 B", "4.10 kB", "26.4 MB" (decimal units, three significant digits, as GB/s elsewhere); with `exact`, the
// count follows: "4.00 MB (4 000 000 bytes)".
QString byteCountText(std::uint64_t bytes, bool exact = false);

} // namespace exposure
