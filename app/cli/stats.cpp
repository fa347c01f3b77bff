// SPDX-License-Identifier: GPL-3.0-or-later
// TEMPORARY: replaced by the real implementation of 'exposure-cli stats'.
#include "commands.h"

int exposure::cli::runStats(int, char**)
{
    return fail("'stats' is not built yet");
}
