// SPDX-License-Identifier: GPL-3.0-or-later
// Parallelism roles read from the layout of a job's process groups where their names say nothing ("0", "1", ...):
// a TP 2 × DP 2 × PP 2 job of eight generated torch.profiler ranks gets exact roles, coordinates and comm_by_role
// sums; a rule still wins over the layout; layouts that do not tell tp from dp leave their groups "other".
#include "analysis/commops.h"
#include "analysis/grouplayout.h"
#include "analysis/statsparts.h"
#include "run/openrun.h"
#include "support/kinetotraces.h"
#include "view/viewindex.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

using namespace exposure;

namespace {

QByteArray kernel(const char* name, int stream, double ts, double dur, int corr, const QByteArray& args = {})
{
    return QByteArray(",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"") + name
        + "\", \"pid\": 0, \"tid\": " + QByteArray::number(stream) + ", \"ts\": " + QByteArray::number(ts, 'f', 3)
        + ", \"dur\": " + QByteArray::number(dur, 'f', 3) + ", \"args\": {\"device\": 0, \"stream\": "
        + QByteArray::number(stream) + ", \"correlation\": " + QByteArray::number(corr) + args + "}}";
}

// torch.profiler's arguments of a collective on process group `name` over `ranks`, described "undefined" as torch
// describes a group created without a description.
QByteArray groupArgs(const char* collective, int name, const std::vector<int>& ranks)
{
    QByteArray list = "[";
    for (const int r : ranks)
        list += (list.size() > 1 ? ", " : "") + QByteArray::number(r);
    list += "]";
    return QByteArray(", \"Collective name\": \"") + collective
        + "\", \"In msg nelems\": 1024, \"Out msg nelems\": 1024, \"dtype\": \"Float\", \"Group size\": "
        + QByteArray::number(qsizetype(ranks.size())) + ", \"Process Group Name\": \"" + QByteArray::number(name)
        + "\", \"Process Group Description\": \"undefined\", \"Process Group Ranks\": \"" + list + "\"";
}

QByteArray rankFile(int rank, int worldSize, const QByteArray& events)
{
    return "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + QByteArray::number(rank)
        + ", \"world_size\": " + QByteArray::number(worldSize)
        + "}, \"traceEvents\": [\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 1, \"args\": "
          "{\"name\": \"main\"}},\n{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", "
          "\"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 1000}"
        + events + "\n]}";
}

const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)";
const char* kReduceScatter = "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(x)";
const char* kAllGather = "ncclDevKernel_AllGather_RING_LL(x)";
const char* kSendRecv = "ncclDevKernel_SendRecv(x)";

// Rank r of a TP 2 × DP 2 × PP 2 job in Megatron's order (r = 4 pp + 2 dp + tp), every group named by a number only:
// "0" all eight ranks, "1".."4" the tensor-parallel pairs {r, r+1}, "5".."8" the data-parallel pairs {r, r+2},
// "9".."12" the pipeline pairs {r, r+4}. Each rank: all-reduce on its tp pair [100, 140) us, reduce-scatter [200, 250)
// and all-gather [300, 310) on its dp pair, a send (stage 0) or receive (stage 1) on its pp pair [400, 430), an
// all-reduce of all eight [500, 505), compute [120, 220).
QByteArray hybridRank(int r)
{
    const int tp = r % 2, pp = r / 4, tpFirst = r - tp, dpFirst = pp * 4 + tp, ppFirst = r % 4;
    QByteArray ev;
    ev += kernel(kAllReduce, 17, 100, 40, 1, groupArgs("allreduce", 1 + r / 2, { tpFirst, tpFirst + 1 }));
    const QByteArray dp = groupArgs("_reduce_scatter_base", 5 + pp * 2 + tp, { dpFirst, dpFirst + 2 });
    ev += kernel(kReduceScatter, 18, 200, 50, 2, dp);
    ev += kernel(kAllGather, 18, 300, 10, 3, groupArgs("_allgather_base", 5 + pp * 2 + tp, { dpFirst, dpFirst + 2 }));
    const QByteArray p2p = pp == 0
        ? groupArgs("send", 9 + ppFirst, { ppFirst, ppFirst + 4 }) + ", \"Dst Rank\": " + QByteArray::number(r + 4)
        : groupArgs("recv", 9 + ppFirst, { ppFirst, ppFirst + 4 }) + ", \"Src Rank\": " + QByteArray::number(r - 4);
    ev += kernel(kSendRecv, 19, 400, 30, 4, p2p);
    ev += kernel(kAllReduce, 17, 500, 5, 5, groupArgs("allreduce", 0, { 0, 1, 2, 3, 4, 5, 6, 7 }));
    ev += kernel("ampere_sgemm_128x64_nn", 7, 120, 100, 6);
    return rankFile(r, 8, ev);
}

struct RoleNs
{
    std::string role;
    TimeNs busy, exposed;
    std::string source;
};

OpenedRun openJob(const QTemporaryDir& dir, const QByteArray& rule = {})
{
    RunOptions options;
    if (!rule.isEmpty()) {
        const QString rulesPath
            = testing::write(dir, QStringLiteral("roles.json"), "{\"rules\": [], \"process_groups\": [" + rule + "]}");
        options.rules = Rules::fromFile(rulesPath.toStdString(), true);
    }
    return openRun(dir.filePath(QStringLiteral("trace")).toStdString(), options);
}

} // namespace

