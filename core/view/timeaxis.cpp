// SPDX-License-Identifier: GPL-3.0-or-later
#include "view/timeaxis.h"

#include <cmath>
#include <cstdio>

namespace exposure::timeaxis {

double niceStep(double spanNs, int targetTicks)
{
    if (!(spanNs > 0) || targetTicks < 1)
        return 1;
    const double raw = spanNs / targetTicks;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / mag;
    double nice = 10;
    if (f <= 1)
        nice = 1;
    else if (f <= 2)
        nice = 2;
    else if (f <= 5)
        nice = 5;
    return std::max(1.0, nice * mag);
}

std::vector<double> ticks(double fromNs, double toNs, double stepNs)
{
    std::vector<double> out;
    if (!(stepNs > 0) || toNs < fromNs)
        return out;
    const double first = std::ceil(fromNs / stepNs);
    for (double k = first; k * stepNs <= toNs + 1e-9 * stepNs && out.size() < 10000; k += 1)
        out.push_back(k * stepNs);
    return out;
}

TimeUnit unitForStep(double stepNs)
{
    // The largest unit in which the step needs at most one decimal: 0.5 ms steps read "12.5 ms".
    if (stepNs >= 1e8)
        return TimeUnit::Seconds;
    if (stepNs >= 1e5)
        return TimeUnit::Milliseconds;
    if (stepNs >= 1e2)
        return TimeUnit::Microseconds;
    return TimeUnit::Nanoseconds;
}

namespace {

// Each unit's suffix and its length in ns; nanoseconds (and Auto) are the row missing from the table.
struct UnitRow
{
    TimeUnit unit;
    const char* suffix;
    double scale;
};
constexpr UnitRow kUnits[] = { { TimeUnit::Seconds, "s", 1e9 }, { TimeUnit::Milliseconds, "ms", 1e6 },
    { TimeUnit::Microseconds, "\xC2\xB5s", 1e3 } };
constexpr UnitRow kNanoseconds { TimeUnit::Nanoseconds, "ns", 1 };

const UnitRow& rowOf(TimeUnit unit)
{
    for (const UnitRow& row : kUnits)
        if (row.unit == unit)
            return row;
    return kNanoseconds;
}

} // namespace

const char* unitSuffix(TimeUnit unit)
{
    return rowOf(unit).suffix;
}

double unitScale(TimeUnit unit)
{
    return rowOf(unit).scale;
}

std::string label(double tNs, double stepNs, TimeUnit unit, bool withSuffix)
{
    if (unit == TimeUnit::Auto)
        unit = unitForStep(stepNs);
    const double scale = unitScale(unit);
    const double value = tNs / scale;
    const double stepInUnit = stepNs / scale;
    // Decimals so that the step itself is representable: step 0.25 ms -> 2 decimals.
    int decimals = 0;
    for (double s = stepInUnit; decimals < 9 && std::fabs(s - std::round(s)) > 1e-6 * std::max(1.0, s); s *= 10)
        ++decimals;
    char buf[64];
    const double shown = std::fabs(value) < 0.5 * std::pow(10.0, -decimals) ? 0.0 : value; // no "-0"
    std::snprintf(buf, sizeof buf, "%.*f", decimals, shown);
    std::string s(buf);
    if (withSuffix && shown != 0.0) {
        s += ' ';
        s += unitSuffix(unit);
    }
    return s;
}

} // namespace exposure::timeaxis
