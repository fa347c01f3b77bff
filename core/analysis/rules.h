// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Classification of region names by ordered regular-expression rules (the defaults compiled in from
// resources/rules.json): category, sub-group, NCCL fields, phase hints, step and launch regions.
#include "analysis/categories.h"
#include "model/lanemapping.h"
#include "model/trace.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exposure {

struct Analysis;

// Which names a rule applies to.
enum class RuleTarget : std::uint8_t {
    Kernel, // GPU kernel names ("kernel" in a rules file)
    Region, // CPU region names ("region")
    Any, // every name ("any")
};
const char* ruleTargetName(RuleTarget t); // the rules-file spelling

// Classification of one distinct name; computed once per StringId.
struct NameClass
{
    Category category = Category::Host;
    std::string
        subgroup; // compute:
                  // gemm|convolution|attention|elementwise|reduction|normalization|layout|pooling|optimizer|other;
                  // communication: the collective; memcpy: direction (HtoD, DtoH, DtoD, memset)
    bool unclassified = false; // only a catch-all rule matched
    int rule = -1; // index into Rules::rules() of the rule that matched
    std::string collective; // AllReduce, Broadcast, ReduceScatter, AllGather, SendRecv, ... ("" if none)
    std::string algorithm; // RING, TREE, ...
    std::string protocol; // LL, LL128, SIMPLE
    std::string dataType; // float, f32, bf16, ...
    std::string displayName; // demangled when the name was mangled, else the name
    Phase namePhase = Phase::Unknown; // phase suggested by the name alone
    Phase subgroupPhase = Phase::Unknown; // compute: the phase its sub-group belongs to (optimizer kernels)

    std::string reduction; // NCCL reduction operator from the name (Sum, Max, ...), "" if none
    int phaseRule = -1; // rule that gave namePhase (GPU names) or regionPhase (CPU regions)
    Phase regionPhase = Phase::Unknown; // CPU regions: the phase of the kernels launched inside this region
    bool stepRegion = false; // CPU regions: this region delimits one training step
    int stepRule = -1; // rule that made it a step region
    bool kernelLaunch = false; // CPU regions: a kernel-launch API call (cuLaunchKernel, hipLaunchKernel ...)
    bool graphLaunch = false; // CPU regions: a CUDA/HIP graph launch (a launch rule of subgroup "graph")
    bool syncCall = false; // CPU regions: a call that blocks until the GPU catches up (synchronize, .item())
    bool copyCall = false; // CPU regions: a copy or memset call (a memcpy rule whose target takes regions)
    bool dataLoader = false; // CPU regions: the data loader producing the next batch
};

// A rule of a rules file's "process_groups": the role it gives the process groups it matches, which beats the role
// their names suggest (analysis/commops.h). Every condition given must hold; a rule gives at least one.
struct GroupRoleRule
{
    std::string id; // short unique label
    std::string name; // regular expression (case-insensitive) searched in the group's name ("Process Group Name")
    std::string desc; // the same for its description ("mesh_dp_shard", "TENSOR_MODEL_PARALLEL_GROUP")
    std::vector<int> ranks; // exactly these global ranks, in any order (empty: any)
    int size = 0; // exactly this many ranks (0: any)
    std::string role; // dp, tp, pp, ep, cp or other
};

// Ordered regex rules over region names (default set compiled in from resources/rules.json).
class Rules
{
public:
    struct Rule
    {
        std::string id; // short unique label shown in the GUI
        std::string pattern; // regular expression (case-insensitive), searched in the name
        RuleTarget target = RuleTarget::Any;
        std::string category; // compute|communication|memcpy|idle|phase|step
        std::string subgroup; // see NameClass::subgroup; for category "phase": forward|backward|optimizer
        bool catchAll = false;
    };

    static Rules defaults();
    // Reads a rules file; throws std::runtime_error("<file>: <problem>") on bad input.
    // With extend=true the file's rules are tried before the defaults; otherwise they replace them.
    static Rules fromFile(const std::string& path, bool extend);
    static Rules fromJson(const std::string& json, const std::string& sourceName);
    std::string toJson() const;

    const std::vector<Rule>& rules() const;
    NameClass classify(std::string_view name, RegionKind kind) const;
    // The colour (0xRRGGBB) the rules file gives a sub-group of a category ("colours"), else that category's "*"
    // colour; nullopt when it gives neither.
    std::optional<std::uint32_t> colour(Category category, const std::string& subgroup) const;
    // The sub-groups of a category that "colours" names, in name order, "*" (the others' colour) included and ""
    // (the category without a sub-group) left out: the classes a legend of the category can show.
    std::vector<std::string> colouredSubgroups(Category category) const;

    // The text of resources/rules.json compiled into the library.
    static const char* defaultJson();
    // Where the rules came from ("built-in defaults", a file name, or "file + built-in defaults").
    const std::string& source() const;
    const std::string& description() const;
    // The rules file's "chrome_mapping" (model/lanemapping.h): how Chrome traces' threads become workers and lanes,
    // tried before the built-in mapping of Megatron-LM timelines. The built-in rules have none.
    const std::vector<ChromeMappingRule>& chromeMapping() const;
    // The rules file's "process_groups", in order. The built-in rules have none.
    const std::vector<GroupRoleRule>& groupRoles() const;
    // The role the first of them that matches the process group of `args` gives it; empty when none does.
    std::string groupRole(const CollectiveArgs& args) const;

    Rules();
    ~Rules();
    Rules(const Rules&);
    Rules& operator=(const Rules&);
    Rules(Rules&&) noexcept;
    Rules& operator=(Rules&&) noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

// How much of the trace each rule classified.
struct RuleUsage
{
    int rule = -1; // index into Rules::rules(); -1 = nothing matched
    std::uint64_t count = 0;
    TimeNs timeNs = 0;
};
std::vector<RuleUsage> ruleUsage(const Trace& trace, const Analysis& analysis);

} // namespace exposure
