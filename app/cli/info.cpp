// SPDX-License-Identifier: GPL-3.0-or-later
// TEMPORARY: replaced by the real implementation of 'exposure-cli info'.
#include "commands.h"

int exposure::cli::runInfo(int, char**)
{
    return fail("'info' is not built yet");
}
