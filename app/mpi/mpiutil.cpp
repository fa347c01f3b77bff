// SPDX-License-Identifier: GPL-3.0-or-later
#include "mpiutil.h"

#include <climits>
#include <cstring>
#include <numeric>
#include <stdexcept>

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

} // namespace

void broadcast(std::string& bytes)
{
    std::int64_t n = std::int64_t(bytes.size());
    MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    bytes.resize(std::size_t(n));
    if (n > 0)
        MPI_Bcast(bytes.data(), count(std::size_t(n)), MPI_CHAR, 0, MPI_COMM_WORLD);
}

std::vector<std::string> gather(const std::string& bytes)
{
    const int size = worldSize();
    const bool root = worldRank() == 0;
    const int mine = count(bytes.size());
    std::vector<int> sizes(root ? std::size_t(size) : 0), offsets(root ? std::size_t(size) : 0);
    MPI_Gather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string all;
    if (root) {
        std::size_t total = 0;
        for (int p = 0; p < size; ++p) {
            offsets[std::size_t(p)] = count(total);
            total += std::size_t(sizes[std::size_t(p)]);
        }
        all.resize(std::size_t(count(total)));
    }
    MPI_Gatherv(bytes.data(), mine, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
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
    MPI_Scatter(sizes.data(), 1, MPI_INT, &mine, 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string out(std::size_t(mine), '\0');
    MPI_Scatterv(all.data(), sizes.data(), offsets.data(), MPI_CHAR, out.data(), mine, MPI_CHAR, 0, MPI_COMM_WORLD);
    return out;
}

void send(const std::string& bytes, int to, int tag)
{
    const std::int64_t n = std::int64_t(bytes.size());
    MPI_Send(&n, 1, MPI_INT64_T, to, tag, MPI_COMM_WORLD);
    if (n > 0)
        MPI_Send(bytes.data(), count(bytes.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
}

std::string receive(int from, int tag)
{
    std::int64_t n = 0;
    MPI_Recv(&n, 1, MPI_INT64_T, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    std::string bytes(std::size_t(n), '\0');
    if (n > 0)
        MPI_Recv(bytes.data(), count(bytes.size()), MPI_CHAR, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return bytes;
}

std::int64_t allMin(std::int64_t v)
{
    std::int64_t r = 0;
    MPI_Allreduce(&v, &r, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    return r;
}

std::int64_t allMax(std::int64_t v)
{
    std::int64_t r = 0;
    MPI_Allreduce(&v, &r, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    return r;
}

std::int64_t allSum(std::int64_t v)
{
    std::int64_t r = 0;
    MPI_Allreduce(&v, &r, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return r;
}

void allSum(std::vector<std::int64_t>& v)
{
    if (!v.empty())
        MPI_Allreduce(MPI_IN_PLACE, v.data(), count(v.size()), MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
}

} // namespace exposure::mpi
