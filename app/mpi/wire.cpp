// SPDX-License-Identifier: GPL-3.0-or-later
#include "wire.h"

#include "model/bytes.h"

#include <type_traits>

namespace exposure::mpi {

namespace {

// Each serialized structure's fields once, in order, for writing (IO = ByteWriter, S = const T) and reading
// (IO = ByteReader, S = T) alike.
template <class IO, class S> void windowStatsFields(IO& io, S& s)
{
    io.pod(s.kernelCount);
    io.pod(s.commKernelCount);
    io.pod(s.commKernelSumNs);
    io.pod(s.commBusyNs);
    io.pod(s.computeBusyNs);
    io.pod(s.overlappedNs);
    io.pod(s.exposedNs);
    io.opt(s.overlapRatio);
    io.pod(s.backwardOverlappedNs);
    io.pod(s.memcpyBusyNs);
    io.pod(s.gpuBusyNs);
    io.pod(s.spanNs);
    io.pod(s.idleNs);
    io.pod(s.unclassifiedNs);
}

template <class IO, class R> void rankReportFields(IO& io, R& r)
{
    io.pod(r.rank);
    io.str(r.label);
    io.str(r.host);
    io.pod(r.device);
    windowStatsFields(io, r.stats);
    io.pod(r.phaseSource);
    io.pod(r.phaseFromLaunch);
    io.pod(r.phaseFromName);
    io.pod(r.phaseFromHeuristic);
    io.pod(r.phaseUnknown);
    io.pod(r.launchPairing);
    io.pod(r.kernelsPaired);
    io.pod(r.kernelsUnpaired);
    io.list(r.kernelsPerCall, [&](auto& bucket) {
        io.pod(bucket.first);
        io.pod(bucket.second);
    });
    io.pod(r.idle);
    io.pod(r.launches);
    io.pod(r.stepSource);
    io.flag(r.stepsByLaunch);
    io.pod(r.stepAxis);
    io.pod(r.stepCount);
    io.list(r.steps, [&](auto& step) {
        io.pod(step.index);
        io.pod(step.number);
        io.str(step.name);
        io.pod(step.range);
        io.pod(step.hostRange);
        windowStatsFields(io, step.stats);
        io.pod(step.idle);
        io.pod(step.waitNs);
        io.pod(step.transferNs);
        io.pod(step.bubbleNs);
    });
    io.pod(r.collectives);
    io.list(r.commOps.ops, [&](auto& op) {
        io.str(op.op);
        io.str(op.call);
        io.str(op.kernelType);
        io.pod(op.source);
        io.pod(op.count);
        io.pod(op.busyNs);
        io.pod(op.exposedNs);
        io.pod(op.waitNs);
        io.pod(op.transferNs);
        io.pod(op.queuedNs);
        io.str(op.queuedBehind);
    });
    io.list(r.commOps.roles, [&](auto& role) {
        io.str(role.role);
        io.str(role.source);
        io.pod(role.count);
        io.pod(role.busyNs);
        io.pod(role.exposedNs);
        io.pod(role.waitNs);
        io.pod(role.transferNs);
    });
    io.list(r.commOps.kernelKeys, [&](auto& k) { io.pod(k); });
    io.list(r.commOps.kernelOp, [&](auto& k) { io.pod(k); });
    io.list(r.commOps.kernelRole, [&](auto& k) { io.pod(k); });
    io.pod(r.coords);
    io.list(r.warnings, [&](auto& w) { io.str(w); });
}

template <class IO, class K> void kernelPartsFields(IO& io, K& k)
{
    io.pod(k.gpuTotalNs);
    io.list(k.rows, [&](auto& p) {
        io.str(p.name);
        io.str(p.displayName);
        io.pod(p.category);
        io.str(p.subgroup);
        io.pod(p.phaseCount);
        io.pod(p.count);
        io.pod(p.totalNs);
        io.pod(p.minNs);
        io.pod(p.maxNs);
    });
}

class Reader : public ByteReader
{
public:
    explicit Reader(std::string_view in)
        : ByteReader(in, "statistics message")
    { }
};

// A whole message of one structure, written or read by its field list.
template <class T, class Fields> std::string writeMessage(const T& value, Fields fields)
{
    ByteWriter w;
    fields(w, value);
    return w.take();
}

template <class T, class Fields> T readMessage(std::string_view bytes, Fields fields)
{
    Reader in(bytes);
    T value;
    fields(in, value);
    in.expectEnd();
    return value;
}

static_assert(std::is_trivially_copyable_v<IdleBreakdown>);
static_assert(std::is_trivially_copyable_v<LaunchDiagnosis>);
static_assert(std::is_trivially_copyable_v<RankCollectiveStats>);
static_assert(std::is_trivially_copyable_v<CollectiveCandidate>);

} // namespace

std::string serialize(const RankReport& r)
{
    return writeMessage(r, [](auto& io, auto& x) { rankReportFields(io, x); });
}

RankReport deserializeRankReport(std::string_view bytes)
{
    return readMessage<RankReport>(bytes, [](auto& io, auto& x) { rankReportFields(io, x); });
}

std::string serialize(const KernelParts& k)
{
    return writeMessage(k, [](auto& io, auto& x) { kernelPartsFields(io, x); });
}

KernelParts deserializeKernelParts(std::string_view bytes)
{
    return readMessage<KernelParts>(bytes, [](auto& io, auto& x) { kernelPartsFields(io, x); });
}

std::string serialize(const CollectiveCandidates& c)
{
    ByteWriter w;
    w.pod(std::uint64_t(c.names.size()));
    for (const auto& n : c.names)
        w.str(n);
    w.pod(std::uint64_t(c.items.size()));
    std::string out = w.take();
    if (!c.items.empty())
        out.append(reinterpret_cast<const char*>(c.items.data()), c.items.size() * sizeof(CollectiveCandidate));
    return out;
}

CollectiveCandidates deserializeCollectiveCandidates(std::string_view bytes)
{
    Reader in(bytes);
    CollectiveCandidates c;
    const auto names = in.pod<std::uint64_t>();
    for (std::uint64_t i = 0; i < names; ++i)
        c.names.push_back(in.str());
    const auto n = in.pod<std::uint64_t>();
    c.items.reserve(std::size_t(n));
    for (std::uint64_t i = 0; i < n; ++i) {
        c.items.push_back(in.pod<CollectiveCandidate>());
        const CollectiveCandidate& item = c.items.back();
        if (item.name >= c.names.size() || (item.group != kNoKey && item.group >= c.names.size())
            || (item.signature != kNoKey && item.signature >= c.names.size())
            || (item.preset != kNoKey && item.preset >= c.names.size())
            || (item.behind != kNoKey && item.behind >= c.names.size()))
            throw std::runtime_error("statistics message: bad name index");
    }
    in.expectEnd();
    return c;
}

} // namespace exposure::mpi
