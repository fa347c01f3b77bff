// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The operation a communication kernel's name says, read from its classification (rules.h: NCCL's kernel names are
// parsed there, and only there); defined in commops.cpp.
#include "analysis/analysis.h"

#include <string>

namespace exposure {

// The text of a kernel that says its operation (normaliseCommOp's input): the collective its classification names
// (NCCL's kernel names as the rules parse them, a rule's named group), else its name (op-level timers:
// "params-all-gather").
const std::string& kernelOpText(const Trace& trace, const Analysis& analysis, StringId name);
// normaliseCommOp(kernelOpText(...)): "all_reduce", ...; empty when the text names no operation.
std::string kernelNameOp(const Trace& trace, const Analysis& analysis, StringId name);

} // namespace exposure
