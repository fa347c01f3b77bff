// SPDX-License-Identifier: GPL-3.0-or-later
// Cross-rank truth: collectives matched by process group and order, clocks aligned across hosts. The traces are
// generated with known clock offsets: torch.profiler JSON through its timestamps, Score-P through the ticks and
// clock properties the archive writer emits.
#include "analysis/analysis.h"
#include "analysis/clockalign.h"
#include "analysis/collectives.h"
#include "import/archivefinder.h"
#include "run/openrun.h"
#include "synth/archivewriter.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using namespace exposure;

namespace {

const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
const char* kSendRecv = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
constexpr TimeNs kJitter = 2000; // ends of one collective differ by at most this on one clock

// A deterministic pseudo-random number in [0, n).
std::int64_t noise(std::uint64_t seed, std::int64_t n)
{
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    seed ^= seed >> 29;
    seed *= 0xbf58476d1ce4e5b9ull;
    seed ^= seed >> 32;
    return std::int64_t(seed % std::uint64_t(n));
}

// One collective instance on one rank, on the true (common) clock.
struct Instance
{
    TimeNs start = 0, end = 0;
    std::string group = "0", groupRanks = "[0, 1]", collective = "allreduce";
    std::uint64_t elements = 1'000'000;
};

// Collective k of a group: member m arrives at T + noise, all end at T + 250 us + jitter.
std::vector<std::vector<Instance>> makeCollectives(int members, int count, std::uint64_t seed, TimeNs period = 500'000)
{
    std::vector<std::vector<Instance>> out(static_cast<std::size_t>(members));
    for (int k = 0; k < count; ++k) {
        const TimeNs t = 1'000'000 + TimeNs(k) * period;
        for (int m = 0; m < members; ++m) {
            Instance in;
            in.start = t + noise(seed + std::uint64_t(k * 31 + m), 200'000);
            in.end = t + 250'000 + noise(seed + 7 + std::uint64_t(k * 17 + m), kJitter);
            in.elements = 1'000'000 + std::uint64_t(k % 3) * 1024;
            out[std::size_t(m)].push_back(in);
        }
    }
    return out;
}

// Waiting of each member on the true clock (for the expected values).
std::vector<TimeNs> trueWaits(const std::vector<std::vector<Instance>>& c)
{
    std::vector<TimeNs> w(c.size(), 0);
    for (std::size_t k = 0; k < c[0].size(); ++k) {
        TimeNs last = 0;
        for (const auto& m : c)
            last = std::max(last, m[k].start);
        for (std::size_t m = 0; m < c.size(); ++m)
            w[m] += std::min(last, c[m][k].end) - c[m][k].start;
    }
    return w;
}

// Collective k of a pair on the true clock, where the members' ends differ by a constant `skew` (rank 1 ends later:
// its place in the ring): the last arrival starts the transfer of T on rank 0 and T + skew on rank 1. `lastOf(k)`
// says which rank arrives last, 300 us after the other.
template <typename LastOf> std::vector<std::vector<Instance>> skewedPair(int count, TimeNs skew, LastOf lastOf)
{
    std::vector<std::vector<Instance>> out(2);
    for (int k = 0; k < count; ++k) {
        const TimeNs t = 1'000'000 + TimeNs(k) * 1'000'000;
        const int last = lastOf(k);
        const TimeNs lastStart = t + 300'000 + noise(std::uint64_t(k) * 5 + 1, 50'000);
        for (int m = 0; m < 2; ++m) {
            Instance in;
            in.start = m == last ? lastStart : t + noise(std::uint64_t(k) * 5 + 2 + std::uint64_t(m), 20'000);
            in.end = lastStart + 250'000 + (m == 1 ? skew : 0);
            out[std::size_t(m)].push_back(in);
        }
    }
    return out;
}

std::string micros(TimeNs ns) // Kineto's microseconds with 3 decimals, exact
{
    std::string frac = std::to_string(ns % 1000);
    return std::to_string(ns / 1000) + "." + std::string(3 - frac.size(), '0') + frac;
}

// A torch.profiler file of one rank whose clock reads `offset` later. With `argsOnKernel` false, the NCCL kernels
// carry only their correlation id and the collective's arguments sit on the record_param_comms op around the
// launch (older PyTorch); the description then comes from distributedInfo.pg_config.
QByteArray kinetoRank(
    int rank, int world, TimeNs offset, const std::vector<Instance>& instances, bool argsOnKernel = true)
{
    std::string ev;
    std::uint64_t corr = 1000;
    for (const Instance& in : instances) {
        ++corr;
        std::string args = "\"Collective name\": \"" + in.collective + "\", \"In msg nelems\": "
            + std::to_string(in.elements) + ", \"Out msg nelems\": " + std::to_string(in.elements)
            + ", \"Group size\": 2, \"dtype\": \"Float\", \"Process Group Name\": \"" + in.group
            + "\", \"Process Group Ranks\": \"" + in.groupRanks + "\"";
        const TimeNs launch = in.start + offset - 20'000;
        if (!argsOnKernel) {
            ev += ",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 1, \"tid\": 1, "
                  "\"ts\": "
                + micros(launch - 5000) + ", \"dur\": 15.000, \"args\": {" + args + "}}";
        }
        ev += ",\n{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, "
              "\"ts\": "
            + micros(launch) + ", \"dur\": 3.000, \"args\": {\"correlation\": " + std::to_string(corr) + "}}";
        ev += ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + std::string(kAllReduce)
            + "\", \"pid\": 0, \"tid\": 17, \"ts\": " + micros(in.start + offset)
            + ", \"dur\": " + micros(in.end - in.start)
            + ", \"args\": {\"device\": 0, \"stream\": 17, \"correlation\": " + std::to_string(corr)
            + (argsOnKernel ? ", " + args + ", \"Process Group Description\": \"default_pg\"" : "") + "}}";
    }
    const std::string info = "\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + std::to_string(rank)
        + ", \"world_size\": " + std::to_string(world) + ", \"pg_config\": [{\"pg_name\": \"" + instances.front().group
        + "\", \"pg_desc\": \"default_pg\", \"pg_size\": 2, \"ranks\": " + instances.front().groupRanks + "}]}";
    return QByteArray::fromStdString("{\"schemaVersion\": 1, " + info
        + ", \"traceEvents\": [\n"
          "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 1, \"args\": "
          "{\"name\": \"main\"}}"
        + ev + "\n]}");
}

void writeFile(const QString& path, const QByteArray& text)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
}

struct Loaded
{
    std::shared_ptr<Trace> trace;
    AlignedRun run;
};

Loaded loadAligned(const QString& path, ClockMode mode)
{
    Loaded l;
    l.trace = loadTrace(path.toStdString());
    l.run = alignClocks(*l.trace, analyze(*l.trace, Rules::defaults()), mode);
    return l;
}

} // namespace

class TestClockAlign : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // Two ranks whose clocks differ by microseconds to hours: the offset is estimated within the end jitter,
    // applied, and every collective matches with the waiting of the common clock.
    void kinetoOffsets_data()
    {
        QTest::addColumn<qint64>("offset");
        QTest::addColumn<bool>("argsOnKernel");
        QTest::newRow("50 us") << qint64(50'000) << true;
        QTest::newRow("5 ms") << qint64(5'000'000) << true;
        QTest::newRow("1.23 s, record_param_comms") << qint64(1'230'000'000) << false;
        QTest::newRow("2 h") << qint64(7'200'000'000'000) << true;
        QTest::newRow("-37 ms") << qint64(-37'000'000) << true;
    }
    void kinetoOffsets()
    {
        QFETCH(qint64, offset);
        QFETCH(bool, argsOnKernel);
        QTemporaryDir dir;
        const auto c = makeCollectives(2, 40, 11);
        // A negative offset: rank 0's clock is the later one.
        const TimeNs off0 = offset < 0 ? -offset : 0, off1 = offset < 0 ? 0 : offset;
        // Two hosts, named as tensorboard_trace_handler names its files (HOST_PID.TIMESTAMP.pt.trace.json).
        writeFile(dir.filePath(QStringLiteral("hostA_311.1764680000000.pt.trace.json")),
            kinetoRank(0, 2, off0, c[0], argsOnKernel));
        writeFile(dir.filePath(QStringLiteral("hostB_312.1764680000001.pt.trace.json")),
            kinetoRank(1, 2, off1, c[1], argsOnKernel));
        const Loaded l = loadAligned(dir.path(), ClockMode::Aligned);
        const ClockAlignment& clocks = l.trace->clocks;
        QCOMPARE(l.trace->ranks[0].host, std::string("hostA"));
        QCOMPARE(l.trace->ranks[1].host, std::string("hostB"));
        QVERIFY(clocks.hostsKnown);
        QCOMPARE(clocks.thresholdNs, kSignificantOffsetNs);
        QCOMPARE(clocks.method, ClockMethod::CollectiveEnds);
        QVERIFY(clocks.applied);
        QCOMPARE(clocks.ranks.size(), std::size_t(2));
        QCOMPARE(clocks.ranks[0].offsetNs, TimeNs(0));
        QVERIFY2(std::abs(clocks.ranks[1].offsetNs - offset) <= kJitter,
            qPrintable(QString::number(clocks.ranks[1].offsetNs)));
        QCOMPARE(clocks.ranks[1].collectivesUsed, std::uint64_t(40));
        QVERIFY(clocks.ranks[1].uncertaintyNs < kJitter);
        // Here every member is released at one instant whatever its arrival (its "transfer time" varies with the
        // arrivals): transfer starts scatter, and the end times are the anchor.
        QVERIFY(!clocks.ranks[1].skewSeparated);

        const CollectiveMatch& m = *l.run.collectives;
        QCOMPARE(m.groups.size(), std::size_t(40));
        QCOMPARE(m.processGroups.size(), std::size_t(1));
        QCOMPARE(m.processGroups[0].method, MatchMethod::ProcessGroup);
        QCOMPARE(m.processGroups[0].name, std::string("0 (default_pg)"));
        QCOMPARE(m.processGroups[0].ranks, std::string("[0, 1]"));
        const auto truth = trueWaits(c);
        for (int r = 0; r < 2; ++r) {
            QCOMPARE(m.ranks[std::size_t(r)].matched, std::uint64_t(40));
            QVERIFY2(std::abs(m.ranks[std::size_t(r)].waitNs - truth[std::size_t(r)]) <= 40 * kJitter,
                qPrintable(QString::number(m.ranks[std::size_t(r)].waitNs - truth[std::size_t(r)])));
        }
        QVERIFY(std::none_of(l.trace->warnings.begin(), l.trace->warnings.end(),
            [](const std::string& w) { return w.rfind("collectives:", 0) == 0; }));
        // Recorded: the same estimate, nothing applied; identity still matches every collective.
        const Loaded rec = loadAligned(dir.path(), ClockMode::Recorded);
        QCOMPARE(rec.trace->clocks.method, ClockMethod::Recorded);
        QVERIFY(!rec.trace->clocks.applied);
        QCOMPARE(rec.trace->clocks.ranks[1].offsetNs, TimeNs(0));
        QCOMPARE(rec.trace->clocks.ranks[1].estimateNs, clocks.ranks[1].offsetNs);
        QCOMPARE(rec.run.collectives->groups.size(), std::size_t(40));
        // Per-rank statistics do not depend on the other ranks' clocks.
        for (std::size_t r = 0; r < 2; ++r) {
            const auto a = computeStats(*l.trace, *l.run.analysis, int(r), l.trace->extent);
            const auto b = computeStats(*rec.trace, *rec.run.analysis, int(r), rec.trace->extent);
            QCOMPARE(a.commKernelSumNs, b.commKernelSumNs);
            QCOMPARE(a.commBusyNs, b.commBusyNs);
            QCOMPARE(a.exposedNs, b.exposedNs);
        }
    }

    // One clock, hosts not recorded, rank 1 ending 20 us after rank 0 in every collective and always arriving last:
    // the skew looks like an offset, but it is below the bound for unknown hosts, so nothing is shifted and the
    // default equals --clock recorded to the nanosecond.
    void constantSkewWithoutOffsetIsKept()
    {
        QTemporaryDir dir;
        const auto c = skewedPair(30, 20'000, [](int) { return 1; });
        writeFile(dir.filePath(QStringLiteral("run_rank0.json")), kinetoRank(0, 2, 0, c[0]));
        writeFile(dir.filePath(QStringLiteral("run_rank1.json")), kinetoRank(1, 2, 0, c[1]));
        const Loaded l = loadAligned(dir.path(), ClockMode::Aligned);
        const Loaded rec = loadAligned(dir.path(), ClockMode::Recorded);
        const ClockAlignment& clocks = l.trace->clocks;
        QVERIFY(!clocks.hostsKnown);
        QVERIFY(!clocks.applied);
        QCOMPARE(clocks.thresholdNs, kUnknownHostsOffsetNs);
        QCOMPARE(clocks.ranks[1].estimateNs, TimeNs(20'000));
        QVERIFY(!clocks.ranks[1].skewSeparated);
        QCOMPARE(clockSummaryLine(*l.trace),
            std::string("clocks as recorded: 2 ranks (hosts not recorded); estimated offsets up to 20 µs are below "
                        "100 µs, the end skew that the members of a collective show on one clock"));
        const auto truth = trueWaits(c);
        for (std::size_t r = 0; r < 2; ++r) {
            QCOMPARE(l.run.collectives->ranks[r].waitNs, rec.run.collectives->ranks[r].waitNs);
            QCOMPARE(l.run.collectives->ranks[r].transferNs, rec.run.collectives->ranks[r].transferNs);
            QCOMPARE(l.run.collectives->ranks[r].waitNs, truth[r]);
        }
    }

    // The same skew with a 5 ms offset, each rank arriving last in turn: each rank's own transfer time is learnt
    // where it arrived last, transfer starts give the offset without the skew, and waiting is exact.
    void skewSeparatedFromOffset()
    {
        QTemporaryDir dir;
        const auto c = skewedPair(30, 20'000, [](int k) { return k % 2; });
        writeFile(dir.filePath(QStringLiteral("run_rank0.json")), kinetoRank(0, 2, 0, c[0]));
        writeFile(dir.filePath(QStringLiteral("run_rank1.json")), kinetoRank(1, 2, 5'000'000, c[1]));
        const Loaded l = loadAligned(dir.path(), ClockMode::Aligned);
        const ClockAlignment& clocks = l.trace->clocks;
        QVERIFY(clocks.applied);
        QVERIFY(clocks.ranks[1].skewSeparated);
        QCOMPARE(clocks.ranks[1].offsetNs, TimeNs(5'000'000));
        QCOMPARE(clockSummaryLine(*l.trace),
            std::string("clocks aligned across 2 ranks (hosts not recorded) from collective transfer starts: "
                        "offsets up to 5 ms, ±0 ns"));
        const auto truth = trueWaits(c);
        for (std::size_t r = 0; r < 2; ++r)
            QCOMPARE(l.run.collectives->ranks[r].waitNs, truth[r]);
        // End times alone would have put the offset at 5.02 ms (the skew), as the median of the end differences.
        QCOMPARE(c[1][0].end - c[0][0].end, TimeNs(20'000));
    }

    // Rank 1 always arrives last: rank 0's own transfer time is never seen, so the skew cannot be told from the
    // offset. The offset is estimated from end times and the output says so.
    void inseparableSkewIsSaid()
    {
        QTemporaryDir dir;
        const auto c = skewedPair(30, 20'000, [](int) { return 1; });
        writeFile(dir.filePath(QStringLiteral("run_rank0.json")), kinetoRank(0, 2, 0, c[0]));
        writeFile(dir.filePath(QStringLiteral("run_rank1.json")), kinetoRank(1, 2, 5'000'000, c[1]));
        const Loaded l = loadAligned(dir.path(), ClockMode::Aligned);
        const ClockAlignment& clocks = l.trace->clocks;
        QVERIFY(clocks.applied);
        QVERIFY(!clocks.ranks[1].skewSeparated);
        QCOMPARE(clocks.ranks[1].offsetNs, TimeNs(5'020'000));
        const std::string line = clockSummaryLine(*l.trace);
        QVERIFY2(line.find("from collective end times: offsets up to 5.02 ms, ±0 ns; for Rank 1 the members' end "
                           "skew cannot be told from the offset")
                != std::string::npos,
            line.c_str());
        // Each of rank 0's 30 waits is short by the 20 us skew.
        const auto truth = trueWaits(c);
        QCOMPARE(l.run.collectives->ranks[0].waitNs, truth[0] - 30 * 20'000);
    }

    // Ranks whose file names name one host share its clock: never shifted, whatever the collectives suggest.
    void oneNamedHostIsNeverShifted()
    {
        QTemporaryDir dir;
        const auto c = skewedPair(30, 20'000, [](int k) { return k % 2; });
        writeFile(
            dir.filePath(QStringLiteral("gpu-node-7_4101.1764680000000.pt.trace.json")), kinetoRank(0, 2, 0, c[0]));
        writeFile(dir.filePath(QStringLiteral("gpu-node-7_4102.1764680000000.pt.trace.json")),
            kinetoRank(1, 2, 500'000, c[1]));
        const Loaded l = loadAligned(dir.path(), ClockMode::Aligned);
        QCOMPARE(l.trace->ranks[0].host, std::string("gpu-node-7"));
        QCOMPARE(l.trace->ranks[1].host, std::string("gpu-node-7"));
        QCOMPARE(l.trace->clocks.method, ClockMethod::SingleHost);
        QVERIFY(!l.trace->clocks.applied);
        QCOMPARE(l.trace->clocks.ranks[1].offsetNs, TimeNs(0));
    }

    void hostFromFileName_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("host");
        QTest::newRow("default handler") << "node12_3456.1764680000123.pt.trace.json"
                                         << "node12";
        QTest::newRow("gzip, underscores in host") << "a_b_c_77.123.pt.trace.json.gz"
                                                   << "a_b_c";
        QTest::newRow("path") << "/runs/x/host-1_2.3.pt.trace.json"
                              << "host-1";
        QTest::newRow("no pid") << "node12.1764680000123.pt.trace.json"
                                << "";
        QTest::newRow("not the handler's") << "ddp_bert_ws2_rank0.json.gz"
                                           << "";
        QTest::newRow("no timestamp") << "node_1.pt.trace.json"
                                      << "";
        QTest::newRow("empty host") << "_1.2.pt.trace.json"
                                    << "";
    }
    void hostFromFileName()
    {
        QFETCH(QString, name);
        QFETCH(QString, host);
        QCOMPARE(QString::fromStdString(hostFromTraceFileName(name.toStdString())), host);
    }

    // Two process groups run the same kernel at the same moments ([0, 1] and [2, 3]): identity keeps them apart,
    // where end-time clustering would pair rank 0 with rank 2.
    void concurrentGroupsStayApart()
    {
        QTemporaryDir dir;
        auto a = makeCollectives(2, 20, 3);
        auto b = makeCollectives(2, 20, 3);
        for (int m = 0; m < 2; ++m)
            for (std::size_t k = 0; k < b[std::size_t(m)].size(); ++k) {
                Instance& in = b[std::size_t(m)][k];
                in.group = "1";
                in.groupRanks = "[2, 3]";
                // The other group's arrivals differ: rank 2 is the late one there, by 700 us.
                in.start = a[std::size_t(m)][k].end - 250'000 - (m == 0 ? -700'000 + 250'000 : 0);
                in.start = std::min(in.start, in.end - 1000);
            }
        writeFile(dir.filePath(QStringLiteral("r_rank0.json")), kinetoRank(0, 4, 0, a[0]));
        writeFile(dir.filePath(QStringLiteral("r_rank1.json")), kinetoRank(1, 4, 0, a[1]));
        writeFile(dir.filePath(QStringLiteral("r_rank2.json")), kinetoRank(2, 4, 0, b[0]));
        writeFile(dir.filePath(QStringLiteral("r_rank3.json")), kinetoRank(3, 4, 0, b[1]));
        const Loaded l = loadAligned(dir.path(), ClockMode::Aligned);
        const CollectiveMatch& m = *l.run.collectives;
        QCOMPARE(m.groups.size(), std::size_t(40));
        QCOMPARE(m.processGroups.size(), std::size_t(2));
        for (const CollectiveGroup& g : m.groups) {
            QCOMPARE(g.members.size(), std::size_t(2));
            QCOMPARE(g.members[0].rank / 2, g.members[1].rank / 2);
        }
        const auto ta = trueWaits(a), tb = trueWaits(b);
        QCOMPARE(m.ranks[0].waitNs, ta[0]);
        QCOMPARE(m.ranks[1].waitNs, ta[1]);
        QCOMPARE(m.ranks[2].waitNs, tb[0]);
        QCOMPARE(m.ranks[3].waitNs, tb[1]);
        // No collective ties ranks 2 and 3 to rank 0's clock: said so.
        QVERIFY(std::any_of(l.trace->warnings.begin(), l.trace->warnings.end(), [](const std::string& w) {
            return w.rfind("clocks: no collective", 0) == 0
                && w.find("Rank 2, Rank 3 (aligned to Rank 2)") != std::string::npos;
        }));
    }

    // Rank 1 lacks the 11th of 30 identical collectives and its clock reads 5 ms later: the count mismatch is
    // reported where it happens and the order re-synchronises (every later pair is still the right one).
    void missingCollectiveResynchronises()
    {
        QTemporaryDir dir;
        auto c = makeCollectives(2, 30, 5);
        for (auto& in : c[0])
            in.elements = 4096; // one signature for all: only the end times can tell where the gap is
        for (auto& in : c[1])
            in.elements = 4096;
        std::vector<Instance> missing = c[1];
        missing.erase(missing.begin() + 10);
        writeFile(dir.filePath(QStringLiteral("m_rank0.json")), kinetoRank(0, 2, 0, c[0]));
        writeFile(dir.filePath(QStringLiteral("m_rank1.json")), kinetoRank(1, 2, 5'000'000, missing));
        const Loaded l = loadAligned(dir.path(), ClockMode::Aligned);
        QVERIFY(std::abs(l.trace->clocks.ranks[1].offsetNs - 5'000'000) <= kJitter);
        const CollectiveMatch& m = *l.run.collectives;
        QCOMPARE(m.groups.size(), std::size_t(29));
        QCOMPARE(m.ranks[0].matched, std::uint64_t(29));
        QCOMPARE(m.ranks[0].unmatched, std::uint64_t(1));
        QCOMPARE(m.ranks[1].unmatched, std::uint64_t(0));
        for (const CollectiveGroup& g : m.groups)
            QVERIFY(std::abs(g.members[0].end - g.members[1].end) <= 2 * kJitter);
        const auto& mm = m.processGroups[0].mismatches;
        QCOMPARE(mm.size(), std::size_t(1));
        QCOMPARE(mm[0].rank, 1);
        QCOMPARE(mm[0].rankCount, std::uint64_t(29));
        QCOMPARE(mm[0].referenceCount, std::uint64_t(30));
        QCOMPARE(mm[0].reference, 0);
    }

    // Score-P, 4 ranks on 2 hosts, all-to-all as SendRecv kernels on the NCCL stream; the second host's clock is
    // 3 hours later (through the ticks and the clock properties of its archives). Matched by stream; the host's
    // offset applies to both of its ranks.
    void scorepSendRecvAcrossHosts()
    {
        QTemporaryDir dir;
        synth::ArchiveSpec spec;
        const TimeNs offset = 3ll * 3600 * 1'000'000'000;
        for (int r = 0; r < 4; ++r) {
            synth::RankSpec& rs = spec.addRank(r, r < 2 ? "nodeA" : "nodeB");
            rs.clockOffsetNs = r < 2 ? 0 : offset;
            rs.addStream(r % 2, 0);
            synth::StreamSpec& s = rs.addStream(r % 2, 20);
            for (int k = 0; k < 24; ++k) {
                const TimeNs t = 1'000'000 + TimeNs(k) * 400'000;
                const TimeNs start = t + noise(std::uint64_t(k * 13 + r), 100'000) / 10 * 10;
                const TimeNs end = t + 200'000 + noise(std::uint64_t(k * 7 + r + 99), kJitter) / 10 * 10;
                s.kernels.push_back({ kSendRecv, start, end });
            }
        }
        synth::writeArchive(dir.path().toStdString(), spec);
        const Loaded l = loadAligned(dir.path(), ClockMode::Aligned);
        const ClockAlignment& clocks = l.trace->clocks;
        QCOMPARE(clocks.hosts, 2);
        QVERIFY(clocks.applied);
        QCOMPARE(clocks.ranks[1].offsetNs, TimeNs(0));
        QVERIFY2(std::abs(clocks.ranks[2].offsetNs - offset) <= kJitter,
            qPrintable(QString::number(clocks.ranks[2].offsetNs - offset)));
        QCOMPARE(clocks.ranks[3].offsetNs, clocks.ranks[2].offsetNs);
        const CollectiveMatch& m = *l.run.collectives;
        QCOMPARE(m.processGroups.size(), std::size_t(1));
        QCOMPARE(m.processGroups[0].method, MatchMethod::Stream);
        QCOMPARE(m.processGroups[0].name, std::string("stream 20"));
        QCOMPARE(m.groups.size(), std::size_t(24));
        for (const CollectiveGroup& g : m.groups)
            QCOMPARE(g.members.size(), std::size_t(4));
        const auto summary = collectiveSummary(*l.trace, m, l.run.analysis->rules);
        QCOMPARE(summary.size(), std::size_t(1));
        QCOMPARE(summary[0].type, std::string("sendrecv"));
        QCOMPARE(summary[0].count, std::uint64_t(24));
    }

    // One host: one clock, nothing shifted, and the collectives match as end-time clustering matched them.
    void singleHostUnchanged()
    {
        QTemporaryDir dir;
        synth::ArchiveSpec spec;
        for (int r = 0; r < 2; ++r) {
            synth::RankSpec& rs = spec.addRank(r, "node0");
            rs.addStream(r, 0);
            synth::StreamSpec& s = rs.addStream(r, 20);
            for (int k = 0; k < 10; ++k) {
                const TimeNs t = 1'000'000 + TimeNs(k) * 400'000;
                s.kernels.push_back({ kAllReduce, t + noise(std::uint64_t(k + 10 * r), 100'000) / 10 * 10,
                    t + 200'000 + TimeNs(r) * 30 });
            }
        }
        synth::writeArchive(dir.path().toStdString(), spec);
        const auto recorded = loadTrace(dir.path().toStdString());
        const Loaded l = loadAligned(dir.path(), ClockMode::Aligned);
        QCOMPARE(l.trace->clocks.method, ClockMethod::SingleHost);
        QVERIFY(!l.trace->clocks.applied);
        QCOMPARE(l.trace->originAbsNs, recorded->originAbsNs);
        for (std::size_t r = 0; r < 2; ++r)
            for (std::size_t ln = 0; ln < recorded->ranks[r].lanes.size(); ++ln)
                QCOMPARE(
                    l.trace->ranks[r].lanes[ln].intervals.starts(), recorded->ranks[r].lanes[ln].intervals.starts());
        // The same groups as clustering by end time (candidates without identity).
        std::vector<CollectiveCandidate> plain;
        for (std::size_t r = 0; r < 2; ++r) {
            const Lane& lane = l.trace->ranks[r].lanes.back();
            for (std::uint32_t i = 0; i < lane.intervals.size(); ++i)
                plain.push_back({ lane.intervals.start(i), lane.intervals.end(i), int(r),
                    int(l.trace->ranks[r].lanes.size() - 1), i, lane.intervals.name(i) });
        }
        const CollectiveMatch byTime = matchCandidates(plain, 2, false);
        const CollectiveMatch& m = *l.run.collectives;
        QCOMPARE(m.processGroups[0].method, MatchMethod::Stream);
        QCOMPARE(m.groups.size(), byTime.groups.size());
        for (std::size_t r = 0; r < 2; ++r) {
            QCOMPARE(m.ranks[r].waitNs, byTime.ranks[r].waitNs);
            QCOMPARE(m.ranks[r].transferNs, byTime.ranks[r].transferNs);
        }
    }

    // Communication kernels without any identity whose clocks are a second apart: nothing matches, and a warning
    // names the ranks and the reason.
    void unmatchedIsNeverSilent()
    {
        TraceBuilder b;
        for (int r = 0; r < 2; ++r) {
            b.addRank("Rank " + std::to_string(r), "", r);
            const int lane = b.addLane(r, "GPU", LaneKind::GpuStream, r, -1);
            for (int k = 0; k < 10; ++k) {
                const TimeNs t = 1'000'000 + TimeNs(k) * 400'000 + TimeNs(r) * 1'000'000'000;
                b.addInterval(r, lane, t, t + 200'000, kAllReduce, RegionKind::Kernel);
            }
        }
        auto trace = b.finish();
        const AlignedRun run = alignClocks(*trace, analyze(*trace, Rules::defaults()), ClockMode::Aligned);
        QCOMPARE(run.collectives->groups.size(), std::size_t(0));
        QCOMPARE(run.collectives->processGroups[0].method, MatchMethod::Time);
        const auto w = std::find_if(trace->warnings.begin(), trace->warnings.end(),
            [](const std::string& s) { return s.rfind("collectives:", 0) == 0; });
        QVERIFY(w != trace->warnings.end());
        QVERIFY(w->find("only 0 of 20") != std::string::npos);
        QVERIFY(w->find("Rank 0: 10 of 10 unmatched, no process group or stream identity") != std::string::npos);
        QVERIFY(w->find("Rank 1: 10 of 10 unmatched") != std::string::npos);
        QVERIFY(w->find("clocks too far apart") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestClockAlign)
#include "tst_clockalign.moc"
