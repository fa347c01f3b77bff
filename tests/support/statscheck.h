// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What every `stats --json` output must be, whatever the input: valid UTF-8, strictly parseable JSON, at least one
// rank, and numbers that are sane (nothing negative, no part greater than its whole, hidden + exposed communication
// = communication busy, steps inside the window). Used by the corrupt-file matrix and the fuzz targets.
#include <QByteArray>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QStringDecoder>
#include <string>

namespace exposure::testing {

// "" when `bytes` are valid UTF-8, else what is wrong.
inline std::string utf8Problem(const QByteArray& bytes)
{
    QStringDecoder d(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    (void)d.decode(bytes);
    return d.hasError() ? std::string("not valid UTF-8") : std::string();
}

// "" when `bytes` are one strictly valid JSON document (valid UTF-8 included), else what is wrong.
inline std::string jsonProblem(const QByteArray& bytes, QJsonDocument* out = nullptr)
{
    if (std::string u = utf8Problem(bytes); !u.empty())
        return u;
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &err);
    if (err.error != QJsonParseError::NoError)
        return "invalid JSON: " + err.errorString().toStdString() + " at offset " + std::to_string(err.offset);
    if (out)
        *out = doc;
    return {};
}

// "" when one <stats> object of the report holds together; `where` names it in the message.
inline std::string statsProblem(const QJsonObject& s, const std::string& where)
{
    // Exact: integers beyond 2^53 (a corrupt timestamp) would round as doubles.
    const auto v = [&](const char* k) { return s.value(QLatin1String(k)).toInteger(-1); };
    static constexpr const char* fields[] = { "kernel_count", "comm_kernel_count", "comm_kernel_sum_ns", "comm_busy_ns",
        "compute_busy_ns", "overlapped_ns", "exposed_ns", "backward_overlapped_ns", "memcpy_busy_ns", "gpu_busy_ns",
        "span_ns", "idle_ns", "unclassified_ns" };
    for (const char* f : fields)
        if (!s.value(QLatin1String(f)).isDouble() || v(f) < 0)
            return where + ": " + f + " missing or negative";
    struct Part
    {
        const char* part;
        const char* whole;
    };
    static constexpr Part parts[] = { { "gpu_busy_ns", "span_ns" }, { "idle_ns", "span_ns" },
        { "compute_busy_ns", "gpu_busy_ns" }, { "comm_busy_ns", "gpu_busy_ns" }, { "memcpy_busy_ns", "gpu_busy_ns" },
        { "overlapped_ns", "comm_busy_ns" }, { "exposed_ns", "comm_busy_ns" },
        { "backward_overlapped_ns", "overlapped_ns" }, { "comm_busy_ns", "comm_kernel_sum_ns" },
        { "comm_kernel_count", "kernel_count" } };
    for (const Part& p : parts)
        if (v(p.part) > v(p.whole))
            return where + ": " + p.part + " " + std::to_string(v(p.part)) + " > " + p.whole + " "
                + std::to_string(v(p.whole));
    if (v("overlapped_ns") + v("exposed_ns") != v("comm_busy_ns"))
        return where + ": overlapped_ns + exposed_ns != comm_busy_ns";
    return {};
}

// "" when `bytes` are a valid `stats --json` report whose numbers hold together, else the first problem.
inline std::string statsJsonProblem(const QByteArray& bytes, int* ranksOut = nullptr)
{
    QJsonDocument doc;
    if (std::string p = jsonProblem(bytes, &doc); !p.empty())
        return p;
    const QJsonObject o = doc.object();
    const QJsonArray ranks = o.value(QLatin1String("ranks")).toArray();
    if (ranks.isEmpty())
        return "no ranks";
    if (ranksOut)
        *ranksOut = int(ranks.size());
    const QJsonObject window = o.value(QLatin1String("window")).toObject();
    const qint64 from = window.value(QLatin1String("start_ns")).toInteger(),
                 to = window.value(QLatin1String("end_ns")).toInteger();
    if (from > to)
        return "window ends before it starts";
    for (qsizetype r = 0; r < ranks.size(); ++r) {
        const QJsonObject rank = ranks[r].toObject();
        const std::string where = "rank " + std::to_string(r);
        if (std::string p = statsProblem(rank, where); !p.empty())
            return p;
        if (rank.value(QLatin1String("span_ns")).toInteger() > to - from)
            return where + ": span_ns longer than the window";
        for (const auto& stepValue : rank.value(QLatin1String("steps")).toArray()) {
            const QJsonObject step = stepValue.toObject();
            const std::string sw = where + " step " + std::to_string(step.value(QLatin1String("index")).toInt());
            if (std::string p = statsProblem(step, sw); !p.empty())
                return p;
            const qint64 s = step.value(QLatin1String("start_ns")).toInteger(),
                         e = step.value(QLatin1String("end_ns")).toInteger();
            if (s > e || s < from || e > to)
                return sw + ": outside the trace's window";
        }
    }
    return statsProblem(o.value(QLatin1String("total")).toObject(), "total");
}

} // namespace exposure::testing
