// SPDX-License-Identifier: GPL-3.0-or-later
// Reading the files of a run (one per rank) on several threads: each file is read on its own into its own
// structure, and the results are merged in file order afterwards, so that the trace does not depend on the
// number of threads.
#pragma once

#include "import/loadoptions.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace exposure {

// Threads to read `files` files with: LoadOptions::threads, else one per hardware thread, never more than there are
// files (a cap of 8 kept 16 cores at 3 busy on 1 024 torch.profiler files).
inline int fileReadThreads(const LoadOptions& options, std::size_t files)
{
    int threads = options.threads > 0 ? options.threads : int(std::max(1u, std::thread::hardware_concurrency()));
    return int(std::max<std::size_t>(1, std::min<std::size_t>(std::size_t(threads), files)));
}

// Calls read(i) for every i in [0, count) on `threads` threads (the calling thread is one of them), files taken in
// order as threads become free. Once a call throws, no new file is started; the exception of the lowest index
// is rethrown (a cancellation is rethrown only when no file failed otherwise), so a run's error names the same
// file whatever the number of threads.
template <typename Read> void readFilesInParallel(std::size_t count, int threads, Read&& read)
{
    std::vector<std::exception_ptr> errors(count);
    std::atomic<std::size_t> next { 0 };
    std::atomic<bool> failed { false };
    auto work = [&] {
        for (;;) {
            const std::size_t i = next.fetch_add(1);
            if (i >= count || failed.load())
                return;
            try {
                read(i);
            } catch (...) {
                errors[i] = std::current_exception();
                failed.store(true);
            }
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t)
        pool.emplace_back(work);
    work();
    for (auto& t : pool)
        t.join();
    std::exception_ptr cancelled;
    for (const auto& e : errors) {
        if (!e)
            continue;
        try {
            std::rethrow_exception(e);
        } catch (const LoadCancelled&) {
            if (!cancelled)
                cancelled = e;
        } catch (...) {
            throw;
        }
    }
    if (cancelled)
        std::rethrow_exception(cancelled);
}

} // namespace exposure
