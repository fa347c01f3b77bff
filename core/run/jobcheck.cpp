// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/jobcheck.h"

#include "import/consistency.h"
#include "import/nsysimporter.h"
#include "import/rapidjsonconfig.h"
#include "import/sqlitedb_p.h"
#include "model/timeformat.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <rapidjson/document.h>
#include <set>
#include <tuple>
#include <zlib.h>

namespace exposure {

namespace {

constexpr const char* kJobPhrase = " different jobs (";

std::string baseName(const std::string& path)
{
    return std::filesystem::path(path).filename().string();
}

bool endsWith(const std::string& s, const char* suffix)
{
    const std::string t(suffix);
    return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

// ---- Nsight Systems: the processes with GPU work and the session's start ----

struct NsysJob
{
    std::string program;
    std::optional<TimeNs> sessionStart; // ns since the epoch
};

NsysJob readNsysJob(const std::string& path)
{
    NsysJob job;
    try {
        const nsys::Database db(path);
        std::set<std::string> tables;
        {
            nsys::Statement s(db, "SELECT name FROM sqlite_master WHERE type = 'table'");
            while (s.step())
                tables.insert(s.text(0));
        }
        if (tables.count("PROCESSES")) {
            // The processes that ran GPU work (the ranks); a launcher (nsys, mpirun, bash) ran none.
            std::set<std::string> names;
            try {
                nsys::Statement s(db,
                    "SELECT DISTINCT name FROM PROCESSES WHERE globalPid IN "
                    "(SELECT DISTINCT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL)");
                while (s.step())
                    names.insert(baseName(s.text(0)));
            } catch (const LoadError&) { } // no kernel table or no globalPid column: the program stays unknown
            names.erase("");
            for (const auto& n : names)
                job.program += (job.program.empty() ? "" : "+") + n;
        }
        if (tables.count("TARGET_INFO_SESSION_START_TIME")) {
            nsys::Statement s(db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME");
            if (s.step() && s.isInt(0))
                job.sessionStart = s.integer(0);
        }
    } catch (const LoadError&) { } // read by the importer already; what cannot be read now says nothing
    return job;
}

// ---- torch.profiler: distributedInfo and baseTimeNanoseconds, near the top of the file ----

struct KinetoJob
{
    int worldSize = -1;
    std::optional<TimeNs> baseTime;
};

// The JSON value that starts at text[at] ('{' or a number), as text; empty if it does not end within the text.
std::string valueAt(const std::string& text, std::size_t at)
{
    if (at >= text.size())
        return {};
    if (text[at] != '{') {
        std::size_t end = at;
        while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '-'))
            ++end;
        return end < text.size() ? text.substr(at, end - at) : std::string();
    }
    int depth = 0;
    bool inString = false;
    for (std::size_t i = at; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '{') {
            ++depth;
        } else if (c == '}' && --depth == 0) {
            return text.substr(at, i - at + 1);
        }
    }
    return {};
}

// The value after "key": at the top of `text` (the first occurrence before "traceEvents").
std::string topValue(const std::string& text, const char* key)
{
    const std::string quoted = std::string("\"") + key + "\"";
    const std::size_t at = text.find(quoted);
    const std::size_t events = text.find("\"traceEvents\"");
    if (at == std::string::npos || (events != std::string::npos && at > events))
        return {};
    std::size_t v = text.find(':', at + quoted.size());
    if (v == std::string::npos)
        return {};
    ++v;
    while (v < text.size() && std::isspace(static_cast<unsigned char>(text[v])))
        ++v;
    return valueAt(text, v);
}

KinetoJob readKinetoJob(const std::string& path)
{
    KinetoJob job;
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f)
        return job;
    // The top-level keys before traceEvents (1.3 KiB in the real traces): read in 16 KiB pieces until traceEvents
    // has begun, at most 1 MiB.
    std::string head;
    char piece[16384];
    while (head.size() < (1u << 20) && head.find("\"traceEvents\"") == std::string::npos) {
        const int n = gzread(f, piece, unsigned(sizeof piece));
        if (n <= 0)
            break;
        head.append(piece, std::size_t(n));
    }
    gzclose(f);
    std::string info = topValue(head, "distributedInfo");
    padForSimdParse(info);
    rapidjson::Document doc;
    if (!info.empty() && !doc.Parse(info.c_str()).HasParseError() && doc.IsObject()) {
        const auto ws = doc.FindMember("world_size");
        if (ws != doc.MemberEnd() && ws->value.IsInt() && ws->value.GetInt() > 0)
            job.worldSize = ws->value.GetInt();
    }
    const std::string base = topValue(head, "baseTimeNanoseconds");
    if (!base.empty())
        try {
            job.baseTime = std::stoll(base);
        } catch (const std::exception&) { }
    return job;
}

