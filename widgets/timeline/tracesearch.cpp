// SPDX-License-Identifier: GPL-3.0-or-later
#include "timeline/tracesearch.h"

#include <QMetaObject>
#include <QRegularExpression>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <limits>
#include <utility>

namespace exposure {

NameMatches matchNames(const Trace& trace, const Analysis* analysis, const SearchQuery& query)
{
    NameMatches out;
    out.byName.assign(trace.strings.size(), 0);
    if (query.text.isEmpty())
        return out;
    const Qt::CaseSensitivity cs = query.caseSensitive ? Qt::CaseSensitive : Qt::CaseInsensitive;
    QRegularExpression re;
    if (query.regex) {
        re = QRegularExpression(query.text,
            query.caseSensitive ? QRegularExpression::NoPatternOption : QRegularExpression::CaseInsensitiveOption);
        if (!re.isValid()) {
            out.error = re.errorString();
            return out;
        }
        re.optimize();
    }
    auto matches = [&](const std::string& name) {
        const QString s = QString::fromStdString(name);
        return query.regex ? re.match(s).hasMatch() : s.contains(query.text, cs);
    };
    for (std::size_t id = 0; id < trace.strings.size(); ++id) {
        const std::string& raw = trace.strings.str(StringId(id));
        const std::string& shown = displayName(trace, analysis, StringId(id));
        if (matches(raw) || (&shown != &raw && shown != raw && matches(shown))) {
            out.byName[id] = 1;
            ++out.count;
        }
    }
    return out;
}

SearchBatch SearchResults::binned(const Trace& trace, TimeRange extent, std::vector<LaneMatches> lanes)
{
    SearchBatch batch { std::move(lanes), std::vector<std::uint32_t>(kBins, 0) };
    const double span = double(std::max<TimeNs>(1, extent.duration()));
    for (const LaneMatches& lane : batch.lanes) {
        const IntervalTable& t = trace.ranks[std::size_t(lane.rank)].lanes[std::size_t(lane.lane)].intervals;
        for (const std::uint32_t i : lane.intervals) {
            const double at = double(t.start(i) - extent.start) / span * kBins;
            ++batch.bins[std::size_t(std::clamp(int(at), 0, kBins - 1))];
        }
    }
    return batch;
}

void SearchResults::add(SearchBatch batch)
{
    for (std::size_t b = 0; b < batch.bins.size() && b < m_bins.size(); ++b)
        m_bins[b] += batch.bins[b];
    for (LaneMatches& lane : batch.lanes) {
        if (lane.intervals.empty() || lane.rank < 0 || lane.lane < 0)
            continue;
        if (m_slot.size() <= std::size_t(lane.rank))
            m_slot.resize(std::size_t(lane.rank) + 1);
        auto& laneSlots = m_slot[std::size_t(lane.rank)];
        if (laneSlots.size() <= std::size_t(lane.lane))
            laneSlots.resize(std::size_t(lane.lane) + 1, -1);
        m_count += lane.intervals.size();
        int& slot = laneSlots[std::size_t(lane.lane)];
        if (slot >= 0) { // a later batch of the same lane: it continues in start order
            auto& v = m_lanes[std::size_t(slot)].intervals;
            v.insert(v.end(), lane.intervals.begin(), lane.intervals.end());
            continue;
        }
        slot = int(m_lanes.size());
        m_lanes.push_back(std::move(lane));
    }
}

const LaneMatches* SearchResults::lane(int rank, int lane) const
{
    if (rank < 0 || lane < 0 || std::size_t(rank) >= m_slot.size() || std::size_t(lane) >= m_slot[rank].size())
        return nullptr;
    const int slot = m_slot[std::size_t(rank)][std::size_t(lane)];
    return slot < 0 ? nullptr : &m_lanes[std::size_t(slot)];
}

bool SearchResults::contains(IntervalRef ref) const
{
    const LaneMatches* l = lane(ref.rank, ref.lane);
    return l && std::binary_search(l->intervals.begin(), l->intervals.end(), ref.interval);
}

std::optional<IntervalRef> SearchResults::stepFromKey(const Trace& trace, const Key& key, int direction) const
{
    std::optional<Key> best;
    for (const LaneMatches& l : m_lanes) {
        const IntervalTable& t = trace.ranks[std::size_t(l.rank)].lanes[std::size_t(l.lane)].intervals;
        auto keyOf = [&](std::uint32_t i) { return Key { t.start(i), l.rank, l.lane, i }; };
        // Within a lane, keys grow with the interval index (a table is sorted by start).
        const auto it = std::partition_point(
            l.intervals.begin(), l.intervals.end(), [&](std::uint32_t i) { return !(key < keyOf(i)); });
        if (direction > 0 && it != l.intervals.end()) {
            if (const Key k = keyOf(*it); !best || k < *best)
                best = k;
        }
        if (direction < 0) {
            const auto below = std::partition_point(
                l.intervals.begin(), l.intervals.end(), [&](std::uint32_t i) { return keyOf(i) < key; });
            if (below != l.intervals.begin())
                if (const Key k = keyOf(*(below - 1)); !best || *best < k)
                    best = k;
        }
    }
    if (!best)
        return std::nullopt;
    return IntervalRef { best->rank, best->lane, best->interval };
}

std::optional<IntervalRef> SearchResults::step(const Trace& trace, IntervalRef from, int direction) const
{
    const TimeNs start
        = trace.ranks.at(std::size_t(from.rank)).lanes.at(std::size_t(from.lane)).intervals.start(from.interval);
    return stepFromKey(trace, Key { start, from.rank, from.lane, from.interval }, direction);
}

std::optional<IntervalRef> SearchResults::stepFromTime(const Trace& trace, TimeNs t, int direction) const
{
    // Before every key of time t (direction > 0: those at t come next), or before every key of time t (direction
    // < 0: the last one that starts earlier).
    return stepFromKey(trace, Key { t, -1, -1, 0 }, direction);
}

std::optional<IntervalRef> SearchResults::first(const Trace& trace) const
{
    return stepFromKey(trace, Key { std::numeric_limits<TimeNs>::min(), -1, -1, 0 }, +1);
}

std::optional<IntervalRef> SearchResults::last(const Trace& trace) const
{
    return stepFromKey(trace, Key { std::numeric_limits<TimeNs>::max(), -1, -1, 0 }, -1);
}

std::uint64_t SearchResults::countBelow(const Trace& trace, const Key& key) const
{
    std::uint64_t n = 0;
    for (const LaneMatches& l : m_lanes) {
        const IntervalTable& t = trace.ranks[std::size_t(l.rank)].lanes[std::size_t(l.lane)].intervals;
        const auto below = std::partition_point(l.intervals.begin(), l.intervals.end(), [&](std::uint32_t i) {
            return Key { t.start(i), l.rank, l.lane, i } < key;
        });
        n += std::uint64_t(below - l.intervals.begin());
    }
    return n;
}

std::uint64_t SearchResults::rankOf(const Trace& trace, IntervalRef ref) const
{
    const TimeNs start
        = trace.ranks.at(std::size_t(ref.rank)).lanes.at(std::size_t(ref.lane)).intervals.start(ref.interval);
    return countBelow(trace, Key { start, ref.rank, ref.lane, ref.interval });
}

// --- the background search ---

namespace {

// Scans every lane for intervals of matching names; hands over a batch about every `batchIntervals` scanned.
void collectMatches(const Trace& trace, const NameMatches& names, const std::atomic<bool>& cancel,
    const std::function<void(std::vector<LaneMatches>, bool)>& emitBatch)
{
    constexpr std::size_t batchIntervals = 1u << 21;
    std::vector<LaneMatches> batch;
    std::size_t scanned = 0;
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        for (std::size_t l = 0; l < trace.ranks[r].lanes.size(); ++l) {
            const IntervalTable& t = trace.ranks[r].lanes[l].intervals;
            LaneMatches m { int(r), int(l), {} };
            for (std::size_t i = 0; i < t.size(); ++i) {
                const StringId id = t.name(i);
                if (id < names.byName.size() && names.byName[id])
                    m.intervals.push_back(std::uint32_t(i));
                if (++scanned % batchIntervals == 0) {
                    if (cancel.load())
                        return;
                    if (!m.intervals.empty())
                        batch.push_back(LaneMatches { m.rank, m.lane, std::exchange(m.intervals, {}) });
                    emitBatch(std::exchange(batch, {}), false);
                }
            }
            if (!m.intervals.empty())
                batch.push_back(std::move(m));
        }
    }
    emitBatch(std::move(batch), true);
}

} // namespace

