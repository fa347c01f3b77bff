// SPDX-License-Identifier: GPL-3.0-or-later
// The cross-rank matching's summaries (collectives.h): per process group and collective what users of nccl-tests read,
// the stragglers, and the warning when too little was matched.
#include "analysis/collectives.h"
#include "model/timeformat.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace exposure {

namespace {

std::vector<std::string> splitKey(const std::string& key)
{
    std::vector<std::string> out;
    std::size_t from = 0;
    for (;;) {
        const auto at = key.find('\x1f', from);
        out.push_back(key.substr(from, at == std::string::npos ? std::string::npos : at - from));
        if (at == std::string::npos)
            return out;
        from = at + 1;
    }
}

// What the classification says of a kernel name: the collective in lower case ("allreduce") and NCCL's algorithm
// with its protocol ("RING_LL"); both empty for a name that is no collective kernel.
std::pair<std::string, std::string> kernelInfo(const Rules& rules, const std::string& name)
{
    const NameClass nc = rules.classify(name, RegionKind::Kernel);
    std::string type = nc.collective;
    for (char& c : type)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    const std::string algorithm
        = nc.algorithm.empty() || nc.protocol.empty() ? nc.algorithm : nc.algorithm + "_" + nc.protocol;
    return { algorithm, type };
}

} // namespace

std::vector<CollectiveSummaryRow> collectiveSummary(
    const Trace& trace, const CollectiveMatch& match, const Rules& rules)
{
    return collectiveSummary(match, rules, [&](std::uint32_t name) -> std::string {
        return name < trace.strings.size() ? trace.name(name) : std::string();
    });
}

std::vector<CollectiveSummaryRow> collectiveSummary(const CollectiveMatch& match, const Rules& rules,
    const std::function<std::string(std::uint32_t)>& kernelName,
    const std::function<std::string(const CollectiveGroup&)>& opOf)
{
    std::unordered_map<std::string, std::uint32_t> opIndex;
    std::vector<std::string> ops;
    // Key: process group, signature (or kernel name), kernel name (which says the algorithm); the names' texts are
    // looked at once per name.
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t, std::uint32_t>, CollectiveSummaryRow> rows;
    std::unordered_map<std::uint32_t, std::pair<std::string, std::string>> nameInfo; // name -> (algorithm, type)
    for (const CollectiveGroup& g : match.groups) {
        auto info = nameInfo.find(g.name);
        if (info == nameInfo.end()) {
            const std::string kernel = kernelName(g.name);
            info = nameInfo.emplace(g.name, kernelInfo(rules, kernel)).first;
        }
        const std::uint64_t sig = g.signature != kNoKey ? g.signature : (std::uint64_t(1) << 32) | g.name;
        std::uint32_t op = 0;
        if (opOf) {
            const std::string text = opOf(g);
            auto [o, added] = opIndex.try_emplace(text, std::uint32_t(ops.size()));
            if (added)
                ops.push_back(text);
            op = o->second;
        }
        auto [it, fresh] = rows.try_emplace({ g.processGroup, op, sig, g.name });
        CollectiveSummaryRow& row = it->second;
        if (fresh) {
            row.processGroup = g.processGroup;
            row.op = opOf ? ops[op] : std::string();
            row.algorithm = info->second.first;
            // Op-level timers have no kernel name to read a type from: their own name ("forward-send") is the type.
            row.type = info->second.second.empty() && g.waitBeforeStart ? kernelName(g.name) : info->second.second;
            if (g.signature != kNoKey && g.signature < match.keys.size()) {
                const auto f = splitKey(match.keys[g.signature]);
                if (f.size() == 6) {
                    CollectiveArgs args;
                    args.collective = f[1];
                    args.dtype = f[2];
                    args.inElements = std::strtoull(f[3].c_str(), nullptr, 10);
                    args.outElements = std::strtoull(f[4].c_str(), nullptr, 10);
                    row.type = args.collective;
                    row.dtype = args.dtype;
                    row.bytes = collectiveBytes(args);
                }
            }
        }
        TimeNs first = g.members.front().start, last = g.members.front().end;
        TimeNs shortest = std::numeric_limits<TimeNs>::max();
        for (const CollectiveMember& m : g.members) {
            first = std::min(first, m.start);
            last = std::max(last, m.end);
            shortest = std::min(shortest, m.end - m.start);
            row.memberNs += m.end - m.start;
            row.waitNs += m.waitNs;
        }
        row.ranks = std::max(row.ranks, int(g.members.size()));
        row.minLatencyNs = row.count == 0 ? shortest : std::min(row.minLatencyNs, shortest);
        ++row.count;
        row.totalNs += last - first;
        row.latencyTotalNs += shortest;
    }
    std::vector<CollectiveSummaryRow> out;
    for (auto& [key, row] : rows) {
        if (row.bytes > 0 && row.latencyTotalNs > 0) {
            CollectiveArgs args;
            args.collective = row.type;
            args.dtype = "uint8";
            args.inElements = row.bytes;
            args.groupSize = row.ranks;
            row.busBandwidth = busBandwidth(args, double(row.latencyTotalNs) / double(row.count) / 1e9);
        }
        out.push_back(std::move(row));
    }
    std::stable_sort(out.begin(), out.end(), [](const CollectiveSummaryRow& a, const CollectiveSummaryRow& b) {
        return a.processGroup != b.processGroup ? a.processGroup < b.processGroup
            : a.op != b.op                      ? a.op < b.op
                                                : a.totalNs > b.totalNs;
    });
    return out;
}

