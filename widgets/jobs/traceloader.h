// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "analysis/analysis.h"
#include "analysis/clockalign.h"
#include "analysis/collectives.h"
#include "import/loadoptions.h"
#include "jobs/jobslot.h"
#include "run/openrun.h"
#include "view/viewindex.h"

#include <QObject>
#include <QString>
#include <atomic>
#include <functional>
#include <memory>
#include <vector>

namespace exposure {

struct LoadPreviewThrottle; // traceloader.cpp

// Everything the window shows about one trace, computed off the GUI thread.
struct LoadedTrace
{
    QString path;
    std::shared_ptr<const Trace> trace;
    std::shared_ptr<const Analysis> analysis;
    std::shared_ptr<const ViewIndex> index;
    std::vector<RuleUsage> ruleUsage;
    // NCCL kernels matched across ranks (waiting for peers vs transfer); empty groups for one rank.
    std::shared_ptr<const CollectiveMatch> collectives;
    // The ranks chosen when only some of a folder's archives were loaded (empty: all).
    std::vector<int> ranks;
};

// Loads and analyses a trace in the background (a JobSlot): a newer load or cancel() takes effect at once, while
// the old job winds down through the cancel flag in LoadOptions; nothing of it is delivered.
class TraceLoader : public QObject
{
    Q_OBJECT
public:
    using LoadFunction = std::function<std::shared_ptr<Trace>(const std::string& path, const LoadOptions& options)>;

    explicit TraceLoader(QObject* parent = nullptr);
    ~TraceLoader() override; // cancels and waits for running jobs

    // For tests: replace the reading stages of openRun() (e.g. by a slow generator that honours the cancel flag).
    void setLoadFunction(LoadFunction fn) { m_load = std::move(fn); }
    // Seconds without progress while reading before the load fails as stalled (RunOptions::stallSeconds).
    void setStallSeconds(int seconds) { m_stallSeconds = seconds; }
    void setRules(Rules rules) { m_rules = std::move(rules); }
    const Rules& rules() const { return m_rules; }
    // Whether the next loads align the ranks' clocks across hosts (the View menu's switch).
    void setClockMode(ClockMode mode) { m_clockMode = mode; }
    ClockMode clockMode() const { return m_clockMode; }

    // The options the next load of `ranks` runs with: the rules, the clock mode, the memory and stall limits and the
    // load function (what Compare Runs loads its runs with too).
    RunOptions runOptions(const std::vector<int>& ranks = {}) const;
    // Progressive loading: while a run of many files (one rank each: torch.profiler) is read, previews of the ranks
    // read so far, analysed rank by rank (no collective matching, clock alignment or cross-rank step), arrive as
    // previewed() at most every previewIntervalMs (and never more often than three times the last preview took), each
    // superseding the one before; the full result (loaded()) supersedes them all and does not depend on them. An
    // interval of 0 (tests) asks for one after every file read while none is being built. Off by default; the window
    // turns it on.
    void setProgressive(bool on) { m_progressive = on; }
    bool progressive() const { return m_progressive; }
    void setPreviewIntervalMs(int ms) { m_previewIntervalMs = ms; }
    // Previews only while at most this share of the files has been read (default 1/2). A later preview would hold a
    // copy of nearly every rank beside the trace still being read: at 1 024 ranks on 16 cores the load peaked at
    // 12.1 GB with previews until the last file, against 6.2 GB without previews.
    void setPreviewShare(double share) { m_previewShare = share; }
    // For tests and benchmarks: reading threads (LoadOptions::threads; 0: one per core) and a call on the reading
    // thread after each preview is handed over (a test holds the reading there until the window has shown it).
    void setReaderThreads(int threads) { m_readerThreads = threads; }
    void setAfterPreview(std::function<void(std::size_t ranksRead)> fn) { m_afterPreview = std::move(fn); }
    // Loads `path`; with `ranks`, only those ranks of a folder of per-rank archives.
    void load(const QString& path, const std::vector<int>& ranks = {});
    void cancel();
    // Refuse traces estimated to need more than this many bytes (0: what the machine has). For tests and users who
    // share a machine.
    void setMemoryLimit(std::uint64_t bytes) { m_memoryLimit = bytes; }
    bool isLoading() const;
    // Blocks until no job runs (tests, shutdown).
    void waitForIdle();

signals:
    void started(const QString& path);
    void progress(int permille, const QString& text);
    // A preview of the ranks read so far (setProgressive): trace, analysis and view index; no collectives matched.
    void previewed(const exposure::LoadedTrace& preview, int ranksRead, int ranksTotal);
    void loaded(const exposure::LoadedTrace& result);
    void failed(const QString& path, const QString& message);
    // The trace would not fit in memory (nothing was read): the window offers to load some of its ranks.
    void tooLarge(const QString& path, const QString& message);
    void cancelled(const QString& path);

private:
    std::shared_ptr<LoadPreviewThrottle> installPreviews(
        RunOptions& options, const QString& path, const std::vector<int>& ranks);
    void startPreview(const std::shared_ptr<LoadPreviewThrottle>& throttle, std::shared_ptr<Trace> trace, int ranksRead,
        int ranksTotal);

    LoadFunction m_load;
    bool m_progressive = false;
    int m_previewIntervalMs = 1500;
    double m_previewShare = 0.5;
    int m_readerThreads = 0;
    std::function<void(std::size_t)> m_afterPreview;
    quint64 m_loadSerial = 0;
    Rules m_rules;
    ClockMode m_clockMode = ClockMode::Aligned;
    QString m_path;
    std::uint64_t m_memoryLimit = 0;
    int m_stallSeconds = RunOptions().stallSeconds;
    JobSlot* m_job;
    JobSlot* m_previewJob; // previews of the load m_job runs
};

} // namespace exposure

Q_DECLARE_METATYPE(exposure::LoadedTrace)
