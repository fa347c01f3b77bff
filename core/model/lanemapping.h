// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How the processes and threads of a Chrome trace become ranks, parallel coordinates and lanes. A rules file's
// "chrome_mapping" rules (read and checked by analysis/rules.cpp) are tried in order, then the built-in mapping of the
// published Megatron-LM timelines (import/chromeimporter.cpp); the first rule that matches a thread decides.

#include "model/trace.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace exposure {

struct ChromeMappingRule
{
    std::string id;
    // Regular expressions (case-insensitive, searched anywhere), on the process name ("process_name" metadata) and on
    // the thread name ("thread_name" metadata, else "thread TID"); "" matches any. Both must match. Their named
    // groups dp, pp, tp, ep, cp give the worker's coordinates (the thread's win), `role` the lane's role.
    std::string process;
    std::string thread;
    std::string pid; // "dp", "pp", "tp", "ep" or "cp": the pid is that coordinate where no group gives it; "" none
    std::string role; // the lane's role (laneRoleNamed); "" takes the `role` group's text
    std::vector<std::pair<std::string, std::string>> roles; // the `role` group's text -> a role name
    std::string step; // the key in an event's args that holds its training step ("" none)
};

// What a lane's events are: GPU work classified by the ordinary rules, all compute, all communication (of one
// parallelism), or host work.
struct ChromeLaneRole
{
    enum class Work : std::uint8_t { Device, Compute, Communication, Host };
    Work work = Work::Device;
    CommRole comm = CommRole::None;
};

// "device", "compute", "dp-comm", "pp-comm", "tp-comm", "ep-comm", "cp-comm", "comm" (other communication), "host";
// nullopt for anything else.
inline std::optional<ChromeLaneRole> laneRoleNamed(std::string_view name)
{
    using W = ChromeLaneRole::Work;
    struct Row
    {
        std::string_view name;
        ChromeLaneRole role;
    };
    static constexpr Row rows[] = { { "device", { W::Device, CommRole::None } },
        { "compute", { W::Compute, CommRole::None } }, { "dp-comm", { W::Communication, CommRole::DP } },
        { "pp-comm", { W::Communication, CommRole::PP } }, { "tp-comm", { W::Communication, CommRole::TP } },
        { "ep-comm", { W::Communication, CommRole::EP } }, { "cp-comm", { W::Communication, CommRole::CP } },
        { "comm", { W::Communication, CommRole::Other } }, { "host", { W::Host, CommRole::None } } };
    for (const Row& r : rows)
        if (r.name == name)
            return r.role;
    return std::nullopt;
}

// The coordinate a name gives ("dp" -> &coords.dp); nullptr for anything else.
inline int* coordinateNamed(ParallelCoords& coords, std::string_view name)
{
    return name == "dp" ? &coords.dp
        : name == "pp"  ? &coords.pp
        : name == "tp"  ? &coords.tp
        : name == "ep"  ? &coords.ep
        : name == "cp"  ? &coords.cp
                        : nullptr;
}

} // namespace exposure
