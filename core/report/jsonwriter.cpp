// SPDX-License-Identifier: GPL-3.0-or-later
#include "report/jsonwriter.h"

#include "model/timeformat.h"
#include "model/utf8.h"

#include <stdexcept>

namespace exposure {

JsonWriter::JsonWriter(std::string& out)
    : JsonSinkHolder(out)
    , Base(sink)
{ }

void JsonWriter::spaces(int n)
{
    sink.out->append(std::size_t(n), ' ');
}

void JsonWriter::prefix(bool isKey)
{
    if (m_frames.empty())
        return; // the root value
    Frame& f = m_frames.back();
    if (!f.array && !isKey) {
        if (!f.valueNext)
            throw std::logic_error("JsonWriter: a value in an object without its key");
        sink.out->append(": ");
        f.valueNext = false;
        return;
    }
    if (!f.array && f.valueNext)
        throw std::logic_error("JsonWriter: a key where its object expected a value");
    if (f.members > 0)
        sink.Put(',');
    if (f.layout == Layout::Lines) {
        sink.Put('\n');
        spaces(f.indent);
    } else if (f.breakIndent >= 0) {
        sink.Put('\n');
        spaces(f.breakIndent);
        f.breakIndent = -1;
    } else if (f.members > 0) {
        sink.Put(' ');
    }
    ++f.members;
    f.valueNext = isKey;
}

void JsonWriter::begin(bool array, Layout layout, int indent)
{
    prefix(false);
    if (array)
        WriteStartArray();
    else
        WriteStartObject();
    m_frames.push_back({ array, layout, indent >= 0 ? indent : 2 * int(m_frames.size() + 1), 0, false, -1 });
}

void JsonWriter::end(bool array)
{
    if (m_frames.empty() || m_frames.back().array != array || m_frames.back().valueNext)
        throw std::logic_error("JsonWriter: a container closed that is not open, or an object key without a value");
    const Frame f = m_frames.back();
    m_frames.pop_back();
    if (f.layout == Layout::Lines && f.members > 0) {
        sink.Put('\n');
        spaces(f.indent - 2);
    }
    if (array)
        WriteEndArray();
    else
        WriteEndObject();
}

JsonWriter& JsonWriter::beginObject(Layout layout, int indent)
{
    begin(false, layout, indent);
    return *this;
}

JsonWriter& JsonWriter::endObject()
{
    end(false);
    return *this;
}

JsonWriter& JsonWriter::beginArray(Layout layout, int indent)
{
    begin(true, layout, indent);
    return *this;
}

JsonWriter& JsonWriter::endArray()
{
    end(true);
    return *this;
}

JsonWriter& JsonWriter::breakBefore(int indent)
{
    if (!m_frames.empty())
        m_frames.back().breakIndent = indent;
    return *this;
}

JsonWriter& JsonWriter::key(std::string_view name)
{
    if (m_frames.empty() || m_frames.back().array)
        throw std::logic_error("JsonWriter: a key outside an object");
    prefix(true);
    const std::string text = toValidUtf8(name);
    WriteString(text.data(), rapidjson::SizeType(text.size()));
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view text)
{
    prefix(false);
    const std::string valid = toValidUtf8(text);
    WriteString(valid.data(), rapidjson::SizeType(valid.size()));
    return *this;
}

JsonWriter& JsonWriter::value(bool b)
{
    prefix(false);
    WriteBool(b);
    return *this;
}

JsonWriter& JsonWriter::null()
{
    prefix(false);
    WriteNull();
    return *this;
}

JsonWriter& JsonWriter::fixed(double v, int decimals)
{
    prefix(false);
    const std::string text = formatFixed(v, decimals);
    WriteRawValue(text.data(), text.size());
    return *this;
}

} // namespace exposure
