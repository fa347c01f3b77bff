// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/timeformat.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <string_view>
#include <utility>

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

    // Nanoseconds per unit; no unit is nanoseconds, micro is written "us", with the micro sign or with Greek mu.
    static constexpr std::pair<std::string_view, double> units[] = { { "", 1.0 }, { "ns", 1.0 }, { "us", 1e3 },
        { "\xC2\xB5s", 1e3 }, { "\xCE\xBCs", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "min", 60e9 } };
    const auto unitRow
        = std::find_if(std::begin(units), std::end(units), [unit](const auto& row) { return row.first == unit; });
    if (unitRow == std::end(units))
        return std::nullopt;
    const double scale = unitRow->second;

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

std::string formatFixed(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string formatRankList(std::vector<int> ranks)
{
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    std::string s;
    for (std::size_t i = 0; i < ranks.size();) {
        std::size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
            ++j;
        s += (s.empty() ? "" : ",") + std::to_string(ranks[i]);
        if (j > i)
            s += (j == i + 1 ? "," : "-") + std::to_string(ranks[j]);
        i = j + 1;
    }
    return s;
}

} // namespace exposure
