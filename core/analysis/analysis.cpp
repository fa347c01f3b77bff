// SPDX-License-Identifier: GPL-3.0-or-later
// TEMPORARY placeholder, replaced by the real implementation.
