// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/traceloader.h"


#include <QElapsedTimer>
#include <QFileInfo>
#include <QFuture>
#include <QFutureWatcher>
#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>

namespace exposure {

namespace {

struct JobResult
{
    LoadedTrace loaded;
    QString error;
    bool cancelled = false;
};

} // namespace

struct TraceLoader::Job
{
    QFuture<JobResult> future;
};

TraceLoader::TraceLoader(QObject* parent)
    : QObject(parent)
    , m_load([](const std::string& path, const LoadOptions& o) { return loadTrace(path, o); })
    , m_rules(Rules::defaults())
{
    qRegisterMetaType<exposure::LoadedTrace>();
}

TraceLoader::~TraceLoader()
{
    if (m_cancel)
        m_cancel->store(true);
    waitForIdle();
}

void TraceLoader::waitForIdle()
{
    for (auto& job : m_jobs)
        job->future.waitForFinished();
}

void TraceLoader::load(const QString& path)
{
    if (m_cancel)
        m_cancel->store(true); // the previous job stops at its next check
    const quint64 generation = ++m_generation;
    auto cancelFlag = std::make_shared<std::atomic<bool>>(false);
    m_cancel = cancelFlag;
    m_loading = true;
    m_path = path;
    emit started(path);

    auto fn = m_load;
    Rules rules = m_rules;
    TraceLoader* self = this; // outlives the job: the destructor waits for it
    auto job = std::make_shared<Job>();
    job->future = QtConcurrent::run([fn, rules, path, cancelFlag, self, generation]() -> JobResult {
        JobResult r;
        r.loaded.path = path;
        QElapsedTimer throttle;
        throttle.start();
        LoadOptions options;
        options.cancel = cancelFlag.get();
        options.progress = [&](const LoadProgress& p) {
            if (throttle.elapsed() < 50)
                return;
            throttle.restart();
            const int permille = p.eventsTotal ? int(std::min<std::uint64_t>(1000, p.eventsRead * 1000 / p.eventsTotal)) : -1;
            const QString text = QObject::tr("Reading %1 (%2 events)")
                                     .arg(QFileInfo(QString::fromStdString(p.currentFile)).fileName())
                                     .arg(p.eventsRead);
            QMetaObject::invokeMethod(
                self,
                [self, generation, permille, text] {
                    if (generation == self->m_generation)
                        emit self->progress(permille, text);
                },
                Qt::QueuedConnection);
        };
        try {
            auto trace = fn(path.toStdString(), options);
            if (cancelFlag->load())
                throw LoadCancelled();
            if (!trace)
                throw LoadError(path.toStdString(), "the loader returned no trace");
            QMetaObject::invokeMethod(
                self,
                [self, generation] {
                    if (generation == self->m_generation)
                        emit self->progress(1000, QObject::tr("Analysing…"));
                },
                Qt::QueuedConnection);
            auto analysis = analyze(*trace, rules);
            if (cancelFlag->load())
                throw LoadCancelled();
            r.loaded.index = ViewIndex::build(*trace, analysis.get());
            r.loaded.ruleUsage = ruleUsage(*trace, *analysis);
            r.loaded.collectives = std::make_shared<const CollectiveMatch>(matchCollectives(*trace, *analysis));
            r.loaded.analysis = std::move(analysis);
            r.loaded.trace = std::move(trace);
        } catch (const LoadCancelled&) {
            r.cancelled = true;
        } catch (const LoadError& e) {
            r.error = QString::fromStdString(e.what());
        } catch (const std::exception& e) {
            r.error = path + QStringLiteral(": ") + QString::fromStdString(e.what());
        }
        return r;
    });
    m_jobs.push_back(job);

    auto* watcher = new QFutureWatcher<JobResult>(this);
    connect(watcher, &QFutureWatcher<JobResult>::finished, this, [this, watcher, job, generation, path] {
        watcher->deleteLater();
        m_jobs.erase(std::remove(m_jobs.begin(), m_jobs.end(), job), m_jobs.end());
        if (generation != m_generation)
            return; // superseded or cancelled: the caller already moved on
        m_loading = false;
        const JobResult r = job->future.result();
        if (r.cancelled)
            emit cancelled(path);
        else if (!r.error.isEmpty())
            emit failed(path, r.error);
        else
            emit loaded(r.loaded);
    });
    watcher->setFuture(job->future);
}

void TraceLoader::cancel()
{
    if (!m_loading)
        return;
    if (m_cancel)
        m_cancel->store(true);
    ++m_generation; // whatever the job still delivers is dropped
    m_loading = false;
    emit cancelled(m_path);
}

} // namespace exposure
