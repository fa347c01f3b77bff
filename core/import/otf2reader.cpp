// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/otf2reader.h"

#include "import/childprocess.h"
#include "import/loadoptions.h"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <sys/stat.h>
#include <vector>

namespace exposure::otf2 {

namespace {
constexpr std::chrono::seconds kAnchorTimeout { 5 };

// OTF2 3.0 trusts the property count of an anchor file: a corrupt count makes OTF2_AnchorFile_Load allocate what it
// asks for (4 GiB in the fuzz finding) and read strings past the end of the file (found by fuzzing). The anchor's
// layout up to that count is checked here first: buffer header (chunk byte, endianness 0x42 little / 0x23 big), "OTF2"
// magic, format byte, 38 bytes of fixed fields, machine, creator and description strings, then (format >= 2) the uint32
// property count, each property being two NUL-terminated strings. Returns "" when the file looks fine so far.
std::string anchorProblem(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return {}; // OTF2_Reader_Open reports it
    std::string bytes;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0 && bytes.size() < (64u << 20);)
        bytes.append(buf, n);
    std::fclose(f);
    const std::size_t magicAt = 2;
    if (bytes.size() < magicAt + 5 || (bytes[1] != 0x42 && bytes[1] != 0x23)
        || bytes.compare(magicAt, 5, std::string("OTF2\0", 5)) != 0)
        return {}; // not an anchor at all: OTF2 refuses it by itself
    std::size_t pos = magicAt + 5;
    const auto format = static_cast<unsigned char>(bytes[pos++]);
    pos += 38;
    for (int i = 0; i < 3 && pos <= bytes.size(); ++i) {
        const auto nul = bytes.find('\0', pos);
        pos = nul == std::string::npos ? bytes.size() + 1 : nul + 1;
    }
    if (format < 2 || pos + 4 > bytes.size())
        return {}; // OTF2 notices the end of the file itself
    std::uint32_t count = 0;
    for (int i = 0; i < 4; ++i) {
        const auto b = static_cast<unsigned char>(bytes[pos + std::size_t(bytes[1] == 0x42 ? 3 - i : i)]);
        count = (count << 8) | b;
    }
    pos += 4;
    const auto strings = std::size_t(std::count(bytes.begin() + std::ptrdiff_t(pos), bytes.end(), '\0'));
    if (std::uint64_t(count) * 2 > strings)
        return "corrupt OTF2 anchor file (it announces " + std::to_string(count) + " properties but holds at most "
            + std::to_string(strings / 2) + ")";
    return {};
}
} // namespace

namespace {

thread_local std::string t_lastError;

OTF2_ErrorCode quietHandler(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char* fmt, va_list va)
{
    char buf[512];
    buf[0] = '\0';
    if (fmt) {
        va_list copy;
        va_copy(copy, va);
        std::vsnprintf(buf, sizeof buf, fmt, copy);
        va_end(copy);
    }
    // Keep the first message of a failure: later ones are usually "caused by the previous error" follow-ups.
    if (t_lastError.empty()) {
        t_lastError = OTF2_Error_GetDescription(code);
        if (buf[0]) {
            t_lastError += " (";
            t_lastError += buf;
            t_lastError += ')';
        }
    }
    return code;
}

} // namespace

void silenceErrors()
{
    static std::once_flag once;
    std::call_once(once, [] { OTF2_Error_RegisterCallback(quietHandler, nullptr); });
}

std::string takeLastError()
{
    std::string s;
    s.swap(t_lastError);
    return s;
}

void fail(OTF2_ErrorCode rc, const std::string& file, const char* what)
{
    std::string msg = what;
    std::string detail = takeLastError();
    if (detail.empty())
        detail = OTF2_Error_GetDescription(rc);
    msg += " (OTF2: " + detail + ")";
    throw LoadError(file, msg);
}

void check(OTF2_ErrorCode rc, const std::string& file, const char* what)
{
    if (rc != OTF2_SUCCESS)
        fail(rc, file, what);
}