// Distinct values of one thing the files record, with their owners; `known`: every file records it.
template <typename T> bool differs(const std::vector<T>& values, const std::vector<bool>& known)
{
    if (!std::all_of(known.begin(), known.end(), [](bool k) { return k; }))
        return false;
    return std::set<T>(values.begin(), values.end()).size() > 1;
}

std::string joined(const std::vector<std::string>& items, const char* sep)
{
    std::string out;
    for (const auto& s : items)
        out += (out.empty() ? "" : sep) + s;
    return out;
}

std::string describeGroup(const std::vector<FileJob>& files, const std::vector<std::size_t>& group)
{
    std::vector<std::string> names, hosts;
    for (const std::size_t i : group) {
        names.push_back(baseName(files[i].file));
        for (const auto& h : files[i].hosts)
            if (std::find(hosts.begin(), hosts.end(), h) == hosts.end())
                hosts.push_back(h);
    }
    const FileJob& first = files[group.front()];
    std::vector<std::string> parts;
    if (!first.program.empty())
        parts.push_back("program " + first.program);
    if (first.worldSize > 0)
        parts.push_back("world size " + std::to_string(first.worldSize));
    if (!hosts.empty())
        parts.push_back((hosts.size() == 1 ? "host " : "hosts ") + joined(hosts, ", "));
    return joined(names, ", ") + (parts.empty() ? "" : " (" + joined(parts, ", ") + ")");
}

// Clusters of the files' spans that lie more than kJobGapNs apart: a cluster number per file, and the largest gap.
std::vector<int> epochClusters(const std::vector<FileJob>& files, TimeNs& largestGap)
{
    std::vector<std::size_t> order(files.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::tie(files[a].span.start, a) < std::tie(files[b].span.start, b);
    });
    std::vector<int> cluster(files.size(), 0);
    int current = 0;
    TimeNs reach = std::numeric_limits<TimeNs>::min();
    largestGap = 0;
    for (const std::size_t i : order) {
        if (reach != std::numeric_limits<TimeNs>::min() && files[i].span.start - reach > kJobGapNs) {
            ++current;
            largestGap = std::max(largestGap, files[i].span.start - reach);
        }
        cluster[i] = current;
        reach = std::max(reach, files[i].span.end);
    }
    return cluster;
}

} // namespace