class TestGroupLayout : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void hybridJob()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("trace")));
        for (int r = 0; r < 8; ++r)
            testing::write(dir, QStringLiteral("trace/rank%1.json").arg(r), hybridRank(r));
        const OpenedRun run = openJob(dir);
        QCOMPARE(run.trace->ranks.size(), std::size_t(8));
        const GroupLayout layout = inferGroupLayout(*run.trace);
        QCOMPARE(layout.worldSize, 8);
        QCOMPARE(layout.tp, 2);
        QCOMPARE(layout.dp, 2);
        QCOMPARE(layout.pp, 2);
        QCOMPARE(layout.groups.size(), std::size_t(13));
        int tp = 0, dp = 0, pp = 0, other = 0;
        for (const LayoutGroup& g : layout.groups)
            ++(g.role == "tp" ? tp : g.role == "dp" ? dp : g.role == "pp" ? pp : other);
        QCOMPARE(tp, 4);
        QCOMPARE(dp, 4);
        QCOMPARE(pp, 4);
        QCOMPARE(other, 1); // "0", all eight ranks: in a job with other groups, not data parallel
        StatsReportOptions o;
        o.window = run.trace->extent;
        const StatsReport report = buildStatsReport(*run.trace, *run.analysis, o);
        const std::vector<RoleNs> want = {
            { "dp", 60'000, 40'000, "layout" }, // [200, 250) and [300, 310) less compute [120, 220)
            { "other", 5'000, 5'000, "name" }, { "pp", 30'000, 30'000, "layout" },
            { "tp", 40'000, 20'000, "layout" }, // [100, 140) less compute from 120
        };
        for (std::size_t k = 0; k < 8; ++k) {
            const RankReport& r = report.ranks[k];
            const int rank = run.trace->ranks[k].rank;
            QCOMPARE(r.coords.tp, rank % 2);
            QCOMPARE(r.coords.dp, rank / 2 % 2);
            QCOMPARE(r.coords.pp, rank / 4);
            QCOMPARE(r.coords.ep, -1);
            QCOMPARE(r.commOps.roles.size(), want.size());
            for (std::size_t j = 0; j < want.size(); ++j) {
                QCOMPARE(r.commOps.roles[j].role, want[j].role);
                QCOMPARE(r.commOps.roles[j].busyNs, want[j].busy);
                QCOMPARE(r.commOps.roles[j].exposedNs, want[j].exposed);
                QCOMPARE(r.commOps.roles[j].source, want[j].source);
                QCOMPARE(r.commOps.roles[j].count, std::uint64_t(want[j].role == "dp" ? 2 : 1));
            }
        }
        // The JSON says where the inferred roles came from, and the coordinates (every rank starts each collective at
        // the same time: no waiting, all transfer).
        const std::string json = statsJson(report, o);
        const std::string byRole = json.substr(json.rfind("\"comm_by_role\""), 400);
        QVERIFY(json.find("\"parallel\": {\"dp\": 1, \"pp\": 1, \"tp\": 1}") != std::string::npos);
        QVERIFY2(json.find("\"tp\": {\"count\": 1, \"busy_ns\": 40000, \"exposed_ns\": 20000, \"wait_ns\": 0, "
                           "\"transfer_ns\": 40000, \"role_source\": \"layout\"}")
                != std::string::npos,
            byRole.c_str());
        QVERIFY(json.find("\"other\": {\"count\": 1, \"busy_ns\": 5000, \"exposed_ns\": 5000, \"wait_ns\": 0, "
                          "\"transfer_ns\": 5000}")
            != std::string::npos);
        // The timeline's communication rows say the inferred roles.
        const auto index = ViewIndex::build(*run.trace, run.analysis.get());
        QStringList labels;
        for (const TimelineRow& row : buildRows(*run.trace, *index, {}))
            if (row.kind == TimelineRow::Kind::Lane && row.rank == 0 && row.lane >= 0
                && run.trace->ranks[0].lanes[std::size_t(row.lane)].stream >= 17)
                labels << QString::fromStdString(row.label);
        QCOMPARE(labels.size(), 3);
        QVERIFY2(labels[0].endsWith(QStringLiteral("tp+other \u00B7 2 groups")), qPrintable(labels[0]));
        QVERIFY2(labels[1].endsWith(QStringLiteral("dp \u00B7 5 (undefined)")), qPrintable(labels[1]));
        QVERIFY2(labels[2].endsWith(QStringLiteral("pp \u00B7 9 (undefined)")), qPrintable(labels[2]));
    }

    // A rule names group "1" (rank 0's tensor-parallel pair) data parallel: it wins over the layout, which still
    // decides the other groups.
    void ruleWinsOverLayout()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("trace")));
        for (int r = 0; r < 8; ++r)
            testing::write(dir, QStringLiteral("trace/rank%1.json").arg(r), hybridRank(r));
        const OpenedRun run = openJob(dir, R"({"id": "one", "name": "^1$", "role": "dp"})");
        const CommOps ops = commOperations(*run.trace, *run.analysis, 0, run.trace->extent);
        QCOMPARE(ops.roles.size(), std::size_t(3));
        QCOMPARE(ops.roles[0].role, std::string("dp"));
        QCOMPARE(ops.roles[0].busyNs, TimeNs(100'000)); // [100, 140) by the rule, [200, 250) and [300, 310)
        QCOMPARE(ops.roles[0].exposedNs, TimeNs(60'000));
        QCOMPARE(ops.roles[0].source, std::string("layout+rule"));
        QCOMPARE(ops.roles[1].role, std::string("other"));
        QCOMPARE(ops.roles[2].role, std::string("pp"));
        // Rank 2's tensor-parallel pair ("2") is still tp.
        const CommOps two = commOperations(*run.trace, *run.analysis, 2, run.trace->extent);
        QCOMPARE(two.roles.back().role, std::string("tp"));
        QCOMPARE(two.roles.back().busyNs, TimeNs(40'000));
    }

    // Layouts that do not say which group is which: their collective groups stay "other" and no rank gets
    // coordinates; sends and receives alone are still pipeline parallel.
    void ambiguousLayouts_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<QByteArray>("shape"); // per rank: the groups its all-reduce and its p2p run on
        QTest::addColumn<QString>("collectiveRole");
        // DP 2 × PP 2 and TP 2 × PP 2 look alike: one kind of collective group of contiguous pairs.
        QTest::newRow("one collective kind") << 4 << QByteArray("pairs+pp") << "other";
        // Contiguous pairs and pairs four apart: a stride that is not the pairs' size.
        QTest::newRow("strides that do not nest") << 8 << QByteArray("pairs+stride4") << "other";
        // A group {0, 1, 3}: its ranks are not evenly spaced.
        QTest::newRow("irregular") << 4 << QByteArray("0,1,3") << "other";
        // A data-parallel job whose one group is called "0": all ranks, nothing else.
        QTest::newRow("the whole job alone") << 4 << QByteArray("world") << "dp";
    }
    void ambiguousLayouts()
    {
        QFETCH(int, ranks);
        QFETCH(QByteArray, shape);
        QFETCH(QString, collectiveRole);
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("trace")));
        for (int r = 0; r < ranks; ++r) {
            QByteArray ev;
            if (shape == "world") {
                std::vector<int> all;
                for (int k = 0; k < ranks; ++k)
                    all.push_back(k);
                ev += kernel(kAllReduce, 17, 100, 40, 1, groupArgs("allreduce", 0, all));
            } else if (shape == "0,1,3") {
                ev += kernel(kAllReduce, 17, 100, 40, 1, groupArgs("allreduce", 1, { 0, 1, 3 }));
            } else {
                ev += kernel(
                    kAllReduce, 17, 100, 40, 1, groupArgs("allreduce", 1 + r / 2, { r - r % 2, r - r % 2 + 1 }));
                if (shape == "pairs+stride4")
                    ev += kernel(kAllReduce, 18, 200, 50, 2, groupArgs("allreduce", 5 + r % 4, { r % 4, r % 4 + 4 }));
                else
                    ev += kernel(
                        kSendRecv, 19, 400, 30, 4, groupArgs(r < 2 ? "send" : "recv", 9 + r % 2, { r % 2, r % 2 + 2 }));
            }
            ev += kernel("ampere_sgemm_128x64_nn", 7, 120, 100, 6);
            testing::write(dir, QStringLiteral("trace/rank%1.json").arg(r), rankFile(r, ranks, ev));
        }
        const OpenedRun run = openJob(dir);
        StatsReportOptions o;
        o.window = run.trace->extent;
        const StatsReport report = buildStatsReport(*run.trace, *run.analysis, o);
        for (const RankReport& r : report.ranks) {
            QCOMPARE(r.coords, ParallelCoords {});
            QVERIFY(!r.commOps.roles.empty());
            QCOMPARE(QString::fromStdString(r.commOps.roles.front().role), collectiveRole);
            QCOMPARE(r.commOps.roles.front().busyNs, TimeNs(shape == "pairs+stride4" ? 90'000 : 40'000));
            if (shape == "pairs+pp") {
                QCOMPARE(r.commOps.roles.size(), std::size_t(2));
                QCOMPARE(r.commOps.roles[1].role, std::string("pp"));
                QCOMPARE(r.commOps.roles[1].source, std::string("layout"));
                QCOMPARE(r.commOps.roles[1].busyNs, TimeNs(30'000));
            } else {
                QCOMPARE(r.commOps.roles.size(), std::size_t(1));
                QCOMPARE(
                    r.commOps.roles[0].source, std::string(collectiveRole == QLatin1String("dp") ? "layout" : "name"));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestGroupLayout)
#include "tst_grouplayout.moc"
