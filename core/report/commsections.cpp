// SPDX-License-Identifier: GPL-3.0-or-later
// The stats report's parts on hybrid parallelism (statsreport_p.h): communication by operation and by role, the
// ranks' coordinates, and the pipeline stages, in JSON and in the text report.
#include "analysis/commops.h"
#include "analysis/statsparts.h"
#include "model/timeformat.h"
#include "report/jsonwriter.h"
#include "report/statsreport.h"
#include "report/statsreport_p.h"
#include "report/texttable.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace exposure {

namespace {

std::string dur(TimeNs ns)
{
    return formatDuration(ns);
}

} // namespace

// "comm_by_op": the rank's communication by the operation the program called (analysis/commops.h).
void writeCommByOp(JsonWriter& j, const CommOps& ops)
{
    j.beginArray();
    for (const CommOpReport& o : ops.ops) {
        j.beginObject()
            .field("op", o.op)
            .field("call", o.call)
            .field("source", commOpSourceName(o.source))
            .field("kernel_type", o.kernelType)
            .field("count", o.count)
            .field("busy_ns", o.busyNs)
            .field("exposed_ns", o.exposedNs)
            .field("wait_ns", o.waitNs)
            .field("transfer_ns", o.transferNs);
        if (o.queuedNs > 0)
            j.field("queued_ns", o.queuedNs).field("queued_behind", o.queuedBehind);
        j.endObject();
    }
    j.endArray();
}

// "parallel": the rank's coordinates in the parallel grid, those that are known ({} where none is).
void writeParallel(JsonWriter& j, const ParallelCoords& c)
{
    j.beginObject();
    for (const auto& [key, v] :
        { std::pair { "dp", c.dp }, { "pp", c.pp }, { "tp", c.tp }, { "ep", c.ep }, { "cp", c.cp } })
        if (v >= 0)
            j.field(key, v);
    j.endObject();
}

// "comm_by_role": {ROLE: {count, busy_ns, exposed_ns, wait_ns, transfer_ns[, role_source]}} (analysis/commops.h);
// role_source only where a rule or the groups' layout gave the role (absent: the groups' names, or the lanes' roles).
void writeCommByRole(JsonWriter& j, const CommOps& ops)
{
    j.beginObject();
    for (const CommRoleReport& r : ops.roles) {
        const bool sourced = r.source.find("rule") != std::string::npos || r.source.find("layout") != std::string::npos;
        j.key(r.role)
            .beginObject()
            .field("count", r.count)
            .field("busy_ns", r.busyNs)
            .field("exposed_ns", r.exposedNs)
            .field("wait_ns", r.waitNs)
            .field("transfer_ns", r.transferNs);
        if (sourced)
            j.field("role_source", r.source);
        j.endObject();
    }
    j.endObject();
}

// Communication by the operation the program called (analysis/commops.h): per rank, or summed over the ranks when
// the report summarises.
std::string commByOpSection(const StatsReport& report, bool summarise)
{
    std::vector<std::vector<std::string>> rows;
    rows.push_back({ "rank", "operation", "called as", "kernels", "count", "busy", "exposed", "waiting", "transfer" });
    auto row = [&](const std::string& rank, const CommOpReport& o) {
        rows.push_back({ rank, o.op, o.call.empty() ? "(" + std::string(commOpSourceName(o.source)) + ")" : o.call,
            o.kernelType.empty() ? "-" : o.kernelType, std::to_string(o.count), dur(o.busyNs), dur(o.exposedNs),
            dur(o.waitNs), dur(o.transferNs) });
    };
    if (summarise) {
        std::map<std::tuple<std::string, std::string, std::string>, CommOpReport> sum;
        for (const RankReport& r : report.ranks)
            for (const CommOpReport& o : r.commOps.ops) {
                CommOpReport& t = sum[{ o.op, o.call, o.kernelType }];
                t.op = o.op;
                t.call = o.call;
                t.kernelType = o.kernelType;
                t.source = o.source;
                t.count += o.count;
                t.busyNs += o.busyNs;
                t.exposedNs += o.exposedNs;
                t.waitNs += o.waitNs;
                t.transferNs += o.transferNs;
                t.queuedNs += o.queuedNs;
                if (t.queuedBehind.empty())
                    t.queuedBehind = o.queuedBehind;
            }
        for (const auto& [key, o] : sum)
            row("all", o);
    } else {
        for (const RankReport& r : report.ranks)
            for (const CommOpReport& o : r.commOps.ops)
                row(r.label, o);
    }
    if (rows.size() == 1)
        return {};
    std::string queued;
    auto noteQueued = [&](const std::string& rank, const CommOpReport& o) {
        if (o.queuedNs > 0)
            queued += "  " + rank + ": " + o.op + " queued behind " + o.queuedBehind + " for " + dur(o.queuedNs)
                + " (one communicator on two streams: neither waiting for a peer nor transfer)\n";
    };
    if (!summarise)
        for (const RankReport& r : report.ranks)
            for (const CommOpReport& o : r.commOps.ops)
                noteQueued(r.label, o);
    return "\nCommunication by the operation called (the region around each kernel's launch, else the kernel's\n"
           "arguments, else its name; busy and exposed are unions per operation):\n"
        + renderTable(rows, 4) + queued;
}

