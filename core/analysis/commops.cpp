// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/commops.h"

#include "analysis/analysis_p.h"
#include "analysis/grouplayout.h"
#include "analysis/kernelop.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <limits>
#include <set>
#include <tuple>
#include <unordered_map>

namespace exposure {

std::string normaliseCommOp(std::string_view name)
{
    std::string key;
    for (const char c : name.substr(0, name.find('(')))
        if (std::isalnum(static_cast<unsigned char>(c)))
            key += char(std::tolower(static_cast<unsigned char>(c)));
    for (const char* prefix : { "nccl", "rccl", "c10d", "torchdistributed", "dist" })
        if (key.rfind(prefix, 0) == 0) {
            key.erase(0, std::string_view(prefix).size());
            break;
        }
    static const std::pair<const char*, const char*> ops[]
        = { { "allreduce", "all_reduce" }, { "allgather", "all_gather" }, { "reducescatter", "reduce_scatter" },
              { "alltoall", "all_to_all" }, { "broadcast", "broadcast" }, { "barrier", "barrier" },
              { "sendrecv", "send_recv" }, { "reduce", "reduce" }, { "send", "send" }, { "recv", "recv" } };
    for (const auto& [stem, op] : ops)
        if (key.rfind(stem, 0) == 0)
            return op;
    // Timer names that say it inside ("params-all-gather", "grads-reduce-scatter", "forward-send"): the first stem
    // the text holds, in the order above (all-reduce before reduce).
    for (const auto& [stem, op] : ops)
        if (key.find(stem) != std::string::npos)
            return op;
    return {};
}

std::string roleOfGroup(std::string_view group)
{
    if (group.empty())
        return "unknown";
    // Words of the text, lower case: "mesh_dp_shard" -> {mesh, dp, shard}, "TENSOR_MODEL_PARALLEL_GROUP" -> {tensor,
    // model, parallel, group}.
    std::vector<std::string> words(1);
    for (const char c : group) {
        if (std::isalnum(static_cast<unsigned char>(c)))
            words.back() += char(std::tolower(static_cast<unsigned char>(c)));
        else if (!words.back().empty())
            words.emplace_back();
    }
    auto has = [&](std::initializer_list<const char*> any) {
        for (const std::string& w : words)
            for (const char* a : any)
                if (w == a)
                    return true;
        return false;
    };
    if (has({ "tp", "tensor", "tensorparallel" }))
        return "tp";
    if (has({ "pp", "pipe", "pipeline", "pipelineparallel" }))
        return "pp";
    if (has({ "ep", "expert", "moe", "experts" }))
        return "ep";
    if (has({ "cp", "context", "sp", "sequence" }))
        return "cp";
    if (has({ "dp", "data", "fsdp", "shard", "replicate", "ddp", "defaultpg", "world", "hsdp" })
        || std::string_view(group).find("default_pg") != std::string_view::npos)
        return "dp";
    return "other";
}

std::string roleOfGroup(const Rules& rules, const CollectiveArgs* args)
{
    if (!args)
        return "unknown";
    if (std::string role = rules.groupRole(*args); !role.empty())
        return role;
    return roleOfGroup(args->processGroup);
}

std::string roleOfGroup(const Rules& rules, const GroupLayout* layout, const CollectiveArgs* args, std::string* source)
{
    auto said = [&](const char* from, std::string role) {
        if (source)
            *source = from;
        return role;
    };
    if (!args)
        return said("", "unknown");
    if (std::string role = rules.groupRole(*args); !role.empty())
        return said("rule", role);
    std::string role = roleOfGroup(args->processGroup);
    if (role == "other" && layout)
        if (std::string inferred = layout->roleOf(*args); !inferred.empty() && inferred != "other")
            return said("layout", inferred);
    return said(role == "unknown" ? "" : "name", role);
}

const char* commOpSourceName(CommOpSource s)
{
    switch (s) {
    case CommOpSource::Region:
        return "region";
    case CommOpSource::KernelArgs:
        return "kernel arguments";
    case CommOpSource::KernelName:
        break;
    }
    return "kernel name";
}

namespace {

// A CPU region name that is a call of a communication operation ("nccl:all_reduce", "c10d::allreduce_", or the NVTX
// range NCCL itself opens around a call, "ncclAllReduce", as Nsight Systems records it).
bool isCommCall(const std::string& name)
{
    return name.rfind("nccl:", 0) == 0 || name.rfind("c10d::", 0) == 0 || name.rfind("torch.distributed.", 0) == 0
        || (name.size() > 4 && name.rfind("nccl", 0) == 0 && std::isupper(static_cast<unsigned char>(name[4])));
}

// The nearest enclosing region of CPU interval j that is a communication call; -1 if none within reach.
long enclosingCall(const Trace& trace, const IntervalTable& t, std::size_t j)
{
    constexpr std::size_t kReach = 512; // the call is a close ancestor: nccl:* ▸ record_param_comms ▸ launch
    const TimeNs s = t.start(j), e = t.end(j);
    const std::uint8_t depth = t.depth(j);
    for (std::size_t k = j, steps = 0; k-- > 0 && steps < kReach; ++steps) {
        if (t.depth(k) >= depth || t.start(k) > s || t.end(k) < e)
            continue;
        if (isCommCall(trace.name(t.name(k))))
            return long(k);
    }
    return -1;
}

// |U(parts)|.
TimeNs unionLength(std::vector<TimeRange> parts)
{
    std::sort(parts.begin(), parts.end(), [](TimeRange a, TimeRange b) { return a.start < b.start; });
    TimeNs busy = 0, end = std::numeric_limits<TimeNs>::min();
    for (const TimeRange& r : parts) {
        busy += std::max<TimeNs>(0, r.end - std::max(r.start, end));
        end = std::max(end, r.end);
    }
    return busy;
}

// The role of each communication kernel and where it came from: the lane's role where the trace gives one (Chrome
// traces' ROLE-comm lanes, "lane"), else its process group's (roleOfGroup: rule, name, then the job's group layout,
// read once and only when a name leaves a group's role open). Each distinct group is asked once.
class KernelRoles
{
public:
    KernelRoles(const Trace& trace, const Rules& rules, const SharedGroupLayout& layout)
        : m_trace(trace)
        , m_rules(rules)
        , m_layout(layout)
    { }

