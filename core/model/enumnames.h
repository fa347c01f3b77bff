// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// An enum's names as one table of rows: the name of a value and the value of a name are read from the same rows,
// so the two directions cannot drift apart. A value's first row is its name; further rows of it are aliases that
// are read but never written ("colourblind", "µs").
#include <cstddef>
#include <optional>
#include <string_view>

namespace exposure {

template <class E> struct EnumName
{
    E value;
    const char* name;
};

// The name of `value`: its first row, or `fallback` where the table has none.
template <class E, std::size_t N>
constexpr const char* nameIn(const EnumName<E> (&table)[N], E value, const char* fallback)
{
    for (const EnumName<E>& row : table)
        if (row.value == value)
            return row.name;
    return fallback;
}

// The value a row names exactly `name`; nullopt where no row does.
template <class E, std::size_t N>
constexpr std::optional<E> valueIn(const EnumName<E> (&table)[N], std::string_view name)
{
    for (const EnumName<E>& row : table)
        if (name == row.name)
            return row.value;
    return std::nullopt;
}

} // namespace exposure
