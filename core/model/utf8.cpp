// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/utf8.h"

#include <cstdint>
#include <cstring>

namespace exposure {

namespace {

// Length of the well-formed sequence starting at s[i], or 0 when it is ill-formed. On 0, *subpart is the length of
// its maximal subpart (at least 1): the bytes that one U+FFFD replaces.
std::size_t sequenceLength(std::string_view s, std::size_t i, std::size_t* subpart)
{
    const auto b0 = static_cast<unsigned char>(s[i]);
    *subpart = 1;
    if (b0 < 0x80)
        return 1;
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF; // range of the second byte
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        n = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        n = 3;
        lo = b0 == 0xE0 ? 0xA0 : 0x80;
        hi = b0 == 0xED ? 0x9F : 0xBF;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        n = 4;
        lo = b0 == 0xF0 ? 0x90 : 0x80;
        hi = b0 == 0xF4 ? 0x8F : 0xBF;
    } else {
        return 0;
    }
    for (std::size_t k = 1; k < n; ++k) {
        if (i + k >= s.size())
            return 0;
        const auto b = static_cast<unsigned char>(s[i + k]);
        const unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
        if (b < l || b > h)
            return 0;
        *subpart = k + 1;
    }
    return n;
}

std::size_t asciiPrefix(std::string_view s)
{
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
        std::uint64_t w;
        std::memcpy(&w, s.data() + i, 8);
        if (w & 0x8080808080808080ull)
            break;
    }
    while (i < s.size() && static_cast<unsigned char>(s[i]) < 0x80)
        ++i;
    return i;
}

} // namespace

bool isValidUtf8(std::string_view s)
{
    std::size_t i = asciiPrefix(s);
    while (i < s.size()) {
        std::size_t sub = 0;
        const std::size_t n = sequenceLength(s, i, &sub);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

std::string toValidUtf8(std::string_view s)
{
    std::string out;
    if (isValidUtf8(s)) {
        out.assign(s);
        return out;
    }
    out.reserve(s.size() + 8);
    std::size_t i = 0;
    while (i < s.size()) {
        std::size_t sub = 0;
        const std::size_t n = sequenceLength(s, i, &sub);
        if (n == 0) {
            out += "\xEF\xBF\xBD"; // U+FFFD
            i += sub;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

bool makeValidUtf8(std::string& s)
{
    if (isValidUtf8(s))
        return false;
    s = toValidUtf8(s);
    return true;
}

std::string escapedBytes(std::string_view s)
{
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(s.size());
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '\\') {
            out += "\\\\";
        } else if (c >= 0x20 && c < 0x7F) {
            out += ch;
        } else {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 0xF];
        }
    }
    return out;
}

} // namespace exposure
