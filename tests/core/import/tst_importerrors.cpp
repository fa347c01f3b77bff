// SPDX-License-Identifier: GPL-3.0-or-later
// Bad input: every case must give a LoadError naming the file and the problem (or a counted warning), never a
// crash, a hang or silently wrong numbers.
#include "import/childprocess.h"
#include "import/memorybudget.h"
#include "import/otf2reader.h"
#include "model/trace.h"
#include "run/openrun.h"
#include "support/demoarchive.h"
#include "synth/archivewriter.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <grp.h>
#include <map>
#include <sys/wait.h>
#include <unistd.h>

using namespace exposure;
using namespace exposure::synth;
namespace fs = std::filesystem;

namespace {
// Threads of this process.
long threadCount()
{
    return long(std::distance(fs::directory_iterator("/proc/self/task"), fs::directory_iterator()));
}
} // namespace

namespace {

ArchiveSpec smallSpec()
{
    ArchiveSpec spec;
    auto& r = spec.addRank(0);
    r.threads[0].regions = { { "step", 0, 50'000 }, { "cuLaunchKernel", 1'000, 2'000, RegionRole::Wrapper, 0 } };
    auto& s = r.addStream(0, 7);
    s.kernels = { { "k1", 3'000, 4'000 }, { "k2", 5'000, 9'000 } };
    return spec;
}

enum class ArchiveFile { Anchor, Definitions, StreamEvents };
enum class Damage { Remove, ReplaceByFolder, KeepBytes, KeepHalf, CutBytes };

struct Archive
{
    QTemporaryDir tmp;
    std::string root; // the trace folder (holds rank0/)
    std::string dir; // rank0/
    std::string anchor; // rank0/traces.otf2
    std::string def; // rank0/traces.def
    std::string streamEvt;

    explicit Archive(const ArchiveSpec& spec = smallSpec())
    {
        root = tmp.path().toStdString();
        writeArchive(root, spec);
        dir = root + "/rank0";
        anchor = dir + "/traces.otf2";
        def = dir + "/traces.def";
        // Location ids: 0 = Master thread, 1<<32 = metrics, 2<<32 = the first stream.
        streamEvt = dir + "/traces/" + std::to_string(2ull << 32) + ".evt";
    }

    const std::string& path(ArchiveFile f) const
    {
        return f == ArchiveFile::Anchor ? anchor : f == ArchiveFile::Definitions ? def : streamEvt;
    }
};

std::string readBytes(const std::string& file)
{
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeBytes(const std::string& file, const std::string& bytes)
{
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

void truncateTo(const std::string& file, std::uintmax_t size)
{
    fs::resize_file(file, size);
}

// Runs loadTrace and checks the LoadError: the file it names, a fragment of its problem, one line (fails the test
// if loading succeeds).
// Sets the high byte of an anchor's uint32 property count (little-endian buffer): after the format byte, 38 bytes of
// fixed fields and the machine, creator and description strings. False when the file is not the layout expected.
bool setPropertyCountHighByte(const std::string& anchor, char value)
{
    std::string bytes = readBytes(anchor);
    if (bytes.size() < 50 || bytes.substr(1, 6) != std::string("\x42OTF2\0", 6)) // little-endian buffer, magic
        return false;
    std::size_t pos = 2 + 5 + 1 + 38;
    for (int i = 0; i < 3; ++i)
        pos = bytes.find('\0', pos) + 1;
    if (pos + 4 > bytes.size() || bytes.substr(pos, 3) != std::string(3, '\0')) // the writer sets no property
        return false;
    bytes[pos + 3] = value;
    writeBytes(anchor, bytes);
    return true;
}

#define EXPECT_LOAD_ERROR_OPTS(pathExpr, opts, fileExpr, fragment)                                                     \
    do {                                                                                                               \
        bool thrown_ = false;                                                                                          \
        try {                                                                                                          \
            loadTrace(pathExpr, opts);                                                                                 \
        } catch (const LoadError& e) {                                                                                 \
            thrown_ = true;                                                                                            \
            QVERIFY2(e.file() == (fileExpr), e.what());                                                                \
            QVERIFY2(e.problem().find(fragment) != std::string::npos, e.what());                                       \
            QVERIFY2(std::string(e.what()).find('\n') == std::string::npos, e.what());                                 \
        }                                                                                                              \
        QVERIFY2(thrown_, "expected a LoadError");                                                                     \
    } while (false)
#define EXPECT_LOAD_ERROR(pathExpr, fileExpr, fragment)                                                                \
    EXPECT_LOAD_ERROR_OPTS(pathExpr, LoadOptions {}, fileExpr, fragment)

} // namespace

class TestImportErrors : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void missingPath();
    void emptyFolder();
    void folderWithoutArchive();
    void notAnAnchor();
    void missingAnchor();
    void damagedFile_data();
    void damagedFile();
    void eventFilesCutAnywhere();
    void everyFileCutAnywhere();
    void anchorThatHangsOtf2();
    void workThatNeverEndsIsKilled();
    void anchorWithHugePropertyCount();
    void anchorsCheckedTogether();
    void unreadableFile();
    void unmatchedEnterIsClosedAtLastTimestamp();
    void unmatchedLeaveIsDropped();
    void outOfOrderEventsAreDropped();
    void zeroLengthKernels();
    void timestampsNearThe64BitLimit();
    void clockJumpIsReported();
    void rankWithUnalignedClock();
    void tooLargeForTheMemoryLimit();
    void chosenRanksOnly();
};

void TestImportErrors::missingPath()
{
    QTemporaryDir tmp;
    const std::string p = tmp.path().toStdString() + "/nothing-here";
    EXPECT_LOAD_ERROR(p, p, "no such file or folder");
}

void TestImportErrors::emptyFolder()
{
    QTemporaryDir tmp;
    const std::string p = tmp.path().toStdString();
    EXPECT_LOAD_ERROR(p, p, "the folder is empty");
}

void TestImportErrors::folderWithoutArchive()
{
    QTemporaryDir tmp;
    const std::string p = tmp.path().toStdString();
    fs::create_directories(p + "/rank0/sub");
    std::ofstream(p + "/rank0/notes.txt") << "no trace here\n";
    EXPECT_LOAD_ERROR(p, p, "no OTF2 archive");
}

void TestImportErrors::notAnAnchor()
{
    Archive a;
    EXPECT_LOAD_ERROR(a.def, a.def, "not an OTF2 anchor file");
}

void TestImportErrors::missingAnchor()
{
    Archive a;
    fs::remove(a.anchor);
    EXPECT_LOAD_ERROR(a.anchor, a.anchor, "no such file");
    EXPECT_LOAD_ERROR(a.root, a.root, "no OTF2 archive");
}

// One file of the archive damaged: the load fails with a LoadError naming that file.
void TestImportErrors::damagedFile_data()
{
    QTest::addColumn<int>("file");
    QTest::addColumn<int>("damage");
    QTest::addColumn<qint64>("bytes"); // Damage::KeepBytes: kept; Damage::CutBytes: cut off the end
    QTest::addColumn<QString>("fragment");
    const int anchor = int(ArchiveFile::Anchor), def = int(ArchiveFile::Definitions),
              events = int(ArchiveFile::StreamEvents);
    QTest::newRow("anchor cut to 12 bytes")
        << anchor << int(Damage::KeepBytes) << qint64(12) << QStringLiteral("not a readable OTF2 anchor file");
    QTest::newRow("anchor emptied") << anchor << int(Damage::KeepBytes) << qint64(0) << QStringLiteral("empty");
    QTest::newRow("definitions missing") << def << int(Damage::Remove) << qint64(0)
                                         << QStringLiteral("missing global definitions file");
    QTest::newRow("definitions cut in half")
        << def << int(Damage::KeepHalf) << qint64(0) << QStringLiteral("global definitions");
    QTest::newRow("definitions emptied") << def << int(Damage::KeepBytes) << qint64(0) << QStringLiteral("empty");
    QTest::newRow("definitions replaced by a folder")
        << def << int(Damage::ReplaceByFolder) << qint64(0) << QStringLiteral("not a regular file");
    QTest::newRow("event file missing") << events << int(Damage::Remove) << qint64(0)
                                        << QStringLiteral("missing event file of location 'CUDA[0:7]'");
    QTest::newRow("event file cut by 7 bytes")
        << events << int(Damage::CutBytes) << qint64(7) << QStringLiteral("truncated event file");
}

void TestImportErrors::damagedFile()
{
    QFETCH(int, file);
    QFETCH(int, damage);
    QFETCH(qint64, bytes);
    QFETCH(QString, fragment);
    Archive a;
    const std::string& path = a.path(ArchiveFile(file));
    const auto size = fs::file_size(path);
    QVERIFY(size > 40);
    switch (Damage(damage)) {
    case Damage::Remove:
        fs::remove(path);
        break;
    case Damage::ReplaceByFolder:
        fs::remove(path);
        fs::create_directory(path);
        break;
    case Damage::KeepBytes:
        truncateTo(path, std::uintmax_t(bytes));
        break;
    case Damage::KeepHalf:
        truncateTo(path, size / 2);
        break;
    case Damage::CutBytes:
        truncateTo(path, size - std::uintmax_t(bytes));
        break;
    }
    EXPECT_LOAD_ERROR(a.root, path, fragment.toStdString());
}

// Every file of a 2-rank demo archive (anchor, global and local definitions, event files), cut at five points: the
// load either still succeeds (the cut lost nothing the reader needs, e.g. in a metrics location) or fails with a
// LoadError whose message is one line naming a file of the archive.
void TestImportErrors::everyFileCutAnywhere()
{
    QTemporaryDir tmp;
    const std::string root = tmp.path().toStdString();
    testing::writeDemoRun(root, 2, 2);
    std::vector<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.is_regular_file())
            files.push_back(e.path().string());
    QVERIFY(files.size() >= 16);
    // The intact run, against which every damaged copy that still loads is compared: a cut only loses data.
    const auto intact = loadTrace(root, {});
    QCOMPARE(intact->ranks.size(), std::size_t(2));
    const std::size_t intactIntervals = intact->intervalCount();
    QVERIFY(intactIntervals > 1000);
    int errors = 0, loads = 0;
    const std::string keep = root + "/../keep.bin";
    for (const auto& file : files) {
        fs::copy_file(file, keep, fs::copy_options::overwrite_existing);
        const auto size = fs::file_size(keep);
        for (int k = 1; k <= 5; ++k) {
            fs::copy_file(keep, file, fs::copy_options::overwrite_existing);
            truncateTo(file, size * std::uintmax_t(2 * k - 1) / 10);
            try {
                const auto t = loadTrace(root, {});
                QVERIFY(t->ranks.size() <= intact->ranks.size());
                QVERIFY2(t->intervalCount() <= intactIntervals,
                    qPrintable(
                        QString::fromStdString(file) + QStringLiteral(": ") + QString::number(t->intervalCount())));
                // A cut of a file without events (anchor, definitions) that still loads loses nothing of them.
                if (file.find(".evt") == std::string::npos)
                    QCOMPARE(t->intervalCount(), intactIntervals);
                ++loads;
            } catch (const LoadError& e) {
                const std::string what = e.what();
                QVERIFY2(what.rfind(root, 0) == 0 && what.find('\n') == std::string::npos, what.c_str());
                ++errors;
            }
        }
        fs::copy_file(keep, file, fs::copy_options::overwrite_existing);
    }
    fs::remove(keep);
    QCOMPARE(errors + loads, int(files.size()) * 5);
    QVERIFY(errors > loads);
}

// Three flipped bits in an anchor file make OTF2 3.0 loop forever in OTF2_AnchorFile_Load: the loader gives up
// after a few seconds with a clear error instead of hanging.
void TestImportErrors::anchorThatHangsOtf2()
{
    QTemporaryDir tmp;
    const std::string root = tmp.path().toStdString();
    testing::writeDemoRun(root, 2, 2);
    const std::string anchor = root + "/rank1/traces.otf2";
    std::string bytes = readBytes(anchor);
    QVERIFY(bytes.size() > 103);
    for (const auto& [offset, bit] : { std::pair { 66, 6 }, std::pair { 103, 4 }, std::pair { 46, 4 } })
        bytes[std::size_t(offset)] = char(bytes[std::size_t(offset)] ^ (1 << bit));
    // With the machine name's NUL gone (offset 46) the property count is read one string later and its high byte is
    // the first byte of the trace id, which OTF2 draws at random for every archive: 1 archive in 256 drew 0 there, read
    // as 0 properties, and CI drew one. The byte of the fuzz finding (0xe7) is written back so the case is always it.
    QCOMPARE(bytes.substr(47, 8), std::string("exposure"));
    bytes[94] = char(0xe7);
    writeBytes(anchor, bytes);
    // Refused by the property-count check before OTF2 reads it; this process runs no more threads than before.
    const auto before = threadCount();
    EXPECT_LOAD_ERROR(root, anchor, "anchor file");
    QCOMPARE(threadCount(), before);
}

// What OTF2 may never finish (an anchor no check foresees) runs in a program of its own: one that never ends is killed
// at its deadline and leaves no thread behind; one that crashes, ends or cannot start says so.
void TestImportErrors::workThatNeverEndsIsKilled()
{
    const auto before = threadCount();
    QElapsedTimer timer;
    timer.start();
    const ChildOutcome loop = runProgram({ "/bin/sh", "-c", "while :; do :; done" }, std::chrono::milliseconds(200));
    QCOMPARE(int(loop.state), int(ChildOutcome::TimedOut));
    QVERIFY(timer.elapsed() >= 200);
    QCOMPARE(threadCount(), before);
    const ChildOutcome crash = runProgram({ "/bin/sh", "-c", "kill -ABRT $$" }, std::chrono::milliseconds(5000));
    QCOMPARE(int(crash.state), int(ChildOutcome::Crashed));
    QCOMPARE(crash.signal, SIGABRT);
    const ChildOutcome done = runProgram({ "/bin/sh", "-c", "exit 7" }, std::chrono::milliseconds(5000));
    QCOMPARE(int(done.state), int(ChildOutcome::Finished));
    QCOMPARE(done.exitCode, 7);
    const ChildOutcome missing = runProgram({ "/nonexistent/program" }, std::chrono::milliseconds(5000));
    QCOMPARE(int(missing.state), int(ChildOutcome::NotStarted));
    QVERIFY(missing.error.find("/nonexistent/program") != std::string::npos);
    // The anchor reader of the build tree is found and reads a good anchor (exit 0) and refuses a text file (exit 1).
    const std::string probe = otf2ProbeProgram();
    QVERIFY2(!probe.empty(), "exposure-otf2-probe not found");
    Archive a;
    const ChildOutcome good = runProgram({ probe, a.anchor }, std::chrono::milliseconds(5000));
    QCOMPARE(int(good.state), int(ChildOutcome::Finished));
    QCOMPARE(good.exitCode, 0);
    const std::string text = a.root + "/not-an-anchor.otf2";
    std::ofstream(text) << "plain text\n";
    const ChildOutcome bad = runProgram({ probe, text }, std::chrono::milliseconds(5000));
    QCOMPARE(int(bad.state), int(ChildOutcome::Finished));
    QCOMPARE(bad.exitCode, 1);
}

// An anchor file whose property count was corrupted (found by fuzz_otf2): OTF2 3.0 would calloc 2^29 pointers and
// read strings past the end of the file; the loader refuses it before OTF2 opens it.
void TestImportErrors::anchorWithHugePropertyCount()
{
    Archive a;
    QVERIFY(setPropertyCountHighByte(a.anchor, 0x10));
    EXPECT_LOAD_ERROR(a.root, a.anchor, "announces 268435456 properties");
}

// The anchors of a run are checked together before any is read (several probe programs at once), and the error is
// the first bad anchor's in rank order, as reading them one after another would report it; a run whose anchors were
// checked before loads again.
void TestImportErrors::anchorsCheckedTogether()
{
    const auto before = threadCount();
    QElapsedTimer timer;
    timer.start();
    const std::vector<std::vector<std::string>> programs { { "/bin/sh", "-c", "while :; do :; done" },
        { "/bin/sh", "-c", "while :; do :; done" }, { "/bin/sh", "-c", "exit 3" }, { "/nonexistent/program" } };
    const auto outcomes = runPrograms(programs, std::chrono::milliseconds(200), 2);
    QCOMPARE(outcomes.size(), std::size_t(4));
    QCOMPARE(int(outcomes[0].state), int(ChildOutcome::TimedOut));
    QCOMPARE(int(outcomes[1].state), int(ChildOutcome::TimedOut));
    QCOMPARE(int(outcomes[2].state), int(ChildOutcome::Finished));
    QCOMPARE(outcomes[2].exitCode, 3);
    QCOMPARE(int(outcomes[3].state), int(ChildOutcome::NotStarted));
    QVERIFY(timer.elapsed() >= 200);
    QCOMPARE(threadCount(), before);

    QTemporaryDir tmp;
    const std::string root = tmp.path().toStdString();
    testing::writeDemoRun(root, 3, 1);
    const std::size_t remembered = otf2::verifiedAnchorCount(); // anchors of earlier tests
    QCOMPARE(loadTrace(root, {})->ranks.size(), std::size_t(3));
    QCOMPARE(otf2::verifiedAnchorCount(), remembered + 3);
    QCOMPARE(loadTrace(root, {})->ranks.size(), std::size_t(3)); // the anchors known to be good now
    QCOMPARE(otf2::verifiedAnchorCount(), remembered + 3);
    const std::string anchor1 = root + "/rank1/traces.otf2", anchor2 = root + "/rank2/traces.otf2";
    const std::string good2 = readBytes(anchor2);
    QVERIFY(setPropertyCountHighByte(anchor2, 0x10));
    EXPECT_LOAD_ERROR(root, anchor2, "announces 268435456 properties");
    QVERIFY(setPropertyCountHighByte(anchor1, 0x20));
    EXPECT_LOAD_ERROR(root, anchor1, "announces 536870912 properties");
    QVERIFY(setPropertyCountHighByte(anchor1, 0x00));
    writeBytes(anchor2, good2);
    QCOMPARE(loadTrace(root, {})->ranks.size(), std::size_t(3));
    // The two rewritten anchors were probed again and replaced their entries: one per path, not one per version.
    QCOMPARE(otf2::verifiedAnchorCount(), remembered + 3);
}

// Every selected event file of a demo archive, cut at ten points: a clear error naming the file, never a hang (OTF2
// 3.0 itself reads forever at the end of a file cut inside a chunk).
void TestImportErrors::eventFilesCutAnywhere()
{
    QTemporaryDir tmp;
    const std::string root = tmp.path().toStdString();
    testing::writeDemoRun(root, 1, 2);
    std::vector<std::string> evts;
    for (const auto& e : fs::directory_iterator(root + "/rank0/traces"))
        if (e.path().extension() == ".evt" && e.path().filename() != std::to_string(1ull << 32) + ".evt") // not metrics
            evts.push_back(e.path().string());
    QCOMPARE(evts.size(), std::size_t(2)); // the master thread and the compute stream (one rank: no NCCL stream)
    int cuts = 0;
    for (const auto& evt : evts) {
        const std::string copy = root + "/original.evt";
        fs::copy_file(evt, copy, fs::copy_options::overwrite_existing);
        const auto size = fs::file_size(copy);
        for (int k = 1; k <= 10; ++k) {
            fs::copy_file(copy, evt, fs::copy_options::overwrite_existing);
            truncateTo(evt, size * std::uintmax_t(k) / 11);
            EXPECT_LOAD_ERROR(root, evt, "truncated event file");
            ++cuts;
        }
        fs::copy_file(copy, evt, fs::copy_options::overwrite_existing);
    }
    QCOMPARE(cuts, 20);
    QVERIFY(loadTrace(root, {})->intervalCount() > 0); // intact again
}

// A file its reader may not read gives "Permission denied" naming it. Root reads whatever the permissions say, and CI
// runs as root: there the same test function runs again in a child process that gave up root (setuid to nobody) and
// so is refused.
void TestImportErrors::unreadableFile()
{
    if (::geteuid() != 0) {
        Archive a;
        fs::permissions(a.streamEvt, fs::perms::none);
        EXPECT_LOAD_ERROR(a.root, a.streamEvt, "Permission denied");
        return;
    }
    const pid_t child = ::fork();
    QVERIFY(child >= 0);
    if (child == 0) {
        // Only system calls between fork and exec (the parent has threads).
        const gid_t nobody = 65534;
        if (::setgroups(0, nullptr) != 0 || ::setgid(nobody) != 0 || ::setuid(nobody) != 0 || ::geteuid() == 0)
            ::_exit(90);
        char self[] = "/proc/self/exe";
        char function[] = "unreadableFile";
        char* const argv[] = { self, function, nullptr };
        ::execv(self, argv);
        ::_exit(91);
    }
    int status = 0;
    QCOMPARE(::waitpid(child, &status, 0), child);
    QVERIFY(WIFEXITED(status));
    QCOMPARE(WEXITSTATUS(status), 0); // 90: could not drop root, 91: could not exec, 1: the test failed as nobody
}

void TestImportErrors::unmatchedEnterIsClosedAtLastTimestamp()
{
    ArchiveSpec spec;
    auto& r = spec.addRank(0);
    r.threads[0].raw = { { RawEvent::Enter, 1'000, "outer" }, { RawEvent::Enter, 2'000, "inner" },
        { RawEvent::Leave, 3'000, "inner" }, { RawEvent::Enter, 4'000, "open" }, { RawEvent::Enter, 5'000, "inner" },
        { RawEvent::Leave, 7'000, "inner" } };
    Archive a(spec);
    const auto t = loadTrace(a.root);
    const auto& iv = t->ranks[0].lanes[0].intervals;
    QCOMPARE(iv.size(), 4u);
    // outer [1,7) and open [4,7) close at the lane's last timestamp (7 us), rebased to 0 at 1 us.
    QCOMPARE(t->name(iv.name(0)), std::string("outer"));
    QCOMPARE(iv.start(0), TimeNs(0));
    QCOMPARE(iv.end(0), TimeNs(6'000));
    QCOMPARE(t->name(iv.name(2)), std::string("open"));
    QCOMPARE(iv.end(2), TimeNs(6'000));
    QCOMPARE(int(iv.depth(3)), 2);
    QCOMPARE(t->warnings.size(), 1u);
    QVERIFY2(
        t->warnings[0].find("2 Enter events without a matching Leave") != std::string::npos, t->warnings[0].c_str());
    QVERIFY(t->warnings[0].find("Master thread") != std::string::npos);
}

void TestImportErrors::unmatchedLeaveIsDropped()
{
    ArchiveSpec spec;
    auto& r = spec.addRank(0);
    r.threads[0].raw = { { RawEvent::Leave, 500, "stray" }, { RawEvent::Enter, 1'000, "a" },
        { RawEvent::Leave, 2'000, "b" }, { RawEvent::Leave, 3'000, "a" } };
    Archive a(spec);
    const auto t = loadTrace(a.root);
    const auto& iv = t->ranks[0].lanes[0].intervals;
    QCOMPARE(iv.size(), 1u);
    QCOMPARE(iv.duration(0), TimeNs(2'000));
    QCOMPARE(t->warnings.size(), 1u);
    QVERIFY2(t->warnings[0].find("2 Leave events without a matching Enter were dropped") != std::string::npos,
        t->warnings[0].c_str());
}

void TestImportErrors::outOfOrderEventsAreDropped()
{
    // OTF2's writer refuses decreasing times, so write b at 6.0/6.5 us and patch its Enter back to 4 us.
    ArchiveSpec spec;
    auto& r = spec.addRank(0);
    r.threads[0].raw
        = { { RawEvent::Enter, 1'000, "a" }, { RawEvent::Leave, 5'000, "a" }, { RawEvent::Enter, 6'000, "b" },
              { RawEvent::Leave, 6'500, "b" }, { RawEvent::Enter, 7'000, "c" }, { RawEvent::Leave, 8'000, "c" } };
    Archive a(spec);
    QCOMPARE(patchTimestamp(a.dir + "/traces/0.evt", toTicks(spec, 6'000), toTicks(spec, 4'000)), 1);
    const auto t = loadTrace(a.root);
    const auto& iv = t->ranks[0].lanes[0].intervals;
    // b's Enter is dropped, so its Leave has no Enter: both are reported.
    QCOMPARE(iv.size(), 2u);
    QCOMPARE(t->name(iv.name(0)), std::string("a"));
    QCOMPARE(t->name(iv.name(1)), std::string("c"));
    QCOMPARE(iv.start(1), TimeNs(6'000));
    QCOMPARE(iv.duration(1), TimeNs(1'000));
    QCOMPARE(t->warnings.size(), 2u);
    QVERIFY2(t->warnings[0].find("1 events with a timestamp earlier than the previous one were dropped")
            != std::string::npos,
        t->warnings[0].c_str());
    QVERIFY2(t->warnings[1].find("1 Leave events without a matching Enter were dropped") != std::string::npos,
        t->warnings[1].c_str());
}

void TestImportErrors::zeroLengthKernels()
{
    ArchiveSpec spec;
    auto& r = spec.addRank(0);
    auto& s = r.addStream(0, 7);
    s.kernels = { { "z", 1'000, 1'000 }, { "z", 1'000, 1'000 }, { "k", 1'000, 3'000 } };
    Archive a(spec);
    const auto t = loadTrace(a.root);
    const auto& iv = t->ranks[0].lanes[1].intervals;
    QCOMPARE(iv.size(), 3u);
    QCOMPARE(iv.duration(0), TimeNs(0));
    QCOMPARE(iv.duration(1), TimeNs(0));
    QCOMPARE(iv.duration(2), TimeNs(2'000));
    QCOMPARE(t->warnings.size(), 0u);
}

void TestImportErrors::timestampsNearThe64BitLimit()
{
    // At 1 GHz a tick is a nanosecond: 2^63 + 10 ticks is beyond the int64 nanoseconds of the model.
    ArchiveSpec spec;
    spec.timerResolution = 1'000'000'000;
    auto& r = spec.addRank(0);
    const std::uint64_t big = (1ull << 63) + 10;
    r.threads[0].raw = { { RawEvent::Enter, 0, "a", big }, { RawEvent::Leave, 0, "a", big + 100 } };
    Archive a(spec);
    const std::string cpuEvt = a.dir + "/traces/0.evt";
    EXPECT_LOAD_ERROR(a.root, cpuEvt, "does not fit in 64-bit nanoseconds");

    // At 3.7 GHz the same ticks are fine (ticks * 1e9 is computed in 128 bits) and keep their exact duration.
    ArchiveSpec fast = spec;
    fast.timerResolution = 3'700'000'000ull;
    fast.ranks[0].threads[0].raw = { { RawEvent::Enter, 0, "a", big }, { RawEvent::Leave, 0, "a", big + 37 } };
    Archive b(fast);
    const auto t = loadTrace(b.root);
    QCOMPARE(t->ranks[0].lanes[0].intervals.size(), 1u);
    QCOMPARE(t->ranks[0].lanes[0].intervals.duration(0), TimeNs(10));
}

namespace {

std::vector<std::string> warningsContaining(const Trace& t, const std::string& fragment)
{
    std::vector<std::string> out;
    for (const auto& w : t.warnings)
        if (w.find(fragment) != std::string::npos)
            out.push_back(w);
    return out;
}

} // namespace

void TestImportErrors::clockJumpIsReported()
{
    ArchiveSpec spec;
    auto& r = spec.addRank(0);
    auto& s = r.addStream(0, 7);
    const Ns hour = 3600LL * 1'000'000'000LL;
    s.kernels = { { "k", 1'000, 2'000 }, { "k", 3'000, 4'000 }, { "k", 2 * hour, 2 * hour + 1'000 } };
    Archive a(spec);
    const auto t = loadTrace(a.root);
    const auto jumps = warningsContaining(*t, "the clock jumps forward");
    QCOMPARE(jumps.size(), 1u);
    QVERIFY2(jumps[0].find("jumps forward 1 time (by up to 7200 s between two events)") != std::string::npos,
        jumps[0].c_str());
    // Nothing was changed: the kernel after the jump keeps its time.
    const auto& iv = t->ranks[0].lanes[1].intervals;
    QCOMPARE(iv.size(), 3u);
    QCOMPARE(iv.start(2) - iv.start(0), TimeNs(2 * hour - 1'000));
    // An hour exactly is a pause, not a jump.
    ArchiveSpec calm;
    calm.addRank(0).addStream(0, 7).kernels = { { "k", 0, 1'000 }, { "k", 1'000 + hour, 2'000 + hour } };
    Archive b(calm);
    QCOMPARE(warningsContaining(*loadTrace(b.root), "clock").size(), 0u);
}

void TestImportErrors::rankWithUnalignedClock()
{
    ArchiveSpec spec;
    spec.addRank(0).addStream(0, 7).kernels = { { "k", 1'000, 2'000 }, { "k", 3'000, 9'000 } };
    spec.addRank(1).addStream(0, 7).kernels = { { "k", 50'000, 60'000 } };
    spec.addRank(2).addStream(0, 7).kernels = { { "k", 55'000, 58'000 } };
    Archive a(spec);
    const auto t = loadTrace(a.root);
    const auto w = warningsContaining(*t, "not aligned");
    QCOMPARE(w.size(), 1u);
    QVERIFY2(w[0].find(a.root + "/rank0/traces.otf2: Rank 0: its events do not overlap") == 0, w[0].c_str());
}

void TestImportErrors::tooLargeForTheMemoryLimit()
{
    Archive a;
    LoadOptions o;
    o.memoryLimit = 1 << 20; // 1 MiB: less than the fixed base of any load
    try {
        loadTrace(a.root, o);
        QFAIL("expected TraceTooLarge");
    } catch (const TraceTooLarge& e) {
        QCOMPARE(e.file(), a.root);
        QVERIFY2(e.problem().rfind("needs about 64 MiB of memory to load (0.0 M events), more than the 1 MiB allowed "
                                   "by the given memory limit; open fewer ranks",
                     0)
                == 0,
            e.what());
        QCOMPARE(e.available(), std::uint64_t(1 << 20));
        QVERIFY(e.needed() > (64u << 20));
    }
    // The estimate grows with the events the definitions announce: 16 bytes each on top of the base.
    o.memoryLimit = kBaseBytes + 16 * 1000;
    QVERIFY(loadTrace(a.root, o)); // 7 events in all
    // The machine's own budget is a real, positive figure.
    const MemoryBudget b = availableMemory();
    QVERIFY(b.bytes > (64u << 20));
    QVERIFY(!b.source.empty());
}

void TestImportErrors::chosenRanksOnly()
{
    ArchiveSpec spec;
    spec.timerResolution = 1'000'000'000;
    for (int r = 0; r < 4; ++r)
        spec.addRank(r).addStream(r, 7).kernels = { { "k", 1'000, 2'000 + r } };
    Archive a(spec);
    LoadOptions o;
    o.ranks = { 3, 1 };
    const auto t = loadTrace(a.root, o);
    QCOMPARE(t->ranks.size(), 2u);
    QCOMPARE(t->ranks[0].rank, 1);
    QCOMPARE(t->ranks[1].rank, 3);
    QCOMPARE(t->ranks[1].lanes.back().intervals.duration(0), TimeNs(1'003));
    o.ranks = { 7 };
    EXPECT_LOAD_ERROR_OPTS(a.root, o, a.root, "none of the ranks 7 is among its 4 archives");
}

QTEST_APPLESS_MAIN(TestImportErrors)
#include "tst_importerrors.moc"
