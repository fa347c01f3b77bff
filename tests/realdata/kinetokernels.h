// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Test-only: the complete kernel events of a torch.profiler (Kineto) trace in ../shared/traces, rebuilt as lanes of
// a Trace (one lane per CUDA stream). Not an importer: a regular expression over the gzip-decompressed text, enough to
// cross-check the analysis and the drawing against numbers computed independently from the same files.
#include "model/trace.h"

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QString>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

namespace exposure::testing {

// "5190847628093.672" us -> 5190847628093672 ns, exactly (no double rounding).
inline TimeNs microsTextToNs(QStringView text)
{
    const auto dot = text.indexOf(u'.');
    const QStringView whole = dot < 0 ? text : text.left(dot);
    QString frac = dot < 0 ? QString() : text.mid(dot + 1).toString();
    frac = frac.leftJustified(3, u'0').left(3);
    return whole.toLongLong() * 1000 + frac.toLongLong();
}

// Adds one rank with the complete kernel events ("ph": "X", "cat": "kernel") of a gzipped Kineto trace. Returns false
// where the file is absent (the data is not there: the test skips); a file that is there but does not decompress
// throws (a failure, never "data not available").
inline bool addKernelsOf(TraceBuilder& b, const QString& gzPath, const std::string& rankLabel)
{
    if (!QFile::exists(gzPath))
        return false;
    QProcess gz;
    gz.start(QStringLiteral("gzip"), { QStringLiteral("-dc"), gzPath });
    if (!gz.waitForFinished(60000) || gz.exitStatus() != QProcess::NormalExit || gz.exitCode() != 0)
        throw std::runtime_error("gzip -dc " + gzPath.toStdString()
            + " failed: " + gz.readAllStandardError().toStdString() + gz.errorString().toStdString());
    const QString text = QString::fromUtf8(gz.readAllStandardOutput());
    // (A plain string literal: moc does not parse raw string literals.)
    static const QRegularExpression re(
        QStringLiteral("\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"((?:[^\"\\\\]|\\\\.)*)\", \"pid\": -?\\d+, "
                       "\"tid\": (\\d+),\\s*\"ts\": ([0-9.]+), \"dur\": ([0-9.]+)"));
    const int r = b.addRank(rankLabel, "h200-node");
    std::map<int, int> laneOfTid;
    for (auto it = re.globalMatch(text); it.hasNext();) {
        const auto m = it.next();
        const int tid = m.capturedView(2).toInt();
        auto lane = laneOfTid.find(tid);
        if (lane == laneOfTid.end())
            lane = laneOfTid
                       .emplace(tid, b.addLane(r, "CUDA[0:" + std::to_string(tid) + "]", LaneKind::GpuStream, 0, tid))
                       .first;
        const TimeNs start = microsTextToNs(m.capturedView(3));
        const TimeNs dur = microsTextToNs(m.capturedView(4));
        b.addInterval(r, lane->second, start, start + dur, m.captured(1).toStdString(), RegionKind::Kernel);
    }
    return true;
}

inline std::shared_ptr<Trace> kernelsOf(const QString& gzPath)
{
    TraceBuilder b;
    if (!addKernelsOf(b, gzPath, "Rank 0"))
        return {};
    return b.finish();
}

// Both ranks of the 2-GPU DDP run in ../shared/traces/kineto-ddp-bert (they share one clock); nullptr where the
// files are absent (a user's machine).
inline std::shared_ptr<Trace> twoGpuDdpKernels()
{
    const QString dir = QStringLiteral(EXPOSURE_SHARED_TRACES "/kineto-ddp-bert/");
    TraceBuilder b;
    for (int r = 0; r < 2; ++r)
        if (!addKernelsOf(b, dir + QStringLiteral("ddp_bert_ws2_rank%1.json.gz").arg(r), "Rank " + std::to_string(r)))
            return {};
    return b.finish();
}

} // namespace exposure::testing
