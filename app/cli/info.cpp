// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-cli info [--json] TRACE: what a trace folder holds (ranks, lanes, counts, span, clock, warnings).
#include "commands.h"
#include "import/loadoptions.h"
#include "model/timeformat.h"
#include "model/trace.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstdio>
#include <set>

namespace exposure::cli {

namespace {

struct LaneCounts
{
    std::size_t kernels = 0;
    std::size_t memcpys = 0;
};

LaneCounts countLane(const Trace& t, const Lane& lane)
{
    LaneCounts c;
    const auto& table = lane.intervals;
    for (std::size_t i = 0; i < table.size(); ++i) {
        const auto k = t.regionKind(table.name(i));
        if ((k == RegionKind::Kernel || k == RegionKind::CommOp || k == RegionKind::ComputeOp
                || k == RegionKind::DeviceOp)
            && lane.isGpu())
            ++c.kernels;
        else if (k == RegionKind::Memcpy)
            ++c.memcpys;
    }
    return c;
}

// Launch records aimed at a GPU lane: its stream references (Score-P), or by correlation id every kernel (with or
// without a call in the trace) and every copy or memset whose call is in the trace.
std::size_t launchCount(const Trace& t, const Lane& lane)
{
    std::size_t n = lane.launches.size();
    for (std::size_t i = 0; i < lane.launchByInterval.size(); ++i)
        n += lane.launchByInterval[i].cpuLane != kUnknownLaunch
                || t.regionKind(lane.intervals.name(i)) == RegionKind::Kernel
            ? 1
            : 0;
    return n;
}

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

QJsonArray toJson(const std::vector<int>& v)
{
    QJsonArray a;
    for (int x : v)
        a.append(x);
    return a;
}

QJsonObject infoJson(const Trace& t)
{
    QJsonObject root;
    root[QStringLiteral("path")] = qs(t.sourcePath);
    QJsonArray ranks;
    std::size_t kernels = 0, memcpys = 0;
    std::set<std::uint64_t> resolutions;
    for (const auto& r : t.ranks) {
        QJsonObject ro;
        ro[QStringLiteral("rank")] = r.rank;
        ro[QStringLiteral("label")] = qs(r.label);
        ro[QStringLiteral("host")] = qs(r.host);
        ro[QStringLiteral("devices")] = toJson(r.devices);
        ro[QStringLiteral("archive")] = qs(r.archivePath);
        ro[QStringLiteral("timerResolution")] = double(r.timerResolution);
        resolutions.insert(r.timerResolution);
        QJsonArray lanes;
        for (const auto& l : r.lanes) {
            const auto c = countLane(t, l);
            kernels += c.kernels;
            memcpys += c.memcpys;
            QJsonObject lo;
            lo[QStringLiteral("name")] = qs(l.name);
            lo[QStringLiteral("kind")] = l.isGpu() ? QStringLiteral("gpu-stream") : QStringLiteral("cpu-thread");
            if (l.isGpu()) {
                lo[QStringLiteral("device")] = l.device;
                lo[QStringLiteral("stream")] = l.stream;
                lo[QStringLiteral("nullStream")] = l.nullStream;
                lo[QStringLiteral("launches")] = double(launchCount(t, l));
            }
            lo[QStringLiteral("events")] = double(l.eventCount);
            lo[QStringLiteral("intervals")] = double(l.intervals.size());
            lo[QStringLiteral("kernels")] = double(c.kernels);
            lo[QStringLiteral("memcpys")] = double(c.memcpys);
            lanes.append(lo);
        }
        ro[QStringLiteral("lanes")] = lanes;
        ranks.append(ro);
    }
    root[QStringLiteral("ranks")] = ranks;
    root[QStringLiteral("events")] = double(t.eventCount);
    root[QStringLiteral("intervals")] = double(t.intervalCount());
    root[QStringLiteral("kernels")] = double(kernels);
    root[QStringLiteral("memcpys")] = double(memcpys);
    QJsonObject span;
    span[QStringLiteral("startNs")] = double(t.extent.start);
    span[QStringLiteral("endNs")] = double(t.extent.end);
    span[QStringLiteral("durationNs")] = double(t.extent.duration());
    span[QStringLiteral("originAbsNs")] = double(t.originAbsNs);
    root[QStringLiteral("span")] = span;
    QJsonArray res;
    for (auto r : resolutions)
        res.append(double(r));
    root[QStringLiteral("clockResolutions")] = res;
    QJsonArray warnings;
    for (const auto& w : t.warnings)
        warnings.append(qs(w));
    root[QStringLiteral("warnings")] = warnings;
    return root;
}

void printText(const Trace& t)
{
    std::size_t kernels = 0, memcpys = 0;
    std::printf("Trace:      %s\n", t.sourcePath.c_str());
    std::printf("Ranks:      %zu\n", t.ranks.size());
    for (const auto& r : t.ranks) {
        std::string devices;
        for (int d : r.devices)
            devices += (devices.empty() ? "" : ",") + std::to_string(d);
        std::printf("\n%s  host %s  device %s  clock %llu ticks/s\n  archive %s\n", r.label.c_str(),
            r.host.empty() ? "?" : r.host.c_str(), devices.empty() ? "-" : devices.c_str(),
            static_cast<unsigned long long>(r.timerResolution), r.archivePath.c_str());
        std::printf("  %-24s %-10s %12s %12s %10s %8s\n", "lane", "kind", "events", "intervals", "kernels", "memcpy");
        for (const auto& l : r.lanes) {
            const auto c = countLane(t, l);
            kernels += c.kernels;
            memcpys += c.memcpys;
            std::printf("  %-24s %-10s %12llu %12zu %10zu %8zu\n", l.name.c_str(),
                l.isGpu() ? "gpu-stream" : "cpu-thread", static_cast<unsigned long long>(l.eventCount),
                l.intervals.size(), c.kernels, c.memcpys);
        }
    }
    std::printf("\nEvents:     %llu\n", static_cast<unsigned long long>(t.eventCount));
    std::printf("Intervals:  %zu\n", t.intervalCount());
    std::printf("Kernels:    %zu\n", kernels);
    std::printf("Memcpys:    %zu\n", memcpys);
    std::printf("Time span:  %s (%lld ns)\n", formatDuration(t.extent.duration()).c_str(),
        static_cast<long long>(t.extent.duration()));
    std::printf("Warnings:   %zu\n", t.warnings.size());
    for (const auto& w : t.warnings)
        std::printf("  %s\n", w.c_str());
}

} // namespace

int runInfo(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    setUpCommand(parser, "info",
        QStringLiteral("Shows what a trace holds: ranks (host, device, archive), lanes with their kind and "
                       "event/interval counts,\n"
                       "kernel and memcpy counts, the time span, the clock resolution and any warnings from loading."));
    const QCommandLineOption json(QStringLiteral("json"), QStringLiteral("Print JSON instead of text."));
    parser.addOption(json);
    const LoadArgs loadArgs;
    loadArgs.addTo(parser);
    addTraceArgument(parser);
    if (!parser.parse(QCoreApplication::arguments()))
        return fail(parser.errorText().toStdString());
    if (printedHelpOrVersion(parser, "info"))
        return 0;
    const auto args = parser.positionalArguments();
    if (args.size() != 1)
        return fail("info: expected exactly one TRACE argument (see 'exposure-cli info --help')");
    const std::string path = args.front().toStdString();
    RunOptions runOptions;
    runOptions.analyse = false;
    if (const std::string problem = loadArgs.apply(parser, runOptions); !problem.empty())
        return fail(problem);
    const auto run = openRunOrFail(path, runOptions);
    if (!run)
        return 2;
    const std::shared_ptr<const Trace> trace = run->trace;
    if (parser.isSet(json)) {
        const QByteArray out = QJsonDocument(infoJson(*trace)).toJson(QJsonDocument::Indented);
        std::fwrite(out.constData(), 1, std::size_t(out.size()), stdout);
    } else {
        printText(*trace);
    }
    return 0;
}

} // namespace exposure::cli
