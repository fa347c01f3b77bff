// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The demo trace (core/synth) written as OTF2 archives for tests that read real files.
#include "synth/archivewriter.h"

#include <QTemporaryDir>
#include <string>

namespace exposure::testing {

// Writes a demo run of `ranks` ranks and `steps` steps (one archive per rank) to `name` in `dir`; returns its path.
inline std::string writeDemoArchives(const QTemporaryDir& dir, const QString& name, int ranks, int steps)
{
    const std::string path = dir.filePath(name).toStdString();
    synth::DemoOptions o;
    o.ranks = ranks;
    o.steps = steps;
    synth::writeArchive(path, synth::makeDemoSpec(o));
    return path;
}

} // namespace exposure::testing