    const std::pair<std::string, std::string>& of(const Lane& lane, std::uint32_t interval)
    {
        if (lane.commRole != CommRole::None) {
            m_lane = { commRoleName(lane.commRole), "lane" };
            return m_lane;
        }
        const CollectiveArgs* args = collectiveArgsOf(m_trace, lane, interval);
        auto [known, fresh] = m_known.try_emplace(args);
        if (fresh) {
            std::string from;
            std::string role = roleOfGroup(m_rules, nullptr, args, &from);
            if (role == "other" && from == "name" && !args->groupRanks.empty()) {
                role = roleOfGroup(m_rules, &m_layout.get(), args, &from);
            }
            known->second = { std::move(role), std::move(from) };
        }
        return known->second;
    }

private:
    const Trace& m_trace;
    const Rules& m_rules;
    const SharedGroupLayout& m_layout; // inferred on first use only
    std::unordered_map<const CollectiveArgs*, std::pair<std::string, std::string>> m_known;
    std::pair<std::string, std::string> m_lane;
};

} // namespace

const std::string& kernelOpText(const Trace& trace, const Analysis& analysis, StringId name)
{
    const std::string& collective = analysis.classOf(name).collective;
    return collective.empty() ? trace.name(name) : collective;
}

std::string kernelNameOp(const Trace& trace, const Analysis& analysis, StringId name)
{
    return normaliseCommOp(kernelOpText(trace, analysis, name));
}

std::string commOpOf(
    const Trace& trace, const Analysis& analysis, IntervalRef kernel, CommOpSource* source, std::string* call)
{
    const Rank& rank = trace.ranks.at(std::size_t(kernel.rank));
    const Lane& lane = rank.lanes.at(std::size_t(kernel.lane));
    const RankAnalysis& ra = analysis.ranks.at(std::size_t(kernel.rank));
    auto said = [&](CommOpSource s, std::string c, std::string op) {
        if (source)
            *source = s;
        if (call)
            *call = std::move(c);
        return op;
    };
    if (std::size_t(kernel.lane) < ra.launchOf.size()
        && kernel.interval < ra.launchOf[std::size_t(kernel.lane)].size()) {
        const LaunchRef l = ra.launchOf[std::size_t(kernel.lane)][kernel.interval];
        if (l.cpuLane != kUnknownLaunch && l.cpuLane < rank.lanes.size()) {
            const IntervalTable& t = rank.lanes[l.cpuLane].intervals;
            if (l.interval < t.size())
                if (const long k = enclosingCall(trace, t, l.interval); k >= 0) {
                    const std::string& name = trace.name(t.name(std::size_t(k)));
                    if (std::string op = normaliseCommOp(name); !op.empty())
                        return said(CommOpSource::Region, name, op);
                }
        }
    }
    if (const CollectiveArgs* args = collectiveArgsOf(trace, lane, kernel.interval); args) {
        // A batch_isend_irecv kernel carries its batch's sends and receives: "send_recv" where it holds both.
        const auto batch = std::equal_range(lane.collectiveArgs.begin(), lane.collectiveArgs.end(),
            std::make_pair(kernel.interval, 0u), [](const auto& a, const auto& b) { return a.first < b.first; });
        if (batch.second - batch.first > 1) {
            std::set<std::string> ops;
            for (auto it = batch.first; it != batch.second; ++it)
                if (it->second < trace.collectiveArgs.size())
                    ops.insert(normaliseCommOp(trace.collectiveArgs[it->second].collective));
            if (ops.size() > 1 && !ops.count({}))
                return said(CommOpSource::KernelArgs, "batch_isend_irecv", "send_recv");
        }
        if (std::string op = normaliseCommOp(args->collective); !op.empty())
            return said(CommOpSource::KernelArgs, args->collective, op);
    }
    std::string op = kernelNameOp(trace, analysis, lane.intervals.name(kernel.interval));
    return said(CommOpSource::KernelName, {}, op.empty() ? std::string("other") : op);
}

CommOps commOperations(
    const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window, const SharedGroupLayout* layout)
{
    CommOps out;
    const Rank& rank = trace.ranks.at(std::size_t(rankIndex));
    const RankAnalysis& ra = analysis.ranks.at(std::size_t(rankIndex));
    std::map<std::pair<std::string, std::string>, std::size_t> index; // (op, call) -> ops
    std::map<std::string, std::size_t> roleIndex; // role -> roles
    std::vector<std::vector<TimeRange>> parts, roleParts;
    std::vector<std::pair<std::uint64_t, std::uint16_t>> keyed;
    std::vector<std::uint16_t> keyedRole;
    const SharedGroupLayout own(trace); // inferred only if a role needs it and no shared layout is given
    KernelRoles kernelRoles(trace, analysis.rules, layout ? *layout : own);
    std::vector<std::set<std::string>> roleSources;
    detail::forEachGpuLane(rank, [&](std::size_t l, const Lane& lane) {
        const IntervalTable& t = lane.intervals;
        for (std::size_t i = 0; i < t.size(); ++i) {
            const StringId name = t.name(i);
            if (analysis.classOf(name).category != Category::Communication)
                continue;
            const TimeRange clipped = TimeRange { t.start(i), t.end(i) }.intersected(window);
            if (clipped.isEmpty() && !(t.start(i) == t.end(i) && window.contains(t.start(i))))
                continue;
            CommOpSource source = CommOpSource::KernelName;
            std::string call;
            const std::string op = commOpOf(trace, analysis, { rankIndex, int(l), std::uint32_t(i) }, &source, &call);
            auto [it, fresh] = index.try_emplace({ op, call }, out.ops.size());
            if (fresh) {
                CommOpReport r;
                r.op = op;
                r.call = call;
                r.source = source;
                r.kernelType = kernelNameOp(trace, analysis, name);
                out.ops.push_back(std::move(r));
                parts.emplace_back();
            }
            CommOpReport& r = out.ops[it->second];
            if (r.kernelType != kernelNameOp(trace, analysis, name))
                r.kernelType = "mixed";
            ++r.count;
            if (!clipped.isEmpty())
                parts[it->second].push_back(clipped);
            keyed.push_back({ (std::uint64_t(l) << 32) | i, std::uint16_t(it->second) });
            const auto& [role, roleSource] = kernelRoles.of(lane, std::uint32_t(i));
            auto [ri, freshRole] = roleIndex.try_emplace(role, out.roles.size());
            if (freshRole) {
                out.roles.push_back({ role, {} });
                roleParts.emplace_back();
                roleSources.emplace_back();
            }
            if (!roleSource.empty())
                roleSources[ri->second].insert(roleSource);
            ++out.roles[ri->second].count;
            if (!clipped.isEmpty())
                roleParts[ri->second].push_back(clipped);
            keyedRole.push_back(std::uint16_t(ri->second));
        }
    });
    for (std::size_t k = 0; k < out.ops.size(); ++k) {
        out.ops[k].busyNs = unionLength(parts[k]);
        out.ops[k].exposedNs = exposedWait(parts[k], ra);
    }
    for (std::size_t k = 0; k < out.roles.size(); ++k) {
        out.roles[k].busyNs = unionLength(roleParts[k]);
        out.roles[k].exposedNs = exposedWait(roleParts[k], ra);
        for (const std::string& from : roleSources[k])
            out.roles[k].source += (out.roles[k].source.empty() ? "" : "+") + from;
    }
    // Largest first; the kernel table refers to the sorted order.
    std::vector<std::size_t> order(out.ops.size());
    for (std::size_t k = 0; k < order.size(); ++k)
        order[k] = k;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const CommOpReport &x = out.ops[a], &y = out.ops[b];
        return x.busyNs != y.busyNs ? x.busyNs > y.busyNs : std::tie(x.op, x.call) < std::tie(y.op, y.call);
    });
    std::vector<std::uint16_t> rankOf(order.size());
    std::vector<CommOpReport> sorted;
    for (std::size_t k = 0; k < order.size(); ++k) {
        rankOf[order[k]] = std::uint16_t(k);
        sorted.push_back(std::move(out.ops[order[k]]));
    }
    out.ops = std::move(sorted);
    // The kernel table sorted by key, its role indexes along (roles are sorted by name: roleIndex is a map).
    std::vector<std::size_t> byKey(keyed.size());
    for (std::size_t k = 0; k < byKey.size(); ++k)
        byKey[k] = k;
    std::sort(
        byKey.begin(), byKey.end(), [&](std::size_t a, std::size_t b) { return keyed[a].first < keyed[b].first; });
    std::vector<std::uint16_t> roleRank(out.roles.size());
    std::vector<CommRoleReport> roles;
    for (const auto& [role, k] : roleIndex) {
        roleRank[k] = std::uint16_t(roles.size());
        roles.push_back(std::move(out.roles[k]));
    }
    out.roles = std::move(roles);
    for (const std::size_t k : byKey) {
        out.kernelKeys.push_back(keyed[k].first);
        out.kernelOp.push_back(rankOf[keyed[k].second]);
        out.kernelRole.push_back(roleRank[keyedRole[k]]);
    }
    return out;
}

