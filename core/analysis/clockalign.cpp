// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/clockalign.h"

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

struct PairSamples
{
    std::vector<TimeNs> separated; // differences of transfer starts: the offset alone
    std::vector<TimeNs> ends; // differences of end times: the offset plus the members' end skew
};

// Per pair of clock domains (a < b), samples of b's clock minus a's over the collectives matched by identity that
// release their members together. Where both members' transfer starts are known (the last arrival's own start, or
// a member's end minus its transfer time of that kind), their difference is the offset alone; else only the end
// difference is, which also holds the members' systematic end skew (their places in the ring).
std::map<std::pair<int, int>, PairSamples> clockSamples(
    const Trace& trace, const CollectiveMatch& match, const std::vector<int>& domain)
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
    std::map<std::pair<int, int>, PairSamples> out;
    struct Side
    {
        TimeNs end = 0;
        TimeNs transferStart = 0;
        bool known = false;
    };
    std::map<int, Side> sides;
    for (const CollectiveGroup* g : groups) {
        sides.clear();
        const int last = clearLastMember(*g);
        const int lastDomain = last >= 0 ? domain[std::size_t(g->members[std::size_t(last)].rank)] : -1;
        for (const CollectiveMember& m : g->members) {
            const int d = domain[std::size_t(m.rank)];
            auto [it, fresh] = sides.try_emplace(d);
            if (!fresh)
                continue;
            it->second.end = m.end;
            if (d == lastDomain) {
                it->second.transferStart = g->members[std::size_t(last)].start;
                it->second.known = true;
            } else if (const auto t = transfer.find({ m.rank, kindOf(*g) }); t != transfer.end()) {
                it->second.transferStart = m.end - t->second;
                it->second.known = true;
            }
        }
        for (auto a = sides.begin(); a != sides.end(); ++a)
            for (auto b = std::next(a); b != sides.end(); ++b) {
                PairSamples& p = out[{ a->first, b->first }];
                p.ends.push_back(b->second.end - a->second.end);
                if (a->second.known && b->second.known)
                    p.separated.push_back(b->second.transferStart - a->second.transferStart);
            }
    }
    return out;
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
    std::map<std::pair<int, int>, Estimate> edges;
    for (auto& [pair, p] : clockSamples(trace, match, domain)) {
        if (p.ends.size() < kMinCollectives)
            continue;
        const Estimate ends = robustEstimate(std::move(p.ends));
        Estimate separated;
        if (p.separated.size() >= kMinCollectives)
            separated = robustEstimate(std::move(p.separated));
        // Transfer starts remove the members' end skew where each member's transfer time is stable; where it is not
        // (members released at one instant whatever their arrival), they scatter and ends are the better anchor.
        separated.separated = separated.samples > 0 && separated.mad <= std::max<TimeNs>(2 * ends.mad, kStableSpreadNs);
        edges[pair] = separated.separated ? separated : ends;
    }
    // Prim's tree from the reference domain over the best-supported pairs; offsets add up along it.
    std::vector<bool> reached(static_cast<std::size_t>(domains), false);
    std::vector<Estimate> at(static_cast<std::size_t>(domains));
    std::vector<double> variance(static_cast<std::size_t>(domains), 0.0);
    reached[std::size_t(domain[0])] = true;
    at[std::size_t(domain[0])].separated = true; // a root: nothing between it and itself
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
            at[std::size_t(root)].separated = true;
            continue;
        }
        reached[std::size_t(to)] = true;
        rootOf[std::size_t(to)] = rootOf[std::size_t(from)];
        at[std::size_t(to)].median = at[std::size_t(from)].median + sign * best->median;
        at[std::size_t(to)].samples = best->samples;
        at[std::size_t(to)].separated = best->separated && at[std::size_t(from)].separated;
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
