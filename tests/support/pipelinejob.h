// SPDX-License-Identifier: GPL-3.0-or-later
// Generated DP x PP training jobs with a known answer, written as Megatron-LM timelines (Chrome Trace Event Format,
// the layout of the published straggler study: pid = DP rank, threads "PP rank P, TP rank 0, LANE", `args.step`).
//
// Each worker runs, per step: the parameter all-gather of its data-parallel group, the microbatches' forward and
// backward passes with the pipeline transfers between stages, and the gradient reduce-scatter. The schedule is
// GPipe (all forwards, then all backwards) or 1F1B (Megatron's: warm-up forwards, one forward one backward, cool-down
// backwards, with a send and the next receive batched into one operation).
//
// The times come from simulating the job: an operation starts when its worker is free and every member of every
// transfer or collective it takes part in is there (the study's format: the waiting lies before the start, and the
// members of one transfer start together), and it lasts its duration. The same simulation with other durations is
// the known answer of a what-if: `simulate(job, durationOf)`.
#pragma once

#include "model/trace.h"

#include <QByteArray>
#include <QStringBuilder>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace exposure::testing {

struct PipelineJob
{
    int dp = 2, pp = 4, microbatches = 8, steps = 3, firstStep = 10;
    bool oneFOneB = false;
    TimeNs p2pNs = 40'000, allGatherNs = 300'000, reduceScatterNs = 500'000;
    // Compute durations: forward (backward == false) or backward of microbatch `mb` of worker (dp, pp) in `step`.
    std::function<TimeNs(int dp, int pp, int step, int mb, bool backward)> compute
        = [](int, int, int, int, bool backward) { return backward ? TimeNs(2'000'000) : TimeNs(1'000'000); };
};

// One operation of a worker: one or two timers (a batched send and receive) that start and end together.
struct PipelineOp
{
    struct Part
    {
        std::string name;
        int lane = 0; // 0 compute, 1 pp-comm, 3 dp-comm
        int group = -1; // the transfer or collective it takes part in; -1 for compute
    };
    std::vector<Part> parts;
    int step = 0; // index from 0
    bool compute = false;
    bool backward = false;
    TimeNs duration = 0;
    TimeNs start = 0, end = 0; // after simulate()
};

struct PipelineTimes
{
    std::vector<std::vector<PipelineOp>> ops; // by worker (dp + DP * pp: the rank number)
    // Per step: the longest worker's step (first start to last end), the measure of WhatIfModel::jobSteps().
    std::vector<TimeNs> jobStep;
};

