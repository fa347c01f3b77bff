// SPDX-License-Identifier: GPL-3.0-or-later
// The OTF2 importer's event stage: event callbacks (time conversion, intervals, launches, copies) and reading
// the selected locations in chunks, in one or several threads.
#include "import/otf2importer_p.h"

namespace fs = std::filesystem;

namespace exposure {

namespace {

// ---- time conversion -------------------------------------------------------------------------------------

// floor(ticks * 1e9 / resolution), exact, false if it does not fit in TimeNs.
inline bool toNs(const Otf2ArchiveState& a, OTF2_TimeStamp ticks, TimeNs& out)
{
    const std::uint64_t res = a.resolution;
    if (res == 1'000'000'000u) {
        if (ticks > std::uint64_t(std::numeric_limits<TimeNs>::max()))
            return false;
        out = TimeNs(ticks);
        return true;
    }
    const U128 product = U128(ticks) * 1'000'000'000u;
    const auto hi = std::uint64_t(product >> 64);
    const auto lo = std::uint64_t(product);
    if (hi >= res)
        return false; // the quotient needs more than 64 bits
    std::uint64_t q;
#if defined(__x86_64__)
    // One 128/64 division instruction; libgcc's __udivti3 costs several times more per event.
    std::uint64_t r;
    __asm__("divq %[d]" : "=a"(q), "=d"(r) : "a"(lo), "d"(hi), [d] "rm"(res));
    (void)r;
#else
    q = std::uint64_t(product / res);
#endif
    if (q > std::uint64_t(std::numeric_limits<TimeNs>::max()))
        return false;
    out = TimeNs(q);
    return true;
}

OTF2_CallbackCode timeError(LaneState& s, OTF2_TimeStamp ticks)
{
    if (s.error.empty())
        s.error = "timestamp " + std::to_string(ticks) + " ticks at " + std::to_string(s.archive->resolution)
            + " ticks/s does not fit in 64-bit nanoseconds (corrupt or near the 64-bit limit)";
    return OTF2_CALLBACK_INTERRUPT;
}

inline bool cancelled(const Otf2ArchiveState& a)
{
    return a.cancel && a.cancel->load(std::memory_order_relaxed);
}

// Common prologue: converts the time and drops events that go back in time. Returns false to skip the event.
inline bool accept(LaneState& s, OTF2_TimeStamp ticks, TimeNs& t, OTF2_CallbackCode& rc)
{
    rc = OTF2_CALLBACK_SUCCESS;
    if (!toNs(*s.archive, ticks, t)) {
        rc = timeError(s, ticks);
        return false;
    }
    if (t < s.lastTime) {
        ++s.outOfOrder;
        return false;
    }
    s.lastTime = t;
    return true;
}

// ---- interval emission -----------------------------------------------------------------------------------

// Appends an open interval [t, t) and its launch-parameter slot; the end is set when it closes.
inline std::uint32_t openInterval(LaneState& s, TimeNs t, StringId name, std::size_t depth)
{
    const auto index = s.lane->intervals.appendOpen(t, name, std::uint8_t(std::min<std::size_t>(depth, 255)));
    if (s.gpu && s.archive->keepParams)
        s.lane->launchParamIds.push_back(kNoLaunchParams);
    return index;
}

void closeFrame(LaneState& s, const Frame& f, TimeNs end)
{
    s.lane->intervals.setEnd(f.interval, end);
    if (s.gpu && s.haveParams) {
        s.haveParams = false;
        if (s.archive->keepParams) {
            // A kernel usually keeps its launch configuration: try the last one seen for this region first and
            // skip the hash lookup when it matches.
            std::uint32_t& cached = s.paramByRegion[f.region];
            if (cached == kNone || !(s.localParams[cached] == s.params)) {
                auto [it, inserted] = s.localParamIndex.try_emplace(s.params, std::uint32_t(s.localParams.size()));
                if (inserted)
                    s.localParams.push_back(s.params);
                cached = it->second;
            }
            s.lane->launchParamIds[f.interval] = cached;
        }
    }
}

// ---- event callbacks -------------------------------------------------------------------------------------

// A location id of this lane's local definitions, as the global definitions know it (unchanged where the mapping
// table has no entry for it, as OTF2 itself does).
OTF2_LocationRef globalLocation(const LaneState& s, OTF2_LocationRef local)
{
    const auto& m = s.localLocations;
    const auto it = std::lower_bound(m.begin(), m.end(), std::pair<std::uint64_t, std::uint64_t>(local, 0));
    return it != m.end() && it->first == local ? it->second : local;
}

OTF2_CallbackCode onEnter(
    OTF2_LocationRef, OTF2_TimeStamp ticks, uint64_t, void* user, OTF2_AttributeList* attrs, OTF2_RegionRef region)
{
    auto& s = *static_cast<LaneState*>(user);
    auto& a = *s.archive;
    if (cancelled(a))
        return OTF2_CALLBACK_INTERRUPT;
    TimeNs t;
    OTF2_CallbackCode rc;
    if (!accept(s, ticks, t, rc))
        return rc;
    if (region >= a.regions.size() || !a.regionDefined[region]) {
        ++s.unknownRegions;
        return OTF2_CALLBACK_SUCCESS;
    }
    s.usedRegions[region] = 1;
    const auto index = openInterval(s, t, a.regions[region].name, s.stack.size());
    s.stack.push_back({ index, std::uint32_t(region) });
    if (s.gpu) {
        s.haveParams = false;
        s.params = {};
    } else if (attrs && a.haveStreamRefAttr && OTF2_AttributeList_GetNumberOfElements(attrs) > 0) {
        OTF2_LocationRef ref;
        if (OTF2_AttributeList_GetLocationRef(attrs, a.streamRefAttr, &ref) == OTF2_SUCCESS) {
            // Launches mostly go to the stream of the previous one: skip the hash lookup then.
            if (ref != s.lastRef) {
                s.lastRef = ref;
                if (!s.localLocations.empty()) // the local id, where readLanes left the mapping to us
                    ref = globalLocation(s, ref);
                auto it = a.laneByLocation.find(ref);
                s.lastTarget = it != a.laneByLocation.end() && it->second->rankIndex == s.rankIndex && it->second->gpu
                    ? it->second
                    : nullptr;
            }
            if (s.lastTarget)
                s.outgoing.push_back({ s.lastTarget->laneIndex, index });
        }
    }
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onLeave(
    OTF2_LocationRef, OTF2_TimeStamp ticks, uint64_t, void* user, OTF2_AttributeList*, OTF2_RegionRef region)
{
    auto& s = *static_cast<LaneState*>(user);
    TimeNs t;
    OTF2_CallbackCode rc;
    if (!accept(s, ticks, t, rc))
        return rc;
    if (!s.stack.empty() && s.stack.back().region == region) {
        closeFrame(s, s.stack.back(), t);
        s.stack.pop_back();
        return OTF2_CALLBACK_SUCCESS;
    }
    // Mismatch: close the frames above a matching Enter (they lost their Leave), or drop the Leave.
    for (std::size_t k = s.stack.size(); k-- > 0;) {
        if (s.stack[k].region == region) {
            while (s.stack.size() > k) {
                if (s.stack.size() > k + 1)
                    ++s.closedAtEnd;
                closeFrame(s, s.stack.back(), t);
                s.stack.pop_back();
            }
            return OTF2_CALLBACK_SUCCESS;
        }
    }
    ++s.unmatchedLeave;
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onParameterUnsigned(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* user, OTF2_AttributeList*,
    OTF2_ParameterRef parameter, uint64_t value)
{
    auto& s = *static_cast<LaneState*>(user); // a stream: registered for GPU lanes only
    if (s.stack.empty())
        return OTF2_CALLBACK_SUCCESS;
    const auto& fields = s.archive->paramField;
    if (parameter >= fields.size() || fields[parameter] < 0)
        return OTF2_CALLBACK_SUCCESS;
    // A member-pointer table instead of a switch: one indexed store per parameter event.
    static constexpr std::uint64_t KernelLaunchParams::*kMembers[6]
        = { &KernelLaunchParams::blocksPerGrid, &KernelLaunchParams::threadsPerBlock,
              &KernelLaunchParams::staticSharedMemory, &KernelLaunchParams::dynamicSharedMemory,
              &KernelLaunchParams::localMemory, &KernelLaunchParams::registersPerThread };
    s.params.*kMembers[fields[parameter]] = value;
    s.haveParams = true;
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode startCopy(
    LaneState& s, OTF2_TimeStamp ticks, StringId name, uint64_t bytes, uint64_t matchingId, int peerDevice = -1)
{
    TimeNs t;
    OTF2_CallbackCode rc;
    if (!accept(s, ticks, t, rc))
        return rc;
    // Appended at its start like every interval (so the table stays in start order), closed by its completion.
    const auto index = openInterval(s, t, name, s.stack.size());
    s.copies.push_back({ matchingId, index, bytes });
    if (peerDevice >= 0)
        s.lane->copyPeers.emplace_back(index, peerDevice);
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onRmaGet(OTF2_LocationRef location, OTF2_TimeStamp ticks, uint64_t, void* user, OTF2_AttributeList*,
    OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t matchingId)
{
    auto& s = *static_cast<LaneState*>(user);
    auto& a = *s.archive;
    // Score-P writes device-to-device copies as a Get whose remote end is the stream itself, and peer-to-peer copies
    // as a Get whose remote end is a stream of the other device.
    if (auto it = a.winMembers.find(win); it != a.winMembers.end() && remote < it->second.size()) {
        const std::uint64_t other = it->second[remote];
        if (other == location)
            return startCopy(s, ticks, a.memcpyNames[2], bytes, matchingId);
        if (auto peer = a.laneByLocation.find(other); peer != a.laneByLocation.end() && peer->second->gpu)
            return startCopy(s, ticks, a.memcpyNames[3], bytes, matchingId, peer->second->lane->device);
    }
    return startCopy(s, ticks, a.memcpyNames[0], bytes, matchingId);
}

OTF2_CallbackCode onRmaPut(OTF2_LocationRef, OTF2_TimeStamp ticks, uint64_t, void* user, OTF2_AttributeList*,
    OTF2_RmaWinRef, uint32_t, uint64_t bytes, uint64_t matchingId)
{
    auto& s = *static_cast<LaneState*>(user);
    return startCopy(s, ticks, s.archive->memcpyNames[1], bytes, matchingId);
}

OTF2_CallbackCode onRmaComplete(OTF2_LocationRef, OTF2_TimeStamp ticks, uint64_t, void* user, OTF2_AttributeList*,
    OTF2_RmaWinRef, uint64_t matchingId)
{
    auto& s = *static_cast<LaneState*>(user);
    TimeNs t;
    OTF2_CallbackCode rc;
    if (!accept(s, ticks, t, rc))
        return rc;
    for (std::size_t k = s.copies.size(); k-- > 0;) {
        if (s.copies[k].matchingId == matchingId) {
            const PendingCopy c = s.copies[k];
            s.copies.erase(s.copies.begin() + std::ptrdiff_t(k));
            s.lane->intervals.setEnd(c.interval, t);
            s.lane->copyBytes.emplace_back(c.interval, c.bytes);
            return OTF2_CALLBACK_SUCCESS;
        }
    }
    ++s.unmatchedCompletions;
    return OTF2_CALLBACK_SUCCESS;
}

// ---- local definitions -----------------------------------------------------------------------------------

void collectMapping(uint64_t local, uint64_t global, void* user)
{
    static_cast<std::vector<std::pair<std::uint64_t, std::uint64_t>>*>(user)->emplace_back(local, global);
}

OTF2_CallbackCode onMappingTable(void* user, OTF2_MappingType type, const OTF2_IdMap* map)
{
    auto& s = *static_cast<LaneState*>(user);
    if (type < 32)
        s.mappedTypes |= 1u << type;
    if (type == OTF2_MAPPING_LOCATION) {
        s.localLocations.clear(); // a later table replaces an earlier one, as in OTF2
        OTF2_IdMap_Traverse(map, collectMapping, &s.localLocations);
        std::sort(s.localLocations.begin(), s.localLocations.end());
    }
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode onClockOffset(void* user, OTF2_TimeStamp, int64_t offset, double)
{
    if (offset != 0)
        static_cast<LaneState*>(user)->clockOffsets = true;
    return OTF2_CALLBACK_SUCCESS;
}

// OTF2 maps every id an event holds through the location's mapping tables, and corrects every timestamp by its clock
// offsets; each costs a lookup of the location per event even where it has neither (a sixth of the library's
// decoding time on the demo). Both are switched off where they cannot change what the callbacks see:
// - clock offsets, where the location has none or all are zero (the correction adds zero);
// - mapping tables, where none maps an id the callbacks read: regions, parameters, RMA windows, attributes; a
//   LOCATION table (Score-P writes one, for CUDA_STREAM_REF values) is then applied by onEnter itself.
void skipIdentityCorrections(OTF2_EvtReader* reader, LaneState& s)
{
    constexpr std::uint32_t libraryMapped = 1u << OTF2_MAPPING_REGION | 1u << OTF2_MAPPING_PARAMETER
        | 1u << OTF2_MAPPING_RMA_WIN | 1u << OTF2_MAPPING_ATTRIBUTE;
    if (!s.clockOffsets)
        OTF2_EvtReader_ApplyClockOffsets(reader, false);
    if ((s.mappedTypes & libraryMapped) == 0)
        OTF2_EvtReader_ApplyMappingTables(reader, false);
    else
        s.localLocations.clear(); // the library maps them
}

} // namespace

namespace {

// Reads the global definitions again without callbacks: a second OTF2_Reader on the same archive needs them
// before it can read local events.
void prepareSecondaryReader(Otf2ArchiveState& a, OTF2_Reader* r)
{
    OTF2_GlobalDefReader* gd = OTF2_Reader_GetGlobalDefReader(r);
    if (!gd)
        otf2::fail(OTF2_ERROR_FILE_CAN_NOT_OPEN, a.defPath, "cannot open the global definitions");
    uint64_t n = 0;
    const auto rc = OTF2_Reader_ReadAllGlobalDefinitions(r, gd, &n);
    OTF2_Reader_CloseGlobalDefReader(r, gd);
    if (rc != OTF2_SUCCESS)
        otf2::fail(rc, a.defPath, "truncated or corrupt global definitions");
}

} // namespace

void Otf2Importer::readLanes(Otf2ArchiveState& a, OTF2_Reader* r, const std::vector<LaneState*>& lanes)
{
    for (LaneState* s : lanes)
        otf2::check(OTF2_Reader_SelectLocation(r, s->location), a.ref.anchor, "cannot select a location");

    // Local definitions (mapping tables, clock offsets) are optional in OTF2.
    const bool defFiles = OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS;
    otf2::takeLastError();
    otf2::check(OTF2_Reader_OpenEvtFiles(r), a.ref.anchor, "cannot open the event files");
    std::vector<OTF2_EvtReader*> evtReaders;
    evtReaders.reserve(lanes.size());
    otf2::Callbacks<OTF2_DefReaderCallbacks, OTF2_DefReaderCallbacks_Delete> defCbs(OTF2_DefReaderCallbacks_New());
    OTF2_DefReaderCallbacks_SetMappingTableCallback(defCbs.get(), onMappingTable);
    OTF2_DefReaderCallbacks_SetClockOffsetCallback(defCbs.get(), onClockOffset);
    for (LaneState* s : lanes) {
        if (defFiles) {
            std::error_code ec;
            if (fs::exists(a.locDefPath(s->location), ec)) {
                if (!endsLikeOtf2File(a.locDefPath(s->location))) // OTF2 would wait forever for the rest
                    throw LoadError(a.locDefPath(s->location),
                        "truncated local definitions (the file does not end with OTF2's end-of-file "
                        "record)");
                if (OTF2_DefReader* dr = OTF2_Reader_GetDefReader(r, s->location)) {
                    otf2::check(OTF2_Reader_RegisterDefCallbacks(r, dr, defCbs.get(), s), a.locDefPath(s->location),
                        "cannot register definition callbacks");
                    uint64_t n = 0;
                    const auto rc = OTF2_Reader_ReadAllLocalDefinitions(r, dr, &n);
                    OTF2_Reader_CloseDefReader(r, dr);
                    if (rc != OTF2_SUCCESS)
                        otf2::fail(rc, a.locDefPath(s->location), "truncated or corrupt local definitions");
                }
            }
        }
        OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(r, s->location);
        if (!er)
            otf2::fail(OTF2_ERROR_FILE_CAN_NOT_OPEN, s->evtFile, "cannot open the event file");
        skipIdentityCorrections(er, *s);
        evtReaders.push_back(er);
    }
    if (defFiles)
        OTF2_Reader_CloseDefFiles(r);

    // Two callback sets: launch parameters only matter on streams (and only when kept); without a registered
    // callback OTF2 skips those events after decoding them.
    otf2::Callbacks<OTF2_EvtReaderCallbacks, OTF2_EvtReaderCallbacks_Delete> cpuCbs(OTF2_EvtReaderCallbacks_New());
    otf2::Callbacks<OTF2_EvtReaderCallbacks, OTF2_EvtReaderCallbacks_Delete> gpuCbs(OTF2_EvtReaderCallbacks_New());
    for (auto* c : { cpuCbs.get(), gpuCbs.get() }) {
        OTF2_EvtReaderCallbacks_SetEnterCallback(c, onEnter);
        OTF2_EvtReaderCallbacks_SetLeaveCallback(c, onLeave);
        OTF2_EvtReaderCallbacks_SetRmaGetCallback(c, onRmaGet);
        OTF2_EvtReaderCallbacks_SetRmaPutCallback(c, onRmaPut);
        OTF2_EvtReaderCallbacks_SetRmaOpCompleteBlockingCallback(c, onRmaComplete);
    }
    if (a.keepParams)
        OTF2_EvtReaderCallbacks_SetParameterUnsignedIntCallback(gpuCbs.get(), onParameterUnsigned);

    for (std::size_t i = 0; i < lanes.size(); ++i) {
        LaneState& s = *lanes[i];
        OTF2_EvtReader* er = evtReaders[i];
        otf2::check(OTF2_Reader_RegisterEvtCallbacks(r, er, s.gpu ? gpuCbs.get() : cpuCbs.get(), &s), s.evtFile,
            "cannot register event callbacks");
        for (;;) {
            if (cancelled(a) || m_abort.load(std::memory_order_relaxed))
                throw LoadCancelled();
            uint64_t got = 0;
            const auto rc = OTF2_Reader_ReadLocalEvents(r, er, kEventChunk, &got);
            s.lane->eventCount += got;
            m_eventsRead.fetch_add(got, std::memory_order_relaxed);
            if (cancelled(a))
                throw LoadCancelled();
            if (!s.error.empty())
                throw LoadError(s.evtFile, s.error);
            if (rc != OTF2_SUCCESS)
                otf2::fail(rc, s.evtFile, "truncated or corrupt event data");
            // Every event takes at least one byte of its file: more events than bytes means libotf2 is reading
            // garbage (a damaged chunk header) and would go on allocating.
            if (s.lane->eventCount > s.evtBytes)
                throw LoadError(s.evtFile,
                    "corrupt event data: " + std::to_string(s.lane->eventCount) + " events read from a file of "
                        + std::to_string(s.evtBytes) + " bytes");
            reportProgress(a.ref.anchor, false);
            if (got < kEventChunk)
                break;
        }
        // Enter events without Leave, copies without completion: close at the lane's last timestamp.
        while (!s.stack.empty()) {
            ++s.closedAtEnd;
            closeFrame(s, s.stack.back(), s.lastTime);
            s.stack.pop_back();
        }
        for (const auto& cp : s.copies) {
            ++s.unmatchedCopies;
            s.lane->intervals.setEnd(cp.interval, s.lastTime);
            s.lane->copyBytes.emplace_back(cp.interval, cp.bytes);
        }
        s.copies.clear();
        s.copies.shrink_to_fit();
        std::sort(s.lane->copyBytes.begin(), s.lane->copyBytes.end());
        OTF2_Reader_CloseEvtReader(r, er);
        otf2::takeLastError();
    }
    OTF2_Reader_CloseEvtFiles(r);
    otf2::takeLastError();
}

void Otf2Importer::runWorkers(std::size_t count, const std::function<void(std::size_t)>& work)
{
    std::vector<std::exception_ptr> errors(count);
    auto guarded = [&](std::size_t w) {
        try {
            work(w);
        } catch (...) {
            errors[w] = std::current_exception();
            m_abort = true;
        }
    };
    std::vector<std::thread> pool;
    for (std::size_t w = 1; w < count; ++w)
        pool.emplace_back(guarded, w);
    guarded(0);
    for (auto& t : pool)
        t.join();
    // A real error wins over the LoadCancelled that it caused in the other workers.
    std::exception_ptr cancelledError;
    for (auto& e : errors) {
        if (!e)
            continue;
        try {
            std::rethrow_exception(e);
        } catch (const LoadCancelled&) {
            cancelledError = e;
        } catch (...) {
            throw;
        }
    }
    if (cancelledError)
        std::rethrow_exception(cancelledError);
}

void Otf2Importer::archiveRead(const Otf2ArchiveState& archive)
{
    if (!m_options.preview || !m_options.previewDue || m_archives.size() < 2)
        return;
    std::vector<const Otf2ArchiveState*> done;
    {
        std::lock_guard lock(m_previewMutex);
        m_archivesRead.push_back(&archive);
        if (m_archivesRead.size() >= m_archives.size()
            || !m_options.previewDue(m_archivesRead.size(), m_archives.size()))
            return;
        done = m_archivesRead;
    }
    std::lock_guard handing(m_previewHanding); // one preview at a time; the other readers go on
    m_options.preview(previewOf(done), done.size(), m_archives.size());
}

void Otf2Importer::readEvents()
{
    // Check every selected location's event file first (a missing one would otherwise read as "no events").
    std::vector<std::pair<Otf2ArchiveState*, LaneState*>> all;
    for (auto& a : m_archives) {
        for (auto& s : a->lanes) {
            std::error_code ec;
            if (!fs::exists(s->evtFile, ec))
                throw LoadError(s->evtFile, "missing event file of location '" + s->lane->name + "'");
            if (auto p = readableProblem(s->evtFile); !p.empty())
                throw LoadError(s->evtFile, "cannot read the event file: " + p);
            if (!endsLikeOtf2File(s->evtFile))
                throw LoadError(s->evtFile,
                    "truncated event file of location '" + s->lane->name
                        + "' (it does not end with OTF2's end-of-file record)");
            all.emplace_back(a.get(), s.get());
        }
    }

    // As many workers as asked (or hardware threads), never more than locations: no fixed cap (one of 8 kept a
    // 16-rank load on 16 cores at 2.8x the library's own 16-thread read).
    int threads = m_options.threads > 0 ? m_options.threads : int(std::thread::hardware_concurrency());
    threads = std::max(threads, 1);
    threads = std::min<int>(threads, int(std::max<std::size_t>(1, all.size())));

    if (threads == 1) {
        for (auto& a : m_archives) {
            std::vector<LaneState*> lanes;
            for (auto& s : a->lanes)
                lanes.push_back(s.get());
            if (!lanes.empty())
                readLanes(*a, a->reader->get(), lanes);
            a->reader.reset(); // release the file handles as soon as possible
            archiveRead(*a);
        }
        reportProgress(std::string(), true);
        return;
    }

    // Parallel, with at least as many archives as threads (one archive per rank, the usual case): whole archives per
    // worker, balanced by their event counts (largest first), each read through the reader that read its definitions
    // (only that worker uses it), so no archive is opened twice.
    if (m_archives.size() >= std::size_t(threads)) {
        std::vector<std::pair<std::uint64_t, Otf2ArchiveState*>> bySize;
        for (auto& a : m_archives) {
            std::uint64_t events = 0;
            for (const auto& s : a->lanes)
                events += std::max<std::uint64_t>(1, s->definedEvents);
            bySize.emplace_back(events, a.get());
        }
        std::stable_sort(bySize.begin(), bySize.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
        std::vector<std::vector<Otf2ArchiveState*>> archiveBins(static_cast<std::size_t>(threads));
        std::vector<std::uint64_t> binLoad(static_cast<std::size_t>(threads), 0);
        for (const auto& [events, a] : bySize) {
            const auto k = std::size_t(std::min_element(binLoad.begin(), binLoad.end()) - binLoad.begin());
            archiveBins[k].push_back(a);
            binLoad[k] += events;
        }
        runWorkers(archiveBins.size(), [&](std::size_t w) {
            otf2::silenceErrors();
            for (Otf2ArchiveState* a : archiveBins[w]) {
                std::vector<LaneState*> lanes;
                for (auto& s : a->lanes)
                    lanes.push_back(s.get());
                if (!lanes.empty())
                    readLanes(*a, a->reader->get(), lanes);
                a->reader.reset();
                archiveRead(*a);
            }
        });
        reportProgress(std::string(), true);
        return;
    }

    // Parallel, with fewer archives than threads: disjoint sets of locations, balanced by their event counts (largest
    // first), one OTF2_Reader per worker and archive (independent readers may run concurrently, OTF2_Callbacks.h).
    for (auto& a : m_archives)
        a->reader.reset();
    std::stable_sort(all.begin(), all.end(),
        [](const auto& x, const auto& y) { return x.second->definedEvents > y.second->definedEvents; });
    const auto binCount = static_cast<std::size_t>(threads);
    std::vector<std::vector<std::pair<Otf2ArchiveState*, LaneState*>>> bins(binCount);
    std::vector<std::uint64_t> load(std::size_t(threads), 0);
    for (const auto& e : all) {
        const auto k = std::size_t(std::min_element(load.begin(), load.end()) - load.begin());
        bins[k].push_back(e);
        load[k] += std::max<std::uint64_t>(1, e.second->definedEvents);
    }
    runWorkers(bins.size(), [&](std::size_t w) {
        for (auto& a : m_archives) {
            std::vector<LaneState*> lanes;
            for (const auto& e : bins[w])
                if (e.first == a.get())
                    lanes.push_back(e.second);
            if (lanes.empty())
                continue;
            otf2::silenceErrors();
            otf2::Reader reader(a->ref.anchor);
            prepareSecondaryReader(*a, reader.get());
            readLanes(*a, reader.get(), lanes);
        }
    });
    reportProgress(std::string(), true);
}

} // namespace exposure
