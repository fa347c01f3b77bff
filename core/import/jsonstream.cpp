// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/jsonstream.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <libdeflate.h>
#include <limits>
#include <new>
#include <optional>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace exposure {

namespace {
__extension__ typedef unsigned __int128 U128; // exact us -> ns arithmetic (GCC/Clang extension)
} // namespace

bool microsToNs(const char* s, std::size_t n, TimeNs& out, NsRounding rounding)
{
    std::size_t i = 0;
    bool negative = false;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        negative = s[i++] == '-';
    // Whole microseconds stay within int64 (checked before each digit: 64-bit arithmetic, no 128-bit loop).
    constexpr std::uint64_t kMax = std::uint64_t(std::numeric_limits<std::int64_t>::max());
    std::uint64_t whole = 0;
    std::size_t digits = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; ++i, ++digits) {
        const unsigned d = unsigned(s[i] - '0');
        if (whole > (kMax - d) / 10)
            return false;
        whole = whole * 10 + d;
    }
    unsigned frac = 0;
    int fracDigits = 0;
    bool roundUp = false; // the first digit beyond nanoseconds is 5 or more
    if (i < n && s[i] == '.') {
        for (++i; i < n && s[i] >= '0' && s[i] <= '9'; ++i, ++digits)
            if (fracDigits < 3) {
                frac = frac * 10 + unsigned(s[i] - '0');
                ++fracDigits;
            } else if (fracDigits == 3) {
                roundUp = s[i] >= '5';
                ++fracDigits;
            }
    }
    if (digits == 0)
        return false;
    if (i < n) {
        if (s[i] != 'e' && s[i] != 'E')
            return false;
        const std::string text(s, n);
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(text.c_str(), &end);
        if (errno || !end || *end || !std::isfinite(v) || std::abs(v) * 1000.0 > 9.0e18)
            return false;
        out = TimeNs(rounding == NsRounding::Nearest ? std::round(v * 1000.0) : std::floor(v * 1000.0));
        return true;
    }
    while (fracDigits < 3) {
        frac *= 10;
        ++fracDigits;
    }
    const U128 ns = U128(whole) * 1000 + frac + (rounding == NsRounding::Nearest && roundUp ? 1 : 0);
    if (ns > U128(std::numeric_limits<std::int64_t>::max()))
        return false;
    out = negative ? -TimeNs(ns) : TimeNs(ns);
    return true;
}

bool parseU64(const char* s, std::size_t n, std::uint64_t& out)
{
    if (n == 0)
        return false;
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        const std::uint64_t d = std::uint64_t(s[i] - '0');
        if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10)
            return false;
        v = v * 10 + d;
    }
    out = v;
    return true;
}

void GzStream::fill()
{
    if (m_done)
        return;
    if (m_options.cancel && m_options.cancel->load(std::memory_order_relaxed)) {
        m_cancelled = m_done = true;
        return;
    }
    if (m_progress && m_options.progress) {
        m_progress->bytesRead = m_progressBase + std::uint64_t(std::max<z_off_t>(0, gzoffset(m_file)));
        m_options.progress(*m_progress);
    }
    const int n = gzread(m_file, m_buffer.data(), unsigned(m_buffer.size()));
    if (n <= 0) {
        m_done = true;
        int code = Z_OK;
        const char* message = gzerror(m_file, &code);
        if (n < 0 || (code != Z_OK && code != Z_STREAM_END))
            m_error = message && *message ? message : "read error";
        m_pos = m_end = m_buffer.data();
        return;
    }
    m_pos = m_buffer.data();
    m_end = m_pos + n;
}

namespace {

// The decompressed size a JSON file is expected to have: a gzip file's trailer (a hint: the read below grows past
// it), a plain file's size; `gzip` says which. Nothing when the file cannot be read.
std::optional<std::uint64_t> expectedSize(const std::string& path, bool& gzip)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return std::nullopt;
    unsigned char head[2] = { 0, 0 };
    gzip = std::fread(head, 1, 2, f) == 2 && head[0] == 0x1f && head[1] == 0x8b;
    std::optional<std::uint64_t> size;
    if (!gzip && std::fseek(f, 0, SEEK_END) == 0) {
        if (const long end = std::ftell(f); end >= 0)
            size = std::uint64_t(end);
    }
    std::fclose(f);
    return gzip ? gzipTrailerSize(path) : size;
}

