// SPDX-License-Identifier: GPL-3.0-or-later
// One classification for every output (issue 38): a rules file that makes a kernel a collective, with its algorithm
// and protocol in named groups and a colour of its own, is followed alike by the stats JSON (kernel table and the
// collectives by type), the collective summary the Collectives dock shows, the operations called, and the timeline's
// legend and paint. Without the file the same kernel is compute, and none of them names a collective.
#include "analysis/analysis.h"
#include "analysis/collectives.h"
#include "analysis/commops.h"
#include "figure/figurerenderer.h"
#include "report/statsreport.h"
#include "run/openrun.h"
#include "support/customcomm.h"
#include "support/figurespecs.h"
#include "synth/archivewriter.h"
#include "timeline/timelineplot.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace exposure;
using namespace exposure::synth;
using exposure::testing::legendTexts;

namespace {

constexpr const char* kKernel = exposure::testing::kCustomCommKernel;

// Two ranks, each with a GEMM on stream 7 and the custom communication kernel on stream 17 (2 µs apart: rank 0 waits).
void writeTrace(const QString& dir)
{
    ArchiveSpec spec;
    for (int r = 0; r < 2; ++r) {
        RankSpec& rank = spec.addRank(r);
        rank.addStream(r, 7).kernels.push_back({ "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_NNT", 1'000, 9'000 });
        StreamSpec& comm = rank.addStream(r, 17);
        comm.kernels.push_back({ kKernel, 10'000 + 2'000 * (1 - r), 20'000 });
        comm.kernels.push_back({ kKernel, 30'000, 36'000 });
    }
    writeArchive(dir.toStdString(), spec);
}

QJsonObject statsOf(const OpenedRun& run)
{
    StatsReportOptions o;
    o.window = activityRange(*run.trace);
    return QJsonDocument::fromJson(QByteArray::fromStdString(statsJson(*run.trace, *run.analysis, o))).object();
}

QJsonObject kernelRow(const QJsonObject& stats, const char* name)
{
    for (const QJsonValue& k : stats.value(QLatin1String("kernels")).toArray())
        if (k.toObject().value(QLatin1String("name")).toString() == QLatin1String(name))
            return k.toObject();
    return {};
}

FigureSpec gpuRows()
{
    FigureSpec s = testing::pixelSpec(900, 300);
    s.rows = FigureSpec::RowsKind::Gpu;
    return s;
}

// Loads the trace with `rules`, matching the collectives.
OpenedRun load(const QString& trace, const Rules& rules)
{
    RunOptions o;
    o.rules = rules;
    o.collectives = true;
    return openRun(trace.toStdString(), o);
}

long pixelsOf(const QImage& image, QRgb rgb)
{
    long n = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            n += (image.pixel(x, y) & 0xFFFFFF) == rgb ? 1 : 0;
    return n;
}

} // namespace

class TestRulesFollow : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace, m_rules;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_trace = m_dir.filePath(QStringLiteral("trace"));
        writeTrace(m_trace);
        m_rules = m_dir.filePath(QStringLiteral("rules.json"));
        QFile f(m_rules);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray("{\"rules\": [" + testing::customCommRule()
            + "], \"colours\": {\"communication\": {\"reducescatter\": \"#123456\"}}}"));
    }

    // The built-in rules: the custom kernel is compute ("reduce" in its name), no collective anywhere.
    void builtInRules()
    {
        const OpenedRun run = load(m_trace, Rules::defaults());
        const QJsonObject stats = statsOf(run);
        const QJsonObject k = kernelRow(stats, kKernel);
        QCOMPARE(k.value(QLatin1String("category")).toString(), QStringLiteral("compute"));
        QCOMPARE(k.value(QLatin1String("subgroup")).toString(), QStringLiteral("reduction"));
        QCOMPARE(k.value(QLatin1String("count")).toInt(), 4);
        QVERIFY(collectiveSummary(*run.trace, *run.collectives, run.analysis->rules).empty());
        FigureRenderer r(run.trace, run.analysis);
        r.setCollectives(run.collectives);
        const QImage image = r.renderImage(gpuRows()).convertToFormat(QImage::Format_RGB32);
        QVERIFY(!legendTexts(r).contains(QStringLiteral("reducescatter")));
        QCOMPARE(pixelsOf(image, 0x123456), 0L);
    }

    void rulesFileIsFollowedEverywhere()
    {
        const OpenedRun run = load(m_trace, Rules::fromFile(m_rules.toStdString(), true));

        // The stats JSON: the kernel table's class, and the collectives by type with the algorithm and protocol.
        const QJsonObject stats = statsOf(run);
        const QJsonObject k = kernelRow(stats, kKernel);
        QCOMPARE(k.value(QLatin1String("category")).toString(), QStringLiteral("communication"));
        QCOMPARE(k.value(QLatin1String("subgroup")).toString(), QStringLiteral("reducescatter"));
        QCOMPARE(k.value(QLatin1String("total_ns")).toInteger(), qint64(8'000 + 10'000 + 6'000 + 6'000));
        const QJsonArray groups = stats.value(QLatin1String("collective_summary")).toArray();
        QCOMPARE(groups.size(), 1);
        const QJsonArray byType = groups[0].toObject().value(QLatin1String("collectives_by_type")).toArray();
        QCOMPARE(byType.size(), 1);
        const QJsonObject row = byType[0].toObject();
        QCOMPARE(row.value(QLatin1String("type")).toString(), QStringLiteral("reducescatter"));
        QCOMPARE(row.value(QLatin1String("algorithm")).toString(), QStringLiteral("tree_ll128"));
        QCOMPARE(row.value(QLatin1String("count")).toInt(), 2);
        QCOMPARE(row.value(QLatin1String("ranks")).toInt(), 2);

        // The collective summary of the Collectives dock (by the operation called: the kernel's collective).
        const CollectiveMatch& match = *run.collectives;
        const auto rows = collectiveSummary(
            match, run.analysis->rules, [&](std::uint32_t name) { return run.trace->name(name); },
            [&](const CollectiveGroup& g) {
                const CollectiveMember& m = g.members.front();
                return commOpOf(*run.trace, *run.analysis, { m.rank, m.lane, m.interval });
            });
        QCOMPARE(rows.size(), std::size_t(1));
        QCOMPARE(rows[0].type, std::string("reducescatter"));
        QCOMPARE(rows[0].algorithm, std::string("tree_ll128"));
        QCOMPARE(rows[0].op, std::string("reduce_scatter"));
        QCOMPARE(rows[0].count, std::uint64_t(2));

        // The timeline: the legend names the collective the rules gave, painted in the rules' colour; the GEMM keeps
        // the built-in colour (the file's colours extend the defaults).
        FigureRenderer r(run.trace, run.analysis);
        r.setCollectives(run.collectives);
        const QImage image = r.renderImage(gpuRows()).convertToFormat(QImage::Format_RGB32);
        QVERIFY2(legendTexts(r).contains(QStringLiteral("reducescatter")), qPrintable(legendTexts(r).join(u'|')));
        QVERIFY(!legendTexts(r).contains(QStringLiteral("reduction")));
        const Palette& pal = r.plot()->scene().palette;
        QCOMPARE(pal.block(Category::Communication, "reducescatter"), QColor(0x123456));
        QCOMPARE(pal.block(Category::Compute, "gemm"), QColor(0x1F5FA6));
        QVERIFY(pixelsOf(image, 0x123456) > 0);
        // The legend's classes of the palette: the file's sub-group among the built-in ones.
        QStringList classes;
        for (const Palette::ClassColour& c : pal.classColours())
            classes << c.name;
        QVERIFY(classes.contains(QStringLiteral("reducescatter")));
        QVERIFY(classes.contains(QStringLiteral("AllReduce")));
    }
};

QTEST_MAIN(TestRulesFollow)
#include "tst_rulesfollow.moc"
