// SPDX-License-Identifier: GPL-3.0-or-later
// Independent work items on several threads: fn(i) for every i in [0, count), items handed out in order as threads
// become free. The first exception (in item order of the threads that threw) is rethrown after every thread ended;
// no new item starts once one threw.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace exposure {

// Threads for `count` items: `threads` if positive, else one per hardware thread; never more than items.
inline std::size_t workerCount(std::size_t count, int threads = 0)
{
    const std::size_t hw = threads > 0 ? std::size_t(threads) : std::max(1u, std::thread::hardware_concurrency());
    return std::max<std::size_t>(1, std::min(count, hw));
}

template <typename Fn> void parallelFor(std::size_t count, std::size_t workers, Fn&& fn)
{
    if (workers <= 1 || count <= 1) {
        for (std::size_t i = 0; i < count; ++i)
            fn(i);
        return;
    }
    std::atomic<std::size_t> next { 0 };
    std::vector<std::exception_ptr> errors(workers);
    std::vector<std::thread> pool;
    pool.reserve(workers);
    for (std::size_t w = 0; w < workers; ++w)
        pool.emplace_back([&, w] {
            try {
                for (std::size_t i = next++; i < count; i = next++)
                    fn(i);
            } catch (...) {
                errors[w] = std::current_exception(); // e.g. bad_alloc: rethrown to the caller below
                next = count;
            }
        });
    for (auto& t : pool)
        t.join();
    for (const auto& e : errors)
        if (e)
            std::rethrow_exception(e);
}

} // namespace exposure
