// SPDX-License-Identifier: GPL-3.0-or-later
// run/jobcheck: files of one folder that belong to different jobs (programs, world sizes, clocks hours apart) open
// as one run with one warning naming the groups; one job on several hosts gives none; threads named for another rank
// are flagged.
#include "model/timeformat.h"
#include "run/jobcheck.h"
#include "run/openrun.h"
#include "support/kinetotraces.h"
#include "support/nsystraces.h"

#include <QTemporaryDir>
#include <QTest>
#include <algorithm>

using namespace exposure;
using exposure::testing::nsysTid;
using exposure::testing::NsysWriter;

namespace {

constexpr std::int64_t kBase = 1'000'000'000;

// One process `pid` of `program` on `host`: a thread named `thread` launching two kernels on stream 7.
void writeReport(const std::string& path, const std::string& program, const std::string& host,
    const std::string& thread, std::int64_t pid = 4242, std::int64_t sessionStart = -1)
{
    NsysWriter w(path);
    w.gpu(0, "NVIDIA H100");
    w.process(pid, program);
    w.process(pid - 1, "mpirun"); // a launcher without GPU work: no rank, no program of the job
    w.host(host);
    if (sessionStart >= 0)
        w.sessionStart(sessionStart);
    w.threadName(nsysTid(pid, pid), thread);
    w.runtime(nsysTid(pid, pid), kBase, kBase + 1'000, 1, "cudaLaunchKernel_v7000");
    w.kernel(pid, 0, 7, kBase + 2'000, kBase + 12'000, 1, "saxpy_kernel");
    w.runtime(nsysTid(pid, pid), kBase + 3'000, kBase + 4'000, 2, "cudaLaunchKernel_v7000");
    w.kernel(pid, 0, 7, kBase + 12'000, kBase + 30'000, 2, "reduce_kernel");
}

std::vector<std::string> jobWarnings(const Trace& t)
{
    std::vector<std::string> out;
    std::copy_if(t.warnings.begin(), t.warnings.end(), std::back_inserter(out), isJobWarning);
    return out;
}

const char* kTail = "; they were opened as one run, though their ranks are not one job's (open each job separately, or "
                    "compare them)";

} // namespace

class TestJobCheck : public QObject
{
    Q_OBJECT
private slots:
    // The case: CloverLeaf and saxpy, two hosts, in one folder.
    void twoProgramsInOneFolderAreTwoJobs()
    {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        writeReport(d + "/cloverleaf.sqlite", "/opt/apps/cloverleaf", "gpu-node-1", "MPI Rank 0");
        writeReport(d + "/saxpy.sqlite", "saxpy", "gpu-node-7", "MPI Rank 0");
        const auto t = loadTrace(d);
        QCOMPARE(t->ranks.size(), std::size_t(2)); // still loadable as one run
        const auto jobs = jobWarnings(*t);
        QCOMPARE(jobs.size(), std::size_t(1));
        QCOMPARE(jobs[0],
            d
                + ": the files look like 2 different jobs (different programs): cloverleaf.sqlite (program cloverleaf, "
                  "host gpu-node-1) and saxpy.sqlite (program saxpy, host gpu-node-7)"
                + kTail);
        // Rank 1 (saxpy, numbered by the order of the files) runs a thread its program named "MPI Rank 0".
        const std::string thread = d
            + "/saxpy.sqlite: Rank 1: its thread \"MPI Rank 0\" is named for rank 0, not 1 "
              "(the rank numbers, taken from the files' names or order, or the files "
              "themselves may not belong together)";
        QCOMPARE(std::count(t->warnings.begin(), t->warnings.end(), thread), 1l);
        QCOMPARE(threadRankWarnings(*t), std::vector<std::string>({ thread }));

        const JobSplit split = splitJobs(d, describeFiles(*t));
        QCOMPARE(split.groups, std::vector<std::vector<std::size_t>>({ { 0 }, { 1 } }));
        QCOMPARE(split.reasons, std::vector<std::string>({ "different programs" }));
    }

