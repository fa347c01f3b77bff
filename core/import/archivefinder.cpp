// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/archivefinder.h"

#include "import/loadoptions.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>

namespace fs = std::filesystem;

namespace exposure {

namespace {

bool isAnchor(const fs::directory_entry& e)
{
    return e.path().extension() == ".otf2";
}

bool isKinetoFile(const fs::directory_entry& e)
{
    return isKinetoFileName(e.path().filename().string());
}

// The last number of the innermost path component that has one: "run_2/scorep" -> 2, "rank3" -> 3.
int numberIn(const fs::path& relativeDir)
{
    std::vector<std::string> parts;
    for (const auto& p : relativeDir)
        parts.push_back(p.string());
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        const std::string& s = *it;
        int end = int(s.size());
        while (end > 0 && !std::isdigit(static_cast<unsigned char>(s[end - 1])))
            --end;
        if (end == 0)
            continue;
        int begin = end;
        while (begin > 0 && std::isdigit(static_cast<unsigned char>(s[begin - 1])))
            --begin;
        if (end - begin > 6)
            continue; // a time stamp or a job id, not a rank
        return std::stoi(s.substr(begin, end - begin));
    }
    return -1;
}

} // namespace

std::vector<std::string> findFiles(
    const std::string& dir, bool (*match)(const fs::directory_entry&), bool stopAtMatch, int depth)
{
    std::vector<fs::path> files, subdirs;
    std::error_code ec;
    for (fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
         it.increment(ec)) {
        std::error_code ec2;
        if (it->is_directory(ec2))
            subdirs.push_back(it->path());
        else if (match(*it))
            files.push_back(it->path());
    }
    auto natural = [](const fs::path& a, const fs::path& b) { return naturalLess(a.string(), b.string()); };
    std::sort(files.begin(), files.end(), natural);
    std::sort(subdirs.begin(), subdirs.end(), natural);
    std::vector<std::string> found;
    for (const auto& f : files)
        found.push_back(f.string());
    if ((stopAtMatch && !found.empty()) || depth >= kMaxSearchDepth)
        return found;
    for (const auto& s : subdirs) {
        auto below = findFiles(s.string(), match, stopAtMatch, depth + 1);
        found.insert(found.end(), std::make_move_iterator(below.begin()), std::make_move_iterator(below.end()));
    }
    return found;
}

