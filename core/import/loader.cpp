// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/loader.h"

#include "import/archivefinder.h"
#include "import/consistency.h"
#include "import/kinetoimporter.h"
#include "import/memorybudget.h"
#include "import/nsysimporter.h"
#include "import/otf2importer.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace exposure {

namespace {

// Uncompressed size of a torch.profiler file: its size, or for gzip the ISIZE trailer (size mod 2^32) when it is
// plausible, else ten times the compressed size.
std::uint64_t jsonBytes(const std::string& file)
{
    std::error_code ec;
    const std::uint64_t size = std::filesystem::file_size(file, ec);
    if (ec)
        return 0;
    if (file.size() < 3 || file.compare(file.size() - 3, 3, ".gz") != 0)
        return size;
    std::uint64_t isize = 0;
    if (std::FILE* f = std::fopen(file.c_str(), "rb")) {
        unsigned char t[4];
        if (size >= 4 && std::fseek(f, -4, SEEK_END) == 0 && std::fread(t, 1, 4, f) == 4)
            isize = t[0] | (t[1] << 8) | (t[2] << 16) | (std::uint64_t(t[3]) << 24);
        std::fclose(f);
    }
    return size < (1ull << 32) && isize >= size ? isize : 10 * size;
}

void checkKinetoMemory(const std::string& path, const std::vector<std::string>& files, const LoadOptions& options)
{
    std::uint64_t bytes = 0;
    for (const auto& f : files)
        bytes += jsonBytes(f);
    const std::uint64_t needed = kBaseBytes + std::uint64_t(double(bytes) * kBytesPerJsonByte);
    checkMemory(path, needed, formatBytes(bytes) + " of JSON", options);
    if (options.memoryEstimated)
        options.memoryEstimated(needed);
}

} // namespace

std::optional<std::vector<int>> parseRankList(const std::string& text)
{
    std::vector<int> out;
    std::size_t pos = 0;
    auto number = [&](int& v) {
        while (pos < text.size() && text[pos] == ' ')
            ++pos;
        const std::size_t start = pos;
        long long value = 0;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && pos - start < 9)
            value = value * 10 + (text[pos++] - '0');
        while (pos < text.size() && text[pos] == ' ')
            ++pos;
        v = int(value);
        return pos > start && !(pos < text.size() && text[pos] >= '0' && text[pos] <= '9');
    };
    do {
        int a = 0, b = 0;
        if (!number(a))
            return std::nullopt;
        b = a;
        if (pos < text.size() && text[pos] == '-') {
            ++pos;
            if (!number(b) || b < a || b - a > 1'000'000)
                return std::nullopt;
        }
        for (int r = a; r <= b; ++r)
            if (std::find(out.begin(), out.end(), r) == out.end())
                out.push_back(r);
    } while (pos < text.size() && text[pos++] == ',');
    if (pos != text.size() || out.empty())
        return std::nullopt;
    return out;
}

std::string formatRankList(std::vector<int> ranks)
{
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    std::string s;
    for (std::size_t i = 0; i < ranks.size();) {
        std::size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
            ++j;
        s += (s.empty() ? "" : ",") + std::to_string(ranks[i]);
        if (j > i)
            s += (j == i + 1 ? "," : "-") + std::to_string(ranks[j]);
        i = j + 1;
    }
    return s;
}

std::shared_ptr<Trace> loadTrace(const std::string& path, const LoadOptions& options)
{
    auto trace = std::make_shared<Trace>();
    trace->sourcePath = path;
    // torch.profiler JSON: a .json / .json.gz file, or a folder of them that holds no OTF2 archive.
    std::error_code ec;
    const bool folder = std::filesystem::is_directory(path, ec);
    std::vector<ArchiveRef> archives;
    auto kinetoOnly = [&] {
        if (!options.ranks.empty())
            throw LoadError(path, "choosing ranks (--ranks " + formatRankList(options.ranks)
                                      + ") works for folders of OTF2 archives; open the torch.profiler or Nsight "
                                        "Systems file of each rank you want instead");
    };
    if (!folder && (isNsysSqliteFileName(path) || isNsysReportFileName(path) || hasSqliteHeader(path))) {
        kinetoOnly();
        return loadNsys(path, {path}, options);
    }
    if (!folder && isKinetoFileName(path)) {
        kinetoOnly();
        checkKinetoMemory(path, {path}, options);
        importKineto(*trace, {path}, options);
        checkConsistency(*trace);
        return trace;
    }
    try {
        archives = findArchives(path);
    } catch (const LoadError&) {
        const auto kineto = folder ? findKinetoFiles(path) : std::vector<std::string>();
        const auto nsys = folder && kineto.empty() ? findNsysFiles(path) : std::vector<std::string>();
        if (!nsys.empty()) {
            kinetoOnly();
            return loadNsys(path, nsys, options);
        }
        if (kineto.empty())
            throw;
        kinetoOnly();
        checkKinetoMemory(path, kineto, options);
        importKineto(*trace, kineto, options);
        checkConsistency(*trace);
        return trace;
    }
    auto whole = loadArchives(path, selectRanks(path, std::move(archives), options.ranks), options);
    checkRankAlignment(*whole);
    return whole;
}

std::vector<ArchiveRef> selectRanks(const std::string& path, std::vector<ArchiveRef> archives, const std::vector<int>& ranks)
{
    if (ranks.empty())
        return archives;
    // The rank numbers `info` shows: from the folder names, else the discovery order.
    std::vector<ArchiveRef> chosen;
    for (std::size_t i = 0; i < archives.size(); ++i) {
        const int number = archives[i].rankNumber >= 0 ? archives[i].rankNumber : int(i);
        if (std::find(ranks.begin(), ranks.end(), number) != ranks.end())
            chosen.push_back(archives[i]);
    }
    if (chosen.empty())
        throw LoadError(path, "none of the ranks " + formatRankList(ranks) + " is among its " + std::to_string(archives.size())
                                  + " archives");
    return chosen;
}

std::shared_ptr<Trace> loadArchives(const std::string& path, const std::vector<ArchiveRef>& archives,
    const LoadOptions& options, std::vector<std::size_t>* laneWarningsPerRank)
{
    auto trace = std::make_shared<Trace>();
    trace->sourcePath = path;
    if (archives.empty()) {
        trace->finalize(true);
        if (laneWarningsPerRank)
            laneWarningsPerRank->clear();
        return trace;
    }
    Otf2Importer importer(*trace, options);
    for (const auto& a : archives) {
        if (options.cancel && options.cancel->load(std::memory_order_relaxed))
            throw LoadCancelled();
        importer.readDefinitions(a);
    }
    // Event counts are known now (bounded by the event files' sizes): refuse before reading what cannot fit.
    char events[32];
    std::snprintf(events, sizeof events, "%.1f M events", double(importer.totalEvents()) / 1e6);
    const std::uint64_t needed = kBaseBytes + importer.totalEvents() * kBytesPerOtf2Event;
    checkMemory(path, needed, events, options);
    if (options.memoryEstimated)
        options.memoryEstimated(needed);
    importer.readEvents();
    importer.finish();
    checkLaneConsistency(*trace, laneWarningsPerRank);
    return trace;
}

} // namespace exposure
