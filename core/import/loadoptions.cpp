// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/loadoptions.h"

#include <algorithm>

namespace exposure {

std::optional<std::vector<int>> parseRankList(const std::string& text)
{
    std::vector<int> out;
    std::size_t pos = 0;
    auto number = [&](int& v) {
        while (pos < text.size() && text[pos] == ' ')
            ++pos;
        const std::size_t start = pos;
        long long value = 0;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && pos - start < 9)
            value = value * 10 + (text[pos++] - '0');
        while (pos < text.size() && text[pos] == ' ')
            ++pos;
        v = int(value);
        return pos > start && !(pos < text.size() && text[pos] >= '0' && text[pos] <= '9');
    };
    do {
        int a = 0, b = 0;
        if (!number(a))
            return std::nullopt;
        b = a;
        if (pos < text.size() && text[pos] == '-') {
            ++pos;
            if (!number(b) || b < a || b - a > 1'000'000)
                return std::nullopt;
        }
        for (int r = a; r <= b; ++r)
            if (std::find(out.begin(), out.end(), r) == out.end())
                out.push_back(r);
    } while (pos < text.size() && text[pos++] == ',');
    if (pos != text.size() || out.empty())
        return std::nullopt;
    return out;
}

} // namespace exposure
