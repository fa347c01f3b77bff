// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/labels.h"

#include "model/enumnames.h"
#include "model/timeformat.h"

#include <QObject>

namespace exposure {

namespace {

// The labels are marked for translation where they are written (QT_TRANSLATE_NOOP) and translated when read.
QString translated(const char* text)
{
    return text ? QObject::tr(text) : QString();
}

} // namespace

QString categoryLabel(Category c)
{
    static constexpr EnumName<Category> labels[] = { { Category::Compute, QT_TRANSLATE_NOOP("QObject", "compute") },
        { Category::Communication, QT_TRANSLATE_NOOP("QObject", "communication") },
        { Category::Memcpy, QT_TRANSLATE_NOOP("QObject", "memcpy") },
        { Category::Idle, QT_TRANSLATE_NOOP("QObject", "idle / sync") },
        { Category::Host, QT_TRANSLATE_NOOP("QObject", "host") } };
    return translated(nameIn(labels, c, nullptr));
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
    static constexpr EnumName<OverlapState> labels[]
        = { { OverlapState::ComputeOnly, QT_TRANSLATE_NOOP("QObject", "compute only") },
              { OverlapState::Hidden, QT_TRANSLATE_NOOP("QObject", "hidden communication") },
              { OverlapState::Exposed, QT_TRANSLATE_NOOP("QObject", "exposed communication") },
              { OverlapState::Other, QT_TRANSLATE_NOOP("QObject", "other GPU activity") },
              { OverlapState::WaitingExposed, QT_TRANSLATE_NOOP("QObject", "waiting for peers (exposed)") },
              { OverlapState::WaitingHidden, QT_TRANSLATE_NOOP("QObject", "waiting for peers (hidden)") } };
    return translated(nameIn(labels, s, nullptr));
}

QString phaseLabel(Phase p)
{
    static constexpr EnumName<Phase> labels[] = { { Phase::Forward, QT_TRANSLATE_NOOP("QObject", "forward") },
        { Phase::Backward, QT_TRANSLATE_NOOP("QObject", "backward") },
        { Phase::Optimizer, QT_TRANSLATE_NOOP("QObject", "optimizer") } };
    return translated(nameIn(labels, p, QT_TRANSLATE_NOOP("QObject", "unknown")));
}

QString overlapStateShortLabel(OverlapState s)
{
    static constexpr EnumName<OverlapState> labels[]
        = { { OverlapState::ComputeOnly, QT_TRANSLATE_NOOP("QObject", "compute only") },
              { OverlapState::Hidden, QT_TRANSLATE_NOOP("QObject", "hidden comm.") },
              { OverlapState::Exposed, QT_TRANSLATE_NOOP("QObject", "exposed comm.") },
              { OverlapState::Other, QT_TRANSLATE_NOOP("QObject", "other GPU") },
              { OverlapState::WaitingExposed, QT_TRANSLATE_NOOP("QObject", "waiting for peers") },
              { OverlapState::WaitingHidden, QT_TRANSLATE_NOOP("QObject", "hidden waiting") } };
    return translated(nameIn(labels, s, nullptr));
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
