// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/clockalign.h"

#include "model/parallelfor.h"
#include "model/timeformat.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

namespace exposure {

namespace {

// Pairs of clock domains with fewer matched collectives than this give no estimate.
constexpr std::size_t kMinCollectives = 3;
// Transfer starts are used where their spread (MAD) is within twice that of the end differences or this.
constexpr TimeNs kStableSpreadNs = 1'000;

// Clock domains: one where a single file holds every rank (one time base by construction), hosts where every rank
// records one, else one per rank.
std::vector<int> clockDomains(const Trace& trace, int& count)
{
    std::vector<int> domain(trace.ranks.size());
    if (!trace.ranks.empty() && !trace.ranks[0].archivePath.empty()
        && std::all_of(trace.ranks.begin(), trace.ranks.end(),
            [&](const Rank& r) { return r.archivePath == trace.ranks[0].archivePath; })) {
        count = 1;
        return std::vector<int>(trace.ranks.size(), 0);
    }
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
    TimeNs mad = 0; // median absolute deviation of the samples
    TimeNs standardError = 0;
    std::uint64_t samples = 0;
    bool separated = false; // from transfer starts (see clockSamples)
};

// Index of the pair of domains a < b in a triangular table of n domains.
std::size_t pairIndex(std::size_t a, std::size_t b, std::size_t n)
{
    return a * n - a * (a + 1) / 2 + (b - a - 1);
}

Estimate robustEstimate(std::vector<TimeNs> d)
{
    Estimate e;
    e.samples = d.size();
    if (d.empty())
        return e;
    auto median = [](std::vector<TimeNs>& v) { // the middle order statistics, selected (not sorted): O(n)
        const std::size_t n = v.size();
        const auto mid = v.begin() + std::ptrdiff_t(n / 2);
        std::nth_element(v.begin(), mid, v.end());
        if (n % 2)
            return *mid;
        const TimeNs below = *std::max_element(v.begin(), mid);
        return below + (*mid - below) / 2;
    };
    e.median = median(d);
    for (TimeNs& x : d)
        x = std::abs(x - e.median);
    const double mad = double(median(d));
    e.mad = TimeNs(mad);
    // The median's standard error: sqrt(pi/2) * sigma / sqrt(n), sigma = 1.4826 * MAD for normal jitter.
    e.standardError = TimeNs(std::llround(1.2533 * 1.4826 * mad / std::sqrt(double(e.samples))));
    return e;
}

// Collectives after which every member is released together: the all-reduce family, all-gather, reduce-scatter,
// all-to-all (NCCL runs it as SendRecv kernels). A broadcast's or reduce's root may finish before the others arrive,
// so their ends say nothing about the clocks.
bool releasesTogether(const std::string& kernel)
{
    std::string lower = kernel.substr(0, kernel.find('('));
    for (char& c : lower)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("allreduce") != std::string::npos || lower.find("allgather") != std::string::npos
        || lower.find("reducescatter") != std::string::npos)
        return true;
    return lower.find("broadcast") == std::string::npos && lower.find("_reduce") == std::string::npos;
}

// The member that arrived last, where its duration shows it: it did not wait, so it is the shortest, and every
// other member is longer by a margin (a quarter of it, at least 2 us). -1 where arrivals were too close to tell.
int clearLastMember(const CollectiveGroup& g)
{
    if (g.members.size() < 2)
        return -1;
    int best = -1;
    TimeNs shortest = 0, second = 0;
    for (std::size_t i = 0; i < g.members.size(); ++i) {
        const TimeNs d = g.members[i].end - g.members[i].start;
        if (best < 0 || d < shortest) {
            second = best < 0 ? d : shortest;
            shortest = d;
            best = int(i);
        } else if (i == 1 || d < second) {
            second = d;
        }
    }
    return second - shortest > std::max<TimeNs>(shortest / 4, 2'000) ? best : -1;
}

// A kind of collective for transfer times: its signature (type, data type, sizes) where recorded, else its kernel.
std::uint64_t kindOf(const CollectiveGroup& g)
{
    return g.signature != kNoKey ? std::uint64_t(g.signature) : (std::uint64_t(1) << 32) | g.name;
}

using TransferTimes = std::map<std::pair<int, std::uint64_t>, TimeNs>; // (rank, kind) -> transfer time

// Each rank's transfer time per kind of collective: the median duration of its instances in which it clearly arrived
// last (no waiting: the whole instance is transfer), where those durations are stable. Measured on the rank's own
// clock, so no offset enters.
TransferTimes transferTimes(const std::vector<const CollectiveGroup*>& groups)
{
    std::map<std::pair<int, std::uint64_t>, std::vector<TimeNs>> samples;
    for (const CollectiveGroup* g : groups)
        if (const int last = clearLastMember(*g); last >= 0) {
            const CollectiveMember& m = g->members[std::size_t(last)];
            samples[{ m.rank, kindOf(*g) }].push_back(m.end - m.start);
        }
    TransferTimes out;
    for (auto& [key, d] : samples) {
        std::nth_element(d.begin(), d.begin() + std::ptrdiff_t(d.size() / 2), d.end());
        const TimeNs median = d[d.size() / 2];
        std::vector<TimeNs> dev;
        for (const TimeNs x : d)
            dev.push_back(std::abs(x - median));
        std::nth_element(dev.begin(), dev.begin() + std::ptrdiff_t(dev.size() / 2), dev.end());
        // A transfer time only where the rank's transfers of that kind take a stable time (MAD within 5 % of it, or
        // 1 us): where members are rather released together whatever their arrival, the last one's duration varies
        // with the arrivals and says nothing about a transfer start.
        if (dev[dev.size() / 2] <= std::max<TimeNs>(median / 20, 1'000))
            out[key] = median;
    }
    return out;
}

// One clock domain's side of one collective: its first member's end and, where known, transfer start.
struct Side
{
    TimeNs end = 0;
    TimeNs transferStart = 0;
    bool present = false;
    bool known = false;
};

// The estimate of b's clock minus a's for every pair of clock domains a < b, over the collectives matched by identity
// that release their members together (samples == 0: fewer than kMinCollectives shared, no estimate). Where both
// members' transfer starts are known (the last arrival's own start, or a member's end minus its transfer time of
// that kind), their difference is the offset alone; else only the end difference is, which also holds the members'
// systematic end skew (their places in the ring). Transfer starts are used where each member's transfer time is
// stable; where it is not (members released at one instant whatever their arrival), they scatter and ends are the
// better anchor.
//
// Pairs are many where hosts are not recorded (a domain per rank: 523 776 pairs at 1 024 ranks): the sides are kept
// as one row of collectives per domain and the pairs estimated on all cores, into a triangular table (pairIndex).
// A map of per-pair sample lists made this stage take 18 s at 1 024 ranks.
std::vector<Estimate> pairEstimates(
    const Trace& trace, const CollectiveMatch& match, const std::vector<int>& domain, std::size_t domains)
{
    std::vector<const CollectiveGroup*> groups;
    std::map<StringId, bool> together;
    for (const CollectiveGroup& g : match.groups) {
        if (g.processGroup >= match.processGroups.size()
            || match.processGroups[g.processGroup].method == MatchMethod::Time)
            continue;
        auto [it, fresh] = together.try_emplace(g.name, true);
        if (fresh && g.name < trace.strings.size())
            it->second = releasesTogether(trace.name(g.name));
        if (it->second)
            groups.push_back(&g);
    }
    const TransferTimes transfer = transferTimes(groups);
    std::vector<Side> sides(domains * groups.size()); // [domain][group]
    for (std::size_t k = 0; k < groups.size(); ++k) {
        const CollectiveGroup* g = groups[k];
        const int last = clearLastMember(*g);
        const int lastDomain = last >= 0 ? domain[std::size_t(g->members[std::size_t(last)].rank)] : -1;
        for (const CollectiveMember& m : g->members) {
            const int d = domain[std::size_t(m.rank)];
            Side& side = sides[std::size_t(d) * groups.size() + k];
            if (side.present)
                continue; // the domain's first member speaks for it
            side.present = true;
            side.end = m.end;
            if (d == lastDomain) {
                side.transferStart = g->members[std::size_t(last)].start;
                side.known = true;
            } else if (const auto t = transfer.find({ m.rank, kindOf(*g) }); t != transfer.end()) {
                side.transferStart = m.end - t->second;
                side.known = true;
            }
        }
    }
    std::vector<Estimate> out(domains * (domains - 1) / 2);
    parallelFor(domains, workerCount(domains), [&](std::size_t a) {
        std::vector<TimeNs> ends, separated;
        const Side* sa = sides.data() + a * groups.size();
        for (std::size_t b = a + 1; b < domains; ++b) {
            const Side* sb = sides.data() + b * groups.size();
            ends.clear();
            separated.clear();
            for (std::size_t k = 0; k < groups.size(); ++k) {
                if (!sa[k].present || !sb[k].present)
                    continue;
                ends.push_back(sb[k].end - sa[k].end);
                if (sa[k].known && sb[k].known)
                    separated.push_back(sb[k].transferStart - sa[k].transferStart);
            }
            if (ends.size() < kMinCollectives)
                continue;
            const Estimate fromEnds = robustEstimate(ends);
            Estimate fromStarts;
            if (separated.size() >= kMinCollectives)
                fromStarts = robustEstimate(separated);
            fromStarts.separated
                = fromStarts.samples > 0 && fromStarts.mad <= std::max<TimeNs>(2 * fromEnds.mad, kStableSpreadNs);
            out[pairIndex(a, b, domains)] = fromStarts.separated ? fromStarts : fromEnds;
        }
    });
    return out;
}

} // namespace

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

int clockDomainCount(const Trace& trace)
{
    int count = 0;
    clockDomains(trace, count);
    return count;
}

ClockAlignment estimateClockOffsets(const Trace& trace, const CollectiveMatch& match, ClockMode mode)
{
    ClockAlignment out;
    if (trace.ranks.size() < 2)
        return out;
    int domains = 0;
    const std::vector<int> domain = clockDomains(trace, domains);
    out.hosts = domains;
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        RankClock rc;
        rc.rank = int(r);
        rc.host = trace.ranks[r].host;
        out.ranks.push_back(rc);
    }
    out.hostsKnown = std::none_of(trace.ranks.begin(), trace.ranks.end(), [](const Rank& r) { return r.host.empty(); });
    out.thresholdNs = out.hostsKnown ? kSignificantOffsetNs : kUnknownHostsOffsetNs;
    if (domains < 2) {
        out.method = ClockMethod::SingleHost;
        return out;
    }
    const auto n = std::size_t(domains);
    const std::vector<Estimate> edges = pairEstimates(trace, match, domain, n);
    auto edge = [&](std::size_t u, std::size_t v) -> const Estimate& {
        return u < v ? edges[pairIndex(u, v, n)] : edges[pairIndex(v, u, n)];
    };
    // Prim's tree from the reference domain over the best-supported pairs; offsets add up along it. Each step takes
    // the pair between a reached and an unreached domain with the most samples, of equals the first pair (a < b) in
    // (a, b) order. best[v]: that pair for v among the pairs from reached domains, kept up to date as domains are
    // reached (O(domains) per step).
    std::vector<bool> reached(n, false);
    std::vector<Estimate> at(n);
    std::vector<double> variance(n, 0.0);
    std::vector<int> rootOf(n);
    std::vector<int> firstRankOf(n, -1);
    for (std::size_t r = trace.ranks.size(); r-- > 0;)
        firstRankOf[std::size_t(domain[r])] = int(r);
    for (std::size_t d = 0; d < n; ++d)
        rootOf[d] = int(d);
    constexpr std::size_t kNone = ~std::size_t(0);
    std::vector<std::size_t> best(n, kNone); // the reached end of v's best pair
    // Pair (u, v) before pair (x, y): more samples, of equals the first in (a, b) order.
    auto before = [&](std::size_t u, std::size_t v, std::size_t x, std::size_t y) {
        const Estimate& e = edge(u, v);
        const Estimate& o = edge(x, y);
        if (e.samples != o.samples)
            return e.samples > o.samples;
        return std::make_pair(std::min(u, v), std::max(u, v)) < std::make_pair(std::min(x, y), std::max(x, y));
    };
    auto reach = [&](std::size_t u) {
        reached[u] = true;
        for (std::size_t v = 0; v < n; ++v)
            if (!reached[v] && edge(u, v).samples > 0 && (best[v] == kNone || before(u, v, best[v], v)))
                best[v] = u;
    };
    reach(std::size_t(domain[0]));
    at[std::size_t(domain[0])].separated = true; // a root: nothing between it and itself
    for (;;) {
        std::size_t to = kNone;
        for (std::size_t v = 0; v < n; ++v)
            if (!reached[v] && best[v] != kNone && (to == kNone || before(best[v], v, best[to], to)))
                to = v;
        if (to == kNone) {
            // A set of ranks that shares no collective with the reference (e.g. a process group of its own): its
            // lowest domain becomes its own reference, so that its members are at least aligned among themselves.
            std::size_t root = kNone;
            for (std::size_t u = 0; u < n && root == kNone; ++u)
                for (std::size_t v = u + 1; v < n && !reached[u]; ++v)
                    if (!reached[v] && edge(u, v).samples > 0) {
                        root = u;
                        break;
                    }
            if (root == kNone)
                break;
            reach(root);
            at[root].separated = true;
            continue;
        }
        const std::size_t from = best[to];
        const Estimate& e = edge(from, to);
        const int sign = from < to ? 1 : -1;
        rootOf[to] = rootOf[from];
        at[to].median = at[from].median + sign * e.median;
        at[to].samples = e.samples;
        at[to].separated = e.separated && at[from].separated;
        variance[to] = variance[from] + double(e.standardError) * double(e.standardError);
        at[to].standardError = TimeNs(std::llround(std::sqrt(variance[to])));
        reach(to);
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
        rc.skewSeparated = at[d].separated;
        const bool significant = std::abs(rc.estimateNs) > std::max<TimeNs>(3 * rc.uncertaintyNs, out.thresholdNs);
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

namespace {

// The ranks whose applied offsets come from end times alone (and so may hold the members' end skew), by label.
std::string unseparatedRanks(const Trace& trace, const ClockAlignment& c)
{
    std::string out;
    for (const RankClock& rc : c.ranks)
        if (rc.offsetNs != 0 && !rc.skewSeparated && std::size_t(rc.rank) < trace.ranks.size())
            out += (out.empty() ? "" : ", ") + trace.ranks[std::size_t(rc.rank)].label;
    return out;
}

} // namespace

std::string clockSummaryLine(const Trace& trace)
{
    const ClockAlignment& c = trace.clocks;
    if (trace.ranks.size() < 2 || c.ranks.empty())
        return {};
    const std::string domains = std::to_string(c.hosts)
        + (c.hostsKnown ? (c.hosts == 1 ? " host" : " hosts") : " ranks (hosts not recorded)");
    TimeNs largest = 0, largestEstimate = 0;
    for (const RankClock& rc : c.ranks) {
        largest = std::max(largest, std::abs(rc.offsetNs));
        largestEstimate = std::max(largestEstimate, std::abs(rc.estimateNs));
    }
    switch (c.method) {
    case ClockMethod::SingleHost:
        if (!c.hostsKnown)
            return "clocks: one file holds every rank, one time base (nothing to align)";
        return "clocks: one host, one clock (nothing to align)";
    case ClockMethod::CollectiveEnds:
        if (c.applied) {
            const std::string unseparated = unseparatedRanks(trace, c);
            const std::string offsets
                = "offsets up to " + formatDuration(largest) + ", ±" + formatDuration(c.maxUncertaintyNs);
            if (unseparated.empty())
                return "clocks aligned across " + domains + " from collective transfer starts: " + offsets;
            return "clocks aligned across " + domains + " from collective end times: " + offsets + "; for "
                + unseparated
                + " the members' end skew cannot be told from the offset (no collective of a kind in which each"
                  " side arrived last), so waiting may be off by that skew, tens of µs per collective";
        }
        if (std::all_of(c.ranks.begin(), c.ranks.end(), [](const RankClock& rc) { return rc.collectivesUsed == 0; }))
            return "clocks as recorded: " + domains
                + ", no collective matched by process group or stream to estimate their offsets from";
        if (!c.hostsKnown)
            return "clocks as recorded: " + domains + "; estimated offsets up to " + formatDuration(largestEstimate)
                + " are below " + formatDuration(c.thresholdNs)
                + ", the end skew that the members of a collective show on one clock";
        return "clocks as recorded: " + domains + ", estimated offsets up to " + formatDuration(largestEstimate)
            + " are within the end jitter of collectives (below " + formatDuration(c.thresholdNs)
            + " or 3 uncertainties)";
    case ClockMethod::Recorded:
        break;
    }
    return "clocks as recorded (--clock recorded; estimated offsets up to " + formatDuration(largestEstimate) + ")";
}

} // namespace exposure
