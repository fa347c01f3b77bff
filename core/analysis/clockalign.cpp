// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/clockalign.h"

#include "model/timeformat.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace exposure {

namespace {

// Pairs of clock domains with fewer matched collectives than this give no estimate.
constexpr std::size_t kMinCollectives = 3;

// Clock domains: hosts where every rank records one, else one per rank.
std::vector<int> clockDomains(const Trace& trace, int& count)
{
    std::vector<int> domain(trace.ranks.size());
    const bool hostsKnown
        = std::all_of(trace.ranks.begin(), trace.ranks.end(), [](const Rank& r) { return !r.host.empty(); });
    std::map<std::string, int> byHost;
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        if (!hostsKnown) {
            domain[r] = int(r);
            continue;
        }
        domain[r] = byHost.try_emplace(trace.ranks[r].host, int(byHost.size())).first->second;
    }
    count = hostsKnown ? int(byHost.size()) : int(trace.ranks.size());
    return domain;
}

struct Estimate
{
    TimeNs median = 0;
    TimeNs standardError = 0;
    std::uint64_t samples = 0;
};

Estimate robustEstimate(std::vector<TimeNs> d)
{
    Estimate e;
    e.samples = d.size();
    if (d.empty())
        return e;
    auto median = [](std::vector<TimeNs>& v) {
        std::sort(v.begin(), v.end());
        const std::size_t n = v.size();
        return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
    };
    e.median = median(d);
    for (TimeNs& x : d)
        x = std::abs(x - e.median);
    const double mad = double(median(d));
    // The median's standard error: sqrt(pi/2) * sigma / sqrt(n), sigma = 1.4826 * MAD for normal jitter.
    e.standardError = TimeNs(std::llround(1.2533 * 1.4826 * mad / std::sqrt(double(e.samples))));
    return e;
}

// End differences (domain b's member minus domain a's) over the collectives matched by identity, one
// representative member per domain and collective.
std::map<std::pair<int, int>, std::vector<TimeNs>> endDifferences(
    const CollectiveMatch& match, const std::vector<int>& domain)
{
    std::map<std::pair<int, int>, std::vector<TimeNs>> diffs;
    std::map<int, TimeNs> endOf;
    for (const CollectiveGroup& g : match.groups) {
        if (g.processGroup >= match.processGroups.size()
            || match.processGroups[g.processGroup].method == MatchMethod::Time)
            continue;
        endOf.clear();
        for (const CollectiveMember& m : g.members)
            endOf.try_emplace(domain[std::size_t(m.rank)], m.end);
        for (auto a = endOf.begin(); a != endOf.end(); ++a)
            for (auto b = std::next(a); b != endOf.end(); ++b)
                diffs[{ a->first, b->first }].push_back(b->second - a->second);
    }
    return diffs;
}

// Ranks whose clock could not be tied to the reference rank's: named, with what they are aligned to instead.
std::string clockWarning(const Trace& trace)
{
    const ClockAlignment& c = trace.clocks;
    if (c.method != ClockMethod::CollectiveEnds)
        return {};
    std::map<int, std::string> byRoot; // root rank -> its ranks
    for (const RankClock& rc : c.ranks)
        if (rc.alignedTo != c.referenceRank && std::size_t(rc.rank) < trace.ranks.size())
            byRoot[rc.alignedTo]
                += (byRoot[rc.alignedTo].empty() ? "" : ", ") + trace.ranks[std::size_t(rc.rank)].label;
    std::string out;
    for (const auto& [root, ranks] : byRoot)
        out += (out.empty() ? "" : "; ") + ranks + " (aligned to " + trace.ranks[std::size_t(root)].label + ")";
    if (out.empty())
        return {};
    return "clocks: no collective matched by process group or stream ties these ranks to "
        + trace.ranks[std::size_t(c.referenceRank)].label
        + "'s clock; they are aligned only among themselves, and times between them and the others are as recorded: "
        + out;
}

} // namespace

