// SPDX-License-Identifier: GPL-3.0-or-later
// Writes a file so that readers see either the old content or the whole new content, never a mix or a
// truncation: the bytes go to a temporary file in the same folder, which is synced and then renamed over the
// target (QSaveFile). A write that stops at any point (an error, a full disk, the process killed) leaves the old
// file untouched.
#pragma once

#include <QByteArray>
#include <QString>
#include <functional>

namespace exposure {

enum class WriteStage { Open, Chunk, Commit };

// Writes `data` to `path` atomically. Returns an empty string on success, else the problem ("No space left on
// device", ...), without the path.
QString writeFileAtomically(const QString& path, const QByteArray& data);

// Tests only: called before each stage (Chunk: before each 64 KiB chunk, with the bytes written so far); returning
// false interrupts the write there as an error would. Pass {} to remove.
using WriteInterruptionHook = std::function<bool(WriteStage stage, qint64 written)>;
void setWriteInterruptionHookForTesting(WriteInterruptionHook hook);

} // namespace exposure
