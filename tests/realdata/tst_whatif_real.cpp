// SPDX-License-Identifier: GPL-3.0-or-later
// What-if replay of the real traces in ../shared/traces: without edits every node replays at its recorded time and
// every rank's replayed mean step time is its measured one (the `stats` mean step).
#include "analysis/analysis.h"
#include "run/openrun.h"
#include "support/shareddata.h"
#include "whatif/whatif.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace exposure;
using namespace exposure::whatif;

namespace {

std::shared_ptr<const Trace> load(const QString& path)
{
    return loadTrace(path.toStdString());
}

// Checks the unedited replay of a trace; returns its result.
WhatIfResult checkReplay(const std::shared_ptr<const Trace>& trace)
{
    const std::shared_ptr<const Analysis> analysis = analyze(*trace, Rules::defaults());
    const WhatIfModel model(trace, analysis);
    const Graph& g = model.graph();
    const Replay& r = model.recordedReplay();
    std::size_t moved = 0;
    for (std::uint32_t n = 0; n < g.nodeCount(); ++n)
        moved += r.start(n) != g.recStart[n] || r.end(n) != g.recEnd[n] ? 1 : 0;
    [&] { QCOMPARE(moved, std::size_t(0)); }();
    WhatIfResult res = model.evaluate({});
    for (const RankWhatIf& rank : res.ranks) {
        [&] { QCOMPARE(rank.replayMean, rank.measuredMean); }();
        for (const StepTimes& s : rank.steps)
            [&] { QCOMPARE(s.replay, s.measured); }();
    }
    return res;
}

} // namespace

class TestWhatIfReal : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void scorepH200ReplaysExactly()
    {
        const QString path = QStringLiteral(EXPOSURE_SHARED_TRACES "/scorep-h200-ddp-1gpu");
        EXPOSURE_REQUIRE_SHARED(QFile::exists(path), "../shared/traces");
        const WhatIfResult res = checkReplay(load(path));
        QCOMPARE(res.ranks.size(), std::size_t(1));
        QCOMPARE(res.ranks[0].steps.size(), std::size_t(19)); // step 0 is start-up, as in `stats`
        QVERIFY(res.ranks[0].measuredMean > 81'000'000 && res.ranks[0].measuredMean < 82'000'000);
    }

    void kinetoOneGpuReplaysExactly()
    {
        const QString path = QStringLiteral(EXPOSURE_SHARED_TRACES "/kineto-ddp-bert/ddp_bert_ws1_rank0.json.gz");
        EXPOSURE_REQUIRE_SHARED(QFile::exists(path), "../shared/traces");
        const WhatIfResult res = checkReplay(load(path));
        QCOMPARE(res.ranks[0].steps.size(), std::size_t(5));
    }

    // Two ranks with matched collectives: exact without edits; hiding communication cannot make a step longer.
    void kinetoTwoGpusReplayExactlyAndHideCommunication()
    {
        const QString dirPath = QStringLiteral(EXPOSURE_SHARED_TRACES "/kineto-ddp-bert/");
        EXPOSURE_REQUIRE_SHARED(
            QFile::exists(dirPath + QStringLiteral("ddp_bert_ws2_rank0.json.gz")), "../shared/traces");
        QTemporaryDir dir;
        for (const char* f : { "ddp_bert_ws2_rank0.json.gz", "ddp_bert_ws2_rank1.json.gz" })
            QVERIFY(QFile::link(dirPath + QLatin1String(f), dir.filePath(QLatin1String(f))));
        const auto trace = load(dir.path());
        const WhatIfResult res = checkReplay(trace);
        QCOMPARE(res.ranks.size(), std::size_t(2));
        QVERIFY(res.groups > 0);
        const WhatIfModel model(trace, analyze(*trace, Rules::defaults()));
        Edits e;
        e.comm = Edits::Comm::Hidden;
        for (const RankWhatIf& r : model.evaluate(e).ranks)
            QVERIFY(r.predictedMean <= r.replayMean);
    }
};

EXPOSURE_DATA_GUILESS_MAIN(TestWhatIfReal)
#include "tst_whatif_real.moc"
