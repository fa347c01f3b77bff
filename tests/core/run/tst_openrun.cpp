// SPDX-License-Identifier: GPL-3.0-or-later
// openRun: input detection, the stages in order, the rank subset, the stall watchdog, cancel, the address-space cap.
#include "analysis/statistics.h"
#include "run/inputkinds.h"
#include "run/openrun.h"
#include "support/demoarchive.h"
#include "support/kinetotraces.h"
#include "support/nsystraces.h"
#include "support/testtraces.h"
#include "synth/archivewriter.h"

#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sys/resource.h>
#include <thread>

using namespace exposure;

class TestOpenRun : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_run = testing::writeDemoArchives(m_dir, QStringLiteral("run"), 3, 2);
    }

    void detectsEachKind()
    {
        const RunInput otf2 = detectInput(m_run);
        QCOMPARE(std::string(otf2.kind->name), std::string("OTF2"));
        QCOMPARE(otf2.archives.size(), std::size_t(3));
        QTemporaryDir dir;
        const QString file = testing::write(dir, QStringLiteral("rank1.pt.trace.json.gz"), testing::rankTrace(1, 2));
        const RunInput kineto = detectInput(file.toStdString());
        QCOMPARE(std::string(kineto.kind->name), std::string("torch.profiler"));
        QCOMPARE(kineto.files, std::vector<std::string> { file.toStdString() });
        const RunInput folder = detectInput(dir.path().toStdString());
        QCOMPARE(folder.kind, kineto.kind);
        QCOMPARE(folder.files, kineto.files);
        // A folder of one Chrome trace (beside its description) opens as that trace; of two, as torch.profiler files.
        QTemporaryDir chrome;
        const QByteArray events = R"([{"ph": "X", "name": "gemm", "pid": 0, "tid": 1, "ts": 1, "dur": 2}])";
        const QString timeline = testing::write(chrome, QStringLiteral("timeline.json.gz"), events);
        testing::write(chrome, QStringLiteral("meta.yaml"), "workers: 1\n");
        const RunInput one = detectInput(chrome.path().toStdString());
        QCOMPARE(std::string(one.kind->name), std::string("Chrome trace"));
        QCOMPARE(one.files, std::vector<std::string> { timeline.toStdString() });
        QCOMPARE(one.path, chrome.path().toStdString());
        testing::write(chrome, QStringLiteral("other.json"), events);
        QCOMPARE(std::string(detectInput(chrome.path().toStdString()).kind->name), std::string("torch.profiler"));
        // Nsight Systems: an export by its name or by its SQLite header, a folder of exports, a report (.nsys-rep)
        // unless its export lies beside it.
        QTemporaryDir reports;
        const std::string a = reports.filePath(QStringLiteral("a.sqlite")).toStdString();
        const std::string b = reports.filePath(QStringLiteral("b.db")).toStdString();
        {
            testing::NsysWriter wa(a), wb(b);
        }
        const RunInput nsys = detectInput(a);
        QCOMPARE(std::string(nsys.kind->name), std::string("Nsight Systems"));
        QCOMPARE(detectInput(b).kind, nsys.kind);
        testing::write(reports, QStringLiteral("a.nsys-rep"), "report");
        testing::write(reports, QStringLiteral("c.nsys-rep"), "report");
        const RunInput nsysFolder = detectInput(reports.path().toStdString());
        QCOMPARE(nsysFolder.kind, nsys.kind);
        QCOMPARE(nsysFolder.files,
            (std::vector<std::string> { a, reports.filePath(QStringLiteral("c.nsys-rep")).toStdString() }));
    }

    void unknownPathReportsTheFirstKindsReason()
    {
        const std::string missing = m_dir.filePath(QStringLiteral("nope")).toStdString();
        try {
            openRun(missing);
            QFAIL("no LoadError");
        } catch (const LoadError& e) {
            QCOMPARE(std::string(e.what()), missing + ": no such file or folder");
        }
    }

    void stagesRunInOrder()
    {
        RunOptions options;
        options.viewIndex = true;
        options.collectives = true;
        std::vector<RunStage> stages;
        options.stageStarted = [&](RunStage s) { stages.push_back(s); };
        const OpenedRun run = openRun(m_run, options);
        const std::vector<RunStage> expected { RunStage::Detect, RunStage::Ranks, RunStage::Estimate, RunStage::Import,
            RunStage::Consistency, RunStage::Analyse, RunStage::Align, RunStage::ViewIndex, RunStage::Collectives };
        QVERIFY(stages == expected);
        QCOMPARE(run.trace->ranks.size(), std::size_t(3));
        QVERIFY(run.analysis && run.viewIndex && run.collectives);
        QCOMPARE(run.analysis->ranks.size(), std::size_t(3));
        QCOMPARE(run.viewIndex->lod.size(), std::size_t(3));

        RunOptions importOnly;
        importOnly.analyse = false;
        const OpenedRun bare = openRun(m_run, importOnly);
        QVERIFY(bare.trace && !bare.analysis && !bare.viewIndex && !bare.collectives);
    }

    // Which Score-P region names mark idle time or a synchronisation is the rules' to say (their "idle" category,
    // sub-groups idle and sync): an edited rule changes what the import makes of a name that carries no mark of its
    // own (no role, no CUDA_IDLE / CUDA_SYNC file), and what the statistics count as compute.
    void markerRegionsFollowTheRules()
    {
        QTemporaryDir dir;
        synth::ArchiveSpec spec;
        synth::RankSpec& rank = spec.addRank(0);
        rank.threads[0].regions
            = { { "main", 0, 10'000 }, { "TRACE BUFFER FLUSH", 2'000, 3'000, synth::RegionRole::Artificial } };
        synth::StreamSpec& stream = rank.addStream(0, 7);
        stream.kernels
            = { { "gemm_kernel", 1'000, 2'000 }, { "gpu pause", 3'000, 5'000 }, { "gemm_kernel", 6'000, 8'000 } };
        synth::writeArchive(dir.path().toStdString(), spec);
        const std::string path = dir.filePath(QStringLiteral("rank0")).toStdString();

        auto kindOf = [](const Trace& t, std::string_view name) {
            const StringId id = t.strings.find(name);
            return id < t.regionKinds.size() ? t.regionKinds[id] : RegionKind::Unknown;
        };
        const OpenedRun builtIn = openRun(path, RunOptions {});
        QCOMPARE(kindOf(*builtIn.trace, "TRACE BUFFER FLUSH"), RegionKind::Sync);
        QCOMPARE(kindOf(*builtIn.trace, "gpu pause"), RegionKind::Kernel);
        QCOMPARE(
            computeStats(*builtIn.trace, *builtIn.analysis, 0, builtIn.trace->extent).computeBusyNs, TimeNs(5'000));

        // The sync rule no longer names buffer flushes; the idle rule names "gpu pause".
        std::string json = Rules::defaultJson();
        const std::string flush = "|(?:trace )?buffer flush", idle = "|gpu idle|idle)$";
        QVERIFY(json.find(flush) != std::string::npos && json.find(idle) != std::string::npos);
        json.erase(json.find(flush), flush.size());
        json.replace(json.find(idle), idle.size(), "|gpu idle|idle|gpu pause)$");
        RunOptions edited;
        edited.rules = Rules::fromJson(json, "edited rules");
        const OpenedRun run = openRun(path, edited);
        QCOMPARE(kindOf(*run.trace, "TRACE BUFFER FLUSH"), RegionKind::HostRegion);
        QCOMPARE(kindOf(*run.trace, "gpu pause"), RegionKind::Idle);
        QCOMPARE(computeStats(*run.trace, *run.analysis, 0, run.trace->extent).computeBusyNs, TimeNs(3'000));
    }

    void rankSubset()
    {
        RunOptions options;
        options.load.ranks = { 0, 2 };
        const OpenedRun run = openRun(m_run, options);
        QCOMPARE(run.trace->ranks.size(), std::size_t(2));
        QCOMPARE(run.trace->ranks[0].rank, 0);
        QCOMPARE(run.trace->ranks[1].rank, 2);

        QTemporaryDir dir;
        const QString file = testing::write(dir, QStringLiteral("rank0.json"), testing::rankTrace(0, 1));
        try {
            openRun(file.toStdString(), options);
            QFAIL("no LoadError");
        } catch (const LoadError& e) {
            QCOMPARE(std::string(e.what()),
                file.toStdString()
                    + ": choosing ranks (--ranks 0,2) works for folders of OTF2 archives; open the torch.profiler "
                      "file of each rank you want instead");
        }
        options.load.ranks = { 7 };
        try {
            openRun(m_run, options);
            QFAIL("no LoadError");
        } catch (const LoadError& e) {
            QCOMPARE(std::string(e.what()), m_run + ": none of the ranks 7 is among its 3 archives");
        }
        QCOMPARE(selectableRanks(m_run), (std::vector<int> { 0, 1, 2 }));
        QVERIFY(selectableRanks(file.toStdString()).empty());
    }

    // A reader that makes no progress and does not look at the cancel flag is left behind after stallSeconds.
    void stallIsALoadError()
    {
        auto release = std::make_shared<std::atomic<bool>>(false);
        RunOptions options;
        options.stallSeconds = 1;
        options.read = [release](const std::string&, const LoadOptions&) {
            while (!release->load())
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            return testing::makeDdpTrace(1, 1);
        };
        const auto start = std::chrono::steady_clock::now();
        try {
            openRun("stuck.otf2", options);
            QFAIL("no LoadStalled");
        } catch (const LoadStalled& e) {
            QCOMPARE(std::string(e.what()),
                std::string("stuck.otf2: reading stopped making progress for 1 s inside "
                            "the OTF2 library (a damaged event file: check it with "
                            "otf2-print)"));
        }
        QVERIFY(std::chrono::steady_clock::now() - start >= std::chrono::seconds(1));
        release->store(true);
    }

    // Progress resets the stall clock: a slow reader that reports progress is not stalled.
    void progressKeepsALoadAlive()
    {
        RunOptions options;
        options.stallSeconds = 1;
        options.analyse = false;
        options.read = [](const std::string&, const LoadOptions& o) {
            for (std::uint64_t i = 1; i <= 30; ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                o.progress(LoadProgress { i, 30, "slow", 0, 0 });
            }
            return testing::makeDdpTrace(2, 1);
        };
        QCOMPARE(openRun("slow", options).trace->ranks.size(), std::size_t(2));
    }

    // Cancel stops a real read: the OTF2 reader of a generated run, cancelled from its first progress report that
    // knows the number of events, throws LoadCancelled and reads no further (not half of the events).
    void cancelStopsTheReader()
    {
        QTemporaryDir dir;
        const std::string big = testing::writeDemoArchives(dir, QStringLiteral("big"), 2, 2000);
        std::atomic<bool> cancel { false };
        LoadProgress atCancel;
        std::uint64_t total = 0, mostRead = 0;
        RunOptions options;
        options.analyse = false;
        options.load.threads = 1; // one reader: the archives are read one after the other
        options.load.cancel = &cancel;
        options.load.progress = [&](const LoadProgress& p) {
            total = std::max(total, p.eventsTotal);
            mostRead = std::max(mostRead, p.eventsRead);
            // The first report that knows the number of events (the definitions are read): from there on the reader
            // reads at most the chunk it is in (65 536 events per location).
            if (!cancel && p.eventsTotal > 0) {
                atCancel = p;
                cancel = true;
            }
        };
        QVERIFY_THROWS_EXCEPTION(LoadCancelled, openRun(big, options));
        QVERIFY2(cancel.load(), "no progress report with the number of events");
        QVERIFY(total > 100'000);
        QVERIFY2(mostRead < total / 2,
            qPrintable(QString::number(mostRead) + QStringLiteral(" of ") + QString::number(total)));
        // A fake reader sees the flag through the watch, too (the watch forwards the caller's flag).
        std::atomic<bool> cancel2 { false };
        std::atomic<bool> sawCancel { false };
        RunOptions fake;
        fake.load.cancel = &cancel2;
        fake.read = [&](const std::string&, const LoadOptions& o) -> std::shared_ptr<Trace> {
            std::thread([&cancel2] {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                cancel2 = true;
            }).detach();
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
            while (!o.cancel->load() && std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            sawCancel = o.cancel->load();
            throw LoadCancelled();
        };
        QVERIFY_THROWS_EXCEPTION(LoadCancelled, openRun("x", fake));
        QVERIFY(sawCancel.load());
    }

    // Other failures of a reader become a LoadError naming the path.
    void otherExceptionsBecomeLoadErrors()
    {
        RunOptions options;
        options.read = [](const std::string&, const LoadOptions&) -> std::shared_ptr<Trace> {
            throw std::runtime_error("broken");
        };
        try {
            openRun("p", options);
            QFAIL("no LoadError");
        } catch (const LoadError& e) {
            QCOMPARE(std::string(e.what()), std::string("p: broken"));
        }
    }

    // The address space is capped while reading (from the estimate) and the limits come back afterwards. The cap is
    // the process's size when the estimate arrives plus twice the estimate plus 1 GiB (watchedread.cpp), at most the
    // limit the process had.
    void addressSpaceCapIsRestored()
    {
        rlimit before {};
        QCOMPARE(getrlimit(RLIMIT_AS, &before), 0);
        rlimit during {};
        std::uint64_t estimate = 0, vmSizeKb = 0;
        int calls = 0;
        RunOptions options;
        options.load.memoryEstimated = [&](std::uint64_t e) {
            ++calls;
            estimate = e;
            getrlimit(RLIMIT_AS, &during);
            std::ifstream status("/proc/self/status");
            for (std::string line; std::getline(status, line);)
                if (line.rfind("VmSize:", 0) == 0)
                    vmSizeKb = std::strtoull(line.c_str() + 7, nullptr, 10);
        };
        openRun(m_run, options);
        rlimit after {};
        QCOMPARE(getrlimit(RLIMIT_AS, &after), 0);
        QCOMPARE(after.rlim_cur, before.rlim_cur);
        QCOMPARE(calls, 1);
        QVERIFY(estimate > 0);
        QVERIFY(vmSizeKb > 0);
        const std::uint64_t formula = vmSizeKb * 1024 + 2 * estimate + (1ull << 30);
        const std::uint64_t expected
            = before.rlim_cur == RLIM_INFINITY ? formula : std::min<std::uint64_t>(formula, before.rlim_cur);
        // The process's size read here and inside the cap differ only by what was mapped in between (none, or a
        // thread's arena): 64 MiB of slack, far below the 1 GiB and the estimate the formula adds.
        const auto cap = std::uint64_t(during.rlim_cur);
        QVERIFY2(cap != RLIM_INFINITY && cap + (64ull << 20) >= expected && cap <= expected + (64ull << 20),
            qPrintable(QStringLiteral("cap %1, expected %2").arg(cap).arg(expected)));
    }

private:
    QTemporaryDir m_dir;
    std::string m_run;
};

QTEST_GUILESS_MAIN(TestOpenRun)
#include "tst_openrun.moc"
