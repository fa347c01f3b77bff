// SPDX-License-Identifier: GPL-3.0-or-later
// The one flat byte format of the program's messages (statistics parts, exposure-mpi's messages): trivially
// copyable values as their bytes, strings as their length (8 bytes) and their bytes. Written and read by the same
// build on one machine, so host byte order.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

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
    std::int64_t i64() { return pod<std::int64_t>(); }
    std::string str()
    {
        const auto n = pod<std::uint64_t>();
        need(n);
        std::string s(m_in.substr(m_pos, std::size_t(n)));
        m_pos += std::size_t(n);
        return s;
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
