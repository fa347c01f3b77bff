// SPDX-License-Identifier: GPL-3.0-or-later
// Small MPI helpers of exposure-mpi: byte strings broadcast, gathered to and scattered from process 0. Every one
// waits without spinning (non-blocking calls polled with pauses), so that a process waiting for others leaves its
// core to them.
#pragma once

#include "model/bytes.h"

#include <cstdint>
#include <mpi.h>
#include <string>
#include <vector>

namespace exposure::mpi {

struct World
{
    int rank = 0;
    int size = 1;
    bool root() const { return rank == 0; }
};

// Process 0's `bytes` on every process.
void broadcast(std::string& bytes);
void broadcast(std::int64_t& value);
// Every process has come here.
void barrier();
// Every process's `bytes`, on process 0 (by process rank; empty elsewhere).
std::vector<std::string> gather(const std::string& bytes);
// parts[p] (given on process 0) to process p.
std::string scatter(const std::vector<std::string>& parts);

// Point to point: a byte string of any length (its length goes first).
void send(const std::string& bytes, int to, int tag);
std::string receive(int from, int tag);

std::int64_t allMin(std::int64_t v);
std::int64_t allMax(std::int64_t v);
std::int64_t allSum(std::int64_t v);
// Element-wise sum over all processes, in place.
void allSum(std::vector<std::int64_t>& v);

// The plan and part messages: the program's one byte format (model/bytes.h).
using Bytes = ByteWriter;
class Cursor : public ByteReader
{
public:
    explicit Cursor(const std::string& in)
        : ByteReader(in, "message between processes")
    { }
};

} // namespace exposure::mpi
