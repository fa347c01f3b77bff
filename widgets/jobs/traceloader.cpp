// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/traceloader.h"

#include "import/memorybudget.h"

#include <QElapsedTimer>
#include <QFileInfo>

namespace exposure {

TraceLoader::TraceLoader(QObject* parent)
    : QObject(parent)
    , m_rules(Rules::defaults())
    , m_job(new JobSlot(this))
{
    qRegisterMetaType<exposure::LoadedTrace>();
    connect(m_job, &JobSlot::progress, this, &TraceLoader::progress);
}

TraceLoader::~TraceLoader()
{
    m_job->cancel();
    m_job->waitForIdle();
}

bool TraceLoader::isLoading() const
{
    return m_job->busy();
}

void TraceLoader::waitForIdle()
{
    m_job->waitForIdle();
}

namespace {

// Progress of the reading stages as the window shows it, at most every 50 ms.
std::function<void(const LoadProgress&)> progressReporter(const JobContext& job)
{
    auto throttle = std::make_shared<QElapsedTimer>();
    throttle->start();
    return [&job, throttle](const LoadProgress& p) {
        if (throttle->elapsed() < 50)
            return;
        throttle->restart();
        const QString file = QFileInfo(QString::fromStdString(p.currentFile)).fileName();
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

void TraceLoader::load(const QString& path, const std::vector<int>& ranks)
{
    m_path = path;
    emit started(path);
    RunOptions options = runOptions(ranks);
    options.viewIndex = true;
    options.collectives = true;
    auto tooLargeFlag = std::make_shared<std::atomic<bool>>(false);
    m_job->start<LoadedTrace>(
        [options, path, ranks, tooLargeFlag](const JobContext& job) mutable -> LoadedTrace {
            options.load.cancel = job.cancelFlag();
            options.load.progress = progressReporter(job);
            options.stageStarted = [&job](RunStage stage) {
                if (stage == RunStage::Analyse)
                    job.progress(1000, QObject::tr("Analysing…"));
            };
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
        [this](const LoadedTrace& loaded) { emit this->loaded(loaded); },
        [this, path, tooLargeFlag](const QString& message) {
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
    m_job->cancel();
    emit cancelled(m_path);
}

} // namespace exposure