// Inflates the gzip file `path` into `out` at once with libdeflate (2.5 times zlib's speed on these files, CRC
// included): `expected` is the trailer's size. False, with `used` unspecified, wherever zlib's reading must decide
// instead: an unreadable file, a trailer that understates the content (several members, or 4 GiB or more), data that
// does not decode, or bytes after the last member; gzread then reads the file again, with zlib's own errors.
// `fileBytes`: the compressed size (for the progress).
bool inflateWhole(
    const std::string& path, std::uint64_t expected, PageBuffer& out, std::size_t& used, std::uint64_t& fileBytes)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st = {};
    void* map = MAP_FAILED;
    if (::fstat(fd, &st) == 0 && st.st_size > 0)
        map = ::mmap(nullptr, std::size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED)
        return false;
    const auto* in = static_cast<const unsigned char*>(map);
    const std::size_t inSize = std::size_t(st.st_size);
    fileBytes = inSize;
    libdeflate_decompressor* d = libdeflate_alloc_decompressor();
    bool ok = d != nullptr;
    std::size_t consumed = 0;
    used = 0;
    while (ok && consumed < inSize) {
        if (inSize - consumed < 2 || in[consumed] != 0x1f || in[consumed + 1] != 0x8b) {
            ok = false; // bytes after a member that start no other one: zlib's rules apply
            break;
        }
        std::size_t inUsed = 0, outUsed = 0;
        ok = libdeflate_gzip_decompress_ex(d, in + consumed, inSize - consumed, out.data() + used,
                 std::size_t(expected) - used, &inUsed, &outUsed)
            == LIBDEFLATE_SUCCESS;
        consumed += inUsed;
        used += outUsed;
    }
    libdeflate_free_decompressor(d);
    ::munmap(map, inSize);
    return ok && used == expected;
}

} // namespace

std::optional<std::uint64_t> gzipTrailerSize(const std::string& path)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return std::nullopt;
    std::optional<std::uint64_t> size;
    if (unsigned char t[4]; std::fseek(f, -4, SEEK_END) == 0 && std::fread(t, 1, 4, f) == 4)
        size = std::uint64_t(t[0]) | std::uint64_t(t[1]) << 8 | std::uint64_t(t[2]) << 16 | std::uint64_t(t[3]) << 24;
    std::fclose(f);
    return size;
}

void PageBuffer::resize(std::size_t n)
{
    if (n > m_capacity) {
        constexpr std::size_t kPage = std::size_t(2) << 20; // huge pages where the system gives them
        const std::size_t capacity = (n + kPage - 1) / kPage * kPage;
        void* p = m_data ? ::mremap(m_data, m_capacity, capacity, MREMAP_MAYMOVE)
                         : ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            throw std::bad_alloc();
        ::madvise(p, capacity, MADV_HUGEPAGE); // a hint: fewer page faults for a buffer written once from end to end
        m_data = static_cast<char*>(p);
        m_capacity = capacity;
    }
    m_size = n;
}

void PageBuffer::release()
{
    if (m_data)
        ::munmap(m_data, m_capacity);
    m_data = nullptr;
    m_size = m_capacity = 0;
}

bool readWholeFile(const std::string& path, gzFile file, const LoadOptions& options, LoadProgress* progress,
    PageBuffer& out, bool& cancelled, std::string& gzError)
{
    // EXPOSURE_JSON_WHOLE_FILE_LIMIT (bytes) replaces kWholeFileBytes: tests read the same files both ways.
    std::uint64_t limit = kWholeFileBytes;
    if (const char* env = std::getenv("EXPOSURE_JSON_WHOLE_FILE_LIMIT"))
        limit = std::strtoull(env, nullptr, 10);
    bool gzip = false;
    const auto expected = expectedSize(path, gzip);
    if (!expected || *expected > limit)
        return false;
    const std::uint64_t base = progress ? progress->bytesRead : 0;
    constexpr std::size_t kChunk = std::size_t(4) << 20; // progress and cancellation between chunks
    out.resize(std::size_t(*expected) + 1);
    std::size_t used = 0;
    if (std::uint64_t fileBytes = 0; gzip && inflateWhole(path, *expected, out, used, fileBytes)) {
        out.data()[used] = '\0';
        if (progress && options.progress) {
            progress->bytesRead = base + fileBytes;
            options.progress(*progress);
        }
        return true;
    }
    used = 0;
    for (;;) {
        if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
            cancelled = true;
            return true;
        }
        if (progress && options.progress) {
            progress->bytesRead = base + std::uint64_t(std::max<z_off_t>(0, gzoffset(file)));
            options.progress(*progress);
        }
        if (used > 2 * limit) { // the trailer understated the size: stream the file instead
            out.release();
            if (progress)
                progress->bytesRead = base; // the stream counts from the start again
            if (gzrewind(file) != 0)
                gzError = "cannot rewind";
            return !gzError.empty();
        }
        if (out.size() - used < 2) // room for one more byte and the terminating NUL
            out.resize(out.size() + out.size() / 2 + kChunk);
        const std::size_t want = std::min(kChunk, out.size() - used - 1);
        const int n = gzread(file, out.data() + used, unsigned(want));
        if (n <= 0) {
            int code = Z_OK;
            const char* message = gzerror(file, &code);
            if (n < 0 || (code != Z_OK && code != Z_STREAM_END))
                gzError = message && *message ? message : "read error";
            break;
        }
        used += std::size_t(n);
    }
    out.resize(used + 1);
    out.data()[used] = '\0';
    return true;
}

GzFile::GzFile(const std::string& path)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw LoadError(path, "not a regular file");
    m_file = gzopen(path.c_str(), "rb");
    if (!m_file)
        throw LoadError(path, std::string("cannot open: ") + std::strerror(errno));
    gzbuffer(m_file, 1 << 18);
}

GzFile::~GzFile()
{
    gzclose(m_file);
}

} // namespace exposure
