// SPDX-License-Identifier: GPL-3.0-or-later
#include "mpiutil.h"

#include <chrono>
#include <climits>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <thread>

namespace exposure::mpi {

namespace {

int worldRank()
{
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int worldSize()
{
    int n = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

int count(std::size_t n)
{
    if (n > std::size_t(INT_MAX))
        throw std::length_error("a message of more than 2 GiB between processes");
    return int(n);
}

// Waits for a non-blocking operation without holding a core: Open MPI's blocking calls poll without pause, so a
// process waiting for process 0 (which may read for a minute) burnt a core all the while, and those cores were then
// missing from the processes that had work (16 waiting processes took 7 times the CPU of the whole job). Polls
// at once, then sleeps between polls, from 20 us up to 2 ms: a wait costs at most ~2 ms more than a busy one.
void waitQuietly(MPI_Request& request)
{
    int done = 0;
    auto pause = std::chrono::microseconds(20);
    for (;;) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        std::this_thread::sleep_for(pause);
        pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(2));
    }
}

std::int64_t allReduce(std::int64_t v, MPI_Op op)
{
    std::int64_t result = 0;
    MPI_Request r;
    MPI_Iallreduce(&v, &result, 1, MPI_INT64_T, op, MPI_COMM_WORLD, &r);
    waitQuietly(r);
    return result;
}

} // namespace

void broadcast(std::string& bytes)
{
    std::int64_t n = std::int64_t(bytes.size());
    MPI_Request r;
    MPI_Ibcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD, &r);
    waitQuietly(r);
    bytes.resize(std::size_t(n));
    if (n > 0) {
        MPI_Ibcast(bytes.data(), count(std::size_t(n)), MPI_CHAR, 0, MPI_COMM_WORLD, &r);
        waitQuietly(r);
    }
}

void barrier()
{
    MPI_Request r;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    waitQuietly(r);
}

void broadcast(std::int64_t& value)
{
    MPI_Request r;
    MPI_Ibcast(&value, 1, MPI_INT64_T, 0, MPI_COMM_WORLD, &r);
    waitQuietly(r);
}

std::vector<std::string> gather(const std::string& bytes)
{
    const int size = worldSize();
    const bool root = worldRank() == 0;
    const int mine = count(bytes.size());
    std::vector<int> sizes(root ? std::size_t(size) : 0), offsets(root ? std::size_t(size) : 0);
    MPI_Request r;
    MPI_Igather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
    waitQuietly(r);
    std::string all;
    if (root) {
        std::size_t total = 0;
        for (int p = 0; p < size; ++p) {
            offsets[std::size_t(p)] = count(total);
            total += std::size_t(sizes[std::size_t(p)]);
        }
        all.resize(std::size_t(count(total)));
    }
    MPI_Igatherv(
        bytes.data(), mine, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD, &r);
    waitQuietly(r);
    std::vector<std::string> out;
    if (root)
        for (int p = 0; p < size; ++p)
            out.push_back(all.substr(std::size_t(offsets[std::size_t(p)]), std::size_t(sizes[std::size_t(p)])));
    return out;
}

std::string scatter(const std::vector<std::string>& parts)
{
    const int size = worldSize();
    const bool root = worldRank() == 0;
    std::vector<int> sizes(std::size_t(size), 0), offsets(std::size_t(size), 0);
    std::string all;
    if (root) {
        std::size_t total = 0;
        for (int p = 0; p < size; ++p) {
            sizes[std::size_t(p)] = count(parts[std::size_t(p)].size());
            offsets[std::size_t(p)] = count(total);
            total += parts[std::size_t(p)].size();
            all += parts[std::size_t(p)];
        }
        count(total);
    }
    int mine = 0;
    MPI_Request r;
    MPI_Iscatter(sizes.data(), 1, MPI_INT, &mine, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
    waitQuietly(r);
    std::string out(std::size_t(mine), '\0');
    MPI_Iscatterv(
        all.data(), sizes.data(), offsets.data(), MPI_CHAR, out.data(), mine, MPI_CHAR, 0, MPI_COMM_WORLD, &r);
    waitQuietly(r);
    return out;
}

void send(const std::string& bytes, int to, int tag)
{
    const std::int64_t n = std::int64_t(bytes.size());
    MPI_Request r;
    MPI_Isend(&n, 1, MPI_INT64_T, to, tag, MPI_COMM_WORLD, &r);
    waitQuietly(r);
    if (n > 0) {
        MPI_Isend(bytes.data(), count(bytes.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD, &r);
        waitQuietly(r);
    }
}

std::string receive(int from, int tag)
{
    std::int64_t n = 0;
    MPI_Request r;
    MPI_Irecv(&n, 1, MPI_INT64_T, from, tag, MPI_COMM_WORLD, &r);
    waitQuietly(r);
    std::string bytes(std::size_t(n), '\0');
    if (n > 0) {
        MPI_Irecv(bytes.data(), count(bytes.size()), MPI_CHAR, from, tag, MPI_COMM_WORLD, &r);
        waitQuietly(r);
    }
    return bytes;
}

std::int64_t allMin(std::int64_t v)
{
    return allReduce(v, MPI_MIN);
}

std::int64_t allMax(std::int64_t v)
{
    return allReduce(v, MPI_MAX);
}

std::int64_t allSum(std::int64_t v)
{
    return allReduce(v, MPI_SUM);
}

void allSum(std::vector<std::int64_t>& v)
{
    if (v.empty())
        return;
    MPI_Request r;
    MPI_Iallreduce(MPI_IN_PLACE, v.data(), count(v.size()), MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &r);
    waitQuietly(r);
}

} // namespace exposure::mpi
