// SPDX-License-Identifier: GPL-3.0-or-later
// Loads the real Score-P archives in ../shared/traces (skipped when they are absent). The expected numbers were
// read off with OTF2's own otf2-print.
#include "model/trace.h"
#include "run/openrun.h"
#include "support/shareddata.h"

#include <QTest>
#include <filesystem>

using namespace exposure;

namespace {

std::string shared(const char* name)
{
    return std::string(EXPOSURE_SHARED_TRACES) + "/" + name;
}

std::size_t countKind(const Trace& t, const Lane& l, RegionKind k)
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < l.intervals.size(); ++i)
        n += t.regionKind(l.intervals.name(i)) == k;
    return n;
}

} // namespace

class TestRealTraces : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void mi300Simple();
    void h200Ddp();
};

void TestRealTraces::mi300Simple()
{
    const auto p = shared("scorep-mi300-simple");
    EXPOSURE_REQUIRE_SHARED(std::filesystem::exists(p), "../shared/traces");
    const auto t = loadTrace(p);
    QCOMPARE(t->ranks.size(), 1u);
    const Rank& r = t->ranks[0];
    QCOMPARE(r.rank, 0);
    QCOMPARE(r.host, std::string("faraday.ftpn.ornl.gov"));
    QCOMPARE(r.devices, (std::vector<int> { 0, 1 }));
    QCOMPARE(r.timerResolution, 3'699'958'577ull);
    QCOMPARE(r.lanes.size(), 3u); // 30 METRIC locations are not lanes
    QCOMPARE(r.lanes[0].name, std::string("Master thread"));
    QCOMPARE(r.lanes[0].eventCount, 80u);
    QCOMPARE(r.lanes[0].intervals.size(), 38u);
    QCOMPARE(t->name(r.lanes[0].intervals.name(0)), std::string("main"));
    QCOMPARE(t->regionKind(r.lanes[0].intervals.name(0)), RegionKind::HostRegion);
    QCOMPARE(t->regionKind(t->strings.find("hipLaunchKernel")), RegionKind::HostApi);
    QCOMPARE(t->regionKind(t->strings.find("hipMalloc")), RegionKind::HostApi);

    const char* names[] = { "HIP[0:0]", "HIP[1:0]" };
    const char* kernels[] = { "heavy_kernel(float*, float const*)", "light_kernel(float*, float const*)" };
    const char* mangled[] = { "_Z12heavy_kernelPfPKf", "_Z12light_kernelPfPKf" };
    // Durations: floor(ticks * 1e9 / 3699958577) of the Leave minus that of the Enter.
    const TimeNs durations[] = { 4'735'383'814, 1'628'332'847 };
    for (int d = 0; d < 2; ++d) {
        const Lane& l = r.lanes[std::size_t(1 + d)];
        QCOMPARE(l.name, std::string(names[d]));
        QCOMPARE(l.kind, LaneKind::GpuStream);
        QCOMPARE(l.device, d);
        QCOMPARE(l.stream, 0);
        QVERIFY(l.nullStream);
        QCOMPARE(l.eventCount, 3u);
        QCOMPARE(l.intervals.size(), 1u);
        QCOMPARE(t->name(l.intervals.name(0)), std::string(kernels[d]));
        QCOMPARE(t->regionKind(l.intervals.name(0)), RegionKind::Kernel); // role 40, paradigm "HIP"
        QCOMPARE(t->name(t->canonicalNames[l.intervals.name(0)]), std::string(mangled[d]));
        QCOMPARE(l.intervals.duration(0), durations[d]);
    }
    QCOMPARE(r.lanes[1].intervals.start(0), TimeNs(408'481'552));
    QCOMPARE(t->originAbsNs, TimeNs(1'656'068'501'761'746));
    QCOMPARE(t->extent.end, TimeNs(7'190'145'226));
    QCOMPARE(t->eventCount, 86u);
    QCOMPARE(t->warnings.size(), 0u);
}

void TestRealTraces::h200Ddp()
{
    const auto p = shared("scorep-h200-ddp-1gpu");
    EXPOSURE_REQUIRE_SHARED(std::filesystem::exists(p), "../shared/traces");
    const auto t = loadTrace(p + "/traces.otf2");
    QCOMPARE(t->ranks.size(), 1u);
    const Rank& r = t->ranks[0];
    QCOMPARE(r.host, std::string("vm"));
    QCOMPARE(r.devices, std::vector<int> { 0 });
    QCOMPARE(r.timerResolution, 1'000'000'000ull);
    const char* lanes[]
        = { "Master thread", "Orphan thread 1", "Orphan thread 2", "Orphan thread 3", "Orphan thread 4", "CUDA[0:7]" };
    const std::uint64_t events[] = { 400'820, 4, 4, 4'776, 606'600, 320'546 };
    const std::size_t intervals[] = { 196'593, 1, 1, 2'387, 296'429, 53'425 };
    QCOMPARE(r.lanes.size(), 6u);
    for (std::size_t i = 0; i < 6; ++i) {
        QCOMPARE(r.lanes[i].name, std::string(lanes[i]));
        QCOMPARE(r.lanes[i].eventCount, events[i]);
        QCOMPARE(r.lanes[i].intervals.size(), intervals[i]);
    }
    const Lane& gpu = r.lanes[5];
    QCOMPARE(gpu.kind, LaneKind::GpuStream);
    QVERIFY(gpu.nullStream);
    QCOMPARE(gpu.device, 0);
    QCOMPARE(gpu.stream, 7);
    QCOMPARE(countKind(*t, gpu, RegionKind::Kernel), 26'712u);
    QCOMPARE(countKind(*t, gpu, RegionKind::Idle), 26'713u);
    // 7631 + 13740 cuLaunchKernel Enter events carry CUDA_STREAM_REF = CUDA[0:7] (Master thread, Orphan thread 4).
    QCOMPARE(gpu.launches.size(), 21'371u);
    std::size_t fromMaster = 0;
    for (const auto& l : gpu.launches) {
        QCOMPARE(t->name(r.lanes[l.cpuLane].intervals.name(l.interval)), std::string("cuLaunchKernel"));
        fromMaster += l.cpuLane == 0;
    }
    QCOMPARE(fromMaster, 7'631u);
    for (std::size_t k = 1; k < gpu.launches.size(); ++k) {
        const auto& a = gpu.launches[k - 1];
        const auto& b = gpu.launches[k];
        QVERIFY(r.lanes[a.cpuLane].intervals.start(a.interval) <= r.lanes[b.cpuLane].intervals.start(b.interval));
    }
    QCOMPARE(gpu.launchParamIds.size(), gpu.intervals.size());
    QVERIFY(!t->launchParams.empty());
    QCOMPARE(t->eventCount, 1'332'750u);
    QCOMPARE(t->warnings.size(), 0u);
}

EXPOSURE_DATA_APPLESS_MAIN(TestRealTraces)
#include "tst_realtraces.moc"
