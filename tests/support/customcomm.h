// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A communication kernel that no built-in rule knows ("reduce" in its name makes it compute), and the rule that makes
// it a collective through named groups: collective "reducescatter", algorithm "tree", protocol "ll128". For the tests
// that a rules file is followed by every output.
#include <QByteArray>

namespace exposure::testing {

inline constexpr const char* kCustomCommKernel = "custom_comm_reducescatter_tree_ll128";

// The rule as a rules file's "rules" entry (JSON).
inline QByteArray customCommRule()
{
    return "{\"id\": \"custom-comm\", \"pattern\": "
           "\"^custom_comm_(?<collective>[a-z]+)_(?<algorithm>tree)_(?<protocol>ll128)$\", \"target\": \"kernel\", "
           "\"category\": \"communication\"}";
}

} // namespace exposure::testing
