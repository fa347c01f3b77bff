// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The straggler what-if's incremental attribution replays (IncrementalReplay: only what a group changes from the
// shared evened replay) against the reference, a full replay per group: every step of every group of every
// dimension and of the DP rank × stage grid equal to the nanosecond, every slowdown equal as a double.
#include "whatif/whatif.h"

#include <QTest>
#include <string>

namespace exposure::testing {

inline void compareGroups(const whatif::EvenResult::Group& a, const whatif::EvenResult::Group& b)
{
    QCOMPARE(a.name, b.name);
    QVERIFY(a.steps == b.steps);
    QCOMPARE(a.meanStep, b.meanStep);
    QVERIFY2(a.slowdown == b.slowdown, qPrintable(QString::fromStdString(a.name)));
    QVERIFY(a.ownRatio == b.ownRatio);
}

// Returns the incremental result; fails the calling test (after which it returns early) on any difference.
inline whatif::EvenResult compareWithFullReplays(const whatif::WhatIfModel& model, int threads = 2)
{
    whatif::EvenOptions o;
    o.threads = threads;
    o.grid = true;
    const whatif::EvenResult fast = model.even(o);
    o.incremental = false;
    const whatif::EvenResult full = model.even(o);
    [&] {
        QCOMPARE(fast.evenedSteps, full.evenedSteps);
        QCOMPARE(fast.replays, full.replays);
        QCOMPARE(fast.by.size(), full.by.size());
        for (std::size_t d = 0; d < fast.by.size(); ++d) {
            QCOMPARE(fast.by[d].first, full.by[d].first);
            QCOMPARE(fast.by[d].second.size(), full.by[d].second.size());
            for (std::size_t g = 0; g < fast.by[d].second.size(); ++g) {
                compareGroups(fast.by[d].second[g], full.by[d].second[g]);
                if (QTest::currentTestFailed())
                    return;
            }
        }
        QCOMPARE(fast.grid.dpCount, full.grid.dpCount);
        QCOMPARE(fast.grid.ppCount, full.grid.ppCount);
        QVERIFY(fast.grid.present == full.grid.present);
        for (std::size_t c = 0; c < fast.grid.cells.size(); ++c) {
            compareGroups(fast.grid.cells[c], full.grid.cells[c]);
            if (QTest::currentTestFailed())
                return;
        }
        // The full replays compute every event; the incremental ones fewer.
        QCOMPARE(full.replayedEvents, std::uint64_t(full.replays - 2) * full.graphEvents);
        QVERIFY2(fast.replayedEvents < full.replayedEvents,
            qPrintable(QStringLiteral("%1 of %2").arg(fast.replayedEvents).arg(full.replayedEvents)));
    }();
    return fast;
}

} // namespace exposure::testing
