// SPDX-License-Identifier: GPL-3.0-or-later
#include "report/statsreport.h"

#include "analysis/clockalign.h"
#include "analysis/collectives.h"
#include "analysis/ranksummary.h"
#include "analysis/statsparts.h"
#include "analysis/stepmean.h"
#include "model/enumnames.h"
#include "model/timeformat.h"
#include "model/utf8.h"
#include "report/jsonwriter.h"
#include "report/statsreport_p.h"
#include "report/texttable.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

namespace exposure {

// The one JSON string writer (JsonWriter::value): valid UTF-8 whatever bytes a name holds (tst_utf8output checks it
// on each input kind).
std::string jsonQuoted(std::string_view raw)
{
    std::string out;
    JsonWriter(out).value(raw);
    return out;
}

std::string csvQuoted(std::string_view raw)
{
    std::string text = toValidUtf8(raw);
    if (text.find_first_of(",\"\n\r") == std::string::npos)
        return text;
    std::string q = "\"";
    for (const char c : text) {
        if (c == '"')
            q += '"';
        q += c;
    }
    return q + "\"";
}

namespace {

std::string ratioText(const std::optional<double>& r)
{
    return r ? formatFixed(*r, 6) : std::string("null");
}

// Field values in statsFieldNames() order, as JSON/CSV tokens.
std::vector<std::string> fieldValues(const WindowStats& s)
{
    return { std::to_string(s.kernelCount), std::to_string(s.commKernelCount), std::to_string(s.commKernelSumNs),
        std::to_string(s.commBusyNs), std::to_string(s.computeBusyNs), std::to_string(s.overlappedNs),
        std::to_string(s.exposedNs), ratioText(s.overlapRatio), std::to_string(s.backwardOverlappedNs),
        std::to_string(s.memcpyBusyNs), std::to_string(s.gpuBusyNs), std::to_string(s.spanNs), std::to_string(s.idleNs),
        std::to_string(s.unclassifiedNs) };
}

// The WindowStats fields in statsFieldNames() order, as members of the object being written.
void writeStatsFields(JsonWriter& j, const WindowStats& s)
{
    const auto& names = statsFieldNames();
    const std::int64_t values[] = { std::int64_t(s.kernelCount), std::int64_t(s.commKernelCount), s.commKernelSumNs,
        s.commBusyNs, s.computeBusyNs, s.overlappedNs, s.exposedNs, 0, s.backwardOverlappedNs, s.memcpyBusyNs,
        s.gpuBusyNs, s.spanNs, s.idleNs, s.unclassifiedNs };
    static_assert(std::size(values) == 14);
    for (std::size_t i = 0; i < names.size(); ++i) {
        j.key(names[i]);
        if (i != 7)
            j.value(values[i]);
        else if (s.overlapRatio)
            j.fixed(*s.overlapRatio, 6);
        else
            j.null();
    }
}

void writeIdle(JsonWriter& j, const IdleBreakdown& b)
{
    j.beginObject()
        .field("host_bound_ns", b.hostBoundNs)
        .field("sync_wait_ns", b.syncWaitNs)
        .field("queued_ns", b.queuedNs)
        .field("data_loading_ns", b.dataLoadingNs)
        .field("unattributed_ns", b.unattributedNs)
        .field("gaps", b.gaps)
        .endObject();
}

// How the steps' windows were placed, for the text report: "; windows on the GPU by launch", "; windows: host
// (launches unknown)", "" for steps from the kernel pattern (found on the GPU) and without steps.
std::string stepWindowsText(StepAxis a)
{
    static constexpr EnumName<StepAxis> texts[] = { { StepAxis::GpuByLaunch, "; windows on the GPU by launch" },
        { StepAxis::Host, "; windows: host, launches unknown" } };
    return nameIn(texts, a, "");
}

std::string stepAssignment(const RankReport& r)
{
    if (r.stepCount == 0)
        return "none";
    return r.stepsByLaunch ? "launch" : "start";
}

std::string percent(const std::optional<double>& r)
{
    return r ? formatFixed(*r * 100.0, 1) + " %" : std::string("-");
}

std::string dur(TimeNs ns)
{
    return formatDuration(ns);
}

// "; calls by kernels launched: 65 × 1, 5 × 218, 5 × 403" when some call launched several kernels, else "".
std::string callsByKernels(const RankReport& rank)
{
    if (rank.kernelsPerCall.empty() || rank.kernelsPerCall.back().first <= 1)
        return {};
    std::string out = "; calls by kernels launched: ";
    for (std::size_t k = 0; k < rank.kernelsPerCall.size(); ++k)
        out += (k ? ", " : "") + std::to_string(rank.kernelsPerCall[k].second) + " × "
            + std::to_string(rank.kernelsPerCall[k].first);
    return out;
}

// A rank's steps in the report window, as the step-mean rule takes them (analysis/stepmean.h).
std::vector<StepWindow> windowSteps(const RankReport& rank)
{
    std::vector<StepWindow> out;
    out.reserve(rank.steps.size());
    for (const StepReport& s : rank.steps)
        out.push_back({ s.index, s.name, s.range, s.hostRange, s.number });
    return out;
}

// Which of a rank's steps in the window its mean step covers (analysis/stepmean.h), as a JSON object.
void writeStepMean(JsonWriter& j, const std::vector<StepWindow>& steps, const StepMean& m)
{
    j.beginObject().field("mean_ns", m.meanNs).field("steps_used", m.used.size());
    if (m.used.empty())
        j.nullField("first_step").nullField("last_step");
    else
        j.field("first_step", steps[m.used.front()].number).field("last_step", steps[m.used.back()].number);
    j.key("startup_steps").beginArray();
    for (const std::size_t k : m.startup)
        j.value(steps[k].number);
    j.endArray().field("covers", m.describe(steps)).endObject();
}

// "mean step = mean step-window length over: Rank 0: steps 1–14 (step 0 left out: start-up, 8.2 s); …", one line
// when every rank has the same steps.
std::string stepMeanNotes(const std::vector<std::pair<std::string, std::string>>& perRank)
{
    if (perRank.empty())
        return {};
    const std::string rule = "a first step lasting over " + std::to_string(kStartupFactor)
        + "x the median of the later ones is start-up and left out.\n";
    if (std::all_of(perRank.begin(), perRank.end(), [&](const auto& p) { return p.second == perRank.front().second; }))
        return "mean step = mean step-window length over " + perRank.front().second
            + (perRank.size() > 1 ? " (every rank)" : "") + ";\n" + rule;
    std::string out = "mean step = mean step-window length over\n";
    for (const auto& [label, covers] : perRank)
        out += "  " + label + ": " + covers + "\n";
    return out + rule;
}

} // namespace

const std::vector<std::string>& statsFieldNames()
{
    static const std::vector<std::string> names = { "kernel_count", "comm_kernel_count", "comm_kernel_sum_ns",
        "comm_busy_ns", "compute_busy_ns", "overlapped_ns", "exposed_ns", "overlap_ratio", "backward_overlapped_ns",
        "memcpy_busy_ns", "gpu_busy_ns", "span_ns", "idle_ns", "unclassified_ns" };
    return names;
}

std::string statsJson(const Trace& trace, const Analysis& analysis, const StatsReportOptions& o)
{
    return statsJson(buildStatsReport(trace, analysis, o, true), o);
}

std::string statsCsv(const Trace& trace, const Analysis& analysis, const StatsReportOptions& o)
{
    return statsCsv(buildStatsReport(trace, analysis, o, false), o);
}

std::string statsTable(const Trace& trace, const Analysis& analysis, const StatsReportOptions& o)
{
    return statsTable(buildStatsReport(trace, analysis, o, false), o);
}

namespace {

WindowStats totalOf(const StatsReport& report)
{
    std::vector<WindowStats> parts;
    parts.reserve(report.ranks.size());
    for (const RankReport& r : report.ranks)
        parts.push_back(r.stats);
    return sumStats(parts);
}

int rankNumber(const StatsReport& report, int index)
{
    return std::size_t(index) < report.ranks.size() ? report.ranks[std::size_t(index)].rank : index;
}

std::string rankLabel(const StatsReport& report, int index)
{
    return std::size_t(index) < report.ranks.size() ? report.ranks[std::size_t(index)].label
                                                    : "rank " + std::to_string(index);
}

// "clock_alignment": how the ranks' clocks were put on one time base (offsets subtracted from recorded times).
void writeClock(JsonWriter& j, const StatsReport& report)
{
    const ClockAlignment& c = report.clocks;
    j.beginObject()
        .field("method", clockMethodName(c.method))
        .field("reference_rank", rankNumber(report, c.referenceRank))
        .field("hosts_known", c.hostsKnown)
        .field("threshold_ns", c.thresholdNs)
        .field("summary", report.clockLine)
        .key("ranks")
        .beginArray();
    for (const RankClock& r : c.ranks)
        j.beginObject()
            .field("rank", rankNumber(report, r.rank))
            .field("host", r.host)
            .field("offset_ns", r.offsetNs)
            .field("estimate_ns", r.estimateNs)
            .field("uncertainty_ns", r.uncertaintyNs)
            .field("collectives_used", r.collectivesUsed)
            .field("skew_separated", r.skewSeparated)
            .endObject();
    j.endArray().endObject();
}

double gigabytesPerSecond(double bytesPerSecond)
{
    return bytesPerSecond / 1e9;
}

// "collective_summary": per process group, how it was matched, its collectives by type and size, its stragglers.
void writeCollectiveSummary(JsonWriter& j, const StatsReport& report)
{
    j.beginArray(JsonWriter::Layout::Lines);
    for (std::size_t g = 0; g < report.processGroups.size(); ++g) {
        const ProcessGroupMatch& pg = report.processGroups[g];
        j.beginObject()
            .field("group", pg.name)
            .field("group_ranks", pg.ranks)
            .field("method", matchMethodName(pg.method))
            .key("members")
            .beginArray();
        for (const int m : pg.members)
            j.value(m);
        j.endArray()
            .field("instances", pg.instances)
            .field("matched_instances", pg.matchedInstances)
            .field("collectives", pg.collectives)
            .breakBefore(5)
            .key("count_mismatches")
            .beginArray();
        for (const CountMismatch& mm : pg.mismatches)
            j.beginObject()
                .field("rank", rankNumber(report, mm.rank))
                .field("count", mm.rankCount)
                .field("reference_rank", rankNumber(report, mm.reference))
                .field("reference_count", mm.referenceCount)
                .field("unmatched", mm.unmatched)
                .field("first_unmatched_ns", mm.firstUnmatched)
                .endObject();
        j.endArray().breakBefore(5).key("collectives_by_type").beginArray(JsonWriter::Layout::Lines, 7);
        for (const CollectiveSummaryRow& r : report.collectiveSummary) {
            if (r.processGroup != g)
                continue;
            const double n = double(r.count);
            j.beginObject()
                .field("type", r.type)
                .field("dtype", r.dtype)
                .field("bytes", r.bytes)
                .field("algorithm", r.algorithm)
                .field("ranks", r.ranks)
                .field("count", r.count)
                .field("total_ns", r.totalNs)
                .fixedField("mean_ns", double(r.totalNs) / n, 1)
                .fixedField("latency_ns", double(r.latencyTotalNs) / n, 1)
                .field("min_latency_ns", r.minLatencyNs);
            if (r.busBandwidth > 0)
                j.fixedField("bus_bandwidth_gbps", gigabytesPerSecond(r.busBandwidth), 3);
            else
                j.nullField("bus_bandwidth_gbps");
            if (r.memberNs > 0)
                j.fixedField("wait_share", double(r.waitNs) / double(r.memberNs), 6);
            else
                j.nullField("wait_share");
            j.endObject();
        }
        j.endArray().breakBefore(5).key("stragglers").beginArray();
        for (const StragglerRow& st : report.stragglers)
            if (st.processGroup == g)
                j.beginObject()
                    .field("rank", rankNumber(report, st.rank))
                    .field("arrived_last", st.arrivedLast)
                    .field("caused_wait_ns", st.causedWaitNs)
                    .endObject();
        j.endArray().endObject();
    }
    j.endArray();
}

// A process group's ranks for the text report: as recorded ("[0, 1]"), or as ranges ("0-255") when there are more
// than 8 of them, so that a group of a large job is one short line (the JSON keeps the recorded list).
std::string groupRanksText(const std::string& recorded)
{
    std::vector<int> ranks;
    int value = -1;
    for (const char c : recorded) {
        if (c >= '0' && c <= '9') {
            value = (value < 0 ? 0 : value * 10) + (c - '0');
            if (value > 1'000'000'000)
                return recorded;
        } else {
            if (value >= 0)
                ranks.push_back(value);
            value = -1;
            if (c != '[' && c != ']' && c != ',' && c != ' ')
                return recorded; // not a plain list of numbers
        }
    }
    if (value >= 0)
        ranks.push_back(value);
    return ranks.size() > 8 ? formatRankList(std::move(ranks)) : recorded;
}

// The text report's collective summary and stragglers, per process group.
std::string collectiveSummaryText(const StatsReport& report)
{
    std::string out = "\nCollectives by process group (latency = the shortest member's duration, i.e. without "
                      "waiting;\nbus bandwidth by the nccl-tests formulas over the mean latency):\n";
    for (std::size_t g = 0; g < report.processGroups.size(); ++g) {
        const ProcessGroupMatch& pg = report.processGroups[g];
        out += "\n"
            + (pg.name.empty() ? std::string("(no process group: matched by kernel name and end time)")
                               : "group " + pg.name + (pg.ranks.empty() ? "" : " ranks " + groupRanksText(pg.ranks)))
            + ": " + std::to_string(pg.collectives) + " collectives, " + std::to_string(pg.matchedInstances) + " of "
            + std::to_string(pg.instances) + " kernels matched by " + matchMethodName(pg.method) + "\n";
        for (const CountMismatch& mm : pg.mismatches)
            out += "  count mismatch: " + rankLabel(report, mm.rank) + " has " + std::to_string(mm.rankCount)
                + " against " + std::to_string(mm.referenceCount) + " on " + rankLabel(report, mm.reference) + "; "
                + std::to_string(mm.unmatched) + " of " + rankLabel(report, mm.rank) + "'s without a counterpart"
                + (mm.firstUnmatched >= 0 ? " (the first at " + dur(mm.firstUnmatched) + ")" : std::string())
                + "; the order was re-synchronised on type, size and end time\n";
        std::vector<std::vector<std::string>> rows;
        rows.push_back(
            { "type", "dtype", "size", "algorithm", "count", "total", "mean", "latency", "bus bw", "waiting" });
        for (const CollectiveSummaryRow& r : report.collectiveSummary) {
            if (r.processGroup != g)
                continue;
            const TimeNs n = TimeNs(r.count);
            rows.push_back({ r.type.empty() ? "?" : r.type, r.dtype.empty() ? "-" : r.dtype,
                r.bytes ? std::to_string(r.bytes) + " B" : std::string("-"), r.algorithm.empty() ? "-" : r.algorithm,
                std::to_string(r.count), dur(r.totalNs), dur(r.totalNs / n), dur(r.latencyTotalNs / n),
                r.busBandwidth > 0 ? formatFixed(gigabytesPerSecond(r.busBandwidth), 2) + " GB/s" : "-",
                r.memberNs > 0 ? formatFixed(100.0 * double(r.waitNs) / double(r.memberNs), 1) + " %" : "-" });
        }
        out += renderTable(rows, 4);
        std::string stragglers;
        for (const StragglerRow& st : report.stragglers)
            if (st.processGroup == g && st.arrivedLast > 0)
                stragglers += (stragglers.empty() ? "" : ", ") + rankLabel(report, st.rank) + " last in "
                    + std::to_string(st.arrivedLast) + " (others waited " + dur(st.causedWaitNs) + ")";
        out += "  stragglers: " + (stragglers.empty() ? std::string("none") : stragglers) + "\n";
    }
    return out;
}

// One rank's object of "ranks" (its stats, phases, steps, collectives, communication by operation, warnings).
void writeRank(JsonWriter& j, const RankReport& rank)
{
    j.beginObject(JsonWriter::Layout::Lines)
        .field("rank", rank.rank)
        .field("label", rank.label)
        .field("host", rank.host);
    if (rank.device < 0)
        j.nullField("device");
    else
        j.field("device", rank.device);
    j.key("parallel");
    writeParallel(j, rank.coords);
    writeStatsFields(j, rank.stats);
    j.field("phase_source", phaseSourceName(rank.phaseSource))
        .key("phase_counts")
        .beginObject()
        .field("launch", rank.phaseFromLaunch)
        .field("kernel_name", rank.phaseFromName)
        .field("step_heuristic", rank.phaseFromHeuristic)
        .field("unknown", rank.phaseUnknown)
        .endObject()
        .field("launch_pairing", launchPairingName(rank.launchPairing))
        .field("kernels_paired", rank.kernelsPaired)
        .field("kernels_unpaired", rank.kernelsUnpaired)
        .key("kernels_per_call")
        .beginObject();
    for (const auto& [kernels, calls] : rank.kernelsPerCall)
        j.field(std::to_string(kernels), calls);
    j.endObject().key("idle_breakdown");
    writeIdle(j, rank.idle);
    const LaunchDiagnosis& ld = rank.launches;
    j.key("launch_diagnosis")
        .beginObject()
        .field("kernels", ld.kernels)
        .field("median_kernel_ns", ld.medianKernelNs)
        .field("p90_kernel_ns", ld.p90KernelNs)
        .field("median_launch_ns", ld.medianLaunchNs)
        .field("p90_launch_ns", ld.p90LaunchNs)
        .fixedField("shorter_than_launch", ld.shorterThanLaunch, 6)
        .fixedField("launches_per_second", ld.launchesPerSecond, 1)
        .field("calls", ld.calls)
        .field("multi_kernel_calls", ld.multiKernelCalls)
        .field("multi_kernel_kernels", ld.multiKernelKernels)
        .field("max_kernels_per_call", ld.maxKernelsPerCall)
        .field("graph_launches", ld.graphLaunches)
        .field("graph_kernels", ld.graphKernels)
        .endObject()
        .field("finding", idleFinding(rank.stats, rank.idle, ld, &rank.peers))
        .field("step_source", stepSourceName(rank.stepSource))
        .field("step_assignment", stepAssignment(rank))
        .field("step_windows", stepAxisName(rank.stepAxis));
    const std::vector<StepWindow> inWindow = windowSteps(rank);
    const StepMean mean = stepMean(inWindow);
    j.key("step_mean");
    writeStepMean(j, inWindow, mean);
    j.key("steps").beginArray(JsonWriter::Layout::Lines);
    for (std::size_t k = 0; k < rank.steps.size(); ++k) {
        const StepReport& w = rank.steps[k];
        j.beginObject(JsonWriter::Layout::Lines)
            .field("index", w.index)
            .field("number", w.number)
            .field("name", w.name)
            .field("start_ns", w.range.start)
            .field("end_ns", w.range.end)
            .field("host_start_ns", w.hostRange.start)
            .field("host_end_ns", w.hostRange.end)
            .field("startup", std::find(mean.startup.begin(), mean.startup.end(), k) != mean.startup.end());
        writeStatsFields(j, w.stats);
        j.key("idle_breakdown");
        writeIdle(j, w.idle);
        j.key("collectives")
            .beginObject()
            .field("wait_ns", w.waitNs)
            .field("transfer_ns", w.transferNs)
            .endObject()
            .field("bubble_ns", w.bubbleNs)
            .endObject();
    }
    // Whole trace (collectives are matched across ranks, not per window).
    const RankCollectiveStats& c = rank.collectives;
    j.endArray()
        .key("collectives")
        .beginObject()
        .field("matched", c.matched)
        .field("unmatched", c.unmatched)
        .field("wait_ns", c.waitNs)
        .field("transfer_ns", c.transferNs)
        .field("exposed_wait_ns", c.exposedWaitNs)
        .field("caused_waits", c.causedWaits)
        .field("caused_wait_ns", c.causedWaitNs)
        .endObject()
        .key("comm_by_op");
    writeCommByOp(j, rank.commOps);
    j.key("comm_by_role");
    writeCommByRole(j, rank.commOps);
    j.key("warnings").beginArray();
    for (const std::string& w : rank.warnings)
        j.value(w);
    j.endArray().endObject();
}

} // namespace

std::string statsJson(const StatsReport& report, const StatsReportOptions& o)
{
    std::string out;
    JsonWriter j(out);
    j.beginObject(JsonWriter::Layout::Lines)
        .field("trace", report.tracePath)
        .field("rules", report.rulesSource)
        .key("window")
        .beginObject()
        .field("start_ns", o.window.start)
        .field("end_ns", o.window.end)
        .field("kind", o.windowGiven ? "given" : "recorded_activity")
        .endObject();
    // What the importer found inconsistent or incomplete (counted, clipped or dropped; see `info`).
    j.key("trace_warnings").beginArray();
    for (const std::string& w : report.traceWarnings)
        j.value(w);
    j.endArray().key("clock_alignment");
    writeClock(j, report);
    j.key("ranks").beginArray(JsonWriter::Layout::Lines);
    for (const RankReport& r : report.ranks)
        writeRank(j, r);
    j.endArray().key("total").beginObject(JsonWriter::Layout::Lines);
    writeStatsFields(j, totalOf(report));
    j.endObject().key("collective_summary");
    writeCollectiveSummary(j, report);
    j.key("rank_summary");
    writeRankSummary(j, report, summarizeRanks(report));
    j.key("kernels").beginArray(JsonWriter::Layout::Lines);
    for (const KernelReportRow& k : report.kernels)
        j.beginObject()
            .field("name", k.displayName)
            .field("category", categoryName(k.category))
            .field("subgroup", k.subgroup)
            .field("phase", phaseName(k.phase))
            .field("count", k.count)
            .field("total_ns", k.totalNs)
            .fixedField("mean_ns", k.meanNs, 1)
            .field("min_ns", k.minNs)
            .field("max_ns", k.maxNs)
            .fixedField("gpu_share", k.gpuShare, 6)
            .endObject();
    j.endArray().endObject();
    out += '\n';
    return out;
}

std::string statsCsv(const StatsReport& report, const StatsReportOptions& o)
{
    const auto csvField = [](const std::string& s) { return csvQuoted(s); };
    std::string out = "scope,rank,step,name,start_ns,end_ns";
    for (const auto& n : statsFieldNames())
        out += "," + n;
    out += "\n";
    auto row = [&](const std::string& scope, const std::string& rank, const std::string& step, const std::string& name,
                   TimeRange range, const WindowStats& s) {
        out += scope + "," + rank + "," + step + "," + csvField(name) + "," + std::to_string(range.start) + ","
            + std::to_string(range.end);
        for (const auto& v : fieldValues(s))
            out += "," + (v == "null" ? std::string() : v);
        out += "\n";
    };
    for (const RankReport& rank : report.ranks) {
        row("rank", std::to_string(rank.rank), "", rank.label, o.window, rank.stats);
        if (o.perStep) {
            for (const StepReport& w : rank.steps)
                row("step", std::to_string(rank.rank), std::to_string(w.index), w.name, w.range, w.stats);
        }
    }
    row("total", "", "", "all ranks", o.window, totalOf(report));
    return out;
}

namespace {

// The parts of statsTable, in the order they are printed.
std::string tableHeader(const StatsReport& report, const StatsReportOptions& o, bool summarise)
{
    std::string out;
    out += "Trace:  " + report.tracePath + "\n";
    out += "Window: "
        + (o.windowGiven ? dur(o.window.start) + " to " + dur(o.window.end) + " (" + dur(o.window.duration()) + ")"
                         : "whole trace, the recorded activity " + dur(o.window.start) + " to " + dur(o.window.end)
                    + " (" + dur(o.window.duration()) + ")")
        + "\n";
    out += "Rules:  " + report.rulesSource + "\n";
    for (const auto& w : summarise ? foldRepeatedWarnings(report.traceWarnings) : report.traceWarnings)
        out += "warning: " + w + "\n";
    out += "\n";
    return out;
}

std::string statsSection(const StatsReport& report)
{
    std::string out;
    std::vector<std::vector<std::string>> rows;
    rows.push_back({ "rank", "host", "span", "mean step", "compute", "comm busy", "comm kernel sum", "hidden",
        "exposed", "overlap", "bwd hidden", "memcpy", "idle", "unclassified" });
    auto statsRow
        = [&](const std::string& label, const std::string& host, const WindowStats& s, const std::string& step) {
              rows.push_back({ label, host, dur(s.spanNs), step, dur(s.computeBusyNs), dur(s.commBusyNs),
                  dur(s.commKernelSumNs), dur(s.overlappedNs), dur(s.exposedNs), percent(s.overlapRatio),
                  dur(s.backwardOverlappedNs), dur(s.memcpyBusyNs), dur(s.idleNs), dur(s.unclassifiedNs) });
          };
    std::vector<std::pair<std::string, std::string>> meanNotes; // rank label, the steps its mean covers
    for (const RankReport& rank : report.ranks) {
        const std::vector<StepWindow> inWindow = windowSteps(rank);
        const StepMean mean = stepMean(inWindow);
        std::string meanStep = "-";
        if (!mean.used.empty()) {
            meanStep = dur(mean.meanNs) + " ×" + std::to_string(mean.used.size());
            meanNotes.emplace_back(rank.label, mean.describe(inWindow));
        }
        statsRow(rank.label.empty() ? std::to_string(rank.rank) : rank.label, rank.host, rank.stats, meanStep);
    }
    if (report.ranks.size() > 1)
        statsRow("total", "", totalOf(report), "");
    out += renderTable(rows, 2);
    out += "\nhidden = communication overlapped by compute; exposed = communication with no compute running;\n"
           "overlap = hidden / comm busy. See 'exposure-cli stats --help' for the exact definitions.\n";
    out += stepMeanNotes(meanNotes);
    return out;
}

// Communication kernels matched across ranks (only for several ranks with at least one matched collective).
std::string collectivesSection(const StatsReport& report)
{
    std::string out;
    std::vector<std::vector<std::string>> crows;
    crows.push_back({ "rank", "matched", "unmatched", "waiting", "transfer", "exposed waiting", "made others wait" });
    for (const RankReport& rank : report.ranks) {
        const RankCollectiveStats& c = rank.collectives;
        crows.push_back({ rank.label, std::to_string(c.matched), std::to_string(c.unmatched), dur(c.waitNs),
            dur(c.transferNs), dur(c.exposedWaitNs),
            c.causedWaits ? dur(c.causedWaitNs) + " in " + std::to_string(c.causedWaits) + " collectives"
                          : std::string("-") });
    }
    out += "\nCommunication kernels matched across ranks (whole trace): NCCL time before the last rank joined\n"
           "each collective is waiting for peers, the rest is transfer.\n";
    out += renderTable(crows, 2);
    return out;
}

// The clock line and the collective summary per process group (several ranks).
std::string crossRankSection(const StatsReport& report)
{
    std::string out;
    if (!report.clockLine.empty())
        out += "\n" + report.clockLine + "\n";
    if (!report.processGroups.empty())
        out += collectiveSummaryText(report);
    return out;
}

std::string idleSection(const StatsReport& report)
{
    std::string out;
    std::vector<std::vector<std::string>> irows;
    irows.push_back({ "rank", "idle", "host-bound", "(data loading)", "sync wait", "queued", "unattributed", "gaps" });
    std::string findings;
    for (const RankReport& rank : report.ranks) {
        const IdleBreakdown& b = rank.idle;
        const TimeNs idle = b.totalNs();
        auto part = [&](TimeNs v) {
            return dur(v)
                + (idle > 0 ? " (" + formatFixed(100.0 * double(v) / double(idle), 1) + " %)" : std::string());
        };
        irows.push_back({ rank.label, dur(idle), part(b.hostBoundNs), part(b.dataLoadingNs), part(b.syncWaitNs),
            part(b.queuedNs), part(b.unattributedNs), std::to_string(b.gaps) });
        const LaunchDiagnosis& ld = rank.launches;
        findings += rank.label + ": " + idleFinding(rank.stats, b, ld, &rank.peers) + "\n";
        if (ld.kernels > 0)
            findings += "  kernels with a known launch: " + std::to_string(ld.kernels) + ", median "
                + dur(ld.medianKernelNs) + " (p90 " + dur(ld.p90KernelNs) + ") against launch calls of median "
                + dur(ld.medianLaunchNs) + " (p90 " + dur(ld.p90LaunchNs) + "); " + formatFixed(ld.launchesPerSecond, 0)
                + " launches/s\n";
        if (ld.multiKernelCalls > 0)
            findings += "  calls that launched several kernels: " + std::to_string(ld.multiKernelCalls) + " of "
                + std::to_string(ld.calls) + " (" + std::to_string(ld.multiKernelKernels) + " kernels, up to "
                + std::to_string(ld.maxKernelsPerCall) + " per call); CUDA graph launches "
                + std::to_string(ld.graphLaunches) + " replaying " + std::to_string(ld.graphKernels) + " kernels\n";
    }
    out += "\nWhy the GPUs were idle: for each gap, until the call that launched the next work ended the CPU was\n"
           "host-bound (or waiting in a synchronising call), after it the work was queued; unattributed gaps\n"
           "end in work without a known launch.\n";
    out += renderTable(irows, 1);
    out += "\n" + findings;
    return out;
}

// Per rank: where its phases, launches and steps came from, its warnings and (--per-step) its step table.
std::string rankSections(const StatsReport& report, const StatsReportOptions& o)
{
    std::string out;
    for (const RankReport& rank : report.ranks) {
        out += "\n" + rank.label + ": phases by " + phaseSourceName(rank.phaseSource) + " (launch "
            + std::to_string(rank.phaseFromLaunch) + ", kernel name " + std::to_string(rank.phaseFromName)
            + ", step heuristic " + std::to_string(rank.phaseFromHeuristic) + ", unknown "
            + std::to_string(rank.phaseUnknown) + " kernels; launches paired by "
            + launchPairingName(rank.launchPairing) + ", " + std::to_string(rank.kernelsPaired) + " of "
            + std::to_string(rank.kernelsPaired + rank.kernelsUnpaired) + " kernels" + callsByKernels(rank)
            + "); steps from " + stepSourceName(rank.stepSource) + " (" + std::to_string(rank.stepCount)
            + ", kernels assigned by " + stepAssignment(rank) + stepWindowsText(rank.stepAxis) + ")\n";
        for (const auto& w : rank.warnings)
            out += "  warning: " + w + "\n";
        if (o.perStep && rank.stepCount > 0) {
            std::vector<std::vector<std::string>> srows;
            srows.push_back({ "step", "name", "window", "host step", "span", "compute", "comm busy", "hidden",
                "exposed", "overlap", "bwd hidden", "waiting", "transfer", "idle", "kernels" });
            for (const StepReport& w : rank.steps) {
                const WindowStats& s = w.stats;
                srows.push_back({ std::to_string(w.index), w.name, dur(w.range.duration()), dur(w.hostRange.duration()),
                    dur(s.spanNs), dur(s.computeBusyNs), dur(s.commBusyNs), dur(s.overlappedNs), dur(s.exposedNs),
                    percent(s.overlapRatio), dur(s.backwardOverlappedNs), dur(w.waitNs), dur(w.transferNs),
                    dur(s.idleNs), std::to_string(s.kernelCount) });
            }
            out += renderTable(srows, 2);
        }
    }

    return out;
}

std::string kernelsSection(const StatsReport& report, const StatsReportOptions& o)
{
    std::string out;
    const auto& kernels = report.kernels;
    if (!kernels.empty()) {
        out += "\nTop kernels by total time (all ranks):\n";
        std::vector<std::vector<std::string>> krows;
        krows.push_back({ "share", "total", "count", "mean", "min", "max", "category", "phase", "name" });
        for (std::size_t i = 0; i < kernels.size() && int(i) < o.topKernels; ++i) {
            const KernelReportRow& k = kernels[i];
            std::string name = k.displayName;
            if (name.size() > 90)
                name = name.substr(0, 87) + "...";
            krows.push_back({ formatFixed(k.gpuShare * 100.0, 1) + " %", dur(k.totalNs), std::to_string(k.count),
                dur(TimeNs(k.meanNs + 0.5)), dur(k.minNs), dur(k.maxNs),
                std::string(categoryName(k.category)) + (k.subgroup.empty() ? "" : "/" + k.subgroup),
                phaseName(k.phase), name });
        }
        out += renderTable(krows, 0, true);
        if (kernels.size() > std::size_t(o.topKernels))
            out += "(" + std::to_string(kernels.size() - std::size_t(o.topKernels))
                + " more; --json lists every kernel)\n";
    }
    return out;
}

// "Rank 0–3, 5, 9–11" (labels of consecutive rank numbers folded), at most 12 pieces.
std::string rankList(const StatsReport& report, const std::vector<std::size_t>& indexes)
{
    std::string out;
    std::size_t pieces = 0;
    for (std::size_t k = 0; k < indexes.size();) {
        std::size_t e = k;
        while (e + 1 < indexes.size() && report.ranks[indexes[e + 1]].rank == report.ranks[indexes[e]].rank + 1)
            ++e;
        if (++pieces > 12) {
            out += ", …";
            break;
        }
        out += (out.empty() ? "" : ", ") + report.ranks[indexes[k]].label
            + (e > k ? "–" + std::to_string(report.ranks[indexes[e]].rank) : std::string());
        k = e + 1;
    }
    return out;
}

// Lines that differ only in the rank's label and numbers, once each with the ranks they stand for.
std::string foldedByRank(const StatsReport& report, const std::vector<std::pair<std::size_t, std::string>>& lines)
{
    std::vector<std::string> order;
    std::map<std::string, std::vector<std::size_t>> ranksOf;
    std::map<std::string, std::string> firstOf;
    for (const auto& [r, line] : lines) {
        std::string shape;
        for (const char c : line)
            if (!(c >= '0' && c <= '9') || shape.empty() || shape.back() != '#')
                shape += c >= '0' && c <= '9' ? '#' : c;
        auto [it, fresh] = ranksOf.try_emplace(shape);
        if (fresh) {
            order.push_back(shape);
            firstOf[shape] = line;
        }
        if (it->second.empty() || it->second.back() != r)
            it->second.push_back(r);
    }
    std::string out;
    for (const std::string& shape : order) {
        const auto& rs = ranksOf[shape];
        out += rs.size() == 1 ? report.ranks[rs[0]].label + ": " + firstOf[shape] + "\n"
                              : std::to_string(rs.size()) + " ranks (" + rankList(report, rs) + "), e.g. "
                + report.ranks[rs[0]].label + ": " + firstOf[shape] + "\n";
    }
    return out;
}

// The idle findings of many ranks: each finding once, with the ranks it holds for.
std::string idleFindingsSummary(const StatsReport& report)
{
    std::vector<std::pair<std::size_t, std::string>> lines;
    for (std::size_t r = 0; r < report.ranks.size(); ++r) {
        const RankReport& rank = report.ranks[r];
        lines.emplace_back(r, idleFinding(rank.stats, rank.idle, rank.launches, &rank.peers));
    }
    return "\nWhy the GPUs were idle (per rank in --all-ranks and --json):\n" + foldedByRank(report, lines);
}

// The per-rank lines on phases, launches, steps and warnings, folded across ranks that read alike.
std::string rankSectionsSummary(const StatsReport& report)
{
    std::vector<std::pair<std::size_t, std::string>> lines;
    for (std::size_t r = 0; r < report.ranks.size(); ++r) {
        const RankReport& rank = report.ranks[r];
        lines.emplace_back(r,
            "phases by " + std::string(phaseSourceName(rank.phaseSource)) + ", launches paired by "
                + launchPairingName(rank.launchPairing) + " (" + std::to_string(rank.kernelsPaired) + " of "
                + std::to_string(rank.kernelsPaired + rank.kernelsUnpaired) + " kernels), steps from "
                + stepSourceName(rank.stepSource) + " (" + std::to_string(rank.stepCount) + ")");
        for (const std::string& w : rank.warnings)
            lines.emplace_back(r, "warning: " + w);
    }
    return "\n" + foldedByRank(report, lines);
}

} // namespace

std::string statsTable(const StatsReport& report, const StatsReportOptions& o)
{
    using Detail = StatsReportOptions::RankDetail;
    const bool summarise = o.rankDetail == Detail::Summary
        || (o.rankDetail == Detail::Auto && report.ranks.size() > kSummaryRankThreshold);
    std::string out = tableHeader(report, o, summarise);
    if (summarise) {
        out += rankSummaryText(report, summarizeRanks(report));
        out += commByOpSection(report, true);
        out += commByRoleSection(report, true);
        out += pipelineSection(report);
        if (report.ranks.size() > 1)
            out += crossRankSection(report);
        out += idleFindingsSummary(report);
        out += rankSectionsSummary(report);
        out += kernelsSection(report, o);
        return out;
    }
    out += statsSection(report);
    if (report.ranks.size() > 1 && report.anyCollectiveGroup)
        out += collectivesSection(report);
    out += commByOpSection(report, false);
    out += commByRoleSection(report, false);
    out += pipelineSection(report);
    if (report.ranks.size() > 1)
        out += crossRankSection(report);
    out += idleSection(report);
    out += rankSections(report, o);
    out += kernelsSection(report, o);
    return out;
}

} // namespace exposure
