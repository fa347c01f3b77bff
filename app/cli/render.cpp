// SPDX-License-Identifier: GPL-3.0-or-later
// TEMPORARY: replaced by the real implementation of 'exposure-cli render'.
#include "commands.h"

int exposure::cli::runRender(int, char**)
{
    return fail("'render' is not built yet");
}