ClockAlignment estimateClockOffsets(const Trace& trace, const CollectiveMatch& match, ClockMode mode)
{
    ClockAlignment out;
    if (trace.ranks.size() < 2)
        return out;
    int domains = 0;
    const std::vector<int> domain = clockDomains(trace, domains);
    out.hosts = domains;
    for (std::size_t r = 0; r < trace.ranks.size(); ++r)
        out.ranks.push_back({ int(r), trace.ranks[r].host, 0, 0, 0, 0 });
    if (domains < 2) {
        out.method = ClockMethod::SingleHost;
        return out;
    }
    std::map<std::pair<int, int>, Estimate> edges;
    for (auto& [pair, d] : endDifferences(match, domain))
        if (d.size() >= kMinCollectives)
            edges[pair] = robustEstimate(std::move(d));
    // Prim's tree from the reference domain over the best-supported pairs; offsets add up along it.
    std::vector<bool> reached(static_cast<std::size_t>(domains), false);
    std::vector<Estimate> at(static_cast<std::size_t>(domains));
    std::vector<double> variance(static_cast<std::size_t>(domains), 0.0);
    reached[std::size_t(domain[0])] = true;
    std::vector<int> rootOf(static_cast<std::size_t>(domains));
    std::vector<int> firstRankOf(static_cast<std::size_t>(domains), -1);
    for (std::size_t r = trace.ranks.size(); r-- > 0;)
        firstRankOf[std::size_t(domain[r])] = int(r);
    for (int d = 0; d < domains; ++d)
        rootOf[std::size_t(d)] = d;
    for (;;) {
        const Estimate* best = nullptr;
        int from = -1, to = -1, sign = 1;
        for (const auto& [pair, e] : edges) {
            const bool aIn = reached[std::size_t(pair.first)], bIn = reached[std::size_t(pair.second)];
            if (aIn == bIn || (best && e.samples <= best->samples))
                continue;
            best = &e;
            from = aIn ? pair.first : pair.second;
            to = aIn ? pair.second : pair.first;
            sign = aIn ? 1 : -1;
        }
        if (!best) {
            // A set of ranks that shares no collective with the reference (e.g. a process group of its own): its
            // lowest domain becomes its own reference, so that its members are at least aligned among themselves.
            int root = -1;
            for (const auto& [pair, e] : edges)
                if (!reached[std::size_t(pair.first)] && !reached[std::size_t(pair.second)])
                    root = root < 0 ? pair.first : std::min(root, pair.first);
            if (root < 0)
                break;
            reached[std::size_t(root)] = true;
            continue;
        }
        reached[std::size_t(to)] = true;
        rootOf[std::size_t(to)] = rootOf[std::size_t(from)];
        at[std::size_t(to)].median = at[std::size_t(from)].median + sign * best->median;
        at[std::size_t(to)].samples = best->samples;
        variance[std::size_t(to)]
            = variance[std::size_t(from)] + double(best->standardError) * double(best->standardError);
        at[std::size_t(to)].standardError = TimeNs(std::llround(std::sqrt(variance[std::size_t(to)])));
    }
    out.method = mode == ClockMode::Aligned ? ClockMethod::CollectiveEnds : ClockMethod::Recorded;
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const std::size_t d = std::size_t(domain[r]);
        RankClock& rc = out.ranks[r];
        rc.alignedTo = reached[d] ? firstRankOf[std::size_t(rootOf[d])] : int(r);
        if (!reached[d] || d == std::size_t(domain[0]))
            continue;
        rc.estimateNs = at[d].median;
        rc.uncertaintyNs = at[d].standardError;
        rc.collectivesUsed = at[d].samples;
        const bool significant = std::abs(rc.estimateNs) > std::max<TimeNs>(3 * rc.uncertaintyNs, kSignificantOffsetNs);
        if (mode == ClockMode::Aligned && significant) {
            rc.offsetNs = rc.estimateNs;
            out.applied = true;
            out.maxUncertaintyNs = std::max(out.maxUncertaintyNs, rc.uncertaintyNs);
        }
    }
    return out;
}

void applyClockOffsets(Trace& trace, const ClockAlignment& clocks)
{
    for (const RankClock& rc : clocks.ranks) {
        if (rc.offsetNs == 0 || std::size_t(rc.rank) >= trace.ranks.size())
            continue;
        for (Lane& lane : trace.ranks[std::size_t(rc.rank)].lanes)
            lane.intervals.shift(-rc.offsetNs);
    }
    trace.finalize(true);
    trace.clocks = clocks;
}

AlignedRun alignClocks(Trace& trace, std::shared_ptr<const Analysis> analysis, ClockMode mode)
{
    AlignedRun run;
    auto match = std::make_shared<const CollectiveMatch>(matchCollectives(trace, *analysis));
    const ClockAlignment clocks = estimateClockOffsets(trace, *match, mode);
    if (clocks.applied) {
        applyClockOffsets(trace, clocks);
        analysis = analyze(trace, analysis->rules);
        match = std::make_shared<const CollectiveMatch>(matchCollectives(trace, *analysis));
    } else {
        trace.clocks = clocks;
    }
    if (const std::string w = matchWarning(trace, *match); !w.empty())
        trace.warnings.push_back(w);
    if (const std::string w = clockWarning(trace); !w.empty())
        trace.warnings.push_back(w);
    run.analysis = std::move(analysis);
    run.collectives = std::move(match);
    return run;
}

std::string clockSummaryLine(const Trace& trace)
{
    const ClockAlignment& c = trace.clocks;
    if (trace.ranks.size() < 2 || c.ranks.empty())
        return {};
    const bool hostsKnown
        = std::none_of(c.ranks.begin(), c.ranks.end(), [](const RankClock& r) { return r.host.empty(); });
    const std::string domains
        = std::to_string(c.hosts) + (hostsKnown ? (c.hosts == 1 ? " host" : " hosts") : " ranks (hosts not recorded)");
    TimeNs largest = 0, largestEstimate = 0;
    for (const RankClock& rc : c.ranks) {
        largest = std::max(largest, std::abs(rc.offsetNs));
        largestEstimate = std::max(largestEstimate, std::abs(rc.estimateNs));
    }
    switch (c.method) {
    case ClockMethod::SingleHost:
        return "clocks: one host, one clock (nothing to align)";
    case ClockMethod::CollectiveEnds:
        if (c.applied)
            return "clocks aligned across " + domains + " from collective end times (offsets up to "
                + formatDuration(largest) + ", ±" + formatDuration(c.maxUncertaintyNs) + ")";
        if (std::all_of(c.ranks.begin(), c.ranks.end(), [](const RankClock& rc) { return rc.collectivesUsed == 0; }))
            return "clocks as recorded: " + domains
                + ", no collective matched by process group or stream to estimate their offsets from";
        return "clocks as recorded: " + domains + ", estimated offsets up to " + formatDuration(largestEstimate)
            + " are within the end jitter of collectives (below " + formatDuration(kSignificantOffsetNs)
            + " or 3 uncertainties)";
    case ClockMethod::Recorded:
        break;
    }
    return "clocks as recorded (--clock recorded; estimated offsets up to " + formatDuration(largestEstimate) + ")";
}

} // namespace exposure
