// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/demangle.h"

#include <cstdlib>
#include <cxxabi.h>

namespace exposure {

std::string demangle(const std::string& name)
{
    if (name.size() < 3 || name[0] != '_' || name[1] != 'Z')
        return name;
    int status = 0;
    char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    std::string result = status == 0 && out ? std::string(out) : name;
    std::free(out);
    return result;
}

} // namespace exposure