std::vector<StragglerRow> stragglerSummary(const CollectiveMatch& match)
{
    std::map<std::pair<std::uint32_t, int>, StragglerRow> rows;
    for (const CollectiveGroup& g : match.groups) {
        TimeNs others = 0;
        for (const CollectiveMember& m : g.members) {
            rows.try_emplace({ g.processGroup, m.rank }, StragglerRow { g.processGroup, m.rank, 0, 0 });
            if (m.rank != g.lastRank)
                others += m.waitNs;
        }
        if (others > 0) {
            StragglerRow& row = rows[{ g.processGroup, g.lastRank }];
            ++row.arrivedLast;
            row.causedWaitNs += others;
        }
    }
    std::vector<StragglerRow> out;
    for (auto& [key, row] : rows)
        out.push_back(row);
    return out;
}

std::string matchWarning(const Trace& trace, const CollectiveMatch& match)
{
    std::uint64_t total = 0, matched = 0;
    int withComm = 0;
    for (const RankCollectiveStats& r : match.ranks) {
        total += r.matched + r.unmatched;
        matched += r.matched;
        withComm += r.matched + r.unmatched > 0 ? 1 : 0;
    }
    if (withComm < 2 || matched * 10 >= total * 9)
        return {};
    auto label = [&](int r) {
        return std::size_t(r) < trace.ranks.size() ? trace.ranks[std::size_t(r)].label : "rank " + std::to_string(r);
    };
    std::string reasons;
    for (std::size_t r = 0; r < match.ranks.size(); ++r) {
        const RankCollectiveStats& rs = match.ranks[r];
        if (rs.matched + rs.unmatched == 0 || rs.matched * 10 >= (rs.matched + rs.unmatched) * 9)
            continue;
        std::string why;
        for (const ProcessGroupMatch& pg : match.processGroups)
            for (const CountMismatch& mm : pg.mismatches)
                if (mm.rank == int(r) && mm.rankCount != mm.referenceCount && why.empty())
                    why = "different counts in group " + pg.name + " (" + std::to_string(mm.rankCount) + " against "
                        + std::to_string(mm.referenceCount) + " on " + label(mm.reference) + ")";
        if (why.empty() && rs.unidentified > 0)
            why = "no process group or stream identity, and no peer instance ends within "
                + std::to_string(match.toleranceNs / 1000) + " us (clocks too far apart?)";
        if (why.empty())
            why = "its instances have no counterpart in the same order on the other members";
        reasons += (reasons.empty() ? "" : "; ") + label(int(r)) + ": " + std::to_string(rs.unmatched) + " of "
            + std::to_string(rs.matched + rs.unmatched) + " unmatched, " + why;
    }
    const std::uint64_t share = total ? matched * 100 / total : 0;
    return "collectives: only " + std::to_string(matched) + " of " + std::to_string(total) + " communication kernels ("
        + std::to_string(share) + " %) were matched across ranks, so waiting and transfer are incomplete; " + reasons;
}

} // namespace exposure