TraceSearch::TraceSearch(QObject* parent)
    : QObject(parent)
{ }

TraceSearch::~TraceSearch()
{
    cancelRunning();
}

void TraceSearch::cancelRunning()
{
    if (m_cancel)
        m_cancel->store(true);
    ++m_generation;
    m_running = false;
    m_future.waitForFinished();
}

void TraceSearch::setTrace(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis)
{
    clear();
    m_trace = std::move(trace);
    m_analysis = std::move(analysis);
}

void TraceSearch::clear()
{
    cancelRunning();
    m_query = {};
    m_results.reset();
    m_error.clear();
    m_names = 0;
    emit resultsChanged();
}

void TraceSearch::start(const SearchQuery& query)
{
    cancelRunning();
    m_query = query;
    m_error.clear();
    m_names = 0;
    m_results.reset();
    if (!m_trace || query.text.isEmpty()) {
        emit resultsChanged();
        emit finished();
        return;
    }
    m_results = std::make_shared<SearchResults>(m_trace->extent);
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_running = true;
    emit resultsChanged();
    const quint64 generation = m_generation;
    m_future = QtConcurrent::run([this, generation, trace = m_trace, analysis = m_analysis, query, cancel = m_cancel] {
        const NameMatches names = matchNames(*trace, analysis.get(), query);
        QMetaObject::invokeMethod(
            this,
            [this, generation, error = names.error, count = names.count] {
                if (generation != m_generation)
                    return;
                m_error = error;
                m_names = count;
            },
            Qt::QueuedConnection);
        if (!names.error.isEmpty() || names.count == 0 || cancel->load()) {
            QMetaObject::invokeMethod(
                this, [this, generation] { deliver(generation, {}, true); }, Qt::QueuedConnection);
            return;
        }
        collectMatches(*trace, names, *cancel, [this, generation, &trace](std::vector<LaneMatches> lanes, bool last) {
            SearchBatch batch = SearchResults::binned(*trace, trace->extent, std::move(lanes));
            QMetaObject::invokeMethod(
                this,
                [this, generation, batch = std::move(batch), last]() mutable {
                    deliver(generation, std::move(batch), last);
                },
                Qt::QueuedConnection);
        });
    });
}

void TraceSearch::deliver(quint64 generation, SearchBatch batch, bool last)
{
    if (generation != m_generation || !m_results)
        return;
    m_results->add(std::move(batch));
    if (last)
        m_running = false;
    emit resultsChanged();
    if (last)
        emit finished();
}

} // namespace exposure
