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
class StringPool
{
public:
    StringId intern(std::string_view s);
    // Returns kInvalidString if s was never interned.
    StringId find(std::string_view s) const;
    const std::string& str(StringId id) const { return m_strings[id]; }
    std::size_t size() const { return m_strings.size(); }

private:
    std::deque<std::string> m_strings; // deque: stable addresses for the string_view keys
    std::unordered_map<std::string_view, StringId> m_index;
};

} // namespace exposure