bool isKinetoFileName(const std::string& path)
{
    std::string lower = fs::path(path).filename().string();
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    auto endsWith = [&lower](std::string_view suffix) {
        return lower.size() >= suffix.size() && lower.compare(lower.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    return endsWith(".json") || endsWith(".json.gz");
}

std::vector<std::string> findKinetoFiles(const std::string& path)
{
    std::error_code ec;
    if (fs::is_directory(path, ec))
        return findFiles(path, isKinetoFile, false);
    if (isKinetoFileName(path) && fs::exists(path, ec))
        return { path };
    return {};
}

std::vector<int> rankNumbers(const std::vector<ArchiveRef>& archives)
{
    std::vector<int> numbers;
    for (std::size_t i = 0; i < archives.size(); ++i)
        numbers.push_back(archives[i].rankNumber >= 0 ? archives[i].rankNumber : int(i));
    return numbers;
}

std::vector<ArchiveRef> selectRanks(
    const std::string& path, std::vector<ArchiveRef> archives, const std::vector<int>& ranks)
{
    if (ranks.empty())
        return archives;
    const std::vector<int> numbers = rankNumbers(archives);
    std::vector<ArchiveRef> chosen;
    for (std::size_t i = 0; i < archives.size(); ++i)
        if (std::find(ranks.begin(), ranks.end(), numbers[i]) != ranks.end())
            chosen.push_back(archives[i]);
    if (chosen.empty())
        throw LoadError(path,
            "none of the ranks " + formatRankList(ranks) + " is among its " + std::to_string(archives.size())
                + " archives");
    return chosen;
}

bool naturalLess(const std::string& a, const std::string& b)
{
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const bool da = std::isdigit(static_cast<unsigned char>(a[i]));
        const bool db = std::isdigit(static_cast<unsigned char>(b[j]));
        if (da && db) {
            std::size_t ie = i, je = j;
            while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie])))
                ++ie;
            while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je])))
                ++je;
            // Compare numerically without overflow: strip leading zeros, then by length, then digits.
            std::size_t is = i, js = j;
            while (is + 1 < ie && a[is] == '0')
                ++is;
            while (js + 1 < je && b[js] == '0')
                ++js;
            if (ie - is != je - js)
                return ie - is < je - js;
            const int c = a.compare(is, ie - is, b, js, je - js);
            if (c != 0)
                return c < 0;
            i = ie;
            j = je;
        } else {
            if (a[i] != b[j])
                return a[i] < b[j];
            ++i;
            ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

std::vector<ArchiveRef> findArchives(const std::string& pathString)
{
    const fs::path path(pathString);
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status))
        throw LoadError(pathString, "no such file or folder");

    std::vector<ArchiveRef> out;
    if (!fs::is_directory(status)) {
        if (path.extension() != ".otf2")
            throw LoadError(pathString, "not an OTF2 anchor file (expected a .otf2 file or a trace folder)");
        ArchiveRef a;
        a.anchor = pathString;
        a.label = path.parent_path().filename().string();
        // A single archive is rank 0 (or its MPI ranks): folder names like "scorep-mi300-run" are no rank ids.
        a.rankNumber = -1;
        out.push_back(std::move(a));
        return out;
    }

    fs::directory_iterator first(path, fs::directory_options::none, ec);
    if (ec)
        throw LoadError(pathString, "cannot read the folder: " + ec.message());
    if (first == fs::directory_iterator())
        throw LoadError(pathString, "the folder is empty");

    const std::vector<std::string> anchors = findFiles(pathString, isAnchor, true);
    if (anchors.empty())
        throw LoadError(pathString,
            "no OTF2 archive (*.otf2 anchor file) in this folder or its sub-folders (up to "
                + std::to_string(kMaxSearchDepth) + " levels)");

    std::set<int> numbers;
    bool allNumbered = true;
    for (const auto& anchorString : anchors) {
        const fs::path anchor(anchorString);
        ArchiveRef a;
        a.anchor = anchor.string();
        const fs::path rel = anchor.parent_path().lexically_relative(path);
        a.label = rel.empty() || rel == "." ? path.filename().string() : rel.string();
        if (a.label.empty())
            a.label = anchor.parent_path().string();
        a.rankNumber = (rel.empty() || rel == ".") ? -1 : numberIn(rel);
        if (a.rankNumber < 0 || !numbers.insert(a.rankNumber).second)
            allNumbered = false;
        out.push_back(std::move(a));
    }
    if (!allNumbered) {
        for (auto& a : out)
            a.rankNumber = -1;
    } else {
        std::stable_sort(out.begin(), out.end(),
            [](const ArchiveRef& a, const ArchiveRef& b) { return a.rankNumber < b.rankNumber; });
    }
    return out;
}

std::string hostFromTraceFileName(const std::string& path)
{
    std::string name = fs::path(path).filename().string();
    auto strip = [&](std::string_view suffix) {
        if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
            return false;
        name.resize(name.size() - suffix.size());
        return true;
    };
    strip(".gz");
    if (!strip(".json") || !strip(".pt.trace"))
        return {};
    auto digitsBefore = [&](std::size_t end, char separator) -> std::size_t { // start of the digits before `end`
        std::size_t i = end;
        while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1])))
            --i;
        return i < end && i > 0 && name[i - 1] == separator ? i - 1 : std::string::npos;
    };
    const std::size_t dot = digitsBefore(name.size(), '.');
    if (dot == std::string::npos)
        return {};
    const std::size_t underscore = digitsBefore(dot, '_');
    return underscore == std::string::npos || underscore == 0 ? std::string() : name.substr(0, underscore);
}

int rankFromFileName(const std::string& path)
{
    std::string lower = fs::path(path).filename().string();
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    const auto at = lower.find("rank");
    if (at == std::string::npos)
        return -1;
    std::size_t i = at + 4;
    while (i < lower.size() && (lower[i] == '_' || lower[i] == '-'))
        ++i;
    if (i >= lower.size() || !std::isdigit(static_cast<unsigned char>(lower[i])))
        return -1;
    long v = 0;
    for (; i < lower.size() && std::isdigit(static_cast<unsigned char>(lower[i])) && v < 1'000'000; ++i)
        v = v * 10 + (lower[i] - '0');
    return int(v);
}

} // namespace exposure
