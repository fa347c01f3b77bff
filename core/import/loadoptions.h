// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What every importer shares: the options of a load, its progress, and the one error type of bad input. openRun()
// (core/run/openrun.h) is the one path from a file to an analysed trace.

#include "model/lanemapping.h"
#include "model/timeformat.h" // formatRankList
#include "model/trace.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace exposure {

struct LoadProgress
{
    std::uint64_t eventsRead = 0;
    std::uint64_t eventsTotal = 0; // from the location definitions (0 if unknown)
    std::string currentFile; // the archive (or JSON file) being read
    std::uint64_t bytesRead = 0; // JSON traces: file bytes read so far (compressed size for .gz)
    std::uint64_t bytesTotal = 0; // JSON traces: size of all files (0 for OTF2, which counts events)
};

struct LoadOptions
{
    // Called from the loading thread, at most every few milliseconds.
    std::function<void(const LoadProgress&)> progress;
    // When it becomes true, loading stops (OTF2 callbacks return OTF2_CALLBACK_INTERRUPT) and
    // openRun throws LoadCancelled.
    const std::atomic<bool>* cancel = nullptr;
    // Keep the Score-P kernel_counter launch parameters (costs 4 bytes per kernel).
    bool keepLaunchParameters = true;
    // Event-reading threads (one OTF2 reader each, over disjoint sets of locations); 0 = one per hardware
    // thread (at most 8). The result does not depend on it.
    int threads = 0;
    // Refuse (TraceTooLarge) a trace whose estimated memory exceeds this many bytes; 0 = what the machine, cgroup
    // and resource limits leave (a trace is always refused when it exceeds those).
    std::uint64_t memoryLimit = 0;
    // Called once the memory a load needs is estimated (before events are read), with that estimate in bytes
    // (openRun caps the address space from it, see RunOptions::capAddressSpace).
    std::function<void(std::uint64_t estimatedBytes)> memoryEstimated;
    // Load only these ranks of a folder of per-rank OTF2 archives (rank numbers as `info` lists them); empty = all.
    // Applied by openRun (selectRanks), not by the importers.
    std::vector<int> ranks;
    // Chrome traces: the "chrome_mapping" rules of the rules file, tried before the built-in ones
    // (model/lanemapping.h).
    std::vector<ChromeMappingRule> chromeMapping;
    // OTF2 archives: which region names mark idle time or a synchronisation (RegionKind::Idle, RegionKind::Sync;
    // Unknown for any other name), asked once per name. openRun answers it with the rules (their "idle" category,
    // sub-groups idle and sync); unset, only what the archive says of a region (its role, its source file CUDA_IDLE,
    // HIP_SYNC, CUDA_FLUSH ...) makes it one.
    std::function<RegionKind(std::string_view name)> markerKind;
    // Progressive loading (the GUI; runs of many files, one rank each: torch.profiler). After each file is read, the
    // importer asks previewDue(filesRead, filesTotal); when it answers true, it passes a Trace of the ranks read so
    // far to preview: each rank built as the full trace builds it, in rank order, finalized and rebased to its own
    // first event (Trace::originAbsNs says where that is), before any cross-rank stage. Both are called on reading
    // threads, one call at a time; the full trace does not depend on them. openRun turns previews off when their
    // copies would not fit in memory.
    std::function<bool(std::size_t filesRead, std::size_t filesTotal)> previewDue;
    std::function<void(std::shared_ptr<Trace> preview, std::size_t filesRead, std::size_t filesTotal)> preview;
};

// Bad input: what() is one line "<file>: <problem>". Control characters (a "\n" in a region or location name of
// a corrupt file, found by fuzzing) are shown escaped ("\n", "\x1b") so that the line stays one line.
class LoadError : public std::runtime_error
{
public:
    LoadError(const std::string& file, const std::string& problem)
        : std::runtime_error(oneLine(file + ": " + problem))
        , m_file(file)
        , m_problem(oneLine(problem))
    { }
    static std::string oneLine(const std::string& text)
    {
        std::string out;
        out.reserve(text.size());
        for (const char c : text) {
            if (static_cast<unsigned char>(c) >= 0x20) {
                out += c;
            } else if (c == '\n') {
                out += "\\n";
            } else {
                static const char hex[] = "0123456789abcdef";
                out += "\\x";
                out += hex[(c >> 4) & 0xf];
                out += hex[c & 0xf];
            }
        }
        return out;
    }
    const std::string& file() const { return m_file; }
    const std::string& problem() const { return m_problem; }

private:
    std::string m_file;
    std::string m_problem;
};

class LoadCancelled : public std::runtime_error
{
public:
    LoadCancelled()
        : std::runtime_error("loading cancelled")
    { }
};

// "0,2,4-7" -> {0, 2, 4, 5, 6, 7} (in the order given, without repeats); nullopt if it is not such a list.
std::optional<std::vector<int>> parseRankList(const std::string& text);

} // namespace exposure
