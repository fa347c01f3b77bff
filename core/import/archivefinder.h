// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>
#include <vector>

namespace exposure {

// One OTF2 archive found for a trace path.
struct ArchiveRef
{
    std::string anchor; // path of the *.otf2 anchor file
    std::string label;  // path relative to the opened folder ("rank3"), or the anchor's folder name
    int rankNumber = -1; // from a number in the folder name, -1 if none (or ambiguous: discovery order is used)
};

// Resolves what the user opened: an anchor file, an archive folder, or a folder whose sub-folders (up to 3
// levels) hold one archive per rank. Ranks are numbered from a number in their folder names ("rank3",
// "run_3") when those numbers are distinct, otherwise in natural-sort discovery order.
// Throws LoadError naming the path for: a missing path, an empty folder, a folder without any archive, a
// file that is not an .otf2 anchor.
std::vector<ArchiveRef> findArchives(const std::string& path);

// "rank10" sorts after "rank9".
bool naturalLess(const std::string& a, const std::string& b);

} // namespace exposure
