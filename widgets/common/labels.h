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
QString groupDigits(std::uint64_t n); // "1 234" (groups of three digits, for counts)
QString durationText(TimeNs ns); // "1.25 ms", "340 ns" (model/timeformat.h)

} // namespace exposure
