// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/traceloader.h"

#include "import/memorybudget.h"

#include <QElapsedTimer>
#include <QFileInfo>

namespace exposure {

TraceLoader::TraceLoader(QObject* parent)
    : QObject(parent)
    , m_load([](const std::string& path, const LoadOptions& o) { return loadTrace(path, o); })
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

void TraceLoader::load(const QString& path, const std::vector<int>& ranks)
{
    m_path = path;
    emit started(path);
    auto fn = m_load;
    Rules rules = m_rules;
    const ClockMode clockMode = m_clockMode;
    const std::uint64_t memoryLimit = m_memoryLimit;
    auto tooLargeFlag = std::make_shared<std::atomic<bool>>(false);
    m_job->start<LoadedTrace>(
        [fn, rules, clockMode, path, ranks, memoryLimit, tooLargeFlag](const JobContext& job) -> LoadedTrace {
            QElapsedTimer throttle;
            throttle.start();
            LoadOptions options;
            options.cancel = job.cancelFlag();
            options.ranks = ranks;
            options.memoryLimit = memoryLimit;
            options.progress = [&](const LoadProgress& p) {
                if (throttle.elapsed() < 50)
                    return;
                throttle.restart();
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
            LoadedTrace r;
            r.path = path;
            r.ranks = ranks;
            try {
                auto trace = fn(path.toStdString(), options);
                if (job.cancelled())
                    throw LoadCancelled();
                if (!trace)
                    throw LoadError(path.toStdString(), "the loader returned no trace");
                job.progress(1000, QObject::tr("Analysing…"));
                // Clocks aligned across hosts before anything is indexed: every view sees one time base.
                AlignedRun aligned = alignClocks(*trace, analyze(*trace, rules), clockMode);
                auto analysis = std::move(aligned.analysis);
                if (job.cancelled())
                    throw LoadCancelled();
                r.index = ViewIndex::build(*trace, analysis.get());
                r.ruleUsage = ruleUsage(*trace, *analysis);
                r.collectives = std::move(aligned.collectives);
                r.analysis = std::move(analysis);
                r.trace = std::move(trace);
            } catch (const TraceTooLarge&) {
                tooLargeFlag->store(true);
                throw;
            } catch (const LoadError&) {
                throw; // already "<file>: <problem>"
            } catch (const LoadCancelled&) {
                throw;
            } catch (const std::exception& e) {
                throw LoadError(path.toStdString(), e.what());
            }
            return r;
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
