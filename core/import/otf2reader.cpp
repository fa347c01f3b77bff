// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/otf2reader.h"

#include "import/loader.h"

#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace exposure::otf2 {

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
    m_reader = OTF2_Reader_Open(anchorPath.c_str());
    if (!m_reader) {
        std::string detail = takeLastError();
        throw LoadError(anchorPath, "not a readable OTF2 anchor file" + (detail.empty() ? std::string() : " (OTF2: " + detail + ")"));
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
