// SPDX-License-Identifier: GPL-3.0-or-later
// The area-true picture on real data: the kernels of the 2-GPU torch.profiler DDP run in ../shared/traces (rank 0
// launch-bound and mostly waiting in NCCL, rank 1 compute-heavy), rendered as overlap-row figures at 600-4000 px and
// in the widget; every painted state share must equal its share of the statistics' window. Skipped where ../shared is
// absent (a user's machine).
#include "kinetokernels.h"
#include "support/areameasure.h"
#include "support/shareddata.h"

#include <QFile>
#include <QTest>

using namespace exposure;
using namespace exposure::testing;

class TestRealPixels : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        auto trace = twoGpuDdpKernels();
        EXPOSURE_REQUIRE_SHARED(trace, "../shared/traces");
        // Kineto times are absolute: start the trace (and the figures' window) at its first kernel.
        trace->finalize(true);
        m_trace = trace;
        m_analysis = analyze(*m_trace, Rules::defaults());
    }

    void overlapRowsAreAreaTrue_data()
    {
        QTest::addColumn<int>("target");
        QTest::addColumn<int>("width");
        for (int width : { 600, 1000, 2000, 4000 }) {
            QTest::addRow("png %d px", width) << int(Target::Png) << width;
            QTest::addRow("grayscale png %d px", width) << int(Target::GrayPng) << width;
        }
        QTest::addRow("widget 1000 px") << int(Target::Widget) << 1000;
    }

    void overlapRowsAreAreaTrue()
    {
        QFETCH(int, target);
        QFETCH(int, width);
        const Target t = Target(target);
        const Render r = render(m_trace, m_analysis, t, width, t == Target::Widget ? 8 : 2, true);
        const auto shares = measure(*m_trace, *m_analysis, r, t == Target::GrayPng);
        int overlapShares = 0;
        for (const Share& s : shares) {
            if (!s.what.contains(QStringLiteral("overlap")))
                continue;
            ++overlapShares;
            const double tolerance = std::max(0.01, 0.1 * s.time);
            qInfo("%s: painted %.2f %%, time %.2f %%", qPrintable(s.what), s.painted * 100, s.time * 100);
            QVERIFY2(std::abs(s.painted - s.time) <= tolerance,
                qPrintable(
                    QStringLiteral("%1: painted %2 %, time %3 %").arg(s.what).arg(s.painted * 100).arg(s.time * 100)));
        }
        QCOMPARE(overlapShares, 6); // 2 ranks x exposed / hidden / compute only
    }

private:
    std::shared_ptr<const Trace> m_trace;
    std::shared_ptr<const Analysis> m_analysis;
};

EXPOSURE_DATA_TEST_MAIN(TestRealPixels)
#include "tst_realpixels.moc"
