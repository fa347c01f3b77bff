// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/otf2reader.h"

#include "import/loader.h"

#include <cstdarg>
#include <cstdio>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>

namespace exposure::otf2 {

namespace {
constexpr std::chrono::seconds kAnchorTimeout{3};
} // namespace

namespace {

thread_local std::string t_lastError;

OTF2_ErrorCode quietHandler(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char* fmt,
                            va_list va)
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

Reader::Reader(const std::string& anchorPath)
    : m_anchor(anchorPath)
{
    silenceErrors();
    takeLastError();
    // OTF2 3.0 can loop forever inside OTF2_AnchorFile_Load on a corrupted anchor file. The anchor is opened in a
    // helper thread; when it has not returned after kAnchorTimeout, the file is reported as corrupt and the helper is
    // left behind (it holds nothing of ours; a reader it might still return is never used).
    struct Opened
    {
        OTF2_Reader* reader = nullptr;
        std::string error;
    };
    auto promise = std::make_shared<std::promise<Opened>>();
    auto opened = promise->get_future();
    std::thread([promise, path = anchorPath] {
        takeLastError();
        Opened o;
        o.reader = OTF2_Reader_Open(path.c_str());
        if (!o.reader)
            o.error = takeLastError();
        promise->set_value(std::move(o));
    }).detach();
    if (opened.wait_for(kAnchorTimeout) != std::future_status::ready)
        throw LoadError(anchorPath, "corrupt OTF2 anchor file (OTF2 did not finish reading it in "
                                        + std::to_string(kAnchorTimeout.count()) + " s)");
    Opened o = opened.get();
    m_reader = o.reader;
    if (!m_reader)
        throw LoadError(anchorPath, "not a readable OTF2 anchor file" + (o.error.empty() ? std::string() : " (OTF2: " + o.error + ")"));
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
