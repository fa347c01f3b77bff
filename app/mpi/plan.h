// SPDX-License-Identifier: GPL-3.0-or-later
// Which process of exposure-mpi reads which archive: by size, largest first, each to the least loaded process.
#pragma once

#include "import/archivefinder.h"

#include <cstdint>
#include <string>
#include <vector>

namespace exposure::mpi {

// Bytes on disk of one OTF2 archive: its anchor, its global definitions and its folder of per-location files.
std::uint64_t archiveBytes(const ArchiveRef& archive);

// owner[i] of archive i for `processes` processes: archives in decreasing size (ties: lower index first) each go
// to the process with the fewest bytes so far (ties: lower process). Deterministic.
std::vector<int> assignBySize(const std::vector<std::uint64_t>& bytes, int processes);

} // namespace exposure::mpi
