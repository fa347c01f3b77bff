// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/stringpool.h"

#include "model/utf8.h"

namespace exposure {

StringId StringPool::intern(std::string_view s)
{
    if (auto it = m_index.find(s); it != m_index.end())
        return it->second;
    if (!isValidUtf8(s)) {
        const std::string decoded = toValidUtf8(s);
        const StringId id = intern(decoded);
        m_rawStore.emplace_back(s);
        m_index.emplace(std::string_view(m_rawStore.back()), id);
        m_raw.emplace(id, &m_rawStore.back()); // the first raw form of this decoded name
        return id;
    }
    const auto id = static_cast<StringId>(m_strings.size());
    m_strings.emplace_back(s);
    m_index.emplace(std::string_view(m_strings.back()), id);
    return id;
}

StringId StringPool::internFrom(const StringPool& from, StringId id)
{
    if (const std::string* raw = from.rawBytes(id))
        return intern(*raw);
    return intern(from.str(id));
}

const std::string* StringPool::rawBytes(StringId id) const
{
    auto it = m_raw.find(id);
    return it == m_raw.end() ? nullptr : it->second;
}

StringId StringPool::find(std::string_view s) const
{
    auto it = m_index.find(s);
    return it == m_index.end() ? kInvalidString : it->second;
}

} // namespace exposure
