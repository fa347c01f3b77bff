// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>
#include <string_view>

namespace exposure {

// Text in a trace is bytes; everything Exposure keeps and writes is valid UTF-8. Names are decoded once, at import
// (StringPool::intern, Trace::finalize), and every text writer (JSON, CSV) decodes again, so that no output can
// carry an invalid sequence whatever the input's bytes.

// True when s is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
// Pure ASCII is checked eight bytes at a time.
bool isValidUtf8(std::string_view s);

// s with every ill-formed sequence replaced by U+FFFD, one per maximal subpart (the Unicode "substitution of
// maximal subparts" practice, as Qt's and Python's decoders do); returns s unchanged when it is valid.
std::string toValidUtf8(std::string_view s);

// In place: replaces s by toValidUtf8(s) when it is not valid. Returns true when it had to repair s.
bool makeValidUtf8(std::string& s);

// The bytes of s as printable ASCII: printable ASCII as is (a backslash doubled), every other byte as \xHH.
// For showing the raw bytes of a repaired name (details panel).
std::string escapedBytes(std::string_view s);

} // namespace exposure