std::vector<FileJob> describeFiles(const Trace& trace, const std::vector<TimeRange>* given)
{
    std::vector<FileJob> files;
    std::map<std::string, std::size_t> index;
    for (const Rank& rank : trace.ranks) {
        const std::string& path = rank.archivePath.empty() ? trace.sourcePath : rank.archivePath;
        const auto [it, added] = index.emplace(path, files.size());
        if (added) {
            files.emplace_back();
            files.back().file = path;
        }
        FileJob& f = files[it->second];
        f.ranks.push_back(rank.rank);
        if (!rank.host.empty() && std::find(f.hosts.begin(), f.hosts.end(), rank.host) == f.hosts.end())
            f.hosts.push_back(rank.host);
    }
    if (files.size() < 2)
        return {};
    // Spans on the recording's clock: a pass over every interval (on all cores), only for a run of several files.
    std::vector<TimeRange> computed;
    const std::vector<TimeRange>& spans = rankSpans(trace, given, computed);
    std::vector<TimeRange> relative(files.size(), TimeRange { std::numeric_limits<TimeNs>::max(), 0 });
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const Rank& rank = trace.ranks[r];
        TimeRange& s = relative[index.at(rank.archivePath.empty() ? trace.sourcePath : rank.archivePath)];
        if (spans[r].start <= spans[r].end) {
            s.start = std::min(s.start, spans[r].start);
            s.end = std::max(s.end, spans[r].end);
        }
    }
    for (std::size_t i = 0; i < files.size(); ++i) {
        FileJob& f = files[i];
        std::optional<TimeNs> epoch; // what the importer's times are relative to
        if (isNsysReportFileName(f.file) || hasSqliteHeader(f.file)) {
            const NsysJob job = readNsysJob(f.file);
            f.program = job.program;
            epoch = job.sessionStart; // the export's times count from the session's start
        } else if (endsWith(f.file, ".json") || endsWith(f.file, ".json.gz")) {
            const KinetoJob job = readKinetoJob(f.file);
            f.worldSize = job.worldSize;
            epoch = job.baseTime;
        } // OTF2: a TSC timer's offset is no epoch (it differs between hosts of one job by the uptime)
        if (epoch && relative[i].start <= relative[i].end)
            f.span = { *epoch + trace.originAbsNs + relative[i].start, *epoch + trace.originAbsNs + relative[i].end };
    }
    return files;
}

JobSplit splitJobs(const std::string& path, const std::vector<FileJob>& files)
{
    JobSplit split;
    if (files.empty())
        return split;
    std::vector<std::string> programs;
    std::vector<int> worldSizes;
    std::vector<bool> programKnown, worldKnown, spanKnown;
    for (const auto& f : files) {
        programs.push_back(f.program);
        programKnown.push_back(!f.program.empty());
        worldSizes.push_back(f.worldSize);
        worldKnown.push_back(f.worldSize > 0);
        spanKnown.push_back(f.span.start <= f.span.end);
    }
    const bool byProgram = files.size() > 1 && differs(programs, programKnown);
    const bool byWorld = files.size() > 1 && differs(worldSizes, worldKnown);
    TimeNs gap = 0;
    const bool allSpans = std::all_of(spanKnown.begin(), spanKnown.end(), [](bool k) { return k; });
    const std::vector<int> clusters = allSpans ? epochClusters(files, gap) : std::vector<int>(files.size(), 0);
    const bool byEpoch = gap > 0;
    if (byProgram)
        split.reasons.push_back("different programs");
    if (byWorld)
        split.reasons.push_back("different world sizes");
    if (byEpoch)
        split.reasons.push_back("recorded " + formatDuration(gap) + " apart");
    // One job per distinct (program, world size, clock cluster) among the dimensions that differ, in file order.
    std::map<std::tuple<std::string, int, int>, std::size_t> groupOf;
    for (std::size_t i = 0; i < files.size(); ++i) {
        const auto key = std::make_tuple(
            byProgram ? programs[i] : std::string(), byWorld ? worldSizes[i] : 0, byEpoch ? clusters[i] : 0);
        const auto [it, added] = groupOf.emplace(key, split.groups.size());
        if (added)
            split.groups.emplace_back();
        split.groups[it->second].push_back(i);
    }
    if (split.groups.size() < 2)
        return split;
    std::string list;
    for (std::size_t g = 0; g < split.groups.size(); ++g) {
        const char* sep = g == 0 ? "" : (g + 1 == split.groups.size() ? (g == 1 ? " and " : "; and ") : "; ");
        list += sep + describeGroup(files, split.groups[g]);
    }
    split.warning = path + ": the files look like " + std::to_string(split.groups.size()) + kJobPhrase
        + joined(split.reasons, ", ") + "): " + list
        + "; they were opened as one run, though their ranks are not one job's (open each job separately, or "
          "compare them)";
    return split;
}

