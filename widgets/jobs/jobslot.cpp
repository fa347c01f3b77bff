// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/jobslot.h"

#include <algorithm>

namespace exposure {

void JobContext::progress(int permille, const QString& text) const
{
    QPointer<JobSlot> slot = m_slot;
    const quint64 generation = m_generation;
    if (!slot)
        return;
    QMetaObject::invokeMethod(
        slot.data(),
        [slot, generation, permille, text] {
            if (slot)
                slot->reportProgress(generation, permille, text);
        },
        Qt::QueuedConnection);
}

JobSlot::JobSlot(QObject* parent)
    : QObject(parent)
{ }

JobSlot::~JobSlot()
{
    if (m_cancel)
        m_cancel->store(true);
    ++m_generation; // whatever still arrives is stale
    waitForIdle();
}

void JobSlot::cancel()
{
    if (m_cancel)
        m_cancel->store(true);
    ++m_generation;
    if (m_busy) {
        m_busy = false;
        emit idle();
    }
}

void JobSlot::waitForIdle()
{
    for (auto& f : m_running)
        f.waitForFinished();
    m_running.clear();
}

void JobSlot::reportProgress(quint64 generation, int permille, const QString& text)
{
    if (generation == m_generation)
        emit progress(permille, text);
}

void JobSlot::finish(quint64 generation, bool handedOver)
{
    if (handedOver) {
        ++m_delivered;
        emit delivered();
    }
    if (generation == m_generation) { // the callback may have started the next job already
        m_busy = false;
        emit idle();
    }
}

void JobSlot::forgetFinished()
{
    m_running.erase(
        std::remove_if(m_running.begin(), m_running.end(), [](const QFuture<void>& f) { return f.isFinished(); }),
        m_running.end());
}

} // namespace exposure
