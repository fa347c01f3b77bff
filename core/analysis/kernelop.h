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

// The identity of a kernel that carries a batch of sends and receives (torch's batch_isend_irecv: the importer gives
// such a kernel every send and receive of its batch, several Lane::collectiveArgs entries for one interval), where all
// of them go to or come from one peer of global rank `self`: the group key "\x1ep2p\x1f<group>, <a> ⇄ <b>\x1f<ranks>"
// (a < b, the same on both sides: the k-th batch of a with b meets the k-th batch of b with a) and a signature of
// the elements each side sends. False (nothing set) for a kernel with fewer than two entries or any other batch
// (defined in collectives.cpp).
bool batchedP2pIdentity(
    const Trace& trace, const Lane& lane, std::uint32_t interval, int self, std::string& group, std::string& signature);

} // namespace exposure
