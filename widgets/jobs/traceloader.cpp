// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/traceloader.h"

#include "import/memorybudget.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <algorithm>
#include <mutex>

namespace exposure {

TraceLoader::TraceLoader(QObject* parent)
    : QObject(parent)
    , m_rules(Rules::defaults())
    , m_job(new JobSlot(this))
    , m_previewJob(new JobSlot(this))
{
    qRegisterMetaType<exposure::LoadedTrace>();
    connect(m_job, &JobSlot::progress, this, &TraceLoader::progress);
}

TraceLoader::~TraceLoader()
{
    m_job->cancel();
    m_previewJob->cancel();
    m_job->waitForIdle();
    m_previewJob->waitForIdle();
}

bool TraceLoader::isLoading() const
{
    return m_job->busy();
}

void TraceLoader::waitForIdle()
{
    m_job->waitForIdle();
}

// When the previews of one load are due, and what they have counted (shared by the reading threads, the preview jobs
// and the GUI thread). After the load's job has ended (`closed`), nothing more is posted to the loader.
struct LoadPreviewThrottle
{
    quint64 serial = 0;
    QString path;
    std::vector<int> ranks;
    Rules rules;
    int intervalMs = 0;
    double share = 1.0; // previews while at most this share of the files has been read
    std::mutex mutex; // the members below
    QElapsedTimer sinceLast; // since the last preview was ready (not started: none yet)
    qint64 waitMs = 0; // before the next one: the interval, or three times what the last one took (interval 0: none)
    bool busy = false; // a preview is being built or analysed
    bool closed = false;
    std::atomic<std::size_t> read { 0 }, total { 0 }; // files (ranks) read

