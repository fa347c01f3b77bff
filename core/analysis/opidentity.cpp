// SPDX-License-Identifier: GPL-3.0-or-later
// Matching op-level communication by identity (collectives.h: opLevelCandidates).
//
// Chrome timelines written by training frameworks' own timers (the Megatron layout) have no kernels, process groups
// or sequence numbers: each communication lane holds the operations of one parallelism role. The operation a timer
// took part in is known from what the framework does:
//  * pipeline (pp lanes): "forward-send" on stage p goes to "forward-recv" on stage p + 1, "backward-send" on stage p
//    to "backward-recv" on stage p - 1, inside one data-parallel and tensor-parallel replica;
//  * data-parallel lanes: the same operation of the ranks that share every coordinate but dp; tensor-parallel lanes:
//    all but tp;
//  * Megatron's own groups where the name says so: the embedding all-reduce joins the first and last stage of one
//    replica (all but pp), the gradient-norm all-reduce ("clip-main-grad") every worker, the layernorm all-reduce the
//    tensor-parallel group (all but tp);
// and the k-th operation of a name in a step of one worker is the k-th of that name on the others (step from the
// step window holding its start, k counted in start order). A send and its recv, or the members of one collective,
// then share one identity text, which matchCandidates() groups.
//
// Kernels that carry a batch of sends and receives (torch's batch_isend_irecv) are identified here too
// (batchedP2pIdentity, kernelop.h).
#include "analysis/analysis_p.h"
#include "analysis/collectives.h"
#include "analysis/commops.h"
#include "analysis/grouplayout.h"
#include "analysis/kernelop.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <unordered_map>

namespace exposure {

namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char& c : out)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool contains(const std::string& s, const char* what)
{
    return s.find(what) != std::string::npos;
}

// The coordinates the members of one operation share, as text; empty when the operation has no identity (a p2p
// name without a direction, a send at the edge of the pipeline).
std::string sharedCoords(const std::string& name, CommRole role, const ParallelCoords& c, std::string& opKey)
{
    auto text = [](std::initializer_list<std::pair<char, int>> parts) {
        std::string out;
        for (const auto& [k, v] : parts)
            out += std::string(1, k) + std::to_string(v) + " ";
        return out;
    };
    opKey = name;
    const bool send = contains(name, "send"), recv = contains(name, "recv");
    if (role == CommRole::PP && send != recv) {
        const int dir = contains(name, "forward") ? 1 : contains(name, "backward") ? -1 : 0;
        if (dir == 0 || c.pp < 0)
            return {};
        const int sender = send ? c.pp : c.pp - dir;
        opKey = name.substr(0, name.find(send ? "send" : "recv")) + "p2p";
        return text({ { 'd', c.dp }, { 't', c.tp }, { 'e', c.ep }, { 'c', c.cp }, { 's', sender } });
    }
    if (contains(name, "embedding"))
        return text({ { 'd', c.dp }, { 't', c.tp }, { 'e', c.ep }, { 'c', c.cp } });
    if (contains(name, "clip") || contains(name, "optimizer"))
        return "all";
    if (contains(name, "layernorm") || role == CommRole::TP)
        return text({ { 'd', c.dp }, { 'p', c.pp }, { 'e', c.ep }, { 'c', c.cp } });
    return text({ { 'p', c.pp }, { 't', c.tp }, { 'e', c.ep }, { 'c', c.cp } });
}

} // namespace

std::vector<CollectiveCandidate> opLevelCandidates(const Trace& trace, const Analysis& analysis,
    const std::function<std::uint32_t(const std::string&)>& intern,
    const std::function<std::uint32_t(StringId)>& nameOf, const std::vector<int>& globalIndexOf)
{
    std::vector<CollectiveCandidate> out;
    for (std::size_t r = 0; r < trace.ranks.size() && r < analysis.ranks.size(); ++r) {
        const Rank& rank = trace.ranks[r];
        const RankAnalysis& ra = analysis.ranks[r];
        std::map<std::pair<std::string, int>, int> seen; // (operation name, step) -> occurrences so far
        detail::forEachGpuLane(rank, [&](std::size_t l, const Lane& lane) {
            if (lane.commRole == CommRole::None)
                return;
            const IntervalTable& t = lane.intervals;
            const std::string role = commRoleName(lane.commRole);
            for (std::size_t i = 0; i < t.size(); ++i) {
                const StringId name = t.name(i);
                if (analysis.classOf(name).category != Category::Communication)
                    continue;
                const int global = globalIndexOf.empty() ? int(r) : globalIndexOf.at(r);
                CollectiveCandidate c { t.start(i), t.end(i), global, int(l), std::uint32_t(i), nameOf(name) };
                const std::string lowered = lower(trace.name(name));
                std::string opKey;
                const std::string coords = sharedCoords(lowered, lane.commRole, rank.coords, opKey);
                c.group = intern("\x1eop\x1f" + role);
                c.sends = lane.commRole == CommRole::PP && contains(lowered, "send") && !contains(lowered, "recv");
                if (!coords.empty()) {
                    const int at = stepAtTime(ra.steps, t.start(i));
                    const int step = at >= 0 ? ra.steps[std::size_t(at)].number : std::numeric_limits<int>::min();
                    const int k = seen[{ lowered, step }]++;
                    c.preset = intern("\x1eopid\x1f" + role + "\x1f" + coords + "\x1f" + opKey + "\x1f"
                        + std::to_string(step) + "\x1f" + std::to_string(k));
                }
                out.push_back(c);
            }
        });
    }
    return out;
}

