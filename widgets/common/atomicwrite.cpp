// SPDX-License-Identifier: GPL-3.0-or-later
#include "common/atomicwrite.h"

#include <QCoreApplication>
#include <QSaveFile>

namespace exposure {

namespace {

WriteInterruptionHook& hook()
{
    static WriteInterruptionHook h;
    return h;
}

bool proceed(WriteStage stage, qint64 written)
{
    return !hook() || hook()(stage, written);
}

} // namespace

void setWriteInterruptionHookForTesting(WriteInterruptionHook h)
{
    hook() = std::move(h);
}

QString writeFileAtomically(const QString& path, const QByteArray& data)
{
    static const QString interrupted = QStringLiteral("the write was interrupted");
    if (!proceed(WriteStage::Open, 0))
        return interrupted;
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return file.errorString();
    constexpr qint64 kChunk = 64 * 1024;
    qint64 written = 0;
    while (written < data.size()) {
        if (!proceed(WriteStage::Chunk, written)) {
            file.cancelWriting();
            return interrupted;
        }
        const qint64 n = std::min(kChunk, qint64(data.size()) - written);
        if (file.write(data.constData() + written, n) != n) {
            const QString e = file.errorString();
            file.cancelWriting();
            return e;
        }
        written += n;
    }
    if (!proceed(WriteStage::Commit, written)) {
        file.cancelWriting();
        return interrupted;
    }
    if (!file.commit())
        return file.errorString();
    return {};
}

} // namespace exposure
