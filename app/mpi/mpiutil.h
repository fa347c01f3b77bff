// SPDX-License-Identifier: GPL-3.0-or-later
// Small MPI helpers of exposure-mpi: byte strings broadcast, gathered to and scattered from process 0.
#pragma once

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

// A flat byte string writer/reader for the plan messages.
class Bytes
{
public:
    void i64(std::int64_t v) { m_out.append(reinterpret_cast<const char*>(&v), sizeof v); }
    void str(const std::string& s)
    {
        i64(std::int64_t(s.size()));
        m_out += s;
    }
    void raw(const std::string& s) { m_out += s; }
    std::string& out() { return m_out; }

private:
    std::string m_out;
};

class Cursor
{
public:
    explicit Cursor(const std::string& in)
        : m_in(in)
    { }
    std::int64_t i64();
    std::string str();
    bool atEnd() const { return m_pos == m_in.size(); }

private:
    const std::string& m_in;
    std::size_t m_pos = 0;
};

} // namespace exposure::mpi