namespace detail {

// Group ids: transfers and collectives named by their identity.
class Groups
{
public:
    int id(const std::string& key)
    {
        auto [it, fresh] = m_ids.try_emplace(key, int(m_ids.size()));
        return it->second;
    }

private:
    std::map<std::string, int> m_ids;
};

// The operations of worker (d, p) in one step, in the order its schedule runs them.
inline void scheduleStep(std::vector<PipelineOp>& ops, const PipelineJob& j, Groups& groups, int d, int p, int step)
{
    const std::string tag = std::to_string(d) + "/" + std::to_string(step) + "/";
    auto fwdXfer
        = [&](int sender, int mb) { return groups.id("f" + tag + std::to_string(sender) + "/" + std::to_string(mb)); };
    auto bwdXfer
        = [&](int sender, int mb) { return groups.id("b" + tag + std::to_string(sender) + "/" + std::to_string(mb)); };
    auto comm = [&](std::vector<PipelineOp::Part> parts, TimeNs duration) {
        if (parts.empty())
            return;
        PipelineOp op;
        op.parts = std::move(parts);
        op.step = step;
        op.duration = duration;
        ops.push_back(std::move(op));
    };
    auto compute = [&](int mb, bool backward) {
        PipelineOp op;
        op.parts = { { backward ? "backward-compute" : "forward-compute", 0, -1 } };
        op.step = step;
        op.compute = true;
        op.backward = backward;
        op.duration = j.compute(d, p, step, mb, backward);
        ops.push_back(std::move(op));
    };
    const bool first = p == 0, last = p == j.pp - 1;
    using Parts = std::vector<PipelineOp::Part>;
    auto recvF = [&](int mb) { return first ? Parts {} : Parts { { "forward-recv", 1, fwdXfer(p - 1, mb) } }; };
    auto sendF = [&](int mb) { return last ? Parts {} : Parts { { "forward-send", 1, fwdXfer(p, mb) } }; };
    auto recvB = [&](int mb) { return last ? Parts {} : Parts { { "backward-recv", 1, bwdXfer(p + 1, mb) } }; };
    auto sendB = [&](int mb) { return first ? Parts {} : Parts { { "backward-send", 1, bwdXfer(p, mb) } }; };
    auto both = [](Parts a, const Parts& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    };
    comm({ { "params-all-gather", 3, groups.id("ag" + std::to_string(p) + "/" + std::to_string(step)) } },
        j.allGatherNs);
    const int m = j.microbatches;
    if (!j.oneFOneB) {
        for (int mb = 0; mb < m; ++mb) {
            comm(recvF(mb), j.p2pNs);
            compute(mb, false);
            comm(sendF(mb), j.p2pNs);
        }
        for (int mb = 0; mb < m; ++mb) {
            comm(recvB(mb), j.p2pNs);
            compute(mb, true);
            comm(sendB(mb), j.p2pNs);
        }
    } else {
        const int warm = std::min(j.pp - p - 1, m), rest = m - warm;
        for (int mb = 0; mb < warm; ++mb) {
            comm(recvF(mb), j.p2pNs);
            compute(mb, false);
            comm(sendF(mb), j.p2pNs);
        }
        if (rest > 0)
            comm(recvF(warm), j.p2pNs);
        for (int i = 0; i < rest; ++i) {
            compute(warm + i, false);
            comm(both(sendF(warm + i), recvB(i)), j.p2pNs);
            compute(i, true);
            comm(i == rest - 1 ? sendB(i) : both(sendB(i), recvF(warm + i + 1)), j.p2pNs);
        }
        for (int i = 0; i < warm; ++i) {
            comm(recvB(rest + i), j.p2pNs);
            compute(rest + i, true);
            comm(sendB(rest + i), j.p2pNs);
        }
    }
    comm({ { "grads-reduce-scatter", 3, groups.id("rs" + std::to_string(p) + "/" + std::to_string(step)) } },
        j.reduceScatterNs);
}

} // namespace detail

