// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The demo trace (core/synth) written as OTF2 archives for tests that read real files.
#include "synth/archivewriter.h"

#include <QString>
#include <QTemporaryDir>
#include <string>

namespace exposure::testing {

// Writes a demo run of `ranks` ranks and `steps` steps (one archive per rank; launch-bound steps when asked) to the
// folder `path`; returns it.
inline std::string writeDemoRun(const std::string& path, int ranks, int steps, bool launchBound = false)
{
    synth::DemoOptions o;
    o.ranks = ranks;
    o.steps = steps;
    o.launchBound = launchBound;
    synth::writeArchive(path, synth::makeDemoSpec(o));
    return path;
}

inline QString writeDemoRun(const QString& path, int ranks, int steps, bool launchBound = false)
{
    writeDemoRun(path.toStdString(), ranks, steps, launchBound);
    return path;
}

// Writes a demo run of `ranks` ranks and `steps` steps to `name` in `dir`; returns its path.
inline std::string writeDemoArchives(const QTemporaryDir& dir, const QString& name, int ranks, int steps)
{
    return writeDemoRun(dir.filePath(name).toStdString(), ranks, steps);
}

} // namespace exposure::testing
