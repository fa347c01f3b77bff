// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the JSON trace readers share (torch.profiler in kinetoimporter.cpp, the Chrome Trace Event Format in
// chromeimporter.cpp): a RapidJSON input stream over zlib, which reads gzip and plain files alike; numbers read as text
// and converted exactly (microseconds to integer nanoseconds, 64-bit counts); the frame of their SAX handlers and the
// fields every event has; the one parse of a file, whose problems become a LoadError naming the file.

#include "import/loadoptions.h"
#include "import/rapidjsonconfig.h"
#include "model/timerange.h"

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>
#include <string>
#include <string_view>
#include <vector>
#include <zlib.h>

namespace exposure {

// How digits beyond nanoseconds are treated.
enum class NsRounding : std::uint8_t {
    Truncate, // dropped (torch.profiler: its fractions never go beyond nanoseconds)
    Nearest, // rounded to the nearest nanosecond, halves away from zero (Chrome traces: 848671.6747283936 us)
};

// "5190847650614.351" (microseconds) -> 5190847650614351 ns, exactly, with 128-bit arithmetic. Exponent forms go
// through a double. False for anything else or when it does not fit in 64 bits.
bool microsToNs(const char* s, std::size_t n, TimeNs& out, NsRounding rounding = NsRounding::Truncate);

// A non-negative integer that fits in 64 bits ("123"); false otherwise (fractions, signs, > 2^64 - 1).
bool parseU64(const char* s, std::size_t n, std::uint64_t& out);

// The fields every event of the Trace Event Format has, as read: ts and dur converted to nanoseconds exactly (tsOk,
// durOk say whether they could be).
struct TraceEventFields
{
    std::string ph, name, pid, tid;
    TimeNs ts = 0, dur = 0;
    bool tsOk = false, durOk = false;
};

// Stores the value of one of those fields, named by `key` (an enum with Ph, Name, Pid, Tid, Ts and Dur): ph and name
// from strings only, pid and tid as their text whether numbers or strings, ts and dur from numbers only. False when
// `key` names none of them.
template <class Key>
bool takeEventField(TraceEventFields& e, Key key, const char* s, std::size_t n, bool number, NsRounding rounding)
{
    if (key == Key::Ph || key == Key::Name) {
        if (!number)
            (key == Key::Ph ? e.ph : e.name).assign(s, n);
    } else if (key == Key::Pid || key == Key::Tid) {
        (key == Key::Pid ? e.pid : e.tid).assign(s, n);
    } else if (key == Key::Ts) {
        e.tsOk = number && microsToNs(s, n, e.ts, rounding);
    } else if (key == Key::Dur) {
        e.durOk = number && microsToNs(s, n, e.dur, rounding);
    } else {
        return false;
    }
    return true;
}

// The frame of a JSON trace reader's SAX handler (Derived, CRTP; parse with parseJsonFile; KeyEnum: the keys it
// tells apart, KeyEnum{} for any other). Numbers arrive as text
// (kParseNumbersAsStringsFlag) and go, like strings, to Derived::value(s, n, number). Each key is recognised once,
// by Derived::keyOf, into m_key[level] for the levels below kTracked. Derived::open(object) is called before a level
// is entered (m_depth: the levels open around it), Derived::close() after one is left (m_depth: the levels still
// open). Levels deeper than kMaxDepth are refused: RapidJSON's reader recurses once per level after asking the
// handler, so refusing here bounds its stack, and a file of a hundred thousand '[' is a clear error (tooDeep()),
// not a stack overflow.
template <class Derived, class KeyEnum, int kTracked>
class JsonTraceHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Derived>
{
public:
    static constexpr int kMaxDepth = 64;
    bool tooDeep() const { return m_tooDeep; }

