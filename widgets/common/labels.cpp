// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/labels.h"

#include "model/timeformat.h"

#include <QObject>

namespace exposure {

QString categoryLabel(Category c)
{
    switch (c) {
    case Category::Compute:
        return QObject::tr("compute");
    case Category::Communication:
        return QObject::tr("communication");
    case Category::Memcpy:
        return QObject::tr("memcpy");
    case Category::Idle:
        return QObject::tr("idle / sync");
    case Category::Host:
        return QObject::tr("host");
    }
    return {};
}

QString groupDigits(std::uint64_t n)
{
    QString digits = QString::number(n);
    for (int i = int(digits.size()) - 3; i > 0; i -= 3)
        digits.insert(i, QLatin1Char(' '));
    return digits;
}

QString durationText(TimeNs ns)
{
    return QString::fromStdString(formatDuration(ns));
}

QString overlapStateLabel(OverlapState s)
{
    switch (s) {
    case OverlapState::ComputeOnly:
        return QObject::tr("compute only");
    case OverlapState::Hidden:
        return QObject::tr("hidden communication");
    case OverlapState::Exposed:
        return QObject::tr("exposed communication");
    case OverlapState::Other:
        return QObject::tr("other GPU activity");
    }
    return {};
}

QString byteCountText(std::uint64_t bytes, bool exact)
{
    if (bytes < 1000)
        return QObject::tr("%1 B").arg(bytes);
    static const char* const units[] = { "kB", "MB", "GB", "TB", "PB", "EB" };
    double v = double(bytes) / 1000;
    int u = 0;
    while (v >= 999.5 && u < 5) {
        v /= 1000;
        ++u;
    }
    const int decimals = v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
    const QString text = QStringLiteral("%1 %2").arg(v, 0, 'f', decimals).arg(QLatin1String(units[u]));
    return exact ? QObject::tr("%1 (%2 bytes)").arg(text, groupDigits(bytes)) : text;
}

} // namespace exposure