namespace {

// The rank a thread's name gives: a name that is a rank alone ("rank 3", "Rank#3", the whole name), or "MPI Rank 0"
// anywhere as a word (Nsight Systems and Score-P name MPI processes so); empty if none. Case is ignored. (Written out
// rather than as a std::regex: GCC 12 reports std::regex's internals as maybe-uninitialized in the sanitizer build.)
std::string rankInThreadName(const std::string& name)
{
    std::string low(name);
    for (char& c : low)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    const auto isSpace = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    const auto isWord = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
    const auto isDigit = [](char c) { return c >= '0' && c <= '9'; };
    const auto isSep = [](char c) { return c == ' ' || c == '_' || c == ':' || c == '#'; };
    // "rank" at `at`, its separators and digits: the position after the digits and the digits; npos if not there.
    const auto rankDigits = [&](std::size_t at, std::string& digits) -> std::size_t {
        if (low.compare(at, 4, "rank") != 0)
            return std::string::npos;
        std::size_t j = at + 4;
        while (j < low.size() && isSep(low[j]))
            ++j;
        const std::size_t first = j;
        while (j < low.size() && isDigit(low[j]))
            ++j;
        if (j == first)
            return std::string::npos;
        digits = low.substr(first, j - first);
        return j;
    };
    std::string digits;
    std::size_t start = 0;
    while (start < low.size() && isSpace(low[start]))
        ++start;
    if (std::size_t end = rankDigits(start, digits); end != std::string::npos) {
        while (end < low.size() && isSpace(low[end]))
            ++end;
        if (end == low.size())
            return digits;
    }
    for (std::size_t i = low.find("mpi"); i != std::string::npos; i = low.find("mpi", i + 1)) {
        if (i > 0 && isWord(low[i - 1]))
            continue;
        std::size_t j = i + 3;
        if (j < low.size() && (low[j] == ' ' || low[j] == '_'))
            ++j;
        const std::size_t end = rankDigits(j, digits);
        if (end != std::string::npos && (end == low.size() || !isWord(low[end])))
            return digits;
    }
    return {};
}

} // namespace

std::vector<std::string> threadRankWarnings(const Trace& trace, const Rank& rank)
{
    // "MPI Rank 0" anywhere (Nsight Systems and Score-P name MPI processes so), or a name that is a rank alone
    // ("rank 3", "Rank#3"); "PP rank 1, TP rank 0, compute" names no global rank.
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const Lane& lane : rank.lanes) {
        const std::string digits = rankInThreadName(lane.name);
        if (digits.empty() || !seen.insert(lane.name).second)
            continue;
        if (digits.size() > 9 || std::stoi(digits) == rank.rank)
            continue;
        const std::string& file = rank.archivePath.empty() ? trace.sourcePath : rank.archivePath;
        out.push_back(file + ": " + rank.label + ": its thread \"" + lane.name + "\" is named for rank "
            + std::to_string(std::stoi(digits)) + ", not " + std::to_string(rank.rank)
            + " (the rank numbers, taken from the files' names or order, or the files themselves may not "
              "belong together)");
    }
    return out;
}

std::vector<std::string> threadRankWarnings(const Trace& trace)
{
    std::vector<std::string> out;
    for (const Rank& rank : trace.ranks)
        for (auto& w : threadRankWarnings(trace, rank))
            out.push_back(std::move(w));
    return out;
}

JobSplit checkJobs(Trace& trace, const std::vector<TimeRange>* spans)
{
    JobSplit split = splitJobs(trace.sourcePath, describeFiles(trace, spans));
    if (!split.warning.empty())
        trace.warnings.push_back(split.warning);
    for (auto& w : threadRankWarnings(trace))
        trace.warnings.push_back(std::move(w));
    return split;
}

bool isJobWarning(const std::string& warning)
{
    return warning.find(": the files look like ") != std::string::npos && warning.find(kJobPhrase) != std::string::npos;
}

} // namespace exposure
