// SPDX-License-Identifier: GPL-3.0-or-later
#include "plan.h"

#include <algorithm>
#include <filesystem>
#include <numeric>

namespace fs = std::filesystem;

namespace exposure::mpi {

std::uint64_t archiveBytes(const ArchiveRef& archive)
{
    const fs::path anchor(archive.anchor);
    std::error_code ec;
    std::uint64_t total = 0;
    auto add = [&](const fs::path& p) {
        std::error_code sizeError;
        const auto n = fs::file_size(p, sizeError);
        if (!sizeError)
            total += n;
    };
    add(anchor);
    fs::path def = anchor;
    def.replace_extension(".def");
    add(def);
    fs::path folder = anchor;
    folder.replace_extension();
    if (fs::is_directory(folder, ec)) {
        for (fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec), end;
             !ec && it != end; it.increment(ec)) {
            std::error_code ec2;
            if (it->is_regular_file(ec2))
                add(it->path());
        }
    }
    return total;
}

std::vector<int> assignBySize(const std::vector<std::uint64_t>& bytes, int processes)
{
    std::vector<std::size_t> order(bytes.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return bytes[a] > bytes[b]; });
    std::vector<std::uint64_t> load(std::size_t(std::max(1, processes)), 0);
    std::vector<int> owner(bytes.size(), 0);
    for (const std::size_t i : order) {
        const auto least = std::min_element(load.begin(), load.end()) - load.begin();
        owner[i] = int(least);
        load[std::size_t(least)] += std::max<std::uint64_t>(bytes[i], 1);
    }
    return owner;
}

} // namespace exposure::mpi
