// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-otf2-probe ANCHOR: opens an OTF2 anchor file with the OTF2 library and closes it again; exits 0 when it
// could, 1 when OTF2 refused it. Exposure runs it before reading an archive itself, because OTF2 3.0 can loop forever
// or crash on a corrupted anchor file: a separate program can be killed at a deadline, a thread inside the viewer
// cannot. It reads nothing but the anchor and writes nothing.
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <otf2/otf2.h>

namespace {
OTF2_ErrorCode quiet(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char*, va_list)
{
    return code;
}
} // namespace

int main(int argc, char** argv)
{
    if (argc != 2 || std::strcmp(argv[1], "--help") == 0) {
        std::fprintf(
            stderr, "usage: exposure-otf2-probe ANCHOR-FILE (run by Exposure before it reads an OTF2 archive)\n");
        return 2;
    }
    OTF2_Error_RegisterCallback(quiet, nullptr);
    // The verdict is the exit status alone, so the probe leaves with _Exit: no exit handlers run. OTF2 3.0 leaks on
    // corrupt anchors, and in the sanitizer builds LeakSanitizer's exit-time check would start a symbolizer for each
    // probe to match that leak against its suppression, which took most of a fuzz run's time.
    OTF2_Reader* reader = OTF2_Reader_Open(argv[1]);
    if (!reader)
        std::_Exit(1);
    OTF2_Reader_Close(reader);
    std::_Exit(0);
}
