// SPDX-License-Identifier: GPL-3.0-or-later
// Communication by the operation the program called: SendRecv kernels launched inside nccl:all_reduce and
// nccl:all_to_all are counted under those operations (exact counts and unions), a kernel without a launch falls back
// to its arguments, then to its name; and each step's pipeline bubble is the job's window of the step minus the
// rank's compute in it.
#include "analysis/commops.h"
#include "analysis/statsparts.h"
#include "run/openrun.h"
#include "support/kinetotraces.h"
#include "view/viewindex.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

using namespace exposure;

namespace {

const char* kSendRecv = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)";

QByteArray cpu(const char* name, const char* cat, double ts, double dur, int corr = -1)
{
    return QByteArray(",\n{\"ph\": \"X\", \"cat\": \"") + cat + "\", \"name\": \"" + name
        + "\", \"pid\": 1, \"tid\": 1, \"ts\": " + QByteArray::number(ts, 'f', 3)
        + ", \"dur\": " + QByteArray::number(dur, 'f', 3)
        + (corr >= 0 ? ", \"args\": {\"correlation\": " + QByteArray::number(corr) + "}}" : QByteArray("}"));
}

QByteArray kernel(const char* name, int stream, double ts, double dur, int corr, const QByteArray& args = {})
{
    return QByteArray(",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"") + name
        + "\", \"pid\": 0, \"tid\": " + QByteArray::number(stream) + ", \"ts\": " + QByteArray::number(ts, 'f', 3)
        + ", \"dur\": " + QByteArray::number(dur, 'f', 3) + ", \"args\": {\"device\": 0, \"stream\": "
        + QByteArray::number(stream) + ", \"correlation\": " + QByteArray::number(corr) + args + "}}";
}

// A rank's file with its place in the job (distributedInfo), a step region at t = 0 and `events`.
QByteArray rankFile(int rank, int worldSize, const QByteArray& events)
{
    return "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + QByteArray::number(rank)
        + ", \"world_size\": " + QByteArray::number(worldSize)
        + "}, \"traceEvents\": [\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 1, \"args\": "
          "{\"name\": \"main\"}}"
        + cpu("ProfilerStep#1", "user_annotation", 0, 1000) + events + "\n]}";
}

// torch.profiler's arguments of a collective of process group `name` (`desc`) over `ranks`.
QByteArray groupArgs(const char* collective, const char* name, const char* desc, const char* ranks, int size)
{
    return QByteArray(", \"Collective name\": \"") + collective
        + "\", \"In msg nelems\": 1024, \"Out msg nelems\": 1024, \"dtype\": \"Float\", \"Group size\": "
        + QByteArray::number(size) + ", \"Process Group Name\": \"" + name + "\", \"Process Group Description\": \""
        + desc + "\", \"Process Group Ranks\": \"" + ranks + "\"";
}

// One rank of a two-stage pipeline that exchanges activations and gradients through torch's batch_isend_irecv, as
// torch.profiler records it: each send and receive a record_param_comms op that launches nothing (with "Dst Rank" /
// "Src Rank"; the first holds a cudaEventRecord), then one SendRecv kernel per batch, launched inside "nccl:coalesced"
// (after a cudaEventRecord). Rank 0 sends 1 024 elements and receives 2 048 in each batch, rank 1 the other way
// round; kernels (us):
//   rank 0: [100, 150), [300, 340)      rank 1: [130, 150), [280, 345)
QByteArray batchedPipelineRank(int rank)
{
    auto op = [&](const char* coll, double ts, int elements) -> QByteArray {
        const bool sends = QByteArray(coll) == "send";
        return ",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 1, \"tid\": 1, "
               "\"ts\": "
            + QByteArray::number(ts, 'f', 3) + ", \"dur\": 2, \"args\": {\"Collective name\": \"" + coll
            + "\", \"In msg nelems\": " + QByteArray::number(elements)
            + ", \"Out msg nelems\": " + QByteArray::number(elements)
            + ", \"dtype\": \"Float\", \"Group size\": 2, \"Process Group Name\": \"3\", "
              "\"Process Group Description\": \"mesh_pp\", \"Process Group Ranks\": \"[0, 1]\", "
            + (sends ? "\"Dst Rank\": " : "\"Src Rank\": ") + QByteArray::number(1 - rank) + "}}";
    };
    const bool first = rank == 0;
    QByteArray ev;
    const double kernels[2][2] = { { 100, 50 }, { 300, 40 } }, others[2][2] = { { 130, 20 }, { 280, 65 } };
    for (int b = 0; b < 2; ++b) {
        const double t = 10 + 50 * b;
        ev += op(first ? "send" : "recv", t, 1024);
        ev += cpu("cudaEventRecord", "cuda_runtime", t + 0.5, 0.5, 300 + b); // orders the streams, launches nothing
        ev += op(first ? "recv" : "send", t + 3, 2048);
        ev += cpu("nccl:coalesced", "cpu_op", t + 6, 14);
        ev += cpu("cudaEventRecord", "cuda_runtime", t + 6.5, 0.5, 200 + b);
        ev += cpu("cudaLaunchKernel", "cuda_runtime", t + 7, 3, 100 + b);
        const double* k = first ? kernels[b] : others[b];
        ev += kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 20, k[0], k[1], 100 + b);
    }
    return ev;
}

