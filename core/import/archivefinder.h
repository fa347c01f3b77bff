// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace exposure {

// One OTF2 archive found for a trace path.
struct ArchiveRef
{
    std::string anchor; // path of the *.otf2 anchor file
    std::string label; // path relative to the opened folder ("rank3"), or the anchor's folder name
    int rankNumber = -1; // from a number in the folder name, -1 if none (or ambiguous: discovery order is used)
};

// Resolves what the user opened: an anchor file, an archive folder, or a folder whose sub-folders (up to 3
// levels) hold one archive per rank. Ranks are numbered from a number in their folder names ("rank3",
// "run_3") when those numbers are distinct, otherwise in natural-sort discovery order.
// Throws LoadError naming the path for: a missing path, an empty folder, a folder without any archive, a
// file that is not an .otf2 anchor.
std::vector<ArchiveRef> findArchives(const std::string& path);

// How deep below an opened folder input files are looked for.
inline constexpr int kMaxSearchDepth = 3;

// The one folder walk of every input kind: the files under `dir` (itself and its sub-folders, up to kMaxSearchDepth
// levels) for which `match` holds, in natural order, a folder's own files before its sub-folders'. With stopAtMatch,
// the sub-folders of a folder that holds a match are not searched (an OTF2 archive's traces/ folder).
std::vector<std::string> findFiles(
    const std::string& dir, bool (*match)(const std::filesystem::directory_entry&), bool stopAtMatch, int depth = 0);

// The rank number `info` shows for each archive of findArchives(): from its folder name, else its place in the list.
std::vector<int> rankNumbers(const std::vector<ArchiveRef>& archives);

// The archives of `archives` (findArchives(path)) that hold the given rank numbers (rankNumbers()); all of them
// when `ranks` is empty. Throws LoadError when none does.
std::vector<ArchiveRef> selectRanks(
    const std::string& path, std::vector<ArchiveRef> archives, const std::vector<int>& ranks);

// A file name torch.profiler (Kineto) writes: *.json or *.json.gz (e.g. "rank0.pt.trace.json.gz").
bool isKinetoFileName(const std::string& path);

// Kineto files found for a path: the file itself, or the Kineto files of a folder and its sub-folders (up to
// kMaxSearchDepth levels), in natural order. Empty when there are none.
std::vector<std::string> findKinetoFiles(const std::string& path);

// The rank number a per-rank file's name gives: the digits after "rank" (case-insensitive, "_" or "-" may stand
// between), e.g. "rank3.pt.trace.json.gz" or "report_rank-3.sqlite" -> 3; -1 if the name has none.
// The host in a torch.profiler file name as tensorboard_trace_handler writes it by default:
// "HOST_PID.TIMESTAMP.pt.trace.json[.gz]" -> "HOST"; empty for any other name.
std::string hostFromTraceFileName(const std::string& path);
int rankFromFileName(const std::string& path);

// "rank10" sorts after "rank9".
bool naturalLess(const std::string& a, const std::string& b);

} // namespace exposure
