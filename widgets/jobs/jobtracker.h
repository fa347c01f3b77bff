// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

#include <functional>

namespace exposure {

// Runs recomputations (range statistics, kernel tables) in the thread pool and delivers only the
// newest result: starting a job makes every earlier one stale (the hotspot JobTracker pattern).
class JobTracker : public QObject
{
    Q_OBJECT
public:
    explicit JobTracker(QObject* parent = nullptr) : QObject(parent) {}
    ~JobTracker() override { m_generation = ~0ull; } // pending watchers are children and die with us

    template<typename Result>
    void run(std::function<Result()> work, std::function<void(const Result&)> done)
    {
        const quint64 generation = ++m_generation;
        auto* watcher = new QFutureWatcher<Result>(this);
        connect(watcher, &QFutureWatcher<Result>::finished, this, [this, watcher, generation, done] {
            watcher->deleteLater();
            if (generation != m_generation)
                return; // a newer request superseded this one
            ++m_delivered;
            done(watcher->result());
            emit delivered();
        });
        watcher->setFuture(QtConcurrent::run(std::move(work)));
    }
    void invalidate() { ++m_generation; }
    quint64 deliveredCount() const { return m_delivered; }

signals:
    void delivered();

private:
    quint64 m_generation = 0;
    quint64 m_delivered = 0;
};

} // namespace exposure