void markQueued(std::vector<CollectiveCandidate>& items, const std::vector<std::string>& keys,
    const std::function<std::string(std::uint32_t)>& nameText,
    const std::function<std::uint32_t(const std::string&)>& intern)
{
    std::map<std::pair<int, std::uint32_t>, std::vector<CollectiveCandidate*>> byGroup; // (rank, group key)
    for (CollectiveCandidate& c : items)
        if (c.group != kNoKey && c.group < keys.size() && keys[c.group].rfind("\x1epg\x1f", 0) == 0)
            byGroup[{ c.rank, c.group }].push_back(&c);
    for (auto& [key, list] : byGroup) {
        std::sort(list.begin(), list.end(), [](const auto* a, const auto* b) {
            return a->start != b->start ? a->start < b->start : a->lane < b->lane;
        });
        std::map<int, const CollectiveCandidate*> lastOnLane;
        for (CollectiveCandidate* c : list) {
            for (const auto& [lane, p] : lastOnLane)
                if (lane != c->lane && p->start < c->start && p->end > c->start && p->end > c->queuedUntil) {
                    c->queuedUntil = p->end;
                    const std::string name = nameText(p->name);
                    const std::string op = normaliseCommOp(name);
                    c->behind = intern(op.empty() ? name : op);
                }
            lastOnLane[c->lane] = c;
        }
    }
}

bool batchedP2pIdentity(
    const Trace& trace, const Lane& lane, std::uint32_t interval, int self, std::string& group, std::string& signature)
{
    auto it = std::lower_bound(lane.collectiveArgs.begin(), lane.collectiveArgs.end(), std::make_pair(interval, 0u));
    const auto first = it;
    int peer = -1;
    std::uint64_t sent = 0, received = 0;
    std::string dtype;
    for (; it != lane.collectiveArgs.end() && it->first == interval; ++it) {
        if (it->second >= trace.collectiveArgs.size())
            return false;
        const CollectiveArgs& args = trace.collectiveArgs[it->second];
        std::string key, sig;
        if (!p2pIdentity(args, self, key, sig)
            || (peer >= 0 && args.processGroup != trace.collectiveArgs[first->second].processGroup))
            return false;
        const int other = args.peer >= 0 ? args.peer : -1;
        std::vector<int> members;
        if (other < 0)
            for (const int r : groupRankList(args.groupRanks))
                if (r != self)
                    members.push_back(r);
        const int p = other >= 0 ? other : members.size() == 1 ? members[0] : -1;
        if (p < 0 || (peer >= 0 && p != peer))
            return false;
        peer = p;
        (args.collective == "send" ? sent : received) += std::max(args.inElements, args.outElements);
        dtype = args.dtype;
    }
    if (it - first < 2)
        return false;
    const CollectiveArgs& args = trace.collectiveArgs[first->second];
    const int a = std::min(self, peer), b = std::max(self, peer);
    group = "\x1ep2p\x1f" + (args.processGroup.empty() ? std::string("p2p") : args.processGroup) + ", "
        + std::to_string(a) + " \xE2\x87\x84 " + std::to_string(b) + "\x1f" + args.groupRanks;
    // The elements a sends to b, then those b sends to a: the same text on both sides.
    const std::uint64_t aSends = self == a ? sent : received, bSends = self == a ? received : sent;
    signature = "\x1esig\x1fp2p batch\x1f" + dtype + "\x1f" + std::to_string(aSends) + "\x1f" + std::to_string(bSends);
    return true;
}

} // namespace exposure
