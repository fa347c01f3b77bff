// SPDX-License-Identifier: GPL-3.0-or-later
// Find: the instances of the kernels and CPU regions whose name matches a text or a regular expression.
// Names are interned, so the pool's distinct names are matched once (a name matches by its displayed, demangled form
// or as the trace has it); then every lane's intervals are collected by name id, in the background, lane by lane,
// and the results stream into the GUI thread in batches.
#pragma once

#include "analysis/analysis.h"
#include "model/trace.h"

#include <QFuture>
#include <QObject>
#include <QString>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace exposure {

struct SearchQuery
{
    QString text;
    bool regex = false; // else a plain substring
    bool caseSensitive = false;
    bool operator==(const SearchQuery&) const = default;
};

// The names of a trace that match a query, by StringId; `error` says why a regular expression is not valid.
struct NameMatches
{
    std::vector<char> byName;
    std::size_t count = 0;
    QString error;
};
NameMatches matchNames(const Trace& trace, const Analysis* analysis, const SearchQuery& query);

// The matches of one lane: indexes into its interval table, ascending (start order).
struct LaneMatches
{
    int rank = -1;
    int lane = -1;
    std::vector<std::uint32_t> intervals;
};

// Matches found by the background search since its last batch, with their histogram over the trace's extent
// (computed there, not on the GUI thread).
struct SearchBatch
{
    std::vector<LaneMatches> lanes;
    std::vector<std::uint32_t> bins; // SearchResults::kBins, or empty when nothing was found
};

// Every match found so far. Matches are ordered by (start, rank, lane, interval): that is the order of
// next / previous, and of "k of n". Queries cost O(lanes · log matches).
class SearchResults
{
public:
    static constexpr int kBins = 1024; // the overview's histogram over the trace's extent

    explicit SearchResults(TimeRange extent = {})
        : m_extent(extent)
        , m_bins(kBins, 0)
    { }
    // Bins the lanes' matches by start (in the background), then adds the batch (on the GUI thread).
    static SearchBatch binned(const Trace& trace, TimeRange extent, std::vector<LaneMatches> lanes);
    void add(SearchBatch batch);
    std::uint64_t count() const { return m_count; }
    const std::vector<LaneMatches>& lanes() const { return m_lanes; }
    const LaneMatches* lane(int rank, int lane) const;
    bool contains(IntervalRef ref) const;
    // The match after (direction > 0) or before `from` in match order, without wrapping; nullopt if none.
    std::optional<IntervalRef> step(const Trace& trace, IntervalRef from, int direction) const;
    // The first match starting at or after `t` (direction > 0) or the last one starting before `t`.
    std::optional<IntervalRef> stepFromTime(const Trace& trace, TimeNs t, int direction) const;
    std::optional<IntervalRef> first(const Trace& trace) const;
    std::optional<IntervalRef> last(const Trace& trace) const;
    // How many matches come before `ref` in match order (its index when it is a match).
    std::uint64_t rankOf(const Trace& trace, IntervalRef ref) const;
    // Matches per bin of the trace's extent (kBins bins, by start).
    const std::vector<std::uint32_t>& bins() const { return m_bins; }
    TimeRange extent() const { return m_extent; }

private:
    struct Key
    {
        TimeNs start;
        int rank, lane;
        std::uint32_t interval;
        auto operator<=>(const Key&) const = default;
    };
    std::optional<IntervalRef> stepFromKey(const Trace& trace, const Key& key, int direction) const;
    std::uint64_t countBelow(const Trace& trace, const Key& key) const;

    TimeRange m_extent;
    std::vector<LaneMatches> m_lanes;
    std::vector<std::vector<int>> m_slot; // [rank][lane] -> index into m_lanes, -1
    std::vector<std::uint32_t> m_bins;
    std::uint64_t m_count = 0;
};

// Runs a query in the background. start() supersedes the running search; its batches are dropped.
class TraceSearch : public QObject
{
    Q_OBJECT
public:
    explicit TraceSearch(QObject* parent = nullptr);
    ~TraceSearch() override; // cancels and waits

    void setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis);
    void start(const SearchQuery& query);
    void clear();
    bool running() const { return m_running; }
    const SearchQuery& query() const { return m_query; }
    // Shared with the timeline, which draws the matches; grows in the GUI thread only.
    std::shared_ptr<const SearchResults> results() const { return m_results; }
    QString error() const { return m_error; }
    std::size_t matchingNames() const { return m_names; }
    const std::shared_ptr<const Trace>& trace() const { return m_trace; }

signals:
    void resultsChanged(); // a batch arrived, or the results were reset
    void finished(); // the current search is complete

private:
    void cancelRunning();
    void deliver(quint64 generation, SearchBatch batch, bool last);

    std::shared_ptr<const Trace> m_trace;
    std::shared_ptr<const Analysis> m_analysis;
    std::shared_ptr<SearchResults> m_results;
    SearchQuery m_query;
    QString m_error;
    std::size_t m_names = 0;
    quint64 m_generation = 0;
    bool m_running = false;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    QFuture<void> m_future;
};

} // namespace exposure
