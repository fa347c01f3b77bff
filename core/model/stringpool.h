// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace exposure {

using StringId = std::uint32_t;
inline constexpr StringId kInvalidString = 0xFFFFFFFFu;

// Interns strings once; ids are dense (0..size()-1) so per-name caches are plain vectors.
// Every string it holds is valid UTF-8: a name whose bytes are not is decoded at intern time (each ill-formed
// sequence becomes U+FFFD, model/utf8.h) and its raw bytes are kept beside it (rawBytes), so that output cannot
// carry an invalid sequence and the details panel can still show what the trace held. Only a string seen for the
// first time is checked, ASCII eight bytes at a time.
class StringPool
{
public:
    StringId intern(std::string_view s);
    // Interns `from`'s string `id`, carrying its raw bytes when it was repaired.
    StringId internFrom(const StringPool& from, StringId id);
    // Returns kInvalidString if s was never interned (as it is, or as the raw bytes of a repaired name).
    StringId find(std::string_view s) const;
    const std::string& str(StringId id) const { return m_strings[id]; }
    std::size_t size() const { return m_strings.size(); }
    // The raw bytes of a name that was not valid UTF-8 when interned; nullptr for every other name.
    const std::string* rawBytes(StringId id) const;
    std::size_t repairedCount() const { return m_raw.size(); }

private:
    std::deque<std::string> m_strings; // deque: stable addresses for the string_view keys
    std::unordered_map<std::string_view, StringId> m_index; // decoded names, and the raw bytes of repaired ones
    std::deque<std::string> m_rawStore; // raw bytes of repaired names (keys of m_index)
    std::unordered_map<StringId, const std::string*> m_raw;
};

} // namespace exposure
