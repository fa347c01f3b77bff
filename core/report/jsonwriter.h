// SPDX-License-Identifier: GPL-3.0-or-later
// The one JSON writer of Exposure's reports: RapidJSON's Writer does the escaping and the numbers, this class the
// layout the reports have always had (and which scripts and tests read): a container opened with Layout::Lines puts
// each member on a line of its own, indented two spaces per level (or as asked); an inline one keeps its members on
// one line, separated by ", ", and can break a line before a member (breakBefore). Keys are followed by ": ". Every
// string and key is made valid UTF-8 first (model/utf8.h): an ill-formed sequence becomes U+FFFD.
#pragma once

#include "import/rapidjsonconfig.h"

#include <concepts>
#include <cstdint>
#include <rapidjson/writer.h>
#include <string>
#include <string_view>
#include <vector>

namespace exposure {

namespace detail {

// RapidJSON's output stream concept over a std::string that the caller owns.
struct JsonStringSink
{
    using Ch = char;
    std::string* out;
    void Put(char c) { out->push_back(c); }
    void Flush() { }
};

struct JsonSinkHolder
{
    explicit JsonSinkHolder(std::string& out)
        : sink { &out }
    { }
    JsonStringSink sink;
};

} // namespace detail

class JsonWriter : private detail::JsonSinkHolder, private rapidjson::Writer<detail::JsonStringSink>
{
public:
    enum class Layout : std::uint8_t { Inline, Lines };

    // Appends to `out`.
    explicit JsonWriter(std::string& out);

    // `indent`: the spaces before each member of a Lines container (-1: two per level, the root's members at 2); its
    // closing bracket goes two spaces to the left of its members.
    JsonWriter& beginObject(Layout layout = Layout::Inline, int indent = -1);
    JsonWriter& endObject();
    JsonWriter& beginArray(Layout layout = Layout::Inline, int indent = -1);
    JsonWriter& endArray();
    // Inline containers: the next member starts a new line, `indent` spaces in.
    JsonWriter& breakBefore(int indent);

    JsonWriter& key(std::string_view name);
    JsonWriter& value(std::string_view text);
    JsonWriter& value(const char* text) { return value(std::string_view(text)); }
    JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
    JsonWriter& value(bool b);
    template <std::integral T>
    requires(!std::same_as<T, bool>) JsonWriter& value(T v)
    {
        prefix(false);
        if constexpr (std::is_signed_v<T>)
            WriteInt64(std::int64_t(v));
        else
            WriteUint64(std::uint64_t(v));
        return *this;
    }
    JsonWriter& null();
    // A number with exactly `decimals` digits after the point (formatFixed), as the reports always wrote them.
    JsonWriter& fixed(double v, int decimals);

    // key(name).value(v) in one call.
    template <class T> JsonWriter& field(std::string_view name, const T& v)
    {
        key(name);
        return value(v);
    }
    JsonWriter& fixedField(std::string_view name, double v, int decimals)
    {
        key(name);
        return fixed(v, decimals);
    }
    JsonWriter& nullField(std::string_view name)
    {
        key(name);
        return null();
    }

private:
    using Base = rapidjson::Writer<detail::JsonStringSink>;
    struct Frame
    {
        bool array = false;
        Layout layout = Layout::Inline;
        int indent = 0;
        std::size_t members = 0;
        bool valueNext = false; // objects: a key was written, its value comes next
        int breakIndent = -1;
    };
    void prefix(bool isKey);
    void begin(bool array, Layout layout, int indent);
    void end(bool array);
    void spaces(int n);

    std::vector<Frame> m_frames;
};

} // namespace exposure
