// SPDX-License-Identifier: GPL-3.0-or-later
#include "view/shareindex.h"

#include <algorithm>
#include <cmath>

namespace exposure {

TimeNs ColumnGrid::edge(int x) const
{
    return t0 + TimeNs(std::ceil(double(x) * nsPerPixel));
}

int ColumnGrid::columnOf(TimeNs t) const
{
    const double x = std::floor(double(t - t0) / nsPerPixel);
    return int(std::clamp(x, -2.0e9, 2.0e9));
}

namespace {

bool isDisjoint(const IntervalTable& t)
{
    for (std::size_t i = 1; i < t.size(); ++i)
        if (t.end(i - 1) > t.start(i))
            return false;
    return true;
}

// Every nanosecond covered by the table, attributed to the innermost (latest-started) interval covering it.
// Names of the result are class ids; touching pieces of one class are merged.
std::unique_ptr<IntervalTable> flatten(const IntervalTable& t, const std::vector<std::uint8_t>* classOfName)
{
    auto flat = std::make_unique<IntervalTable>();
    flat->reserve(t.size());
    struct Open
    {
        TimeNs end;
        std::uint8_t cls;
    };
    std::vector<Open> stack;
    TimeNs cursor = t.empty() ? 0 : t.start(0);
    auto emit = [&](TimeNs a, TimeNs b, std::uint8_t cls) {
        if (b <= a)
            return;
        const std::size_t n = flat->size();
        if (n > 0 && flat->name(n - 1) == cls && flat->end(n - 1) == a) {
            flat->setEnd(n - 1, b);
            return;
        }
        flat->append(a, b, cls);
    };
    // Emits the stack's coverage from the cursor up to time `to`.
    auto advance = [&](TimeNs to) {
        while (!stack.empty() && cursor < to) {
            const Open top = stack.back();
            if (top.end <= cursor) {
                stack.pop_back();
                continue;
            }
            const TimeNs segEnd = std::min(top.end, to);
            emit(cursor, segEnd, top.cls);
            cursor = segEnd;
            if (top.end <= to)
                stack.pop_back();
        }
        cursor = std::max(cursor, to);
    };
    for (std::size_t i = 0; i < t.size(); ++i) {
        advance(t.start(i));
        const StringId name = t.name(i);
        const std::uint8_t cls = classOfName ? (name < classOfName->size() ? (*classOfName)[name] : 0)
                                             : std::uint8_t(std::min<StringId>(name, 0xFE));
        stack.push_back({ t.end(i), cls });
    }
    TimeNs last = cursor;
    for (const Open& o : stack)
        last = std::max(last, o.end);
    advance(last);
    flat->shrinkToFit();
    return flat;
}

} // namespace

std::uint8_t ShareIndex::localOfName(StringId name) const
{
    if (!m_flat && m_classOfName)
        return name < m_classOfName->size() ? m_localOf[(*m_classOfName)[name]] : m_localOf[0];
    return m_localOf[std::min<StringId>(name, 0xFE)];
}

void ShareIndex::build(const IntervalTable& table, const std::vector<std::uint8_t>* classOfName)
{
    m_classOfName = classOfName;
    m_flat.reset();
    m_classes.clear();
    m_prefix.clear();
    m_localOf.assign(256, kAbsent);
    m_count = table.size();
    if (!isDisjoint(table))
        m_flat = flatten(table, classOfName);
    const IntervalTable& t = source(table);
    const std::size_t n = t.size();

    std::vector<bool> present(256, false);
    for (std::size_t i = 0; i < n; ++i) {
        const StringId name = t.name(i);
        const std::uint8_t cls = (!m_flat && classOfName) ? (name < classOfName->size() ? (*classOfName)[name] : 0)
                                                          : std::uint8_t(std::min<StringId>(name, 0xFE));
        present[cls] = true;
    }
    for (std::size_t c = 0; c < 256; ++c)
        if (present[c]) {
            m_localOf[c] = std::uint8_t(m_classes.size());
            m_classes.push_back(std::uint8_t(c));
        }
    const std::size_t k = m_classes.size();
    const std::size_t blocks = (n + kBlock - 1) / kBlock;
    m_prefix.assign((blocks + 1) * k, 0);
    for (std::size_t b = 0; b < blocks; ++b) {
        TimeNs* row = &m_prefix[(b + 1) * k];
        std::copy_n(&m_prefix[b * k], k, row);
        const std::size_t end = std::min(n, (b + 1) * kBlock);
        for (std::size_t i = b * kBlock; i < end; ++i)
            row[localOfName(t.name(i))] += t.duration(i);
    }
    m_prefix.shrink_to_fit();
}

std::size_t ShareIndex::residentBytes() const
{
    return m_prefix.capacity() * sizeof(TimeNs) + m_classes.capacity() + m_localOf.capacity()
        + (m_flat ? m_flat->residentBytes() : 0);
}

void ShareIndex::cumulative(const IntervalTable& table, TimeNs time, TimeNs* out) const
{
    const std::size_t k = m_classes.size();
    std::fill_n(out, k, TimeNs(0));
    const IntervalTable& t = source(table);
    const std::size_t n = t.size();
    if (n == 0 || k == 0 || m_prefix.empty())
        return;
    const std::size_t j = t.lowerBoundStart(time); // intervals [0, j) start before `time`
    const std::size_t b = j / kBlock;
    const std::size_t base = b * kBlock;
    const std::size_t next = std::min(n, base + kBlock);
    if (j - base <= (next - base) / 2) {
        std::copy_n(&m_prefix[b * k], k, out);
        for (std::size_t i = base; i < j; ++i)
            out[localOfName(t.name(i))] += t.duration(i);
    } else {
        std::copy_n(&m_prefix[(b + 1) * k], k, out);
        for (std::size_t i = j; i < next; ++i)
            out[localOfName(t.name(i))] -= t.duration(i);
    }
    // In a disjoint table only the last interval that started before `time` can reach past it.
    if (j > 0) {
        const TimeNs e = t.end(j - 1);
        if (e > time)
            out[localOfName(t.name(j - 1))] -= e - time;
    }
}

void ShareIndex::timeIn(const IntervalTable& table, TimeNs a, TimeNs b, TimeNs* out) const
{
    const std::size_t k = m_classes.size();
    std::fill_n(out, k, TimeNs(0));
    if (b <= a || k == 0)
        return;
    std::vector<TimeNs> lo(k);
    cumulative(table, a, lo.data());
    cumulative(table, b, out);
    for (std::size_t c = 0; c < k; ++c)
        out[c] -= lo[c];
}

void ShareIndex::columns(const IntervalTable& table, const ColumnGrid& grid, std::vector<TimeNs>& out) const
{
    const std::size_t k = m_classes.size();
    const std::size_t w = std::size_t(std::max(0, grid.width));
    out.assign(w * k, 0);
    if (k == 0 || w == 0)
        return;
    const IntervalTable& t = source(table);
    if (t.empty())
        return;
    std::vector<TimeNs> prev(k), cur(k);
    // Columns before the first interval or after the last are empty: skip their lookups.
    const TimeNs first = t.start(0);
    const TimeNs last = t.end(t.size() - 1); // the source is disjoint, so its ends are sorted
    int x = 0;
    while (x < int(w) && std::max(grid.edge(x + 1), grid.edge(x) + 1) <= first)
        ++x;
    TimeNs at = grid.edge(x);
    cumulative(table, at, prev.data());
    for (; x < int(w); ++x) {
        const TimeNs e = grid.edge(x + 1);
        TimeNs* col = &out[std::size_t(x) * k];
        if (e <= at) { // a column narrower than a nanosecond shows the nanosecond it lies in
            cumulative(table, at + 1, cur.data());
            for (std::size_t c = 0; c < k; ++c)
                col[c] = cur[c] - prev[c];
            continue;
        }
        cumulative(table, e, cur.data());
        for (std::size_t c = 0; c < k; ++c)
            col[c] = cur[c] - prev[c];
        prev.swap(cur);
        at = e;
        if (e >= last)
            break;
    }
}

ColumnStacker::ColumnStacker(std::size_t classes, int height)
    : m_carry(classes, 0.0)
    , m_want(classes, 0.0)
    , m_height(std::max(0, height))
{ }

void ColumnStacker::stack(const TimeNs* times, TimeNs span, int* heights, int height)
{
    const std::size_t k = m_carry.size();
    std::fill_n(heights, k, 0);
    if (span <= 0 || height <= 0)
        return;
    TimeNs total = 0;
    for (std::size_t c = 0; c < k; ++c)
        total += std::max<TimeNs>(0, times[c]);
    // Overlapping inputs can sum past the span; shares never exceed the column.
    const double denom = double(std::max(total, span));
    // Largest remainder: floors first, then the pixels the column's total is owed go to the classes
    // closest to their next pixel.
    int sum = 0;
    double wantTotal = 0;
    for (std::size_t c = 0; c < k; ++c) {
        if (times[c] <= 0) { // no time, no paint: the carry waits for a column where the class runs
            m_want[c] = 0;
            continue;
        }
        m_want[c] = double(times[c]) / denom * height + m_carry[c];
        wantTotal += std::max(0.0, m_want[c]);
        heights[c] = std::max(0, int(std::floor(m_want[c])));
        sum += heights[c];
    }
    const int target = std::clamp(int(std::lround(wantTotal)), 0, height);
    while (sum < target) {
        std::size_t pick = k;
        double best = -1;
        for (std::size_t c = 0; c < k; ++c)
            if (times[c] > 0 && m_want[c] - heights[c] > best) {
                best = m_want[c] - heights[c];
                pick = c;
            }
        if (pick == k)
            break;
        ++heights[pick];
        ++sum;
    }
    while (sum > target) { // only when the carries ask for more than the column holds
        std::size_t pick = k;
        double worst = 0;
        for (std::size_t c = 0; c < k; ++c)
            if (heights[c] > 0 && (pick == k || m_want[c] - heights[c] < worst)) {
                worst = m_want[c] - heights[c];
                pick = c;
            }
        --heights[pick];
        --sum;
    }
    for (std::size_t c = 0; c < k; ++c)
        if (times[c] > 0)
            m_carry[c] = m_want[c] - heights[c];
}

} // namespace exposure
