// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Included before any RapidJSON header, in every file that includes one, so that all of them see the same
// configuration (RapidJSON's templates must be alike in every translation unit). SSE2 is part of the x86-64 baseline:
// RapidJSON then skips white space and scans strings of in-memory documents 16 bytes at a time.
#if defined(__SSE2__) && !defined(RAPIDJSON_SSE2)
#define RAPIDJSON_SSE2
#endif

#include <string>

namespace exposure {

// With SSE2, RapidJSON reads in-memory text in aligned blocks of 16 bytes: up to 15 bytes beyond the terminating NUL
// (never across a page, so harmless, but outside the allocation, which AddressSanitizer reports). Text parsed from a
// std::string is given room for them first; the whole-file buffers (PageBuffer) are whole pages anyway.
inline void padForSimdParse(std::string& text)
{
    text.reserve(text.size() + 16);
}

} // namespace exposure
