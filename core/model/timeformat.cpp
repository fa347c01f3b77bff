// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/timeformat.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace exposure {

std::optional<TimeNs> parseDuration(std::string_view text)
{
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
        text.remove_suffix(1);
    if (text.empty())
        return std::nullopt;

    std::size_t numEnd = 0;
    while (numEnd < text.size()
        && (std::isdigit(static_cast<unsigned char>(text[numEnd])) || text[numEnd] == '.' || text[numEnd] == '-'
            || text[numEnd] == '+' || text[numEnd] == 'e' || text[numEnd] == 'E')) {
        // 'e' only counts as exponent if followed by a digit or sign
        if ((text[numEnd] == 'e' || text[numEnd] == 'E')
            && (numEnd + 1 >= text.size()
                || !(std::isdigit(static_cast<unsigned char>(text[numEnd + 1])) || text[numEnd + 1] == '-'
                    || text[numEnd + 1] == '+')))
            break;
        ++numEnd;
    }
    const std::string number(text.substr(0, numEnd));
    std::string_view unit = text.substr(numEnd);
    while (!unit.empty() && unit.front() == ' ')
        unit.remove_prefix(1);
    if (number.empty())
        return std::nullopt;

    double scale = 1.0;
    if (unit.empty() || unit == "ns")
        scale = 1.0;
    else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs")
        scale = 1e3;
    else if (unit == "ms")
        scale = 1e6;
    else if (unit == "s")
        scale = 1e9;
    else if (unit == "min")
        scale = 60e9;
    else
        return std::nullopt;

    char* end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !std::isfinite(v))
        return std::nullopt;
    const double ns = v * scale;
    if (std::fabs(ns) > 9.2e18)
        return std::nullopt;
    return static_cast<TimeNs>(std::llround(ns));
}

std::string formatDuration(TimeNs ns, int precision)
{
    precision = std::max(precision, 3);
    const double a = std::fabs(double(ns));
    const char* unit = "ns";
    double v = double(ns);
    if (a >= 1e9) {
        v /= 1e9;
        unit = "s";
    } else if (a >= 1e6) {
        v /= 1e6;
        unit = "ms";
    } else if (a >= 1e3) {
        v /= 1e3;
        unit = "\xC2\xB5s";
    } else {
        return std::to_string(ns) + " ns";
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g %s", precision, v, unit);
    return buf;
}

} // namespace exposure