// The job's operations with the durations `durationOf` gives them (by default the recorded ones), simulated.
inline PipelineTimes simulate(
    const PipelineJob& j, const std::function<TimeNs(int worker, const PipelineOp&)>& durationOf = {})
{
    PipelineTimes out;
    const int workers = j.dp * j.pp;
    out.ops.resize(std::size_t(workers));
    detail::Groups groups;
    for (int w = 0; w < workers; ++w)
        for (int s = 0; s < j.steps; ++s)
            detail::scheduleStep(out.ops[std::size_t(w)], j, groups, w % j.dp, w / j.dp, s);
    // Members of each group: (worker, op index).
    std::map<int, std::vector<std::pair<int, std::size_t>>> members;
    for (int w = 0; w < workers; ++w)
        for (std::size_t k = 0; k < out.ops[std::size_t(w)].size(); ++k) {
            PipelineOp& op = out.ops[std::size_t(w)][k];
            if (durationOf)
                op.duration = durationOf(w, op);
            for (const auto& part : op.parts)
                if (part.group >= 0)
                    members[part.group].emplace_back(w, k);
        }
    std::vector<std::size_t> next(std::size_t(workers), 0);
    std::vector<TimeNs> ready(std::size_t(workers), 0);
    for (bool progress = true; progress;) {
        progress = false;
        for (int w = 0; w < workers; ++w) {
            if (next[std::size_t(w)] >= out.ops[std::size_t(w)].size())
                continue;
            // The operations that must start together: this one and, through their groups, its partners'.
            std::vector<std::pair<int, std::size_t>> closure { { w, next[std::size_t(w)] } };
            bool ok = true;
            for (std::size_t c = 0; c < closure.size() && ok; ++c) {
                const auto [cw, ck] = closure[c];
                for (const auto& part : out.ops[std::size_t(cw)][ck].parts) {
                    if (part.group < 0)
                        continue;
                    for (const auto& mem : members[part.group]) {
                        if (next[std::size_t(mem.first)] != mem.second) {
                            ok = false;
                            break;
                        }
                        if (std::find(closure.begin(), closure.end(), mem) == closure.end())
                            closure.push_back(mem);
                    }
                }
            }
            if (!ok)
                continue;
            TimeNs start = 0;
            for (const auto& [cw, ck] : closure)
                start = std::max(start, ready[std::size_t(cw)]);
            for (const auto& [cw, ck] : closure) {
                PipelineOp& op = out.ops[std::size_t(cw)][ck];
                op.start = start;
                op.end = start + op.duration;
                ready[std::size_t(cw)] = op.end;
                ++next[std::size_t(cw)];
            }
            progress = true;
        }
    }
    out.jobStep.assign(std::size_t(j.steps), 0);
    for (const auto& ops : out.ops) {
        std::vector<TimeNs> first(std::size_t(j.steps), -1), lastEnd(std::size_t(j.steps), 0);
        for (const PipelineOp& op : ops) {
            if (first[std::size_t(op.step)] < 0)
                first[std::size_t(op.step)] = op.start;
            lastEnd[std::size_t(op.step)] = std::max(lastEnd[std::size_t(op.step)], op.end);
        }
        for (std::size_t s = 0; s < first.size(); ++s)
            out.jobStep[s] = std::max(out.jobStep[s], lastEnd[s] - first[s]);
    }
    return out;
}

// The simulated job as a Megatron-LM timeline (whole microseconds and nanosecond fractions, exact).
inline QByteArray pipelineTimeline(const PipelineJob& j, const PipelineTimes& t)
{
    static const char* lanes[] = { "compute", "pp-comm", "tp-comm", "dp-comm", "misc" };
    QByteArray out = "{\"traceEvents\": [\n";
    bool firstEvent = true;
    auto add = [&](const QByteArray& e) {
        out += QByteArray(firstEvent ? "" : ",\n") + e;
        firstEvent = false;
    };
    auto us = [](TimeNs ns) -> QByteArray {
        return QByteArray::number(ns / 1000) + QByteArray(".") + QByteArray::number(ns % 1000).rightJustified(3, '0');
    };
    for (int w = 0; w < j.dp * j.pp; ++w) {
        const int d = w % j.dp, p = w / j.dp;
        for (int l = 0; l < 5; ++l)
            add(QByteArray(R"({"name": "thread_name", "ph": "M", "pid": )") + QByteArray::number(d) + R"(, "tid": )"
                + QByteArray::number(p * 5 + l) + R"(, "args": {"name": "PP rank )" + QByteArray::number(p)
                + ", TP rank 0, " + lanes[l] + "\"}}");
        for (const PipelineOp& op : t.ops[std::size_t(w)])
            for (const auto& part : op.parts)
                add(QByteArray(R"({"name": ")") + QByteArray::fromStdString(part.name) + R"(", "ph": "X", "pid": )"
                    + QByteArray::number(d) + R"(, "tid": )" + QByteArray::number(p * 5 + part.lane) + R"(, "ts": )"
                    + us(op.start) + R"(, "dur": )" + us(op.end - op.start) + R"(, "args": {"step": )"
                    + QByteArray::number(j.firstStep + op.step) + "}}");
    }
    return out + "\n]}\n";
}

} // namespace exposure::testing
