// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The fuzz targets that read files (OTF2 archives, torch.profiler JSON) turn one fuzz input into a small folder of
// files. The input is a sequence of entries, each introduced by a marker line:
//
//     \n#EXPOSURE-FUZZ-FILE <relative path>\n<contents up to the next marker or the end of the input>
//
// (the very first entry may omit the leading newline). Separator-delimited entries survive the fuzzer's insertions
// and deletions better than length prefixes do. Paths are restricted to [A-Za-z0-9._-/] components without "..",
// at most 4 levels deep; entries with other names are skipped. Input before the first marker goes to
// `defaultName` (empty: dropped).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace exposure::fuzz {

inline constexpr std::string_view kFileMarker = "\n#EXPOSURE-FUZZ-FILE ";

struct FuzzFile
{
    std::string name;
    std::string_view contents;
};

// A relative path the container may use: non-empty components of [A-Za-z0-9._-], no "." or "..", at most 4.
bool isSafeRelativePath(std::string_view name);

// Splits `input` into entries (see above).
std::vector<FuzzFile> splitFiles(std::string_view input, const std::string& defaultName);

// The inverse of splitFiles (for the seed generator): files packed with markers.
std::string packFiles(const std::vector<std::pair<std::string, std::string>>& files);

// A private folder for this process under /dev/shm (or the temporary folder), emptied on every call, holding
// `files`. Returns its path.
std::string writeFuzzFolder(const std::vector<FuzzFile>& files);

} // namespace exposure::fuzz
