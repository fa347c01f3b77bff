// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Whole files as bytes, for tests that compare what a program wrote.
#include <QByteArray>
#include <QFile>
#include <QString>

namespace exposure::testing {

// The bytes of the file at `path`; empty when it cannot be read.
inline QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace exposure::testing
