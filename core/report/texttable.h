// SPDX-License-Identifier: GPL-3.0-or-later
// Plain text tables for the command line's reports.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace exposure {

// Columns padded to their widest cell (UTF-8 code points), two spaces apart, right-aligned except the first
// `leftColumns` (and the last one if lastLeft); trailing spaces trimmed; one line per row.
std::string renderTable(
    const std::vector<std::vector<std::string>>& rows, std::size_t leftColumns, bool lastLeft = false);

} // namespace exposure
