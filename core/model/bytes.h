// SPDX-License-Identifier: GPL-3.0-or-later
// The one flat byte format of the program's messages (statistics parts, exposure-mpi's messages): trivially
// copyable values as their bytes, strings and lists as their length (8 bytes) and their items, an optional as a flag
// byte and its value. Written and read by the same build on one machine, so host byte order.
//
// Two-way: ByteWriter and ByteReader have the same field methods (pod, str, flag, opt, list), so one function
// template that names a structure's fields in order serializes it in both directions:
//     template <class IO, class S> void fields(IO& io, S& s) { io.pod(s.count); io.str(s.name); }
// with S = const T for writing and T for reading.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace exposure {

class ByteWriter
{
public:
    template <typename T> void pod(const T& v)
    {
        static_assert(std::is_trivially_copyable_v<T>);
        m_out.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    void i64(std::int64_t v) { pod(v); }
    void str(std::string_view s)
    {
        pod(std::uint64_t(s.size()));
        m_out += s;
    }
    void flag(bool b) { pod(std::uint8_t(b)); }
    template <typename T> void opt(const std::optional<T>& v)
    {
        flag(v.has_value());
        pod(v.value_or(T {}));
    }
    template <typename T, typename Fn> void list(const std::vector<T>& items, Fn&& item)
    {
        pod(std::uint64_t(items.size()));
        for (const T& x : items)
            item(x);
    }
    void raw(std::string_view s) { m_out += s; }
    std::string& out() { return m_out; }
    std::string take() { return std::move(m_out); }

private:
    std::string m_out;
};

// Reads what a ByteWriter wrote; a read past the end throws std::runtime_error("truncated <what>").
class ByteReader
{
public:
    explicit ByteReader(std::string_view in, const char* what = "message")
        : m_in(in)
        , m_what(what)
    { }
    template <typename T> T pod()
    {
        static_assert(std::is_trivially_copyable_v<T>);
        need(sizeof(T));
        T v;
        std::memcpy(&v, m_in.data() + m_pos, sizeof v);
        m_pos += sizeof v;
        return v;
    }
    template <typename T> void pod(T& out) { out = pod<T>(); }
    std::int64_t i64() { return pod<std::int64_t>(); }
    std::string str()
    {
        const auto n = pod<std::uint64_t>();
        need(n);
        std::string s(m_in.substr(m_pos, std::size_t(n)));
        m_pos += std::size_t(n);
        return s;
    }
    void str(std::string& out) { out = str(); }
    void flag(bool& out) { out = pod<std::uint8_t>() != 0; }
    template <typename T> void opt(std::optional<T>& out)
    {
        const bool has = pod<std::uint8_t>() != 0;
        const T v = pod<T>();
        out = has ? std::optional<T>(v) : std::nullopt;
    }
    template <typename T, typename Fn> void list(std::vector<T>& items, Fn&& item)
    {
        const auto n = pod<std::uint64_t>();
        for (std::uint64_t k = 0; k < n; ++k)
            item(items.emplace_back());
    }
    bool atEnd() const { return m_pos == m_in.size(); }
    // Throws std::runtime_error("<what> longer than expected") unless everything was read.
    void expectEnd() const
    {
        if (!atEnd())
            throw std::runtime_error(std::string(m_what) + " longer than expected");
    }

private:
    void need(std::uint64_t n) const
    {
        if (m_in.size() - m_pos < n)
            throw std::runtime_error(std::string("truncated ") + m_what);
    }

    std::string_view m_in;
    std::size_t m_pos = 0;
    const char* m_what;
};

} // namespace exposure
