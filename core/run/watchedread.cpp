// SPDX-License-Identifier: GPL-3.0-or-later
#include "run/watchedread.h"

#include "run/openrun.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <mutex>
#include <new>
#include <sys/resource.h>
#include <thread>

namespace exposure {

namespace {

// The address-space cap of the loads running in this process. Damaged data can make libotf2 allocate and read
// without end (a flipped byte in a chunk header): once a load's need is known, the address space is capped at what
// the process has, plus twice the estimate (measured use is about half of it), plus 1 GiB for libraries' buffers and
// thread arenas, so that an allocation beyond fails and the load ends with an error naming the file. Loads that
// overlap (Compare Runs) each add their share; the limits the process had come back when the last one ends.
class AddressSpaceCap
{
public:
    // A load that will call add() (at most once) and must call release().
    void enter()
    {
        std::lock_guard lock(m_mutex);
        if (m_active++ == 0)
            m_haveOriginal = getrlimit(RLIMIT_AS, &m_original) == 0;
    }
    void add(std::uint64_t estimate)
    {
        std::lock_guard lock(m_mutex);
        rlimit lim {};
        if (!m_haveOriginal || getrlimit(RLIMIT_AS, &lim) != 0)
            return;
        const std::uint64_t share = 2 * estimate + (1ull << 30);
        rlim_t cap = 0;
        if (m_capped && lim.rlim_cur != RLIM_INFINITY) {
            cap = lim.rlim_cur + rlim_t(share); // another load holds a cap: this one adds its share
        } else {
            const std::uint64_t vmSizeKb = vmSizeKiB();
            if (vmSizeKb == 0)
                return;
            cap = rlim_t(vmSizeKb * 1024 + share);
        }
        if (m_original.rlim_cur != RLIM_INFINITY && cap > m_original.rlim_cur)
            cap = m_original.rlim_cur;
        if (lim.rlim_cur == RLIM_INFINITY || cap < lim.rlim_cur || m_capped) {
            lim.rlim_cur = cap;
            m_capped = setrlimit(RLIMIT_AS, &lim) == 0 || m_capped;
        }
    }
    void release()
    {
        std::lock_guard lock(m_mutex);
        if (--m_active == 0) {
            if (m_capped && m_haveOriginal)
                setrlimit(RLIMIT_AS, &m_original);
            m_capped = false;
        }
    }

private:
    static std::uint64_t vmSizeKiB()
    {
        std::ifstream status("/proc/self/status");
        std::string line;
        while (std::getline(status, line))
            if (line.rfind("VmSize:", 0) == 0)
                return std::strtoull(line.c_str() + 7, nullptr, 10);
        return 0;
    }

    std::mutex m_mutex;
    int m_active = 0;
    bool m_haveOriginal = false;
    bool m_capped = false;
    rlimit m_original {};
};

AddressSpaceCap& addressSpaceCap()
{
    static AddressSpaceCap cap;
    return cap;
}

// What the watching thread and the reading thread share; outlives readWatched when the reader is left behind.
struct Watch
{
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    bool abandoned = false; // the reader stalled: it calls no callback of the caller's any more
    std::shared_ptr<Trace> trace;
    std::exception_ptr error;
    std::chrono::steady_clock::time_point lastProgress = std::chrono::steady_clock::now();
    LoadProgress last;
    std::atomic<bool> cancel { false };

