// SPDX-License-Identifier: GPL-3.0-or-later
#include "fuzzfiles.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace exposure::fuzz {

bool isSafeRelativePath(std::string_view name)
{
    if (name.empty() || name.size() > 200)
        return false;
    int components = 0;
    std::size_t start = 0;
    while (start <= name.size()) {
        std::size_t end = name.find('/', start);
        if (end == std::string_view::npos)
            end = name.size();
        const std::string_view part = name.substr(start, end - start);
        if (part.empty() || part == "." || part == ".." || ++components > 4)
            return false;
        for (const char c : part) {
            const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
                || c == '_' || c == '-';
            if (!ok)
                return false;
        }
        start = end + 1;
    }
    return true;
}

std::vector<FuzzFile> splitFiles(std::string_view input, const std::string& defaultName)
{
    std::vector<FuzzFile> files;
    const std::string_view bare = kFileMarker.substr(1); // the first entry may start without the newline
    std::size_t pos = 0;
    std::size_t next = input.find(kFileMarker);
    std::size_t markerLen = kFileMarker.size();
    if (input.substr(0, bare.size()) == bare) {
        next = 0;
        markerLen = bare.size();
    }
    // Text before the first marker.
    const std::string_view head = input.substr(0, next == std::string_view::npos ? input.size() : next);
    if (!defaultName.empty() && (!head.empty() || next == std::string_view::npos))
        files.push_back({ defaultName, head });
    pos = next;
    while (pos != std::string_view::npos) {
        const std::size_t nameStart = pos + markerLen;
        const std::size_t nameEnd = input.find('\n', nameStart);
        if (nameEnd == std::string_view::npos)
            break;
        const std::string_view name = input.substr(nameStart, nameEnd - nameStart);
        const std::size_t nextMarker = input.find(kFileMarker, nameEnd);
        const std::size_t contentEnd = nextMarker == std::string_view::npos ? input.size() : nextMarker;
        // A marker right after the name line (no newline of its own) leaves the entry empty.
        const std::size_t contentStart = std::min(nameEnd + 1, contentEnd);
        if (isSafeRelativePath(name))
            files.push_back({ std::string(name), input.substr(contentStart, contentEnd - contentStart) });
        pos = nextMarker;
        markerLen = kFileMarker.size();
    }
    return files;
}

std::string packFiles(const std::vector<std::pair<std::string, std::string>>& files)
{
    std::string out;
    for (const auto& [name, contents] : files) {
        if (contents.find(kFileMarker) != std::string::npos)
            std::abort(); // the container cannot hold this file
        if (!out.empty())
            out += '\n';
        out += kFileMarker.substr(1);
        out += name;
        out += '\n';
        out += contents;
    }
    return out;
}

std::string writeFuzzFolder(const std::vector<FuzzFile>& files)
{
    static const std::string root = [] {
        std::error_code ec;
        const fs::path base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
        return (base / ("exposure-fuzz-" + std::to_string(::getpid()))).string();
    }();
    std::error_code ec;
    fs::remove_all(root, ec);
    fs::create_directories(root, ec);
    for (const auto& f : files) {
        const fs::path path = fs::path(root) / f.name;
        fs::create_directories(path.parent_path(), ec);
        if (fs::is_directory(path, ec))
            continue; // a name used both as a folder and as a file: the folder stays
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(f.contents.data(), std::streamsize(f.contents.size()));
    }
    return root;
}

} // namespace exposure::fuzz
