// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/stringpool.h"

namespace exposure {

StringId StringPool::intern(std::string_view s)
{
    if (auto it = m_index.find(s); it != m_index.end())
        return it->second;
    const auto id = static_cast<StringId>(m_strings.size());
    m_strings.emplace_back(s);
    m_index.emplace(std::string_view(m_strings.back()), id);
    return id;
}

StringId StringPool::find(std::string_view s) const
{
    auto it = m_index.find(s);
    return it == m_index.end() ? kInvalidString : it->second;
}

} // namespace exposure
