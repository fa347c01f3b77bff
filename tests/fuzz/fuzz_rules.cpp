// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzz target: the rules file reader (Rules::fromJson, what `--rules FILE` and the Rules panel load). Bad input
// must give a std::runtime_error naming the source on one line; accepted rules classify names and write JSON that
// reads back to the same rules.
#include "analysis/rules.h"
#include "fuzzcheck.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

using namespace exposure;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    Rules rules;
    try {
        rules = Rules::fromJson(text, "fuzz.json");
    } catch (const std::runtime_error& e) {
        fuzz::checkNamedOneLine(e.what(), "fuzz.json", "rules");
        return 0;
    }
    static const char* const names[] = {
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "ampere_sgemm_128x64_nn",
        "_ZN2at6native29vectorized_elementwise_kernelILi4EEEvi",
        "ProfilerStep#4",
        "cudaLaunchKernel",
        "Memcpy HtoD (Pageable -> Device)",
        "autograd::engine::evaluate_function: AddmmBackward0",
        "",
    };
    for (const char* name : names) {
        for (const auto kind : { RegionKind::Kernel, RegionKind::HostApi, RegionKind::HostRegion })
            (void)rules.classify(name, kind);
    }
    // Round trip: what toJson writes reads back to the same rules.
    const std::string json = rules.toJson();
    Rules again;
    try {
        again = Rules::fromJson(json, "round trip");
    } catch (const std::runtime_error& e) {
        fuzz::violated("toJson output does not read back", e.what());
    }
    if (again.rules().size() != rules.rules().size())
        fuzz::violated("round trip changed the number of rules", json);
    for (std::size_t i = 0; i < rules.rules().size(); ++i) {
        const auto& a = rules.rules()[i];
        const auto& b = again.rules()[i];
        if (a.id != b.id || a.pattern != b.pattern || a.target != b.target || a.category != b.category
            || a.subgroup != b.subgroup || a.catchAll != b.catchAll)
            fuzz::violated("round trip changed a rule", a.id);
    }
    return 0;
}
