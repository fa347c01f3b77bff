// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <string>

namespace exposure {

// An Itanium-mangled name ("_Z...") demangled; any other name, or one the demangler refuses, as it is.
std::string demangle(const std::string& name);

} // namespace exposure
