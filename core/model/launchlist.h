// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <vector>

namespace exposure {

// One CPU-side launch of work aimed at a GPU stream (CUDA_STREAM_REF on the launch API's Enter, or a kernel's
// correlation id in torch.profiler traces). A reference with cpuLane == kUnknownLaunch stands for a kernel whose
// launch is not in the trace.
inline constexpr std::uint32_t kUnknownLaunch = 0xFFFFFFFFu;
struct LaunchRef
{
    std::uint32_t cpuLane = 0; // lane index within the same rank, or kUnknownLaunch
    std::uint32_t interval = 0; // index of the launch-API interval in that lane's (final, sorted) table
    bool operator==(const LaunchRef&) const = default;
};

// A sequence of LaunchRef in about 4 bytes each: the interval per entry, the CPU lane once per run of entries from the
// same lane (the launches aimed at one stream come from one or two threads, in long runs). Entries are values:
// operator[] is O(log runs), iteration O(1) per entry, set() may split a run.
class LaunchList
{
public:
    LaunchList() = default;
    LaunchList(std::initializer_list<LaunchRef> refs)
    {
        for (const LaunchRef& l : refs)
            push_back(l);
    }
    std::size_t size() const { return m_interval.size(); }
    bool empty() const { return m_interval.empty(); }
    LaunchRef operator[](std::size_t k) const { return { m_runs[runOf(k)].cpuLane, m_interval[k] }; }
    void push_back(LaunchRef l)
    {
        if (m_runs.empty() || m_runs.back().cpuLane != l.cpuLane)
            m_runs.push_back({ std::uint32_t(m_interval.size()), l.cpuLane });
        m_interval.push_back(l.interval);
    }
    void set(std::size_t k, LaunchRef l);
    // Grows with `fill` or shrinks to n entries.
    void resize(std::size_t n, LaunchRef fill);
    void reserve(std::size_t n) { m_interval.reserve(n); }
    void clear();
    // Replaces each entry's interval by fn(entry) (the lane stays).
    template <typename Fn> void remapIntervals(Fn&& fn)
    {
        for (std::size_t r = 0; r < m_runs.size(); ++r) {
            const std::size_t end = r + 1 < m_runs.size() ? m_runs[r + 1].first : m_interval.size();
            for (std::size_t k = m_runs[r].first; k < end; ++k)
                m_interval[k] = fn(LaunchRef { m_runs[r].cpuLane, m_interval[k] });
        }
    }
    std::size_t capacityBytes() const
    {
        return m_interval.capacity() * sizeof(std::uint32_t) + m_runs.capacity() * sizeof(Run);
    }
    std::size_t runCount() const { return m_runs.size(); }
    std::uint32_t runLane(std::size_t run) const { return m_runs[run].cpuLane; } // the CPU lane of a run
    bool operator==(const LaunchList& o) const;

    class const_iterator
    {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = LaunchRef;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = LaunchRef;
        const_iterator() = default;
        LaunchRef operator*() const { return { m_list->m_runs[m_run].cpuLane, m_list->m_interval[m_k] }; }
        const_iterator& operator++()
        {
            ++m_k;
            if (m_run + 1 < m_list->m_runs.size() && m_k >= m_list->m_runs[m_run + 1].first)
                ++m_run;
            return *this;
        }
        const_iterator operator++(int)
        {
            const_iterator old = *this;
            ++*this;
            return old;
        }
        bool operator==(const const_iterator& o) const { return m_k == o.m_k; }

    private:
        friend class LaunchList;
        const_iterator(const LaunchList* l, std::size_t k, std::size_t run)
            : m_list(l)
            , m_k(k)
            , m_run(run)
        { }
        const LaunchList* m_list = nullptr;
        std::size_t m_k = 0;
        std::size_t m_run = 0;
    };
    const_iterator begin() const { return { this, 0, 0 }; }
    const_iterator end() const { return { this, size(), 0 }; }

private:
    struct Run
    {
        std::uint32_t first; // index of the run's first entry
        std::uint32_t cpuLane;
    };
    std::size_t runOf(std::size_t k) const;

    std::vector<std::uint32_t> m_interval;
    std::vector<Run> m_runs; // sorted by first; m_runs[0].first == 0
};

} // namespace exposure