QByteArray file(const QByteArray& events)
{
    return "{\"schemaVersion\": 1, \"traceEvents\": [\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, "
           "\"tid\": 1, \"args\": {\"name\": \"main\"}}"
        + events + "\n]}";
}

} // namespace

class TestCommOps : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void normalisedNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("op");
        QTest::newRow("nccl:all_reduce") << "nccl:all_reduce"
                                         << "all_reduce";
        QTest::newRow("_all_gather_base") << "nccl:_all_gather_base"
                                          << "all_gather";
        QTest::newRow("_reduce_scatter_base") << "nccl:_reduce_scatter_base"
                                              << "reduce_scatter";
        QTest::newRow("all_to_all") << "nccl:all_to_all"
                                    << "all_to_all";
        QTest::newRow("c10d allreduce_") << "c10d::allreduce_"
                                         << "all_reduce";
        QTest::newRow("c10d alltoall_base_") << "c10d::alltoall_base_"
                                             << "all_to_all";
        QTest::newRow("kernel args allgather") << "allgather"
                                               << "all_gather";
        QTest::newRow("kernel SendRecv") << kSendRecv << "send_recv";
        QTest::newRow("dev kernel AllReduce") << "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)"
                                              << "all_reduce";
        QTest::newRow("broadcast") << "nccl:broadcast"
                                   << "broadcast";
        QTest::newRow("reduce") << "nccl:reduce"
                                << "reduce";
        QTest::newRow("send") << "nccl:send"
                              << "send";
        QTest::newRow("recv") << "nccl:recv"
                              << "recv";
        QTest::newRow("barrier") << "nccl:barrier"
                                 << "barrier";
        QTest::newRow("not communication") << "aten::mm"
                                           << "";
    }
    void normalisedNames()
    {
        QFETCH(QString, name);
        QFETCH(QString, op);
        QCOMPARE(QString::fromStdString(normaliseCommOp(name.toStdString())), op);
    }

    void rolesOfGroups_data()
    {
        QTest::addColumn<QString>("group");
        QTest::addColumn<QString>("role");
        QTest::newRow("default_pg") << "0 (default_pg)"
                                    << "dp";
        QTest::newRow("torchtitan dp_shard") << "3 (mesh_dp_shard)"
                                             << "dp";
        QTest::newRow("Megatron tensor") << "5 (TENSOR_MODEL_PARALLEL_GROUP)"
                                         << "tp";
        QTest::newRow("Megatron pipeline") << "PIPELINE_MODEL_PARALLEL_GROUP"
                                           << "pp";
        QTest::newRow("expert") << "7 (expert_parallel)"
                                << "ep";
        QTest::newRow("context") << "mesh_cp"
                                 << "cp";
        QTest::newRow("named, no role") << "9 (my_group)"
                                        << "other";
        QTest::newRow("none") << ""
                              << "unknown";
    }
    void rolesOfGroups()
    {
        QFETCH(QString, group);
        QFETCH(QString, role);
        QCOMPARE(QString::fromStdString(roleOfGroup(group.toStdString())), role);
    }

    // A tensor-parallel all-reduce and a data-parallel reduce-scatter on one rank: communication by role.
    void communicationByRole()
    {
        QTemporaryDir dir;
        auto args = [](const char* desc) -> QByteArray {
            return QByteArray(", \"Collective name\": \"allreduce\", \"Process Group Name\": \"1\", "
                              "\"Process Group Description\": \"")
                + desc + "\", \"Process Group Ranks\": \"[0, 1]\"";
        };
        QByteArray ev;
        ev += kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 17, 100, 40, 1, args("mesh_tp"));
        ev += kernel("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(x)", 18, 120, 50, 2, args("mesh_dp_shard"));
        ev += kernel("ampere_sgemm_128x64_nn", 7, 150, 30, 3);
        testing::write(dir, QStringLiteral("rank0.json"), file(ev));
        auto trace = loadTrace(dir.path().toStdString());
        auto analysis = analyze(*trace, Rules::defaults());
        const CommOps ops = commOperations(*trace, *analysis, 0, trace->extent);
        QCOMPARE(ops.roles.size(), std::size_t(2));
        QCOMPARE(ops.roles[0].role, std::string("dp"));
        QCOMPARE(ops.roles[0].busyNs, TimeNs(50'000));
        QCOMPARE(ops.roles[0].exposedNs, TimeNs(30'000)); // [120, 170) less compute [150, 180)
        QCOMPARE(ops.roles[1].role, std::string("tp"));
        QCOMPARE(ops.roles[1].busyNs, TimeNs(40'000));
        QCOMPARE(ops.roles[1].exposedNs, TimeNs(40'000));
    }

    // Two groups whose names say data parallel ("mesh_dp_shard" [0, 1] and "mesh_dp_replicate" [0, 2], both of two
    // ranks): all-reduce [100, 140) us on one, [200, 250) us on the other. A "process_groups" rule of the rules file
    // gives its groups its role whatever their names say.
    void groupRoleRuleWins_data()
    {
        QTest::addColumn<QByteArray>("rule");
        QTest::addColumn<QString>("role1"); // of group 1 (40 us)
        QTest::addColumn<QString>("role2"); // of group 2 (50 us)
        QTest::newRow("no rule") << QByteArray() << "dp"
                                 << "dp";
        QTest::newRow("by name") << QByteArray(R"({"id": "t", "name": "^1$", "role": "tp"})") << "tp"
                                 << "dp";
        QTest::newRow("by description") << QByteArray(R"({"id": "t", "desc": "^mesh_dp_replicate$", "role": "tp"})")
                                        << "dp"
                                        << "tp";
        QTest::newRow("by ranks, any order") << QByteArray(R"({"id": "t", "ranks": [2, 0], "role": "tp"})") << "dp"
                                             << "tp";
        QTest::newRow("by size") << QByteArray(R"({"id": "t", "size": 2, "role": "tp"})") << "tp"
                                 << "tp";
        QTest::newRow("every condition must hold")
            << QByteArray(R"({"id": "t", "name": "^1$", "ranks": [0, 2], "role": "tp"})") << "dp"
            << "dp";
        QTest::newRow("the first that matches")
            << QByteArray(R"({"id": "a", "size": 2, "role": "tp"}, {"id": "b", "name": "1", "role": "pp"})") << "tp"
            << "tp";
    }
    void groupRoleRuleWins()
    {
        QFETCH(QByteArray, rule);
        QFETCH(QString, role1);
        QFETCH(QString, role2);
        const auto dp1 = QLatin1String("dp"), tp1 = QLatin1String("tp");
        const TimeNs dpNs = (role1 == dp1 ? 40'000 : 0) + (role2 == dp1 ? 50'000 : 0);
        const TimeNs tpNs = (role1 == tp1 ? 40'000 : 0) + (role2 == tp1 ? 50'000 : 0);
        QTemporaryDir dir;
        QByteArray ev;
        ev += kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 17, 100, 40, 1,
            groupArgs("allreduce", "1", "mesh_dp_shard", "[0, 1]", 2));
        ev += kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 18, 200, 50, 2,
            groupArgs("allreduce", "2", "mesh_dp_replicate", "[0, 2]", 2));
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("trace")));
        testing::write(dir, QStringLiteral("trace/rank0.json"), rankFile(0, 3, ev));
        const QString rulesPath
            = testing::write(dir, QStringLiteral("roles.json"), "{\"rules\": [], \"process_groups\": [" + rule + "]}");
        RunOptions options;
        options.rules = Rules::fromFile(rulesPath.toStdString(), true);
        const OpenedRun run = openRun(dir.filePath(QStringLiteral("trace")).toStdString(), options);
        const CommOps ops = commOperations(*run.trace, *run.analysis, 0, run.trace->extent);
        TimeNs dp = 0, tp = 0, other = 0;
        for (const CommRoleReport& r : ops.roles)
            (r.role == "dp" ? dp : r.role == "tp" ? tp : other) += r.busyNs;
        QCOMPARE(dp, dpNs);
        QCOMPARE(tp, tpNs);
        QCOMPARE(other, TimeNs(0));
        // The stats report's comm_by_role says the same.
        StatsReportOptions o;
        o.window = run.trace->extent;
        const StatsReport report = buildStatsReport(*run.trace, *run.analysis, o);
        QCOMPARE(report.ranks[0].commOps.roles.size(), ops.roles.size());
        for (std::size_t k = 0; k < ops.roles.size(); ++k) {
            QCOMPARE(report.ranks[0].commOps.roles[k].role, ops.roles[k].role);
            QCOMPARE(report.ranks[0].commOps.roles[k].busyNs, ops.roles[k].busyNs);
        }
        // The timeline's communication rows say the role the rules give (stream 17: group 1, stream 18: group 2).
        const auto index = ViewIndex::build(*run.trace, run.analysis.get());
        QStringList labels;
        for (const TimelineRow& row : buildRows(*run.trace, *index, {}))
            if (row.lane >= 0 && run.trace->ranks[0].lanes[std::size_t(row.lane)].stream >= 17)
                labels << QString::fromStdString(row.label);
        QCOMPARE(labels.size(), 2);
        const QString dot = QStringLiteral(" \u00B7 ");
        QVERIFY2(labels[0].endsWith(role1 + dot + QStringLiteral("1 (mesh_dp_shard)")), qPrintable(labels[0]));
        QVERIFY2(labels[1].endsWith(role2 + dot + QStringLiteral("2 (mesh_dp_replicate)")), qPrintable(labels[1]));
        // The rules survive a round trip through their JSON.
        const Rules again = Rules::fromJson(options.rules.toJson(), "again");
        QCOMPARE(again.groupRoles().size(), options.rules.groupRoles().size());
        for (std::size_t k = 0; k < again.groupRoles().size(); ++k) {
            QCOMPARE(again.groupRoles()[k].role, options.rules.groupRoles()[k].role);
            QCOMPARE(again.groupRoles()[k].ranks, options.rules.groupRoles()[k].ranks);
            QCOMPARE(again.groupRoles()[k].size, options.rules.groupRoles()[k].size);
        }
    }

    // A bad "process_groups" rule: one line naming the file and the rule.
    void badGroupRoleRules_data()
    {
        QTest::addColumn<QByteArray>("groups");
        QTest::addColumn<QString>("message");
        QTest::newRow("not an array") << QByteArray("{\"id\": \"t\"}")
                                      << "roles.json: \"process_groups\" must be an array of process group rules";
        QTest::newRow("unknown role") << QByteArray("[{\"id\": \"t\", \"name\": \"x\", \"role\": \"tensor\"}]")
                                      << "roles.json: process_groups rule 1 (\"t\"): \"role\" must be dp, tp, pp, ep, "
                                         "cp or other, not \"tensor\"";
        QTest::newRow("no role") << QByteArray("[{\"id\": \"t\", \"name\": \"x\"}]")
                                 << "roles.json: process_groups rule 1 (\"t\"): \"role\" must be dp, tp, pp, ep, cp or "
                                    "other, not \"\"";
        QTest::newRow("no condition") << QByteArray(
            "[{\"id\": \"a\", \"size\": 2, \"role\": \"tp\"}, {\"id\": \"b\", \"role\": \"dp\"}]")
                                      << "roles.json: process_groups rule 2 (\"b\"): no condition (give name, desc, "
                                         "ranks or size)";
        QTest::newRow("unknown key") << QByteArray("[{\"id\": \"t\", \"group\": \"x\", \"role\": \"tp\"}]")
                                     << "roles.json: process_groups rule 1: unknown key \"group\" (expected id, name, "
                                        "desc, ranks, size, role, description)";
        QTest::newRow("ranks not numbers") << QByteArray("[{\"id\": \"t\", \"ranks\": [\"0\"], \"role\": \"tp\"}]")
                                           << "roles.json: process_groups rule 1 (\"t\"): \"ranks\" must be a "
                                              "non-empty array of global rank numbers";
        QTest::newRow("size 0") << QByteArray("[{\"id\": \"t\", \"size\": 0, \"role\": \"tp\"}]")
                                << "roles.json: process_groups rule 1 (\"t\"): \"size\" must be a number of ranks "
                                   "(1 or more)";
        QTest::newRow("id twice") << QByteArray(
            "[{\"id\": \"t\", \"size\": 2, \"role\": \"tp\"}, {\"id\": \"t\", \"size\": 4, "
            "\"role\": \"dp\"}]") << "roles.json: process_groups rule 2: \"id\" missing, empty or used twice";
        QTest::newRow("bad pattern") << QByteArray("[{\"id\": \"t\", \"desc\": \"(tp\", \"role\": \"tp\"}]")
                                     << "roles.json: process_groups rule 1 (\"t\"): bad pattern \"(tp\": missing "
                                        "closing parenthesis";
    }
    void badGroupRoleRules()
    {
        QFETCH(QByteArray, groups);
        QFETCH(QString, message);
        try {
            Rules::fromJson(
                QByteArray("{\"rules\": [], \"process_groups\": " + groups + "}").toStdString(), "roles.json");
            QFAIL("accepted");
        } catch (const std::runtime_error& e) {
            QCOMPARE(QString::fromUtf8(e.what()), message);
        }
    }

    // One rank's communication split by role adds up: data-parallel all-reduce [100, 160) us and tensor-parallel
    // all-reduce [140, 200) us on two streams, compute [150, 170) us. dp alone [100, 140), both [140, 160) (10 us of it
    // under compute), tp alone [160, 200) (10 us under compute).
    void roleSharesAddUp()
    {
        QTemporaryDir dir;
        QByteArray ev;
        ev += kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 17, 100, 60, 1,
            groupArgs("allreduce", "1", "mesh_dp", "[0, 1]", 2));
        ev += kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 18, 140, 60, 2,
            groupArgs("allreduce", "2", "mesh_tp", "[0, 1]", 2));
        ev += kernel("ampere_sgemm_128x64_nn", 7, 150, 20, 3);
        testing::write(dir, QStringLiteral("rank0.json"), rankFile(0, 2, ev));
        auto trace = loadTrace(dir.path().toStdString());
        auto analysis = analyze(*trace, Rules::defaults());
        const auto shares = commRoleShares(*trace, *analysis, nullptr, 0, trace->extent);
        QCOMPARE(shares.size(), std::size_t(3));
        auto check = [&](std::size_t k, const char* role, std::uint64_t count, TimeNs busy, TimeNs exposed) {
            QCOMPARE(shares[k].role, std::string(role));
            QCOMPARE(shares[k].count, count);
            QCOMPARE(shares[k].busyNs, busy);
            QCOMPARE(shares[k].exposedNs, exposed);
        };
        check(0, "dp", 1, 40'000, 40'000);
        check(1, "tp", 1, 40'000, 30'000);
        check(2, "dp+tp", 0, 20'000, 10'000);
        const WindowStats s = computeStats(*trace, *analysis, 0, trace->extent);
        QCOMPARE(s.commBusyNs, TimeNs(100'000));
        QCOMPARE(s.exposedNs, TimeNs(80'000));
        // A window clips it: [150, 170) us is all under compute.
        const TimeRange w { trace->extent.start + 150'000, trace->extent.start + 170'000 };
        const auto clipped = commRoleShares(*trace, *analysis, nullptr, 0, w);
        TimeNs busy = 0, exposed = 0;
        for (const CommRoleShare& c : clipped) {
            busy += c.busyNs;
            exposed += c.exposedNs;
        }
        QCOMPARE(busy, computeStats(*trace, *analysis, 0, w).commBusyNs);
        QCOMPARE(busy, TimeNs(20'000));
        QCOMPARE(exposed, TimeNs(0));
    }

    // A two-stage pipeline's sends and receives (testing::pipelinePairRank): by end time the first send would meet
    // the second receive; the sequence numbers pair each send with its receive: pair 1 waits 30 us on rank 0 for
    // rank 1 to start, pair 2 30 us on rank 1.
    void pointToPointByIdentity_data()
    {
        QTest::addColumn<bool>("peerRecorded");
        QTest::newRow("Dst Rank and Src Rank") << true;
        QTest::newRow("peer: the other of two") << false;
    }
    void pointToPointByIdentity()
    {
        QFETCH(bool, peerRecorded);
        QTemporaryDir dir;
        testing::write(dir, QStringLiteral("rank0.json"), testing::pipelinePairRank(0, peerRecorded));
        testing::write(dir, QStringLiteral("rank1.json"), testing::pipelinePairRank(1, peerRecorded));
        RunOptions options;
        options.collectives = true;
        const OpenedRun run = openRun(dir.path().toStdString(), options);
        const CollectiveMatch& match = *run.collectives;
        QCOMPARE(match.processGroups.size(), std::size_t(1));
        QCOMPARE(match.processGroups[0].method, MatchMethod::ProcessGroup);
        QCOMPARE(match.processGroups[0].name, std::string("3 (mesh_pp), 0 \xE2\x86\x92 1"));
        QCOMPARE(match.processGroups[0].collectives, std::uint64_t(2));
        QCOMPARE(match.processGroups[0].matchedInstances, std::uint64_t(4));
        QCOMPARE(match.groups.size(), std::size_t(2));
        // Each pair: rank 0's member, then rank 1's; (start, wait, transfer) in ns from the trace's start.
        const TimeNs t0 = run.trace->extent.start;
        auto check = [&](const CollectiveGroup& g, TimeNs sendStart, TimeNs sendWait, TimeNs sendTransfer,
                         TimeNs recvStart, TimeNs recvWait, TimeNs recvTransfer) {
            QCOMPARE(g.members.size(), std::size_t(2));
            QCOMPARE(g.members[0].rank, 0);
            QCOMPARE(g.members[0].start - t0, sendStart);
            QCOMPARE(g.members[0].waitNs, sendWait);
            QCOMPARE(g.members[0].transferNs, sendTransfer);
            QCOMPARE(g.members[1].rank, 1);
            QCOMPARE(g.members[1].start - t0, recvStart);
            QCOMPARE(g.members[1].waitNs, recvWait);
            QCOMPARE(g.members[1].transferNs, recvTransfer);
        };
        // Sorted by the last arrival: pair 1 at 130 us, pair 2 at 150 us.
        check(match.groups[0], 100'000, 30'000, 70'000, 130'000, 0, 131'000);
        check(match.groups[1], 150'000, 0, 110'000, 120'000, 30'000, 51'000);
        QCOMPARE(match.ranks[0].waitNs, TimeNs(30'000));
        QCOMPARE(match.ranks[1].waitNs, TimeNs(30'000));
        QCOMPARE(match.ranks[0].transferNs, TimeNs(180'000));
        QCOMPARE(match.ranks[1].transferNs, TimeNs(182'000));
        QCOMPARE(match.ranks[0].unmatched, std::uint64_t(0));
        // Both sides are pipeline-parallel communication, named after the operation called.
        StatsReportOptions o;
        o.window = run.trace->extent;
        StatsReport report = buildStatsReport(*run.trace, *run.analysis, o);
        fillStepCollectives(report.ranks[1], match, 1, o.window);
        QCOMPARE(report.ranks[1].commOps.roles.size(), std::size_t(1));
        QCOMPARE(report.ranks[1].commOps.roles[0].role, std::string("pp"));
        QCOMPARE(report.ranks[1].commOps.roles[0].waitNs, TimeNs(30'000));
        QCOMPARE(report.ranks[1].commOps.roles[0].transferNs, TimeNs(182'000));
        QCOMPARE(report.ranks[1].commOps.ops.size(), std::size_t(1));
        QCOMPARE(report.ranks[1].commOps.ops[0].op, std::string("recv"));
    }

    // torch's batch_isend_irecv (batchedPipelineRank): each batch's one kernel carries its send and its receive, and
    // the k-th batch of rank 0 with rank 1 meets the k-th of rank 1 with rank 0: batch 1 waits 30 us on rank 0 for
    // rank 1 to start (transfer 20 us on both), batch 2 20 us on rank 1 (transfer 40 and 45 us).
    void batchedSendRecv()
    {
        QTemporaryDir dir;
        for (int r = 0; r < 2; ++r)
            testing::write(dir, QStringLiteral("rank%1.json").arg(r), rankFile(r, 2, batchedPipelineRank(r)));
        RunOptions options;
        options.collectives = true;
        const OpenedRun run = openRun(dir.path().toStdString(), options);
        // Each kernel holds both operations of its batch.
        const Lane& lane = run.trace->ranks[0].lanes.back();
        QCOMPARE(lane.stream, 20);
        QCOMPARE(lane.collectiveArgs.size(), std::size_t(4));
        const CollectiveMatch& match = *run.collectives;
        QCOMPARE(match.processGroups.size(), std::size_t(1));
        QCOMPARE(match.processGroups[0].method, MatchMethod::ProcessGroup);
        QCOMPARE(match.processGroups[0].name, std::string("3 (mesh_pp), 0 \xE2\x87\x84 1"));
        QCOMPARE(match.processGroups[0].collectives, std::uint64_t(2));
        QCOMPARE(match.processGroups[0].matchedInstances, std::uint64_t(4));
        QCOMPARE(match.groups.size(), std::size_t(2));
        const TimeNs t0 = run.trace->extent.start;
        struct Member
        {
            TimeNs start, wait, transfer;
        };
        // Sorted by the last arrival: batch 1 at 130 us, batch 2 at 300 us; rank 0's member first.
        const Member want[2][2] = { { { 100'000, 30'000, 20'000 }, { 130'000, 0, 20'000 } },
            { { 300'000, 0, 40'000 }, { 280'000, 20'000, 45'000 } } };
        for (std::size_t g = 0; g < 2; ++g) {
            QCOMPARE(match.groups[g].members.size(), std::size_t(2));
            for (std::size_t m = 0; m < 2; ++m) {
                const CollectiveMember& got = match.groups[g].members[m];
                QCOMPARE(got.rank, int(m));
                QCOMPARE(got.start - t0, want[g][m].start);
                QCOMPARE(got.waitNs, want[g][m].wait);
                QCOMPARE(got.transferNs, want[g][m].transfer);
            }
        }
        QCOMPARE(match.ranks[0].unmatched, std::uint64_t(0));
        QCOMPARE(match.ranks[1].unmatched, std::uint64_t(0));
        QCOMPARE(match.ranks[0].waitNs, TimeNs(30'000));
        QCOMPARE(match.ranks[1].waitNs, TimeNs(20'000));
        // Communication by operation: one send_recv of two kernels, called as batch_isend_irecv, pipeline parallel.
        StatsReportOptions o;
        o.window = run.trace->extent;
        const StatsReport report = buildStatsReport(*run.trace, *run.analysis, o);
        for (std::size_t r = 0; r < 2; ++r) {
            const CommOps& ops = report.ranks[r].commOps;
            QCOMPARE(ops.ops.size(), std::size_t(1));
            QCOMPARE(ops.ops[0].op, std::string("send_recv"));
            QCOMPARE(ops.ops[0].call, std::string("batch_isend_irecv"));
            QCOMPARE(ops.ops[0].count, std::uint64_t(2));
            QCOMPARE(ops.ops[0].busyNs, TimeNs(r == 0 ? 90'000 : 85'000));
            QCOMPARE(ops.roles.size(), std::size_t(1));
            QCOMPARE(ops.roles[0].role, std::string("pp"));
        }
    }

    void operationsOfSendRecvKernels()
    {
        QTemporaryDir dir;
        QByteArray ev;
        ev += cpu("ProfilerStep#3", "user_annotation", 0, 1000);
        // all_reduce: one SendRecv kernel [200, 260) us, launched through record_param_comms.
        ev += cpu("nccl:all_reduce", "cpu_op", 100, 30);
        ev += cpu("record_param_comms", "cpu_op", 101, 28);
        ev += cpu("cudaLaunchKernel", "cuda_runtime", 102, 3, 1);
        ev += kernel(kSendRecv, 17, 200, 60, 1);
        // all_to_all: two SendRecv kernels [400, 450) and [450, 470); compute [430, 455) hides 25 us of them.
        ev += cpu("nccl:all_to_all", "cpu_op", 300, 30);
        ev += cpu("cudaLaunchKernel", "cuda_runtime", 302, 3, 2);
        ev += cpu("cudaLaunchKernel", "cuda_runtime", 310, 2, 3);
        ev += kernel(kSendRecv, 17, 400, 50, 2);
        ev += kernel(kSendRecv, 17, 450, 20, 3);
        ev += cpu("aten::mm", "cpu_op", 500, 10);
        ev += cpu("cudaLaunchKernel", "cuda_runtime", 501, 2, 4);
        ev += kernel("ampere_sgemm_128x64_nn", 7, 430, 25, 4);
        // NCCL's own NVTX range around a call (as Nsight Systems records it): all_reduce of a SendRecv kernel
        // [800, 805) us.
        ev += cpu("ncclAllReduce", "user_annotation", 780, 10);
        ev += cpu("cudaLaunchKernel", "cuda_runtime", 782, 3, 5);
        ev += kernel(kSendRecv, 17, 800, 5, 5);
        // No launch record: the kernel's arguments, then its name.
        ev += kernel(
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 17, 700, 20, 98, ", \"Collective name\": \"allreduce\"");
        ev += kernel(kSendRecv, 17, 600, 10, 99);
        testing::write(dir, QStringLiteral("rank0.json"), file(ev));
        auto trace = loadTrace(dir.path().toStdString());
        auto analysis = analyze(*trace, Rules::defaults());
        const CommOps ops = commOperations(*trace, *analysis, 0, trace->extent);
        QCOMPARE(ops.ops.size(), std::size_t(5));
        auto check = [&](std::size_t k, const char* op, const char* call, CommOpSource source, std::uint64_t count,
                         TimeNs busy, TimeNs exposed, const char* kernelType) {
            const CommOpReport& o = ops.ops[k];
            QCOMPARE(o.op, std::string(op));
            QCOMPARE(o.call, std::string(call));
            QCOMPARE(o.source, source);
            QCOMPARE(o.count, count);
            QCOMPARE(o.busyNs, busy);
            QCOMPARE(o.exposedNs, exposed);
            QCOMPARE(o.kernelType, std::string(kernelType));
        };
        check(0, "all_to_all", "nccl:all_to_all", CommOpSource::Region, 2, 70'000, 45'000, "send_recv");
        check(1, "all_reduce", "nccl:all_reduce", CommOpSource::Region, 1, 60'000, 60'000, "send_recv");
        check(2, "all_reduce", "allreduce", CommOpSource::KernelArgs, 1, 20'000, 20'000, "all_reduce");
        check(3, "send_recv", "", CommOpSource::KernelName, 1, 10'000, 10'000, "send_recv");
        check(4, "all_reduce", "ncclAllReduce", CommOpSource::Region, 1, 5'000, 5'000, "send_recv");
        QCOMPARE(ops.kernelKeys.size(), std::size_t(6));
        // No process group recorded: one role, unknown, with every kernel; its busy time is the union of all six.
        QCOMPARE(ops.roles.size(), std::size_t(1));
        QCOMPARE(ops.roles[0].role, std::string("unknown"));
        QCOMPARE(ops.roles[0].count, std::uint64_t(6));
        QCOMPARE(ops.roles[0].busyNs, TimeNs(60'000 + 70'000 + 20'000 + 10'000 + 5'000));
        // The report carries it, and a window clips it.
        StatsReportOptions o;
        o.window = { trace->extent.start, trace->extent.start + 455'000 };
        const CommOps clipped = commOperations(*trace, *analysis, 0, o.window);
        QCOMPARE(clipped.ops.size(), std::size_t(2));
        QCOMPARE(clipped.ops[0].op, std::string("all_reduce"));
        QCOMPARE(clipped.ops[0].busyNs, TimeNs(60'000));
        QCOMPARE(clipped.ops[1].op, std::string("all_to_all"));
        QCOMPARE(clipped.ops[1].busyNs, TimeNs(55'000));
        QCOMPARE(clipped.ops[1].exposedNs, TimeNs(30'000));
    }

    // Two ranks, one step each: the job's window of the step is the hull of both ranks' step windows; each rank's
    // bubble is that window minus its compute in it.
    // FSDP: all-gather on stream 20 and reduce-scatter on stream 21 of one communicator (process group "0"). Rank 0's
    // reduce-scatter [150, 260) us starts while its all-gather [100, 200) still runs: NCCL runs the communicator's
    // operations one after the other, so it is queued behind the all-gather for 50 us, then both ranks (rank 1's
    // reduce-scatter [200, 260)) transfer for 60 us. Rank 1's all-gather [120, 200): rank 0 waits 20 us for it.
    void queuedBehindOneCommunicator()
    {
        QTemporaryDir dir;
        for (int r = 0; r < 2; ++r) {
            const QByteArray pg = ", \"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1]\"";
            QByteArray ev;
            ev += cpu("ProfilerStep#1", "user_annotation", 0, 1000);
            ev += cpu("nccl:_all_gather_base", "cpu_op", 10, 20);
            ev += cpu("cudaLaunchKernel", "cuda_runtime", 12, 3, 1);
            ev += cpu("nccl:_reduce_scatter_base", "cpu_op", 40, 20);
            ev += cpu("cudaLaunchKernel", "cuda_runtime", 42, 3, 2);
            ev += kernel("ncclDevKernel_AllGather_RING_LL(x)", 20, r == 0 ? 100 : 120, r == 0 ? 100 : 80, 1,
                ", \"Collective name\": \"_allgather_base\"" + pg);
            ev += kernel("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(x)", 21, r == 0 ? 150 : 200, r == 0 ? 110 : 60, 2,
                ", \"Collective name\": \"_reduce_scatter_base\"" + pg);
            testing::write(dir, QStringLiteral("rank%1.json").arg(r), file(ev));
        }
        RunOptions options;
        options.collectives = true;
        const OpenedRun run = openRun(dir.path().toStdString(), options);
        const CollectiveMatch& match = *run.collectives;
        QCOMPARE(match.groups.size(), std::size_t(2));
        QCOMPARE(match.ranks[0].queuedNs, TimeNs(50'000));
        QCOMPARE(match.ranks[1].queuedNs, TimeNs(0));
        QCOMPARE(match.ranks[0].waitNs, TimeNs(20'000));
        QCOMPARE(match.ranks[0].transferNs, TimeNs(80'000 + 60'000));
        QCOMPARE(match.ranks[1].transferNs, TimeNs(80'000 + 60'000));
        StatsReportOptions o;
        o.window = run.trace->extent;
        StatsReport report = buildStatsReport(*run.trace, *run.analysis, o);
        fillStepCollectives(report.ranks[0], match, 0, o.window);
        const auto& ops = report.ranks[0].commOps.ops;
        QCOMPARE(ops.size(), std::size_t(2));
        QCOMPARE(ops[0].op, std::string("reduce_scatter"));
        QCOMPARE(ops[0].call, std::string("nccl:_reduce_scatter_base"));
        QCOMPARE(ops[0].busyNs, TimeNs(110'000));
        QCOMPARE(ops[0].queuedNs, TimeNs(50'000));
        QCOMPARE(ops[0].queuedBehind, std::string("all_gather"));
        QCOMPARE(ops[0].waitNs, TimeNs(0));
        QCOMPARE(ops[0].transferNs, TimeNs(60'000));
        QCOMPARE(ops[1].op, std::string("all_gather"));
        QCOMPARE(ops[1].queuedNs, TimeNs(0));
        QCOMPARE(ops[1].waitNs, TimeNs(20'000));
        QCOMPARE(ops[1].transferNs, TimeNs(80'000));
        const std::string json = statsJson(report, o);
        QVERIFY(json.find("\"queued_ns\": 50000, \"queued_behind\": \"all_gather\"") != std::string::npos);
        QCOMPARE(json.find("\"queued_behind\"", json.find("\"queued_behind\"") + 1), std::string::npos);
        // The communication streams' rows name their process group and its role ("0" names no role, but it holds every
        // rank of the job and is its only group: data parallel by the layout of the groups).
        const auto index = ViewIndex::build(*run.trace, run.analysis.get());
        int labelled = 0;
        for (const TimelineRow& row : buildRows(*run.trace, *index, {}))
            if (row.label.find("NCCL dp \xC2\xB7 0") != std::string::npos)
                ++labelled;
        QCOMPARE(labelled, 4); // streams 20 and 21 of both ranks
        const std::string text = statsTable(report, o);
        QVERIFY2(text.find("reduce_scatter queued behind all_gather for 50") != std::string::npos, text.c_str());
    }

    void bubbles()
    {
        std::vector<std::vector<StepWindow>> steps(2);
        steps[0].push_back({ 4, "ProfilerStep#4", { 100, 600 }, { 0, 1000 } });
        steps[1].push_back({ 4, "ProfilerStep#4", { 300, 1100 }, { 200, 1200 } });
        steps[1].push_back({ 5, "ProfilerStep#5", { 1100, 1500 }, { 1200, 1600 } });
        const auto w = jobStepWindows(steps);
        QCOMPARE(w.size(), std::size_t(2));
        QCOMPARE(w.at(4).start, TimeNs(100));
        QCOMPARE(w.at(4).end, TimeNs(1100));
        QCOMPARE(w.at(5).start, TimeNs(1100));
        QCOMPARE(w.at(5).end, TimeNs(1500));

        QTemporaryDir dir;
        for (int r = 0; r < 2; ++r) {
            QByteArray ev;
            const double base = r * 200;
            ev += cpu("ProfilerStep#4", "user_annotation", base, 1000);
            ev += cpu("aten::mm", "cpu_op", base + 10, 10);
            ev += cpu("cudaLaunchKernel", "cuda_runtime", base + 11, 2, 1);
            ev += kernel("ampere_sgemm_128x64_nn", 7, base + 100, r == 0 ? 500 : 800, 1);
            testing::write(dir, QStringLiteral("rank%1.json").arg(r), file(ev));
        }
        auto trace = loadTrace(dir.path().toStdString());
        auto analysis = analyze(*trace, Rules::defaults());
        StatsReportOptions o;
        o.window = trace->extent;
        const StatsReport report = buildStatsReport(*trace, *analysis, o);
        QCOMPARE(report.ranks.size(), std::size_t(2));
        QCOMPARE(report.ranks[0].steps.size(), std::size_t(1));
        QCOMPARE(report.ranks[1].steps.size(), std::size_t(1));
        // The steps' windows: from the step's start to the end of its GPU work, rank 0's [0, 600) us and rank 1's
        // [200, 1100) us (rank 0's step at 0: the trace starts there); the job's window of the step is [0, 1100) us.
        QCOMPARE(report.ranks[0].steps[0].range.start, TimeNs(0));
        QCOMPARE(report.ranks[0].steps[0].range.end, TimeNs(600'000));
        QCOMPARE(report.ranks[1].steps[0].range.start, TimeNs(200'000));
        QCOMPARE(report.ranks[1].steps[0].range.end, TimeNs(1'100'000));
        QCOMPARE(report.ranks[0].steps[0].bubbleNs, TimeNs(1'100'000 - 500'000));
        QCOMPARE(report.ranks[1].steps[0].bubbleNs, TimeNs(1'100'000 - 800'000));
        // In the JSON of every step.
        const std::string json = statsJson(report, o);
        QVERIFY(json.find("\"bubble_ns\": 600000") != std::string::npos);
        QVERIFY(json.find("\"bubble_ns\": 300000") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestCommOps)
#include "tst_commops.moc"
