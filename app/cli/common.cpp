// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers shared by every exposure-cli command (and by exposure-cli-render).
#include "commands.h"

#include <QCommandLineParser>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <new>
#include <fstream>
#include <mutex>
#include <thread>

#include <sys/resource.h>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace exposure::cli {

namespace {
const char* g_program = "exposure-cli";
bool g_quiet = false;
} // namespace

void setQuiet(bool quiet)
{
    g_quiet = quiet;
}

void setProgramName(const char* name)
{
    g_program = name;
}

bool printedHelpOrVersion(const QCommandLineParser& parser, const char* command)
{
    if (g_quiet)
        return parser.isSet(QStringLiteral("help")) || parser.isSet(QStringLiteral("version"));
    if (parser.isSet(QStringLiteral("help"))) {
        // The parser names the program after argv[0], which is the sub-command here.
        QString help = parser.helpText();
        help.replace(QStringLiteral("Usage: ") + QLatin1String(command) + QLatin1Char(' '),
            QStringLiteral("Usage: ") + QLatin1String(g_program) + QLatin1Char(' ') + QLatin1String(command)
                + QLatin1Char(' '));
        std::fputs(qPrintable(help), stdout);
        return true;
    }
    if (parser.isSet(QStringLiteral("version"))) {
        std::printf("%s %s\n", g_program, EXPOSURE_VERSION);
        return true;
    }
    return false;
}

void LoadArgs::addTo(QCommandLineParser& parser) const
{
    parser.addOption(ranks);
    parser.addOption(memoryLimit);
}

std::string LoadArgs::apply(const QCommandLineParser& parser, LoadOptions& options) const
{
    if (parser.isSet(ranks)) {
        const auto list = parseRankList(parser.value(ranks).toStdString());
        if (!list)
            return "--ranks '" + parser.value(ranks).toStdString() + "': expected rank numbers such as 0,2,4-7";
        options.ranks = *list;
    }
    if (parser.isSet(memoryLimit)) {
        QString text = parser.value(memoryLimit).trimmed().toUpper();
        const std::string bad = "--memory-limit '" + parser.value(memoryLimit).toStdString()
            + "': expected a size such as 512M or 8G";
        if (text.endsWith(QStringLiteral("IB")))
            text.chop(2);
        else if (text.endsWith(QLatin1Char('B')))
            text.chop(1);
        double factor = 1;
        if (!text.isEmpty() && QStringLiteral("KMGT").contains(text.back())) {
            factor = std::pow(1024.0, QStringLiteral("KMGT").indexOf(text.back()) + 1);
            text.chop(1);
        }
        bool ok = false;
        const double value = text.toDouble(&ok) * factor;
        if (!ok || !(value >= 1) || value > 1e18)
            return bad;
        options.memoryLimit = std::uint64_t(value);
    }
    return {};
}

std::shared_ptr<Trace> loadWatched(const std::string& path, LoadOptions options, int stallSeconds)
{
    struct Shared
    {
        std::mutex mutex;
        std::condition_variable cv;
        bool done = false;
        std::shared_ptr<Trace> trace;
        std::exception_ptr error;
        std::chrono::steady_clock::time_point lastProgress = std::chrono::steady_clock::now();
        std::uint64_t lastEvents = 0;
        std::string file;
    };
    auto shared = std::make_shared<Shared>(); // outlives this function if the worker is left stuck in libotf2
    // Damaged data can make libotf2 allocate and read without end (a flipped byte in a chunk header). Once the
    // need is known, the address space is capped at what the process has, plus twice the estimate (measured use is
    // about half of it), plus 1 GiB for libraries' buffers and thread arenas: an allocation beyond fails, and the
    // load ends with an error naming the file instead of the machine swapping until the process is killed.
    rlimit before{};
    const bool haveBefore = getrlimit(RLIMIT_AS, &before) == 0;
    if (!options.memoryEstimated)
        options.memoryEstimated = [](std::uint64_t estimate) {
            std::ifstream status("/proc/self/status");
            std::string line;
            std::uint64_t vmSizeKb = 0;
            while (std::getline(status, line))
                if (line.rfind("VmSize:", 0) == 0)
                    vmSizeKb = std::strtoull(line.c_str() + 7, nullptr, 10);
            if (vmSizeKb == 0)
                return;
            rlimit lim{};
            if (getrlimit(RLIMIT_AS, &lim) != 0)
                return;
            const rlim_t cap = rlim_t(vmSizeKb * 1024 + 2 * estimate + (1ull << 30));
            if (lim.rlim_cur == RLIM_INFINITY || cap < lim.rlim_cur) {
                lim.rlim_cur = cap;
                setrlimit(RLIMIT_AS, &lim);
            }
        };
    auto userProgress = options.progress;
    options.progress = [shared, userProgress](const LoadProgress& p) {
        {
            std::lock_guard lock(shared->mutex);
            if (p.eventsRead != shared->lastEvents || p.currentFile != shared->file) {
                shared->lastProgress = std::chrono::steady_clock::now();
                shared->lastEvents = p.eventsRead;
                shared->file = p.currentFile;
            }
        }
        if (userProgress)
            userProgress(p);
    };
    std::thread worker([shared, path, options] {
        std::shared_ptr<Trace> t;
        std::exception_ptr e;
        try {
            t = loadTrace(path, options);
        } catch (const std::bad_alloc&) {
            std::string file;
            {
                std::lock_guard lock(shared->mutex);
                file = shared->file.empty() ? path : shared->file;
            }
            e = std::make_exception_ptr(LoadError(
                file, "reading needed far more memory than its event counts announce (damaged data?); stopped"));
        } catch (...) {
            e = std::current_exception();
        }
        std::lock_guard lock(shared->mutex);
        shared->trace = std::move(t);
        shared->error = e;
        shared->done = true;
        shared->cv.notify_all();
    });
    std::unique_lock lock(shared->mutex);
    while (!shared->done) {
        shared->cv.wait_for(lock, std::chrono::milliseconds(200));
        if (!shared->done && std::chrono::steady_clock::now() - shared->lastProgress > std::chrono::seconds(stallSeconds)) {
            const std::string file = shared->file.empty() ? path : shared->file;
            lock.unlock();
            fail(file + ": reading stopped making progress for " + std::to_string(stallSeconds)
                 + " s inside the OTF2 library (a damaged event file: check it with otf2-print)");
            std::fflush(nullptr);
            std::_Exit(2); // the reading thread cannot be stopped from outside
        }
    }
    lock.unlock();
    worker.join();
    if (haveBefore)
        setrlimit(RLIMIT_AS, &before); // the analysis runs under the limits the process started with
    if (shared->error)
        std::rethrow_exception(shared->error);
    return shared->trace;
}

int fail(const std::string& message)
{
    if (!g_quiet)
        std::cerr << g_program << ": " << message << std::endl;
    return 2;
}

} // namespace exposure::cli