// Communication by parallelism role: per rank, or summed over the ranks when the report summarises; only where
// some role is known.
std::string commByRoleSection(const StatsReport& report, bool summarise)
{
    std::vector<std::vector<std::string>> rows;
    rows.push_back({ "rank", "role", "count", "busy", "exposed", "waiting", "transfer" });
    std::map<std::string, CommRoleReport> sum;
    bool known = false;
    for (const RankReport& r : report.ranks)
        for (const CommRoleReport& o : r.commOps.roles) {
            known = known || o.role != "unknown";
            if (!summarise) {
                rows.push_back({ r.label, o.role, std::to_string(o.count), dur(o.busyNs), dur(o.exposedNs),
                    dur(o.waitNs), dur(o.transferNs) });
                continue;
            }
            CommRoleReport& t = sum[o.role];
            t.count += o.count;
            t.busyNs += o.busyNs;
            t.exposedNs += o.exposedNs;
            t.waitNs += o.waitNs;
            t.transferNs += o.transferNs;
        }
    for (const auto& [role, t] : sum)
        rows.push_back({ "all", role, std::to_string(t.count), dur(t.busyNs), dur(t.exposedNs), dur(t.waitNs),
            dur(t.transferNs) });
    if (!known)
        return {};
    return "\nCommunication by parallelism role (exposed = not overlapped by the rank's compute):\n"
        + renderTable(rows, 2);
}

// Pipeline stages (ranks with a pp coordinate): each stage's compute and its bubble share, the Σ of its ranks' step
// bubbles over the Σ of the job's step windows, and the stage whose compute is longest.
std::string pipelineSection(const StatsReport& report)
{
    struct Stage
    {
        int ranks = 0;
        TimeNs compute = 0, bubble = 0, windows = 0;
    };
    std::map<int, Stage> stages;
    const std::map<int, TimeRange> jobWindows = reportJobWindows(report);
    for (const RankReport& r : report.ranks) {
        if (r.coords.pp < 0)
            continue;
        Stage& st = stages[r.coords.pp];
        ++st.ranks;
        st.compute += r.stats.computeBusyNs;
        for (const StepReport& s : r.steps) {
            st.bubble += s.bubbleNs;
            if (const auto it = jobWindows.find(s.index); it != jobWindows.end())
                st.windows += it->second.duration();
        }
    }
    if (stages.size() < 2)
        return {};
    std::vector<std::vector<std::string>> rows;
    rows.push_back({ "stage", "ranks", "compute per rank", "bubble", "bubble share" });
    int longest = stages.begin()->first;
    for (const auto& [pp, st] : stages) {
        rows.push_back({ std::to_string(pp), std::to_string(st.ranks), dur(st.compute / std::max(1, st.ranks)),
            dur(st.bubble / std::max(1, st.ranks)),
            st.windows > 0 ? formatFixed(100.0 * double(st.bubble) / double(st.windows), 1) + " %"
                           : std::string("-") });
        if (st.compute / std::max(1, st.ranks) > stages[longest].compute / std::max(1, stages[longest].ranks))
            longest = pp;
    }
    return "\nPipeline stages (bubble = the job's window of each step less the rank's compute in it):\n"
        + renderTable(rows, 1) + "stage " + std::to_string(longest) + " computes longest\n";
}

} // namespace exposure