    bool due(std::size_t filesRead, std::size_t filesTotal)
    {
        read.store(filesRead);
        total.store(filesTotal);
        std::lock_guard lock(mutex);
        if (busy || closed || filesRead >= filesTotal) // the full trace is next
            return false;
        if (double(filesRead) > share * double(filesTotal)) // the full trace is not far: no copy of most ranks
            return false;
        if (sinceLast.isValid() && sinceLast.elapsed() < waitMs)
            return false;
        busy = true;
        return true;
    }
    void done(qint64 tookMs)
    {
        std::lock_guard lock(mutex);
        busy = false;
        waitMs = intervalMs > 0 ? std::max<qint64>(intervalMs, 3 * tookMs) : 0;
        sinceLast.start();
    }
};

namespace {

// Progress of the reading stages as the window shows it, at most every 50 ms; with previews, the ranks read so far.
std::function<void(const LoadProgress&)> progressReporter(
    const JobContext& job, const std::shared_ptr<LoadPreviewThrottle>& previews = {})
{
    auto throttle = std::make_shared<QElapsedTimer>();
    throttle->start();
    return [&job, throttle, previews](const LoadProgress& p) {
        if (throttle->elapsed() < 50)
            return;
        throttle->restart();
        const QString file = QFileInfo(QString::fromStdString(p.currentFile)).fileName();
        if (previews && previews->total.load() > 0 && p.bytesTotal > 0) {
            job.progress(int(std::min<std::uint64_t>(1000, p.bytesRead * 1000 / p.bytesTotal)),
                QObject::tr("Read %1 of %2 ranks (%3 of %4 MB)")
                    .arg(previews->read.load())
                    .arg(previews->total.load())
                    .arg(double(p.bytesRead) / 1e6, 0, 'f', 1)
                    .arg(double(p.bytesTotal) / 1e6, 0, 'f', 1));
            return;
        }
        if (p.bytesTotal > 0) { // JSON traces count bytes
            job.progress(int(std::min<std::uint64_t>(1000, p.bytesRead * 1000 / p.bytesTotal)),
                QObject::tr("Reading %1 (%2 of %3 MB)")
                    .arg(file)
                    .arg(double(p.bytesRead) / 1e6, 0, 'f', 1)
                    .arg(double(p.bytesTotal) / 1e6, 0, 'f', 1));
            return;
        }
        const int permille
            = p.eventsTotal ? int(std::min<std::uint64_t>(1000, p.eventsRead * 1000 / p.eventsTotal)) : -1;
        job.progress(permille, QObject::tr("Reading %1 (%2 events)").arg(file).arg(p.eventsRead));
    };
}

} // namespace

RunOptions TraceLoader::runOptions(const std::vector<int>& ranks) const
{
    RunOptions options;
    options.read = m_load;
    options.rules = m_rules;
    options.clock = m_clockMode;
    options.load.ranks = ranks;
    options.load.memoryLimit = m_memoryLimit;
    options.stallSeconds = m_stallSeconds;
    return options;
}

// Previews of the load about to start (setProgressive): due as LoadPreviewThrottle says, each handed from the reading
// thread to the GUI thread, which analyses it in the preview slot.
std::shared_ptr<LoadPreviewThrottle> TraceLoader::installPreviews(
    RunOptions& options, const QString& path, const std::vector<int>& ranks)
{
    auto throttle = std::make_shared<LoadPreviewThrottle>();
    throttle->serial = m_loadSerial;
    throttle->path = path;
    throttle->ranks = ranks;
    throttle->rules = m_rules;
    throttle->intervalMs = m_previewIntervalMs;
    throttle->share = m_previewShare;
    options.load.previewDue = [throttle](std::size_t read, std::size_t total) { return throttle->due(read, total); };
    options.load.preview
        = [this, throttle, after = m_afterPreview](std::shared_ptr<Trace> trace, std::size_t read, std::size_t total) {
              {
                  std::lock_guard lock(throttle->mutex);
                  if (throttle->closed) // the load's job has ended: the loader may be gone
                      return;
                  QMetaObject::invokeMethod(
                      this,
                      [this, throttle, trace = std::move(trace), read, total]() mutable {
                          startPreview(throttle, std::move(trace), int(read), int(total));
                      },
                      Qt::QueuedConnection);
              }
              if (after)
                  after(read);
          };
    return throttle;
}

void TraceLoader::startPreview(
    const std::shared_ptr<LoadPreviewThrottle>& throttle, std::shared_ptr<Trace> trace, int ranksRead, int ranksTotal)
{
    if (throttle->serial != m_loadSerial || !m_job->busy()) { // a newer load, or the full trace, came first
        throttle->done(0);
        return;
    }
    m_previewJob->start<LoadedTrace>(
        [throttle, trace = std::shared_ptr<const Trace>(std::move(trace))](const JobContext&) -> LoadedTrace {
            QElapsedTimer took;
            took.start();
            struct Done // the next preview may be built however this one ends
            {
                LoadPreviewThrottle& throttle;
                QElapsedTimer& took;
                ~Done() { throttle.done(took.elapsed()); }
            } done { *throttle, took };
            LoadedTrace r;
            r.path = throttle->path;
            r.ranks = throttle->ranks;
            r.analysis = analyze(*trace, throttle->rules);
            r.index = ViewIndex::build(*trace, r.analysis.get());
            r.trace = trace;
            return r;
        },
        [this, serial = throttle->serial, ranksRead, ranksTotal](const LoadedTrace& preview) {
            if (serial == m_loadSerial && m_job->busy())
                emit previewed(preview, ranksRead, ranksTotal);
        });
}

void TraceLoader::load(const QString& path, const std::vector<int>& ranks)
{
    m_path = path;
    ++m_loadSerial;
    m_previewJob->cancel();
    emit started(path);
    RunOptions options = runOptions(ranks);
    options.viewIndex = true;
    options.collectives = true;
    options.load.threads = m_readerThreads;
    const auto previews = m_progressive ? installPreviews(options, path, ranks) : nullptr;
    auto tooLargeFlag = std::make_shared<std::atomic<bool>>(false);
    m_job->start<LoadedTrace>(
        [options, path, ranks, tooLargeFlag, previews](const JobContext& job) mutable -> LoadedTrace {
            options.load.cancel = job.cancelFlag();
            options.load.progress = progressReporter(job, previews);
            options.stageStarted = [&job](RunStage stage) {
                if (stage == RunStage::Analyse)
                    job.progress(1000, QObject::tr("Analysing…"));
            };
            struct Close // no preview is posted once this job has ended
            {
                LoadPreviewThrottle* throttle;
                ~Close()
                {
                    if (!throttle)
                        return;
                    std::lock_guard lock(throttle->mutex);
                    throttle->closed = true;
                }
            } close { previews.get() };
            try {
                OpenedRun run = openRun(path.toStdString(), options);
                LoadedTrace r;
                r.path = path;
                r.ranks = ranks;
                r.ruleUsage = ruleUsage(*run.trace, *run.analysis);
                r.trace = std::move(run.trace);
                r.analysis = std::move(run.analysis);
                r.index = std::move(run.viewIndex);
                r.collectives = std::move(run.collectives);
                return r;
            } catch (const TraceTooLarge&) {
                tooLargeFlag->store(true);
                throw;
            }
        },
        [this](const LoadedTrace& loaded) {
            m_previewJob->cancel(); // the full trace supersedes every preview
            emit this->loaded(loaded);
        },
        [this, path, tooLargeFlag](const QString& message) {
            m_previewJob->cancel();
            if (tooLargeFlag->load())
                emit tooLarge(path, message);
            else
                emit failed(path, message);
        });
}

void TraceLoader::cancel()
{
    if (!m_job->busy())
        return;
    m_previewJob->cancel();
    m_job->cancel();
    emit cancelled(m_path);
}

} // namespace exposure
