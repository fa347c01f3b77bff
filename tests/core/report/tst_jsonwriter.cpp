// SPDX-License-Identifier: GPL-3.0-or-later
// JsonWriter (report/jsonwriter.h): the layout the reports have (lines, inline, line breaks), RapidJSON's escaping,
// valid UTF-8 from any bytes, exact integers and fixed decimals, and refusal of misuse.
#include "report/jsonwriter.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <cstdint>
#include <limits>
#include <stdexcept>

using namespace exposure;

class TestJsonWriter : public QObject
{
    Q_OBJECT
private slots:
    void layoutOfTheReports();
    void emptyContainers();
    void stringsAndNumbers();
    void misuseThrows();
};

void TestJsonWriter::layoutOfTheReports()
{
    std::string out;
    JsonWriter j(out);
    j.beginObject(JsonWriter::Layout::Lines).field("trace", "t").key("ranks").beginArray(JsonWriter::Layout::Lines);
    for (int r = 0; r < 2; ++r) {
        j.beginObject(JsonWriter::Layout::Lines).field("rank", r).key("steps").beginArray();
        j.beginObject().field("index", 0).breakBefore(5).fixedField("ratio", 0.5, 3).endObject();
        j.endArray().endObject();
    }
    j.endArray().key("total").beginObject(JsonWriter::Layout::Lines).nullField("ratio").endObject();
    j.key("groups").beginArray(JsonWriter::Layout::Lines, 7).value(true).value(false).endArray().endObject();
    QCOMPARE(QString::fromStdString(out),
        QStringLiteral("{\n"
                       "  \"trace\": \"t\",\n"
                       "  \"ranks\": [\n"
                       "    {\n"
                       "      \"rank\": 0,\n"
                       "      \"steps\": [{\"index\": 0,\n"
                       "     \"ratio\": 0.500}]\n"
                       "    },\n"
                       "    {\n"
                       "      \"rank\": 1,\n"
                       "      \"steps\": [{\"index\": 0,\n"
                       "     \"ratio\": 0.500}]\n"
                       "    }\n"
                       "  ],\n"
                       "  \"total\": {\n"
                       "    \"ratio\": null\n"
                       "  },\n"
                       "  \"groups\": [\n"
                       "       true,\n"
                       "       false\n"
                       "     ]\n"
                       "}"));
    QJsonParseError error {};
    QJsonDocument::fromJson(QByteArray::fromStdString(out), &error);
    QCOMPARE(error.error, QJsonParseError::NoError);
}

void TestJsonWriter::emptyContainers()
{
    std::string out;
    JsonWriter(out)
        .beginObject(JsonWriter::Layout::Lines)
        .key("a")
        .beginArray(JsonWriter::Layout::Lines)
        .endArray()
        .key("b")
        .beginObject()
        .endObject()
        .endObject();
    QCOMPARE(out, std::string("{\n  \"a\": [],\n  \"b\": {}\n}"));
    std::string empty;
    JsonWriter(empty).beginObject(JsonWriter::Layout::Lines).endObject();
    QCOMPARE(empty, std::string("{}"));
}

void TestJsonWriter::stringsAndNumbers()
{
    std::string out;
    JsonWriter(out)
        .beginArray()
        .value(std::string_view("q\"b\\n\nt\tc\x01"))
        .value(std::string_view("bad \xff byte"))
        .value(std::numeric_limits<std::int64_t>::min())
        .value(std::numeric_limits<std::uint64_t>::max())
        .fixed(2.0 / 3.0, 6)
        .endArray();
    QCOMPARE(out,
        std::string("[\"q\\\"b\\\\n\\nt\\tc\\u0001\", \"bad \xEF\xBF\xBD byte\", -9223372036854775808, "
                    "18446744073709551615, 0.666667]"));
    // Keys are made valid UTF-8 too, and the whole parses strictly.
    std::string keyed;
    JsonWriter(keyed).beginObject().field(std::string_view("k\xc3"), 1).endObject();
    QCOMPARE(keyed, std::string("{\"k\xEF\xBF\xBD\": 1}"));
    QJsonParseError error {};
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(out), &error);
    QCOMPARE(error.error, QJsonParseError::NoError);
    QCOMPARE(doc.array().at(0).toString(), QStringLiteral("q\"b\\n\nt\tc\x01"));
}

void TestJsonWriter::misuseThrows()
{
    std::string out;
    {
        JsonWriter j(out);
        j.beginObject();
        QVERIFY_THROWS_EXCEPTION(std::logic_error, j.value(1)); // a value without its key
    }
    {
        JsonWriter j(out);
        j.beginArray();
        QVERIFY_THROWS_EXCEPTION(std::logic_error, j.key("k")); // a key in an array
        QVERIFY_THROWS_EXCEPTION(std::logic_error, j.endObject()); // the wrong bracket
    }
    {
        JsonWriter j(out);
        j.beginObject().key("k");
        QVERIFY_THROWS_EXCEPTION(std::logic_error, j.endObject()); // a key without its value
        QVERIFY_THROWS_EXCEPTION(std::logic_error, j.key("l"));
    }
}

QTEST_APPLESS_MAIN(TestJsonWriter)
#include "tst_jsonwriter.moc"
