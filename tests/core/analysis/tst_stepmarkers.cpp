// SPDX-License-Identifier: GPL-3.0-or-later
// Steps that are iterations: a step region that occurs twice (the CPU region and a short copy on another thread)
// is the longer one, and step regions far shorter than the time between them are markers, each iteration running
// from its marker to the next.
#include "analysis/analysis.h"
#include "run/openrun.h"
#include "support/kinetotraces.h"

#include <QTemporaryDir>
#include <QTest>

using namespace exposure;

namespace {

QByteArray region(const char* name, const char* cat, int tid, double ts, double dur, int corr = -1)
{
    return QByteArray(",\n{\"ph\": \"X\", \"cat\": \"") + cat + "\", \"name\": \"" + name
        + "\", \"pid\": 1, \"tid\": " + QByteArray::number(tid) + ", \"ts\": " + QByteArray::number(ts, 'f', 3)
        + ", \"dur\": " + QByteArray::number(dur, 'f', 3)
        + (corr >= 0 ? ", \"args\": {\"correlation\": " + QByteArray::number(corr) + "}}" : QByteArray("}"));
}

QByteArray kernel(double ts, double dur, int corr)
{
    return ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ampere_sgemm_128x64_nn\", \"pid\": 0, \"tid\": 7, "
           "\"ts\": "
        + QByteArray::number(ts, 'f', 3) + ", \"dur\": " + QByteArray::number(dur, 'f', 3)
        + ", \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": " + QByteArray::number(corr) + "}}";
}

QByteArray file(const QByteArray& events)
{
    return "{\"schemaVersion\": 1, \"traceEvents\": [\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, "
           "\"tid\": 1, \"args\": {\"name\": \"main\"}}"
        + events + "\n]}";
}

const RankAnalysis& analysed(const QTemporaryDir& dir, std::shared_ptr<const Analysis>& keep)
{
    auto trace = loadTrace(dir.path().toStdString());
    keep = analyze(*trace, Rules::defaults());
    return keep->ranks.at(0);
}

} // namespace

class TestStepMarkers : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // ProfilerStep#15–17 as 16 ms CPU regions and as 17 us copies on another thread: the CPU regions are the steps.
    void longerOccurrenceWins()
    {
        QTemporaryDir dir;
        QByteArray ev;
        int corr = 1;
        for (int k = 0; k < 3; ++k) {
            const double t = k * 16'000.0;
            const QByteArray name = "ProfilerStep#" + QByteArray::number(15 + k);
            ev += region(name.constData(), "user_annotation", 1, t, 15'900);
            ev += region(name.constData(), "user_annotation", 2, t + 300, 17);
            ev += region("cudaLaunchKernel", "cuda_runtime", 1, t + 100, 5, corr);
            ev += kernel(t + 400, 10'000, corr++);
        }
        testing::write(dir, QStringLiteral("rank0.json"), file(ev));
        std::shared_ptr<const Analysis> keep;
        const RankAnalysis& ra = analysed(dir, keep);
        QCOMPARE(ra.stepSource, StepSource::Regions);
        QCOMPARE(ra.steps.size(), std::size_t(3));
        for (int k = 0; k < 3; ++k) {
            QCOMPARE(ra.steps[std::size_t(k)].name, "ProfilerStep#" + std::to_string(15 + k));
            QCOMPARE(ra.steps[std::size_t(k)].hostRange.duration(), TimeNs(15'900'000));
        }
    }

    // Step regions of 5 us every 1 ms: markers. Each step runs from its marker to the next; the last to the end of
    // the recorded work (at most twice the spacing after its marker).
    void shortRegionsAreMarkers()
    {
        QTemporaryDir dir;
        QByteArray ev;
        for (int k = 0; k < 4; ++k) {
            const double t = k * 1000.0;
            ev += region(("step#" + std::to_string(k)).c_str(), "user_annotation", 1, t, 5);
            ev += region("cudaLaunchKernel", "cuda_runtime", 1, t + 10, 5, k + 1);
            ev += kernel(t + 20, 900, k + 1);
        }
        testing::write(dir, QStringLiteral("rank0.json"), file(ev));
        std::shared_ptr<const Analysis> keep;
        const RankAnalysis& ra = analysed(dir, keep);
        QCOMPARE(ra.stepSource, StepSource::Markers);
        QCOMPARE(std::string(stepSourceName(ra.stepSource)), std::string("region markers"));
        QCOMPARE(ra.steps.size(), std::size_t(4));
        for (int k = 0; k < 3; ++k) {
            QCOMPARE(ra.steps[std::size_t(k)].hostRange.start, TimeNs(k) * 1'000'000);
            QCOMPARE(ra.steps[std::size_t(k)].hostRange.end, TimeNs(k + 1) * 1'000'000);
        }
        // The last: from its marker at 3 ms to the end of the last kernel at 3.92 ms.
        QCOMPARE(ra.steps[3].hostRange.start, TimeNs(3'000'000));
        QCOMPARE(ra.steps[3].hostRange.end, TimeNs(3'920'000));
    }

    // Real iterations (regions as long as their spacing) stay as they are.
    void longRegionsAreIterations()
    {
        QTemporaryDir dir;
        QByteArray ev;
        for (int k = 0; k < 4; ++k) {
            const double t = k * 1000.0;
            ev += region(("step#" + std::to_string(k)).c_str(), "user_annotation", 1, t, 990);
            ev += region("cudaLaunchKernel", "cuda_runtime", 1, t + 10, 5, k + 1);
            ev += kernel(t + 20, 900, k + 1);
        }
        testing::write(dir, QStringLiteral("rank0.json"), file(ev));
        std::shared_ptr<const Analysis> keep;
        const RankAnalysis& ra = analysed(dir, keep);
        QCOMPARE(ra.stepSource, StepSource::Regions);
        QCOMPARE(ra.steps.size(), std::size_t(4));
        QCOMPARE(ra.steps[1].hostRange.duration(), TimeNs(990'000));
    }
};

QTEST_GUILESS_MAIN(TestStepMarkers)
#include "tst_stepmarkers.moc"
