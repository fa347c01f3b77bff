// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// A thin RAII and error-handling layer over the OTF2 C reader API (private to exposure_import).
// OTF2 prints its errors on stderr by default; silenceErrors() replaces that with a handler that keeps the
// last message of the calling thread, so that failures become LoadError("<file>: <problem>") instead.

#include <cstddef>
#include <otf2/otf2.h>
#include <string>
#include <vector>

namespace exposure::otf2 {

// Installs the quiet error handler (idempotent, thread-safe).
void silenceErrors();

// The last OTF2 error message reported on this thread (empty if none); clears it.
std::string takeLastError();

// Throws LoadError(file, what + ": " + OTF2's description) unless rc is OTF2_SUCCESS.
void check(OTF2_ErrorCode rc, const std::string& file, const char* what);
[[noreturn]] void fail(OTF2_ErrorCode rc, const std::string& file, const char* what);

// Has exposure-otf2-probe read every anchor not read before in this process, several at once (a Reader probes
// its anchor alone otherwise), and throws LoadError for the first of them, in the order given, that fails the layout
// check or that the probe did not finish cleanly. Does nothing more when the probe is not installed or is off.
void checkAnchors(const std::vector<std::string>& anchorPaths);

// How many anchors this process remembers as probed (one per path, at most 4096): for tests.
std::size_t verifiedAnchorCount();

// Owns an OTF2_Reader opened on an anchor file.
class Reader
{
public:
    explicit Reader(const std::string& anchorPath);
    ~Reader();
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;

    OTF2_Reader* get() const { return m_reader; }
    const std::string& anchorPath() const { return m_anchor; }

private:
    OTF2_Reader* m_reader = nullptr;
    std::string m_anchor;
};

// Owns a callback table object of the OTF2 API (GlobalDefReaderCallbacks, EvtReaderCallbacks ...).
template <typename T, void (*Delete)(T*)> class Callbacks
{
public:
    explicit Callbacks(T* p)
        : m_p(p)
    { }
    ~Callbacks()
    {
        if (m_p)
            Delete(m_p);
    }
    Callbacks(const Callbacks&) = delete;
    Callbacks& operator=(const Callbacks&) = delete;
    T* get() const { return m_p; }

private:
    T* m_p;
};

} // namespace exposure::otf2
