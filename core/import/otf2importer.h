// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "import/archivefinder.h"
#include "import/loadoptions.h"
#include "model/trace.h"

typedef struct OTF2_Reader_struct OTF2_Reader;

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace exposure {

struct Otf2ArchiveState;
struct LaneState;

// Reads Score-P OTF2 archives into one Trace (see loadoptions.h for the contract).
//
// Two phases so that progress can report a total: readDefinitions() of all archives (global definitions:
// ranks, lanes, regions, clock; the archives on several threads), then readEvents() (per location, in chunks, with only
// CPU-thread and accelerator-stream locations selected; METRIC locations are never opened). With LoadOptions::threads >
// 1 whole archives are dealt to the threads when there are at least as many archives as threads (each read through the
// reader that read its definitions), otherwise the locations are split into disjoint sets, each read by its own
// OTF2_Reader in its own thread; all state written while reading lives in the location's own LaneState, so the result
// is the same for any thread count. finish() turns per-region facts into Trace::regionKinds/canonicalNames, orders
// launch references, writes warnings and calls Trace::finalize.
//
// Per event the work is a few vector appends: no heap allocation besides amortised vector growth, no maps
// (regions, parameters and locations are looked up by dense index; launch parameters are interned once per
// kernel through one hash lookup).
class Otf2Importer
{
public:
    Otf2Importer(Trace& trace, const LoadOptions& options);
    ~Otf2Importer();

    // Optional, before readDefinitions: has the anchors of all archives checked at once (otf2::checkAnchors), instead
    // of one after another as each archive is opened. Throws LoadError for the first bad one.
    static void checkAnchors(const std::vector<ArchiveRef>& archives);
    // The global definitions of all archives (read in parallel, on LoadOptions::threads): ranks, lanes, regions,
    // clocks. Throws LoadError for the first bad archive, LoadCancelled when cancelled.
    void readDefinitions(const std::vector<ArchiveRef>& archives);
    std::uint64_t totalEvents() const { return m_totalEvents; }
    void readEvents();
    void finish();

private:
    std::unique_ptr<Otf2ArchiveState> readGlobalDefinitions(const ArchiveRef& archive);
    void internRegionNames(Otf2ArchiveState& archive);
    void createRanksAndLanes(Otf2ArchiveState& archive);
    void readLanes(Otf2ArchiveState& a, OTF2_Reader* reader, const std::vector<LaneState*>& lanes);
    void reportProgress(const std::string& file, bool force);
    // After every event of `archive` is read: a preview of the archives read so far when LoadOptions::previewDue
    // asks for one (one at a time; the reading thread builds it).
    void archiveRead(const Otf2ArchiveState& archive);
    std::shared_ptr<Trace> previewOf(std::vector<const Otf2ArchiveState*> done) const;
    // Runs work(0 .. count-1) on count threads (the calling one included); the first real error is rethrown after
    // all have ended (a cancellation only when nothing else failed), and one failure stops the others (m_abort).
    void runWorkers(std::size_t count, const std::function<void(std::size_t)>& work);

    Trace& m_trace;
    const LoadOptions& m_options;
    std::vector<std::unique_ptr<Otf2ArchiveState>> m_archives;
    std::uint64_t m_totalEvents = 0;
    std::atomic<std::uint64_t> m_eventsRead { 0 };
    std::atomic<bool> m_abort { false }; // a worker failed: the others stop at their next chunk
    std::mutex m_progressMutex; // progress callbacks are serialized
    std::int64_t m_lastProgressNs = 0;
    std::unordered_map<std::string, std::string> m_demangled; // shared by all archives of one load
    std::mutex m_previewMutex; // m_archivesRead
    std::mutex m_previewHanding; // one preview at a time
    std::vector<const Otf2ArchiveState*> m_archivesRead;
};

} // namespace exposure
