// SPDX-License-Identifier: GPL-3.0-or-later
// Nsight Systems inputs as files (nsysimporter.h): which files are exports or reports, and exporting a report with
// the `nsys` found on the PATH into a cache folder.
#include "import/archivefinder.h"
#include "import/nsysimporter.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace fs = std::filesystem;

namespace exposure {

namespace {

std::string lowerFileName(const std::string& path)
{
    std::string name = fs::path(path).filename().string();
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return name;
}

bool endsWith(const std::string& s, const char* suffix)
{
    const std::size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::uint64_t fileSize(const std::string& path)
{
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    return ec ? 0 : std::uint64_t(size);
}

bool isNsysEntry(const fs::directory_entry& e)
{
    return isNsysSqliteFileName(e.path().string()) || isNsysReportFileName(e.path().string());
}

std::string findOnPath(const std::string& program)
{
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "";
    std::size_t start = 0;
    while (start <= dirs.size()) {
        const std::size_t end = std::min(dirs.find(':', start), dirs.size());
        const std::string dir = dirs.substr(start, end - start);
        const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
        if (::access(candidate.c_str(), X_OK) == 0)
            return candidate;
        start = end + 1;
    }
    return {};
}

fs::path cacheFolder()
{
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return fs::path(xdg) / "exposure" / "nsys";
    if (const char* home = std::getenv("HOME"); home && *home)
        return fs::path(home) / ".cache" / "exposure" / "nsys";
    return fs::temp_directory_path() / "exposure-nsys";
}

// Runs nsys (args[0]) and waits for it; while it runs, progress ticks (the export's size so far, a count of polls)
// so that a watched load sees it alive, and a cancel ends it. Its exit status, or -1.
int runExport(std::vector<std::string>& args, const std::string& report, const LoadOptions& options)
{
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, args[0].c_str(), nullptr, nullptr, argv.data(), environ) != 0)
        return -1;
    LoadProgress progress;
    progress.currentFile = report;
    for (;;) {
        int status = 0;
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        if (done < 0)
            return -1;
        if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
            kill(pid, SIGTERM);
            waitpid(pid, &status, 0);
            throw LoadCancelled();
        }
        if (options.progress) {
            ++progress.eventsRead;
            progress.bytesRead = fileSize(args[7]);
            options.progress(progress);
        }
        usleep(100'000);
    }
}

} // namespace

bool isNsysSqliteFileName(const std::string& path)
{
    const std::string lower = lowerFileName(path);
    return endsWith(lower, ".sqlite") || endsWith(lower, ".sqlite3");
}

bool isNsysReportFileName(const std::string& path)
{
    const std::string lower = lowerFileName(path);
    return endsWith(lower, ".nsys-rep") || endsWith(lower, ".qdrep");
}

bool hasSqliteHeader(const std::string& path)
{
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
        return false;
    char header[16] = {};
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return false;
    const std::size_t n = std::fread(header, 1, sizeof header, f);
    std::fclose(f);
    return n == sizeof header && std::memcmp(header, "SQLite format 3\0", 16) == 0;
}

std::vector<std::string> findNsysFiles(const std::string& path)
{
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
        if ((isNsysSqliteFileName(path) || isNsysReportFileName(path) || hasSqliteHeader(path)) && fs::exists(path, ec))
            return { path };
        return {};
    }
    std::vector<std::string> found;
    for (auto& f : findFiles(path, isNsysEntry, false)) {
        // A report whose export lies beside it is read through the export.
        fs::path exported = f;
        exported.replace_extension(".sqlite");
        std::error_code ec2;
        if (!(isNsysReportFileName(f) && fs::exists(exported, ec2)))
            found.push_back(std::move(f));
    }
    return found;
}

std::string exportNsysReport(const std::string& report, const LoadOptions& options)
{
    std::error_code ec;
    if (!fs::is_regular_file(report, ec))
        throw LoadError(report, "not a regular file");
    const std::string nsys = findOnPath("nsys");
    if (nsys.empty())
        throw LoadError(report,
            "an Nsight Systems report: Exposure reads its SQLite export; nsys is not on the PATH, "
            "so run `nsys export --type sqlite "
                + report + "` and open the .sqlite file");
    const auto time = fs::last_write_time(report, ec).time_since_epoch().count();
    const std::string key
        = fs::absolute(report, ec).string() + "|" + std::to_string(fileSize(report)) + "|" + std::to_string(time);
    const fs::path folder = cacheFolder();
    fs::create_directories(folder, ec);
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string> {}(key));
    const fs::path out = folder / (fs::path(report).stem().string() + "-" + hash + ".sqlite");
    if (hasSqliteHeader(out.string()))
        return out.string();
    const fs::path partial = out.string() + ".part.sqlite";
    fs::remove(partial, ec);
    std::vector<std::string> args
        = { nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", partial.string(), report };
    const int status = runExport(args, report, options);
    if (status != 0 || !hasSqliteHeader(partial.string())) {
        fs::remove(partial, ec);
        throw LoadError(report,
            "`" + nsys
                + " export --type sqlite` failed on this report; run `nsys export --type "
                  "sqlite "
                + report + "` to see why, and open the .sqlite file");
    }
    fs::rename(partial, out, ec);
    if (ec)
        throw LoadError(report, "cannot keep its export in " + folder.string() + ": " + ec.message());
    return out.string();
}

} // namespace exposure