    // Ranks of one job on two hosts (the program and the session agree): no warning at all.
    void oneJobOnTwoHostsGivesNoWarning()
    {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        writeReport(d + "/train_rank0.sqlite", "python3", "gpu-node-1", "MPI Rank 0", 100, 1'790'000'000'000'000'000);
        writeReport(d + "/train_rank1.sqlite", "python3", "gpu-node-2", "MPI Rank 1", 200, 1'790'000'002'000'000'000);
        const auto t = loadTrace(d);
        QCOMPARE(t->ranks.size(), std::size_t(2));
        QCOMPARE(t->ranks[1].host, std::string("gpu-node-2"));
        QCOMPARE(t->warnings, std::vector<std::string>());
        const auto files = describeFiles(*t);
        QCOMPARE(files.size(), std::size_t(2));
        QCOMPARE(files[1].program, std::string("python3"));
        QCOMPARE(files[1].span.start, 1'790'000'002'000'000'000 + kBase); // the session start plus the first call
        QCOMPARE(files[1].span.end, 1'790'000'002'000'000'000 + kBase + 30'000);
        QCOMPARE(splitJobs(d, files).groups.size(), std::size_t(1));
    }

    // The same program recorded on two days: the clocks of the sessions put them 26 hours apart.
    void recordingsHoursApartAreTwoJobs()
    {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        const std::int64_t day = 86'400'000'000'000;
        writeReport(d + "/a_rank0.sqlite", "python3", "n1", "MPI Rank 0", 100, 1'790'000'000'000'000'000);
        writeReport(d + "/b_rank1.sqlite", "python3", "n1", "MPI Rank 1", 200,
            1'790'000'000'000'000'000 + day + 7'200'000'000'000);
        const auto t = loadTrace(d);
        const auto jobs = jobWarnings(*t);
        QCOMPARE(jobs.size(), std::size_t(1));
        // The gap runs from the first one's last kernel end to the second one's first call.
        const std::string gap = formatDuration(day + 7'200'000'000'000 - 30'000);
        QCOMPARE(jobs[0],
            d + ": the files look like 2 different jobs (recorded " + gap
                + " apart): a_rank0.sqlite (program python3, host n1) and b_rank1.sqlite (program python3, host n1)"
                + kTail);
    }

    // torch.profiler: a 1-GPU run next to a 2-GPU run (world sizes 1 and 2; both have a rank 0).
    void differentWorldSizesAreTwoJobs()
    {
        QTemporaryDir dir;
        testing::write(dir, QStringLiteral("ws1_rank0.json"), testing::rankTrace(0, 1));
        testing::write(dir, QStringLiteral("ws2_rank0.json"), testing::rankTrace(0, 2));
        testing::write(dir, QStringLiteral("ws2_rank1.json"), testing::rankTrace(1, 2));
        const std::string d = dir.path().toStdString();
        const auto t = loadTrace(d);
        QCOMPARE(t->ranks.size(), std::size_t(3));
        QCOMPARE(t->ranks[2].rank, 2); // numbered by the order of the files: their own numbers repeat
        const auto jobs = jobWarnings(*t);
        QCOMPARE(jobs.size(), std::size_t(1));
        QCOMPARE(jobs[0],
            d
                + ": the files look like 2 different jobs (different world sizes): ws1_rank0.json (world size 1) and "
                  "ws2_rank0.json, ws2_rank1.json (world size 2)"
                + kTail);
        QVERIFY(std::count(t->warnings.begin(), t->warnings.end(),
            d + ": rank numbers follow the natural order of the files (the files declare different world sizes)"));
        QCOMPARE(splitJobs(d, describeFiles(*t)).groups, std::vector<std::vector<std::size_t>>({ { 0 }, { 1, 2 } }));
        // One 2-GPU run alone: one job.
        QTemporaryDir one;
        const auto run = loadTrace(testing::writeKinetoRun(one, QStringLiteral("run"), 2).toStdString());
        QCOMPARE(jobWarnings(*run), std::vector<std::string>());
    }

    // Hosts alone never split a run; a difference counts only where every file records the thing.
    void hostsAloneOrUnknownsDoNotSplit()
    {
        std::vector<FileJob> files(3);
        for (int i = 0; i < 3; ++i) {
            files[i].file = "/x/r" + std::to_string(i) + ".json";
            files[i].hosts = { "host" + std::to_string(i) };
            files[i].ranks = { i };
            files[i].worldSize = 3;
        }
        QCOMPARE(splitJobs("/x", files).groups.size(), std::size_t(1));
        files[2].program = "saxpy"; // the others record no program: no evidence
        files[1].worldSize = -1;
        QCOMPARE(splitJobs("/x", files).warning, std::string());
        files[0].program = "cloverleaf";
        files[1].program = "saxpy";
        files[0].worldSize = 2;
        files[1].worldSize = 2;
        files[2].worldSize = 4;
        const JobSplit split = splitJobs("/x", files);
        QCOMPARE(split.groups, std::vector<std::vector<std::size_t>>({ { 0 }, { 1 }, { 2 } }));
        QCOMPARE(split.warning,
            std::string("/x: the files look like 3 different jobs (different programs, different world sizes): "
                        "r0.json (program cloverleaf, world size 2, host host0); r1.json (program saxpy, world size 2, "
                        "host host1); and r2.json (program saxpy, world size 4, host host2)")
                + kTail);
    }

    void threadNamesThatNameARank()
    {
        TraceBuilder b;
        const int r0 = b.addRank("Rank 0", "n", 0, 0);
        const int r1 = b.addRank("Rank 1", "n", 0, 1);
        for (const char* name : { "MPI Rank 1", "rank 1", "PP rank 0, TP rank 0, compute", "pt_autograd_0" }) {
            const int lane = b.addLane(r1, name, LaneKind::CpuThread);
            b.addInterval(r1, lane, 0, 10, "x", RegionKind::HostRegion);
        }
        for (const char* name : { "MPI Rank 0", "Rank#3", "mpi_rank_2 worker" }) {
            const int lane = b.addLane(r0, name, LaneKind::CpuThread);
            b.addInterval(r0, lane, 0, 10, "x", RegionKind::HostRegion);
        }
        auto t = b.finish();
        t->sourcePath = "/t";
        const auto w = threadRankWarnings(*t);
        QCOMPARE(w.size(), std::size_t(2));
        QVERIFY(w[0].rfind("/t: Rank 0: its thread \"Rank#3\" is named for rank 3, not 0 (", 0) == 0);
        QVERIFY(w[1].rfind("/t: Rank 0: its thread \"mpi_rank_2 worker\" is named for rank 2, not 0 (", 0) == 0);
    }
};

QTEST_GUILESS_MAIN(TestJobCheck)
#include "tst_jobcheck.moc"
