// SPDX-License-Identifier: GPL-3.0-or-later
// Communication by the operation the program called, and pipeline bubbles.
//  * Operation: each communication kernel belongs to the collective the program called, which the kernel's name
//    does not always say (NCCL runs all-to-all, and on some versions all-reduce, as SendRecv kernels). In order:
//    the communication region around its launch (torch.profiler's `nccl:all_reduce`, `c10d::allreduce_`,
//    `record_param_comms` with the collective's name on the kernel; Score-P's enclosing region), reached through
//    the launch that started the kernel; else the collective named in the kernel's own arguments; else the kernel
//    name. Names are normalised to all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send, recv,
//    barrier (send_recv for a SendRecv kernel nothing else names).
//  * Bubble: for each step, the job's window of that step (the earliest start to the latest end of that step's
//    window on any rank) minus the rank's compute busy time inside it.
#pragma once

#include "analysis/analysis.h"
#include "analysis/collectives.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace exposure {

// "nccl:_all_gather_base" -> "all_gather", "c10d::allreduce_" -> "all_reduce", "SendRecv" -> "send_recv"; empty when
// the text names no communication operation.
std::string normaliseCommOp(std::string_view name);

// Where a kernel's operation came from.
enum class CommOpSource : std::uint8_t { Region, KernelArgs, KernelName };
const char* commOpSourceName(CommOpSource s); // "region", "kernel arguments", "kernel name"

struct CommOpReport
{
    std::string op; // normalised
    std::string call; // the region as called ("nccl:all_reduce"), the kernel's collective argument, or empty
    std::string kernelType; // the kernel's own type from its name ("sendrecv", "allreduce"), empty if none
    CommOpSource source = CommOpSource::KernelName;
    std::uint64_t count = 0; // communication kernels of the operation that intersect the window
    TimeNs busyNs = 0; // |U(those kernels) ∩ window|
    TimeNs exposedNs = 0; // |U(those kernels) ∩ window \ U(compute)|
    TimeNs waitNs = 0, transferNs = 0; // their matched members' parts clipped to the window (filled by the merge)
    // Time queued behind another operation of the same communicator on another stream (CollectiveMember::queuedNs),
    // and the operation it was queued behind most.
    TimeNs queuedNs = 0;
    std::string queuedBehind;
};

// Communication of one parallelism role: dp (data parallel, FSDP shard and replicate included), tp, pp, ep, cp,
// other (a named group of no known role) or unknown (no process group recorded).
struct CommRoleReport
{
    std::string role;
    // Where the role came from: "rule" (the rules file's process_groups), "name" (the group's name and description),
    // "layout" (the job's group layout, analysis/grouplayout.h), "lane" (the lane's role: Chrome traces); several
    // joined by '+' (sorted) where the role's groups differ; empty for "unknown".
    std::string source;
    std::uint64_t count = 0;
    TimeNs busyNs = 0, exposedNs = 0, waitNs = 0, transferNs = 0; // as in CommOpReport
};

// The role a process group plays, from its name and description ("0 (default_pg)", "tp", "mesh_dp_shard",
// "TENSOR_MODEL_PARALLEL_GROUP"): "dp", "tp", "pp", "ep", "cp", or "other"; "unknown" for an empty text.
std::string roleOfGroup(std::string_view group);
// The role of the process group of `args`: the first "process_groups" rule of `rules` that matches it, which always
// wins (Rules::groupRole); else roleOfGroup() of its name and description; "unknown" without arguments.
std::string roleOfGroup(const Rules& rules, const CollectiveArgs* args);
// The same, then, where the name says "other", the role the layout of the job's groups gives (`layout` may be null);
// `source` (if given) says which decided: "rule", "name" or "layout" (empty for "unknown").
struct GroupLayout;
class SharedGroupLayout; // analysis/grouplayout.h
std::string roleOfGroup(
    const Rules& rules, const GroupLayout* layout, const CollectiveArgs* args, std::string* source = nullptr);

// The rank's communication by operation and by role over `window`, and for each of its communication kernels the
// index into those lists (keyed by lane and interval), which the merge uses to split waiting and transfer.
struct CommOps
{
    std::vector<CommOpReport> ops; // sorted by busy time, largest first (ties by op name)
    std::vector<CommRoleReport> roles; // sorted by role name
    std::vector<std::uint64_t> kernelKeys; // (lane << 32 | interval), sorted
    std::vector<std::uint16_t> kernelOp; // index into ops, parallel to kernelKeys
    std::vector<std::uint16_t> kernelRole; // index into roles, parallel to kernelKeys
};
// `layout`: the trace's group layout shared by the calls for its ranks (grouplayout.h); without it, each call infers it
// where a role needs it.
CommOps commOperations(const Trace& trace, const Analysis& analysis, int rankIndex, TimeRange window,
    const SharedGroupLayout* layout = nullptr);

// One part of a rank's communication over a window split by role so that the parts add up (the Exposed
// Communication panel's split): time in which kernels of one role run alone belongs to that role, time in which
// kernels of several roles run at once to their combination ("dp+tp"). Over the parts, busyNs adds up to the rank's
// WindowStats::commBusyNs and exposedNs to its WindowStats::exposedNs; count, waiting and transfer (the matched
// members' parts clipped to the window, as in CommRoleReport) belong to each kernel's own role.
struct CommRoleShare
{
    std::string role; // "dp", "tp", ... or the roles that run at once joined by '+' ("dp+tp")
    std::uint64_t count = 0; // 0 for a combination
    TimeNs busyNs = 0, exposedNs = 0, waitNs = 0, transferNs = 0;
};
// The parts of one rank, the single roles first (by name), then the combinations (by name); `match` may be null
// (no waiting or transfer).
std::vector<CommRoleShare> commRoleShares(const Trace& trace, const Analysis& analysis, const CollectiveMatch* match,
    int rankIndex, TimeRange window, const SharedGroupLayout* layout = nullptr);

// The operation of one communication kernel and where it came from ("" when it is not communication).
std::string commOpOf(const Trace& trace, const Analysis& analysis, IntervalRef kernel, CommOpSource* source = nullptr,
    std::string* call = nullptr);

// Adds the waiting and transfer parts of the rank's matched members to their operations, clipped to `window`.
void fillCommOpCollectives(CommOps& ops, const CollectiveMatch& match, int rank, TimeRange window);

// The job's window of each step index: the hull of that step's window over the ranks.
std::map<int, TimeRange> jobStepWindows(const std::vector<std::vector<StepWindow>>& stepsPerRank);

} // namespace exposure
