// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The one primitive for background work in the GUI: trace loading, panel recomputation and Compare Runs all use it.

#include "import/loadoptions.h"

#include <QFuture>
#include <QFutureWatcher>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QtConcurrent/QtConcurrentRun>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace exposure {

class JobSlot;

// What a running job sees: its cancel token and a way to report progress to the GUI thread.
class JobContext
{
public:
    JobContext(std::shared_ptr<std::atomic<bool>> cancel, QPointer<JobSlot> slot, quint64 generation)
        : m_cancel(std::move(cancel))
        , m_slot(std::move(slot))
        , m_generation(generation)
    { }
    bool cancelled() const { return m_cancel->load(); }
    // For LoadOptions::cancel and other code that polls a flag.
    const std::atomic<bool>* cancelFlag() const { return m_cancel.get(); }
    // Thread-safe; delivered as JobSlot::progress on the GUI thread unless the job is stale by then.
    void progress(int permille, const QString& text) const;

private:
    std::shared_ptr<std::atomic<bool>> m_cancel;
    QPointer<JobSlot> m_slot;
    quint64 m_generation;
};

// One slot of background work. Starting a job supersedes the previous one: its cancel token is set and nothing it
// produces is delivered (the generation counter tells stale from current). The work runs in Qt's thread pool; its
// result, or its error, is delivered on the GUI thread. A job that throws LoadCancelled, or whose token was set,
// ends silently; LoadError and other exceptions become the error text (LoadError's is "<file>: <problem>").
class JobSlot : public QObject
{
    Q_OBJECT
public:
    explicit JobSlot(QObject* parent = nullptr);
    ~JobSlot() override; // cancels the current job and waits for every job still running

    template <typename Result>
    void start(std::function<Result(const JobContext&)> work, std::function<void(const Result&)> done,
        std::function<void(const QString&)> failed = {});
    // A job that needs neither the cancel token nor progress.
    template <typename Result> void run(std::function<Result()> work, std::function<void(const Result&)> done)
    {
        start<Result>([w = std::move(work)](const JobContext&) { return w(); }, std::move(done));
    }

    void cancel(); // the current job stops at its next check; nothing of it is delivered
    bool busy() const { return m_busy; }
    quint64 generation() const { return m_generation; }
    quint64 deliveredCount() const { return m_delivered; }
    void waitForIdle(); // blocks until no job of this slot runs (tests, shutdown)

signals:
    void progress(int permille, const QString& text); // of the current job
    void delivered(); // the current job's result or error was handed over
    void idle(); // no current job any more (delivered, failed or cancelled)

private:
    friend class JobContext;
    void reportProgress(quint64 generation, int permille, const QString& text);
    void finish(quint64 generation, bool delivered);
    void forgetFinished();

    quint64 m_generation = 0;
    quint64 m_delivered = 0;
    bool m_busy = false;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    std::vector<QFuture<void>> m_running;
};

template <typename Result>
void JobSlot::start(std::function<Result(const JobContext&)> work, std::function<void(const Result&)> done,
    std::function<void(const QString&)> failed)
{
    if (m_cancel)
        m_cancel->store(true);
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    const quint64 generation = ++m_generation;
    m_busy = true;
    struct Outcome
    {
        std::optional<Result> value;
        QString error;
    };
    auto context = std::make_shared<JobContext>(m_cancel, QPointer<JobSlot>(this), generation);
    QFuture<Outcome> future = QtConcurrent::run([work = std::move(work), context]() -> Outcome {
        Outcome out;
        try {
            Result r = work(*context);
            if (!context->cancelled())
                out.value = std::move(r);
        } catch (const LoadCancelled&) {
        } catch (const std::exception& e) {
            if (!context->cancelled())
                out.error = QString::fromStdString(e.what());
        }
        return out;
    });
    m_running.push_back(QFuture<void>(future));
    auto* watcher = new QFutureWatcher<Outcome>(this);
    connect(watcher, &QFutureWatcherBase::finished, this,
        [this, watcher, generation, done = std::move(done), failed = std::move(failed)] {
            watcher->deleteLater();
            forgetFinished();
            if (generation != m_generation)
                return; // superseded or cancelled: the slot has moved on
            Outcome out = watcher->result();
            if (out.value) {
                done(*out.value);
                finish(generation, true);
            } else if (!out.error.isEmpty()) {
                if (failed)
                    failed(out.error);
                finish(generation, true);
            } else {
                finish(generation, false);
            }
        });
    watcher->setFuture(future);
}

} // namespace exposure