    void stageStarted(RunStage stage, const std::function<void(RunStage)>& user)
    {
        std::lock_guard lock(mutex);
        lastProgress = std::chrono::steady_clock::now();
        if (user && !abandoned)
            user(stage);
    }
    void progressed(const LoadProgress& p)
    {
        if (p.eventsRead != last.eventsRead || p.bytesRead != last.bytesRead || p.currentFile != last.currentFile) {
            lastProgress = std::chrono::steady_clock::now();
            last = p;
        }
    }
    std::string file(const std::string& path)
    {
        std::lock_guard lock(mutex);
        return last.currentFile.empty() ? path : last.currentFile;
    }
};

// `options` routed through the watch: the caller's callbacks are called under the watch's lock and never after the
// reader was left behind; cancel is the watch's own flag (the caller's may be gone by then).
LoadOptions watchedOptions(const std::shared_ptr<Watch>& watch, const LoadOptions& options, bool capAddressSpace)
{
    LoadOptions o = options;
    o.cancel = &watch->cancel;
    o.progress = [watch, user = options.progress](const LoadProgress& p) {
        std::lock_guard lock(watch->mutex);
        watch->progressed(p);
        if (user && !watch->abandoned)
            user(p);
    };
    o.memoryEstimated = [watch, user = options.memoryEstimated, capAddressSpace](std::uint64_t estimate) {
        std::lock_guard lock(watch->mutex);
        if (capAddressSpace && !watch->abandoned)
            addressSpaceCap().add(estimate);
        if (user && !watch->abandoned)
            user(estimate);
    };
    return o;
}

using ReadFunction = std::function<std::shared_ptr<Trace>(const LoadOptions&, const std::function<void(RunStage)>&)>;

// The reading thread's body: every failure becomes a LoadError naming the file, LoadCancelled passes.
void readInto(const std::shared_ptr<Watch>& watch, const std::string& path, const LoadOptions& options,
    const std::function<void(RunStage)>& stageStarted, const ReadFunction& read)
{
    std::shared_ptr<Trace> trace;
    std::exception_ptr error;
    try {
        trace = read(options, [&](RunStage s) { watch->stageStarted(s, stageStarted); });
    } catch (const LoadError&) {
        error = std::current_exception();
    } catch (const LoadCancelled&) {
        error = std::current_exception();
    } catch (const std::bad_alloc&) {
        error = std::make_exception_ptr(LoadError(watch->file(path),
            "reading needed far more memory than its event counts announce (damaged data?); stopped"));
    } catch (const std::exception& e) {
        error = std::make_exception_ptr(LoadError(path, e.what()));
    }
    std::lock_guard lock(watch->mutex);
    watch->trace = std::move(trace);
    watch->error = error;
    watch->done = true;
    watch->cv.notify_all();
}

} // namespace

std::shared_ptr<Trace> readWatched(
    const std::string& path, const LoadOptions& options, const WatchOptions& watchOptions, const ReadFunction& read)
{
    auto watch = std::make_shared<Watch>();
    const LoadOptions watched = watchedOptions(watch, options, watchOptions.capAddressSpace);
    if (watchOptions.capAddressSpace)
        addressSpaceCap().enter();
    auto release = [&] {
        if (watchOptions.capAddressSpace)
            addressSpaceCap().release(); // the analysis runs under the limits the process had
    };
    if (watchOptions.stallSeconds <= 0) {
        readInto(watch, path, watched, watchOptions.stageStarted, read);
        release();
    } else {
        std::thread reader([watch, path, watched, stageStarted = watchOptions.stageStarted, read] {
            readInto(watch, path, watched, stageStarted, read);
        });
        std::unique_lock lock(watch->mutex);
        while (!watch->done) {
            watch->cv.wait_for(lock, std::chrono::milliseconds(50));
            if (options.cancel && options.cancel->load(std::memory_order_relaxed))
                watch->cancel.store(true, std::memory_order_relaxed);
            if (!watch->done
                && std::chrono::steady_clock::now() - watch->lastProgress
                    > std::chrono::seconds(watchOptions.stallSeconds)) {
                watch->abandoned = true;
                const std::string file = watch->last.currentFile.empty() ? path : watch->last.currentFile;
                lock.unlock();
                reader.detach(); // it cannot be stopped from outside
                release();
                throw LoadStalled(file,
                    "reading stopped making progress for " + std::to_string(watchOptions.stallSeconds)
                        + " s inside the OTF2 library (a damaged event file: check it with otf2-print)");
            }
        }
        lock.unlock();
        reader.join();
        release();
    }
    if (watch->error)
        std::rethrow_exception(watch->error);
    return watch->trace;
}

} // namespace exposure
