// SPDX-License-Identifier: GPL-3.0-or-later
// The wire format of exposure-mpi: the report parts (analysis/statsparts.h) as flat byte strings for exchange
// between the processes of one job on one machine type (integers little-endian as in memory, strings
// length-prefixed). Free of MPI itself, so that the tests check it where MPI is not installed.
#pragma once

#include "analysis/statsparts.h"

#include <string>
#include <string_view>

namespace exposure::mpi {

std::string serialize(const RankReport& r);
RankReport deserializeRankReport(std::string_view bytes);
std::string serialize(const KernelParts& k);
KernelParts deserializeKernelParts(std::string_view bytes);
std::string serialize(const CollectiveCandidates& c);
CollectiveCandidates deserializeCollectiveCandidates(std::string_view bytes);

} // namespace exposure::mpi
