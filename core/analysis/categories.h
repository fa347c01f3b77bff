// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The vocabulary of the analysis: what a GPU or CPU interval is (category), which part of a training step it belongs
// to (phase), and what a rank's GPUs do at one moment (overlap state, activity bits).
#include <cstdint>

namespace exposure {

enum class Category : std::uint8_t {
    Compute, // every GPU kernel that is not one of the below
    Communication, // NCCL / RCCL kernels
    Memcpy, // copies and memsets
    Idle, // sync / idle ("COMPUTE IDLE", "DEVICE SYNCHRONIZE", ...): never compute
    Host, // CPU-side regions
};
inline constexpr int kCategoryCount = 5;
const char* categoryName(Category c); // "compute", "communication", "memcpy", "idle", "host"

enum class Phase : std::uint8_t { Unknown, Forward, Backward, Optimizer };
const char* phaseName(Phase p);

// What a rank's GPUs do at one moment.
enum class OverlapState : std::uint8_t {
    ComputeOnly, // compute, no communication
    Hidden, // communication while compute runs
    Exposed, // communication with no compute
    Other, // only memcpy / other GPU activity
    // Only in the timeline's overlap rows once collectives are matched (never in RankAnalysis::overlap): the part of
    // Exposed / Hidden during which a matched communication kernel of the rank waits for the last member of its group.
    WaitingExposed,
    WaitingHidden,
};
inline constexpr int kOverlapStateCount = 6;
const char* overlapStateName(OverlapState s);

// Bits of RankAnalysis::activityMask.
enum ActivityBit : std::uint8_t {
    ActivityComm = 1, // a communication kernel runs
    ActivityCompute = 2, // a compute kernel runs
    ActivityBackward = 4, // a compute kernel of phase Backward runs
    ActivityMemcpy = 8, // a copy or memset runs
    ActivityUnclassified = 16, // a compute kernel that only a catch-all rule matched runs
};

} // namespace exposure