    bool Null() { return true; }
    bool Bool(bool) { return true; }
    bool RawNumber(const char* s, rapidjson::SizeType n, bool) { return self().value(s, n, true); }
    bool String(const char* s, rapidjson::SizeType n, bool) { return self().value(s, n, false); }
    bool Key(const char* s, rapidjson::SizeType n, bool)
    {
        if (m_depth < kTracked)
            m_key[std::size_t(m_depth)] = self().keyOf(std::string_view(s, n));
        return true;
    }
    bool StartObject() { return enter(true); }
    bool EndObject(rapidjson::SizeType) { return leave(); }
    bool StartArray() { return enter(false); }
    bool EndArray(rapidjson::SizeType) { return leave(); }

protected:
    int m_depth = 0;
    std::array<KeyEnum, kTracked + 1> m_key {}; // the key of each tracked level (KeyEnum{}: none, and array elements)

private:
    Derived& self() { return static_cast<Derived&>(*this); }
    bool enter(bool object)
    {
        if (m_depth >= kMaxDepth) {
            m_tooDeep = true;
            return false;
        }
        self().open(object);
        if (m_depth < kTracked)
            m_key[std::size_t(m_depth) + 1] = KeyEnum {};
        ++m_depth;
        return true;
    }
    bool leave()
    {
        --m_depth;
        self().close();
        return true;
    }

    bool m_tooDeep = false;
};

// RapidJSON input stream over zlib, which reads gzip and plain files alike, in 256 KiB chunks. Stops early (as at
// the end of the file) when the load is cancelled.
class GzStream
{
public:
    using Ch = char;
    // progress->bytesRead at construction counts the files read before this one.
    GzStream(gzFile file, const LoadOptions& options, LoadProgress* progress)
        : m_file(file)
        , m_options(options)
        , m_progress(progress)
        , m_progressBase(progress ? progress->bytesRead : 0)
    { }
    Ch Peek() { return m_pos < m_end ? *m_pos : refill(); }
    Ch Take()
    {
        if (m_pos == m_end && refill() == '\0' && m_pos == m_end)
            return '\0';
        ++m_count;
        return *m_pos++;
    }
    std::size_t Tell() const { return m_count; }
    Ch* PutBegin() { return nullptr; }
    void Put(Ch) { }
    void Flush() { }
    std::size_t PutEnd(Ch*) { return 0; }

    bool cancelled() const { return m_cancelled; }
    const std::string& error() const { return m_error; }
    std::uint64_t bytesRead() const { return m_count; }

private:
    // The slow path of Peek: reads the next chunk; '\0' at the end (or on an error, or when cancelled).
    [[gnu::noinline]] Ch refill()
    {
        fill();
        return m_pos < m_end ? *m_pos : '\0';
    }
    void fill();

