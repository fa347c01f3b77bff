// SPDX-License-Identifier: GPL-3.0-or-later
// Trace::finalize on several threads, for the importers (LoadOptions::threads). The ranks are independent in both of
// its passes (sorting and remapping each lane; rebasing and measuring the spans), so they are finalized in parallel;
// the result is the same as Trace::finalize's on one thread.
#pragma once

#include "model/trace.h"

namespace exposure {

// Trace::finalize(rebaseToZero) with the ranks on up to `threads` threads (0: one per hardware thread).
void finalizeTrace(Trace& trace, bool rebaseToZero, int threads);

} // namespace exposure
