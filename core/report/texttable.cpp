// SPDX-License-Identifier: GPL-3.0-or-later
#include "report/texttable.h"

#include <algorithm>

namespace exposure {

std::string renderTable(const std::vector<std::vector<std::string>>& rows, std::size_t leftColumns, bool lastLeft)
{
    std::vector<std::size_t> width;
    auto displayWidth = [](const std::string& s) {
        // UTF-8: count code points, not bytes (µ is two bytes).
        std::size_t n = 0;
        for (const char c : s)
            if ((static_cast<unsigned char>(c) & 0xC0) != 0x80)
                ++n;
        return n;
    };
    for (const auto& r : rows) {
        if (width.size() < r.size())
            width.resize(r.size(), 0);
        for (std::size_t i = 0; i < r.size(); ++i)
            width[i] = std::max(width[i], displayWidth(r[i]));
    }
    std::string out;
    for (const auto& r : rows) {
        std::string line;
        for (std::size_t i = 0; i < r.size(); ++i) {
            const std::string pad(width[i] - displayWidth(r[i]), ' ');
            if (i > 0)
                line += "  ";
            const bool left = i < leftColumns || (lastLeft && i + 1 == r.size());
            line += left ? r[i] + pad : pad + r[i];
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line + "\n";
    }
    return out;
}

} // namespace exposure