    gzFile m_file;
    const LoadOptions& m_options;
    LoadProgress* m_progress;
    std::uint64_t m_progressBase;
    std::array<char, 1 << 18> m_buffer {};
    const char* m_pos = nullptr;
    const char* m_end = nullptr;
    std::size_t m_count = 0;
    bool m_done = false;
    bool m_cancelled = false;
    std::string m_error;
};

// An open gzip-or-plain file; closed on destruction. Throws LoadError when `path` is no regular file or cannot be
// opened.
class GzFile
{
public:
    explicit GzFile(const std::string& path);
    ~GzFile();
    GzFile(const GzFile&) = delete;
    GzFile& operator=(const GzFile&) = delete;
    gzFile get() const { return m_file; }

private:
    gzFile m_file = nullptr;
};

// A gzip file's trailer: the size of its (last member's) content modulo 2^32. Nothing when it cannot be read.
std::optional<std::uint64_t> gzipTrailerSize(const std::string& path);

// A growable buffer of whole pages taken from the system (mmap) and given back when it is destroyed. A file's
// decompressed text (tens of MB, one per file and reading thread) held in malloc's heaps stays there between files,
// fragmented by what the parse allocates beside it: 3.4 MB kept per file was measured, a peak of 2.6 GB instead of
// 1.5 GB on 256 ranks.
class PageBuffer
{
public:
    PageBuffer() = default;
    ~PageBuffer() { release(); }
    PageBuffer(const PageBuffer&) = delete;
    PageBuffer& operator=(const PageBuffer&) = delete;
    char* data() { return m_data; }
    std::size_t size() const { return m_size; }
    // Keeps the first min(n, size()) bytes (the others are unspecified). Throws std::bad_alloc when the pages cannot
    // be had.
    void resize(std::size_t n);
    // Gives the pages back (size 0).
    void release();

private:
    char* m_data = nullptr;
    std::size_t m_size = 0, m_capacity = 0;
};

// Page buffers lent to the files read at once, at most one per reading thread: the next file a thread reads reuses the
// pages of the one before, instead of taking them from the system and having them cleared again (3.5 % of the CPU of
// a 64-rank read).
class PageBufferPool
{
public:
    std::unique_ptr<PageBuffer> take()
    {
        std::lock_guard lock(m_mutex);
        if (m_free.empty())
            return std::make_unique<PageBuffer>();
        std::unique_ptr<PageBuffer> b = std::move(m_free.back());
        m_free.pop_back();
        return b;
    }
    void give(std::unique_ptr<PageBuffer> b)
    {
        std::lock_guard lock(m_mutex);
        m_free.push_back(std::move(b));
    }

private:
    std::mutex m_mutex;
    std::vector<std::unique_ptr<PageBuffer>> m_free;
};

// Reads the whole decompressed content of `file` into `out` (with a terminating NUL) when it is expected to be at most
// kWholeFileBytes: the gzip trailer's size for gzip files, the file size for plain ones. False, with nothing read, for
// a larger file, which is then streamed (and for one whose content outgrows twice the limit: it is rewound and
// streamed). EXPOSURE_JSON_WHOLE_FILE_LIMIT=BYTES sets another limit (0: stream every file). Reports progress and
// honours cancellation as GzStream does; a gzip error goes to `gzError`.
constexpr std::uint64_t kWholeFileBytes = std::uint64_t(128) << 20;
bool readWholeFile(const std::string& path, gzFile file, const LoadOptions& options, LoadProgress* progress,
    PageBuffer& out, bool& cancelled, std::string& gzError);

// Streams `path` through `handler` (numbers as text, stopping after the top-level value). Throws LoadCancelled, or
// LoadError naming the file for corrupt gzip data, JSON nested deeper than Handler::kMaxDepth (the handler refuses
// deeper levels and says so through tooDeep(), which bounds RapidJSON's recursion) and invalid JSON (with the byte
// offset). `what` ends the nesting message: "not a torch.profiler trace".
// A file of at most kWholeFileBytes is decompressed into memory first and parsed in place (strings and numbers are
// handed to `handler` where they lie in the buffer, white space skipped with SIMD): about twice as fast as the
// stream, for the memory of one file per reading thread. Handlers copy what they keep, in either path.
template <class Handler>
void parseJsonFile(const std::string& path, const LoadOptions& options, LoadProgress* progress, Handler& handler,
    const char* what, PageBuffer* scratch = nullptr)
{
    constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseStopWhenDoneFlag;
    rapidjson::ParseResult ok;
    std::string gzError;
    bool cancelled = false;
    {
        const GzFile file(path);
        PageBuffer own;
        PageBuffer& whole = scratch ? *scratch : own; // `scratch`: pages of an earlier file, reused
        if (readWholeFile(path, file.get(), options, progress, whole, cancelled, gzError)) {
            if (!cancelled && gzError.empty()) {
                rapidjson::InsituStringStream stream(whole.data());
                rapidjson::Reader reader;
                ok = reader.Parse<kFlags | rapidjson::kParseInsituFlag>(stream, handler);
            }
        } else {
            GzStream stream(file.get(), options, progress);
            rapidjson::Reader reader;
            ok = reader.Parse<kFlags>(stream, handler);
            cancelled = stream.cancelled();
            gzError = stream.error();
        }
    }
    if (cancelled)
        throw LoadCancelled();
    if (!gzError.empty())
        throw LoadError(path, "truncated or corrupt gzip data (" + gzError + ")");
    if (!ok && handler.tooDeep())
        throw LoadError(path,
            "JSON nested deeper than " + std::to_string(Handler::kMaxDepth) + " levels at byte "
                + std::to_string(ok.Offset()) + ": " + what);
    if (!ok)
        throw LoadError(path,
            std::string("invalid JSON at byte ") + std::to_string(ok.Offset()) + ": "
                + rapidjson::GetParseError_En(ok.Code()));
}

} // namespace exposure