void fillCommOpCollectives(CommOps& ops, const CollectiveMatch& match, int rank, TimeRange window)
{
    std::map<std::size_t, std::map<std::uint32_t, TimeNs>> queuedBehind; // op -> (behind key -> time)
    for (const CollectiveGroup& g : match.groups)
        for (const CollectiveMember& m : g.members) {
            if (m.rank != rank)
                continue;
            const std::uint64_t key = (std::uint64_t(m.lane) << 32) | m.interval;
            const auto it = std::lower_bound(ops.kernelKeys.begin(), ops.kernelKeys.end(), key);
            if (it == ops.kernelKeys.end() || *it != key)
                continue;
            const std::size_t at = std::size_t(it - ops.kernelKeys.begin());
            if (at >= ops.kernelOp.size() || ops.kernelOp[at] >= ops.ops.size())
                continue;
            const TimeNs wait = TimeRange { m.start, m.start + m.waitNs }.intersected(window).duration();
            const TimeNs transfer = TimeRange { m.start + m.waitNs, m.end }.intersected(window).duration();
            CommOpReport& r = ops.ops[ops.kernelOp[at]];
            r.waitNs += wait;
            r.transferNs += transfer;
            if (const TimeNs queued = TimeRange { m.start - m.queuedNs, m.start }.intersected(window).duration();
                queued > 0) {
                r.queuedNs += queued;
                auto& behind = queuedBehind[ops.kernelOp[at]][m.behind];
                behind += queued;
            }
            if (at < ops.kernelRole.size() && ops.kernelRole[at] < ops.roles.size()) {
                ops.roles[ops.kernelRole[at]].waitNs += wait;
                ops.roles[ops.kernelRole[at]].transferNs += transfer;
            }
        }
    for (const auto& [op, behind] : queuedBehind) {
        const auto most = std::max_element(
            behind.begin(), behind.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
        ops.ops[op].queuedBehind = most->first < match.keys.size() ? match.keys[most->first] : std::string("other");
    }
}

std::vector<CommRoleShare> commRoleShares(const Trace& trace, const Analysis& analysis, const CollectiveMatch* match,
    int rankIndex, TimeRange window, const SharedGroupLayout* layout)
{
    CommOps ops = commOperations(trace, analysis, rankIndex, window, layout);
    if (match)
        fillCommOpCollectives(ops, *match, rankIndex, window);
    const Rank& rank = trace.ranks.at(std::size_t(rankIndex));
    // Each kernel's part of the window as two events (time, role, +1 / -1), in time order.
    struct Edge
    {
        TimeNs t;
        std::size_t role;
        int delta;
    };
    std::vector<Edge> edges;
    for (std::size_t k = 0; k < ops.kernelKeys.size(); ++k) {
        const IntervalTable& t = rank.lanes[std::size_t(ops.kernelKeys[k] >> 32)].intervals;
        const std::size_t i = std::size_t(ops.kernelKeys[k] & 0xFFFFFFFFu);
        const TimeRange part = TimeRange { t.start(i), t.end(i) }.intersected(window);
        if (!part.isEmpty()) {
            edges.push_back({ part.start, ops.kernelRole[k], +1 });
            edges.push_back({ part.end, ops.kernelRole[k], -1 });
        }
    }
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
    // The disjoint pieces of U(communication) by the set of roles running in them (a bit per index into ops.roles:
    // there are at most the seven of CommRoleReport).
    std::map<std::uint64_t, std::vector<TimeRange>> pieces;
    std::vector<int> running(ops.roles.size(), 0);
    std::uint64_t mask = 0;
    for (std::size_t e = 0; e < edges.size();) {
        const TimeNs t = edges[e].t;
        if (mask != 0 && e > 0 && edges[e - 1].t < t)
            pieces[mask].push_back({ edges[e - 1].t, t });
        for (; e < edges.size() && edges[e].t == t; ++e) {
            running[edges[e].role] += edges[e].delta;
            const std::uint64_t bit = std::uint64_t(1) << edges[e].role;
            mask = running[edges[e].role] > 0 ? mask | bit : mask & ~bit;
        }
    }
    const RankAnalysis& ra = analysis.ranks.at(std::size_t(rankIndex));
    std::vector<CommRoleShare> singles, combined;
    for (std::size_t k = 0; k < ops.roles.size(); ++k) {
        const CommRoleReport& r = ops.roles[k];
        singles.push_back({ r.role, r.count, 0, 0, r.waitNs, r.transferNs });
    }
    for (const auto& [set, parts] : pieces) {
        TimeNs busy = 0;
        for (const TimeRange& p : parts)
            busy += p.duration();
        const TimeNs exposed = exposedWait(parts, ra);
        if ((set & (set - 1)) == 0) { // one role
            const std::size_t k = std::size_t(std::countr_zero(set));
            singles[k].busyNs = busy;
            singles[k].exposedNs = exposed;
            continue;
        }
        CommRoleShare c;
        for (std::size_t k = 0; k < ops.roles.size(); ++k)
            if (set & (std::uint64_t(1) << k))
                c.role += (c.role.empty() ? "" : "+") + ops.roles[k].role;
        c.busyNs = busy;
        c.exposedNs = exposed;
        combined.push_back(std::move(c));
    }
    std::sort(combined.begin(), combined.end(),
        [](const CommRoleShare& a, const CommRoleShare& b) { return a.role < b.role; });
    singles.insert(singles.end(), combined.begin(), combined.end());
    return singles;
}

std::map<int, TimeRange> jobStepWindows(const std::vector<std::vector<StepWindow>>& stepsPerRank)
{
    std::map<int, TimeRange> out;
    for (const auto& steps : stepsPerRank)
        for (const StepWindow& s : steps) {
            auto [it, fresh] = out.try_emplace(s.index, s.range);
            if (!fresh)
                it->second = { std::min(it->second.start, s.range.start), std::max(it->second.end, s.range.end) };
        }
    return out;
}

} // namespace exposure