namespace {

// Anchors whose probe finished in this process, by path, with the inode, size and modification time they had then: a
// load opens each archive once per reading thread, and a changed file is probed again. One entry per path (a rewritten
// file replaces its entry), and at most kMaxVerifiedAnchors of them: a session that opens more distinct anchors than
// that forgets them all and probes again (2–3 ms each) rather than grow without bound.
struct FileStamp
{
    std::uint64_t inode = 0, size = 0;
    std::int64_t mtimeNs = 0;
    bool operator==(const FileStamp&) const = default;
};

struct AnchorKey
{
    std::string path;
    FileStamp stamp;
};

constexpr std::size_t kMaxVerifiedAnchors = 4096;

std::optional<AnchorKey> anchorKey(const std::string& path)
{
    struct stat st
    {
    };
    if (::stat(path.c_str(), &st) != 0)
        return std::nullopt;
    return AnchorKey { path,
        FileStamp { std::uint64_t(st.st_ino), std::uint64_t(st.st_size),
            std::int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec } };
}

std::mutex g_verifiedMutex;
std::map<std::string, FileStamp> g_verified;

bool isVerified(const std::optional<AnchorKey>& key)
{
    if (!key)
        return false;
    const std::lock_guard lock(g_verifiedMutex);
    const auto it = g_verified.find(key->path);
    return it != g_verified.end() && it->second == key->stamp;
}

void markVerified(const std::optional<AnchorKey>& key)
{
    if (!key)
        return;
    const std::lock_guard lock(g_verifiedMutex);
    if (g_verified.size() >= kMaxVerifiedAnchors && !g_verified.count(key->path))
        g_verified.clear();
    g_verified.insert_or_assign(key->path, key->stamp);
}

// The probe's verdict on one anchor as a LoadError, if it did not finish reading it cleanly.
void throwIfProbeFailed(const std::string& anchorPath, const ChildOutcome& probe)
{
    if (probe.state == ChildOutcome::TimedOut)
        throw LoadError(anchorPath,
            "corrupt OTF2 anchor file (OTF2 did not finish reading it in " + std::to_string(kAnchorTimeout.count())
                + " s)");
    if (probe.state == ChildOutcome::Crashed)
        throw LoadError(anchorPath,
            "corrupt OTF2 anchor file (OTF2 crashed reading it: signal " + std::to_string(probe.signal) + ")");
    if (probe.state == ChildOutcome::NotStarted)
        throw LoadError(anchorPath, "cannot check the anchor file: " + probe.error);
}

} // namespace

std::size_t verifiedAnchorCount()
{
    const std::lock_guard lock(g_verifiedMutex);
    return g_verified.size();
}

void checkAnchors(const std::vector<std::string>& anchorPaths)
{
    const std::string probeProgram = otf2ProbeProgram();
    std::vector<std::optional<AnchorKey>> keys;
    std::vector<std::string> problems; // the layout check's verdict, each file read once
    std::vector<std::vector<std::string>> probes;
    std::vector<std::size_t> probed; // index into anchorPaths of each probe
    for (std::size_t i = 0; i < anchorPaths.size(); ++i) {
        keys.push_back(anchorKey(anchorPaths[i]));
        problems.push_back(anchorProblem(anchorPaths[i]));
        if (!probeProgram.empty() && !isVerified(keys.back()) && problems.back().empty()) {
            probes.push_back({ probeProgram, anchorPaths[i] });
            probed.push_back(i);
        }
    }
    // Each probe waits on its file most of its 2–3 ms: several at once, not one per core.
    const auto outcomes = runPrograms(probes, kAnchorTimeout, 16);
    std::vector<const ChildOutcome*> outcomeOf(anchorPaths.size(), nullptr);
    for (std::size_t k = 0; k < probed.size(); ++k)
        outcomeOf[probed[k]] = &outcomes[k];
    // The first problem in the order given, as reading them one after another would report it.
    for (std::size_t i = 0; i < anchorPaths.size(); ++i) {
        if (!problems[i].empty())
            throw LoadError(anchorPaths[i], problems[i]);
        if (outcomeOf[i]) {
            throwIfProbeFailed(anchorPaths[i], *outcomeOf[i]);
            markVerified(keys[i]);
        }
    }
}

Reader::Reader(const std::string& anchorPath)
    : m_anchor(anchorPath)
{
    silenceErrors();
    takeLastError();
    if (const auto problem = anchorProblem(anchorPath); !problem.empty())
        throw LoadError(anchorPath, problem);
    // OTF2 3.0 can loop forever inside OTF2_AnchorFile_Load on a corrupted anchor file, and a thread stuck there could
    // never be stopped. So exposure-otf2-probe (the same library) first reads the anchor in a process of its own, which
    // is killed after kAnchorTimeout; only when it has finished does this process read it. Without the probe program
    // (not installed) the anchor is read here directly, and only the stall watchdog guards it. An anchor the probe
    // has read before (checkAnchors, or an earlier Reader) is not probed again.
    if (const std::string probeProgram = otf2ProbeProgram(); !probeProgram.empty()) {
        const auto key = anchorKey(anchorPath);
        if (!isVerified(key)) {
            throwIfProbeFailed(anchorPath, runProgram({ probeProgram, anchorPath }, kAnchorTimeout));
            markVerified(key);
        }
    }
    m_reader = OTF2_Reader_Open(anchorPath.c_str());
    if (!m_reader) {
        const std::string error = takeLastError();
        throw LoadError(
            anchorPath, "not a readable OTF2 anchor file" + (error.empty() ? std::string() : " (OTF2: " + error + ")"));
    }
    const auto rc = OTF2_Reader_SetSerialCollectiveCallbacks(m_reader);
    if (rc != OTF2_SUCCESS) {
        OTF2_Reader_Close(m_reader);
        m_reader = nullptr;
        fail(rc, anchorPath, "cannot set up the OTF2 reader");
    }
}

Reader::~Reader()
{
    if (m_reader)
        OTF2_Reader_Close(m_reader);
    takeLastError();
}

} // namespace exposure::otf2
