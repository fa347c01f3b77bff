// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Included before any RapidJSON header, in every file that includes one, so that all of them see the same
// configuration (RapidJSON's templates must be alike in every translation unit). SSE2 is part of the x86-64 baseline:
// RapidJSON then skips white space and scans strings of in-memory documents 16 bytes at a time.
#if defined(__SSE2__) && !defined(RAPIDJSON_SSE2)
#define RAPIDJSON_SSE2
#endif
