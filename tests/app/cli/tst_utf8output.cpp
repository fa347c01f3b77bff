// SPDX-License-Identifier: GPL-3.0-or-later
// Every output is valid whatever the input's bytes: names that are not UTF-8 (a Latin-1 byte, a truncated multi-byte
// sequence) in an OTF2 archive, a torch.profiler JSON and an Nsight Systems export give strictly valid JSON, CSV,
// SVG, PDF and figure specs from exposure-cli, with each bad sequence shown as U+FFFD. Also the decoder
// (model/utf8.h), the StringPool's raw bytes and the one JSON string writer (jsonQuoted).
#include "model/stringpool.h"
#include "model/utf8.h"
#include "report/statsreport.h"
#include "support/demoarchive.h"
#include "support/kinetotraces.h"
#include "support/nsystraces.h"
#include "support/processrun.h"
#include "synth/archivewriter.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringDecoder>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

using namespace exposure;
using namespace exposure::synth;

namespace {

const QString kReplacement = QString(QChar(0xFFFD));

// True when `bytes` decode as UTF-8 without a single error (QStringDecoder reports ill-formed input).
bool strictUtf8(const QByteArray& bytes)
{
    QStringDecoder d(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString s = d.decode(bytes);
    return !d.hasError() && isValidUtf8(std::string_view(bytes.constData(), std::size_t(bytes.size())));
}

QJsonDocument strictJson(const QByteArray& bytes, QString* error)
{
    if (!strictUtf8(bytes)) {
        *error = QStringLiteral("not valid UTF-8");
        return {};
    }
    QJsonParseError perr;
    QJsonDocument doc = QJsonDocument::fromJson(bytes, &perr);
    if (perr.error != QJsonParseError::NoError)
        *error = perr.errorString() + QStringLiteral(" at ") + QString::number(perr.offset);
    return doc;
}

ProcessResult cli(const QStringList& args)
{
    return runProcess(QStringLiteral(EXPOSURE_CLI), args, 120'000);
}

// Two ranks whose kernel, host and thread names carry a Latin-1 byte (0x91) and a truncated 3-byte sequence.
ArchiveSpec badNames()
{
    ArchiveSpec spec;
    for (int rank = 0; rank < 2; ++rank) {
        auto& r = spec.addRank(rank, "h\xF6st-a");
        r.threads[0].name = "Master \x91thread";
        r.threads[0].regions
            = { { "ProfilerStep#1", 0, 90'000 }, { "cuLaunchKernel", 1'000, 2'000, RegionRole::Wrapper, 0 } };
        auto& s = r.addStream(rank, 7);
        s.kernels = { { "gemm_\xE2\x82", 5'000, 15'000 } };
        auto& n = r.addStream(rank, 17);
        n.kernels = { { "ncclDevKernel_\x91llReduce_Sum_f32_RING_LL", 10'000, 30'000 + rank * 1'000 } };
    }
    return spec;
}

// The demo archive with one byte of an NCCL kernel name in rank 0's definitions set to 0x91 (the case).
QString patchedDemo(const QTemporaryDir& dir)
{
    const QString path = dir.filePath(QStringLiteral("demo"));
    testing::writeDemoRun(path, 2, 2);
    QFile def(path + QStringLiteral("/rank0/traces.def"));
    if (!def.open(QIODevice::ReadOnly))
        return {};
    QByteArray bytes = def.readAll();
    def.close();
    const auto at = bytes.indexOf("ncclDevKernel_");
    if (at < 0)
        return {};
    bytes[at + 14] = char(0x91);
    if (!def.open(QIODevice::WriteOnly | QIODevice::Truncate) || def.write(bytes) != bytes.size())
        return {};
    return path;
}

QString kinetoWithBadNames(const QTemporaryDir& dir)
{
    QByteArray json = testing::rankTrace(0, 1, true,
        ",\n  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"bad_\x91_kernel_\xE2\x82\", \"pid\": 0, \"tid\": 7, "
        "\"ts\": 1080.0, \"dur\": 5.0, \"args\": {\"device\": 0, \"stream\": 7}}");
    json.replace("\"args\": {\"name\": \"main\"}", "\"args\": {\"name\": \"ma\x91in\"}");
    const QString path = dir.filePath(QStringLiteral("rank0.json"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(json) != json.size())
        return {};
    return path;
}

QString nsysWithBadNames(const QTemporaryDir& dir)
{
    const std::string path = dir.filePath(QStringLiteral("report.sqlite")).toStdString();
    testing::NsysWriter w(path);
    w.gpu(0,
        "NVIDIA H\x91"
        "200");
    const std::int64_t pid = 100, main = testing::nsysTid(pid, pid);
    w.threadName(main, "pt_\x91main");
    w.nvtx(main, 1'000'000, 1'100'000, "ProfilerStep#3");
    w.runtime(main, 1'001'000, 1'001'010, 1, "cudaLaunchKernel_v7000");
    w.kernel(pid, 0, 7, 1'002'000, 1'012'000, 1, "gemm_\xE2\x82");
    w.runtime(main, 1'050'000, 1'050'010, 2, "cudaLaunchKernel_v7000");
    w.kernel(pid, 0, 17, 1'052'000, 1'082'000, 2, "ncclDevKernel_\x91llReduce_Sum_f32_RING_LL");
    return QString::fromStdString(path);
}

} // namespace

class TestUtf8Output : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void decoder_data();
    void decoder();
    void stringPoolKeepsRawBytes();
    void jsonWriterIsValid();
    void outputs_data();
    void outputs();

private:
    QTemporaryDir m_dir;
};

void TestUtf8Output::decoder_data()
{
    QTest::addColumn<QByteArray>("in");
    QTest::addColumn<QByteArray>("out");
    const QByteArray r("\xEF\xBF\xBD");
    QTest::newRow("ascii") << QByteArray("gemm") << QByteArray("gemm");
    QTest::newRow("valid multi-byte") << QByteArray("h\xC3\xB6st \xE2\x82\xAC \xF0\x9F\x98\x80")
                                      << QByteArray("h\xC3\xB6st \xE2\x82\xAC \xF0\x9F\x98\x80");
    QTest::newRow("latin-1 byte") << QByteArray("a\x91z") << "a" + r + "z";
    QTest::newRow("truncated 3-byte at end") << QByteArray("x\xE2\x82") << "x" + r;
    QTest::newRow("truncated 4-byte then ascii") << QByteArray("\xF0\x9F\x98!") << r + "!";
    QTest::newRow("overlong") << QByteArray("\xC0\xAF") << r + r;
    QTest::newRow("surrogate") << QByteArray("\xED\xA0\x80") << r + r + r;
    QTest::newRow("above U+10FFFF") << QByteArray("\xF4\x90\x80\x80") << r + r + r + r;
    QTest::newRow("lone continuation in a long ascii run")
        << QByteArray("abcdefghijklmnop\x80qrstuvwxyz") << "abcdefghijklmnop" + r + "qrstuvwxyz";
}

void TestUtf8Output::decoder()
{
    QFETCH(QByteArray, in);
    QFETCH(QByteArray, out);
    const std::string_view s(in.constData(), std::size_t(in.size()));
    QCOMPARE(isValidUtf8(s), in == out);
    QCOMPARE(QByteArray::fromStdString(toValidUtf8(s)), out);
    // The Unicode practice of one U+FFFD per maximal subpart, as Python's decode(errors="replace"); Qt 6.4 replaces
    // each byte of a truncated sequence instead, so it is no reference here.
    QVERIFY(isValidUtf8(toValidUtf8(s)));
}

void TestUtf8Output::stringPoolKeepsRawBytes()
{
    StringPool pool;
    const StringId ok = pool.intern("gemm");
    const StringId bad = pool.intern("nccl\x91");
    QCOMPARE(pool.str(bad), std::string("nccl\xEF\xBF\xBD"));
    QVERIFY(pool.rawBytes(ok) == nullptr);
    QVERIFY(pool.rawBytes(bad) != nullptr);
    QCOMPARE(*pool.rawBytes(bad), std::string("nccl\x91"));
    QCOMPARE(escapedBytes(*pool.rawBytes(bad)), std::string("nccl\\x91"));
    QCOMPARE(pool.intern("nccl\x91"), bad);
    QCOMPARE(pool.find("nccl\x91"), bad);
    QCOMPARE(pool.intern("nccl\xEF\xBF\xBD"), bad);
    QCOMPARE(pool.size(), std::size_t(2)); // ids stay dense: the raw form is no name of its own
    StringPool copy;
    QCOMPARE(copy.internFrom(pool, ok), ok);
    QCOMPARE(copy.internFrom(pool, bad), bad);
    QCOMPARE(*copy.rawBytes(bad), std::string("nccl\x91"));
}

void TestUtf8Output::jsonWriterIsValid()
{
    // Every byte value, alone and after a lead byte: the writer's output parses strictly and round-trips valid text.
    for (int b = 0; b < 256; ++b) {
        for (const std::string& s : { std::string(1, char(b)), std::string("\xE2") + char(b) + "x" }) {
            const std::string json = "[" + jsonQuoted(s) + "]";
            QString error;
            const QJsonDocument doc = strictJson(QByteArray::fromStdString(json), &error);
            QVERIFY2(error.isEmpty(), qPrintable(QString::number(b) + QStringLiteral(": ") + error));
            QCOMPARE(doc.array().at(0).toString(), QString::fromUtf8(toValidUtf8(s)));
        }
        QVERIFY(strictUtf8(QByteArray::fromStdString(csvQuoted(std::string("a,") + char(b)))));
    }
}

void TestUtf8Output::outputs_data()
{
    QTest::addColumn<QString>("trace");
    QTest::addColumn<QString>("badKernel"); // a kernel name as decoded (U+FFFD for each bad sequence)
    QVERIFY(m_dir.isValid());
    const QString otf2 = m_dir.filePath(QStringLiteral("otf2"));
    writeArchive(otf2.toStdString(), badNames());
    const QString nccl = QStringLiteral("ncclDevKernel_") + kReplacement + QStringLiteral("llReduce_Sum_f32_RING_LL");
    QTest::newRow("otf2") << otf2 << nccl;
    const QString demo = patchedDemo(m_dir);
    QVERIFY(!demo.isEmpty());
    QTest::newRow("otf2 demo, one byte 0x91") << demo << QStringLiteral("ncclDevKernel_") + kReplacement;
    const QString kineto = kinetoWithBadNames(m_dir);
    QVERIFY(!kineto.isEmpty());
    QTest::newRow("torch.profiler") << kineto
                                    << QStringLiteral("bad_") + kReplacement + QStringLiteral("_kernel_")
            + kReplacement;
    QTest::newRow("nsys") << nsysWithBadNames(m_dir) << nccl;
}

void TestUtf8Output::outputs()
{
    QFETCH(QString, trace);
    QFETCH(QString, badKernel);
    QString error;

    const ProcessResult json = cli({ QStringLiteral("stats"), QStringLiteral("--json"), trace });
    QVERIFY2(json.exitCode == 0, json.err.constData());
    const QJsonDocument stats = strictJson(json.out, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    bool found = false;
    for (const auto& k : stats.object()[QStringLiteral("kernels")].toArray())
        found = found || k.toObject()[QStringLiteral("name")].toString().startsWith(badKernel);
    QVERIFY2(found, qPrintable(QString::fromUtf8(json.out.left(4000))));

    const ProcessResult perStep
        = cli({ QStringLiteral("stats"), QStringLiteral("--json"), QStringLiteral("--per-step"), trace });
    QCOMPARE(perStep.exitCode, 0);
    strictJson(perStep.out, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));

    const ProcessResult csv
        = cli({ QStringLiteral("stats"), QStringLiteral("--csv"), QStringLiteral("--per-step"), trace });
    QCOMPARE(csv.exitCode, 0);
    QVERIFY(strictUtf8(csv.out));

    for (const QStringList& args : { QStringList { QStringLiteral("info"), trace },
             QStringList { QStringLiteral("info"), QStringLiteral("--json"), trace },
             QStringList { QStringLiteral("whatif"), QStringLiteral("--json"), trace } }) {
        const ProcessResult r = cli(args);
        QVERIFY2(r.exitCode == 0, qPrintable(args.join(QLatin1Char(' ')) + QString::fromUtf8(r.err)));
        QVERIFY2(strictUtf8(r.out), qPrintable(args.join(QLatin1Char(' '))));
        if (args.contains(QStringLiteral("--json"))) {
            strictJson(r.out, &error);
            QVERIFY2(error.isEmpty(), qPrintable(args.join(QLatin1Char(' ')) + QStringLiteral(": ") + error));
        }
    }

    const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('_'));
    const QString svg = m_dir.filePath(tag + QStringLiteral(".svg"));
    const QString pdf = m_dir.filePath(tag + QStringLiteral(".pdf"));
    const QString spec = m_dir.filePath(tag + QStringLiteral(".json"));
    const ProcessResult rs = cli({ QStringLiteral("render"), trace, QStringLiteral("-o"), svg, QStringLiteral("--rows"),
        QStringLiteral("all"), QStringLiteral("--width"), QStringLiteral("1600"), QStringLiteral("--height"),
        QStringLiteral("900"), QStringLiteral("--save-spec"), spec });
    QVERIFY2(rs.exitCode == 0, rs.err.constData());
    QFile svgFile(svg);
    QVERIFY(svgFile.open(QIODevice::ReadOnly));
    const QByteArray svgBytes = svgFile.readAll();
    QVERIFY(strictUtf8(svgBytes));
    QXmlStreamReader xml(svgBytes);
    while (!xml.atEnd())
        xml.readNext();
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QFile specFile(spec);
    QVERIFY(specFile.open(QIODevice::ReadOnly));
    strictJson(specFile.readAll(), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));

    const ProcessResult rp = cli({ QStringLiteral("render"), trace, QStringLiteral("-o"), pdf,
        QStringLiteral("--title"), QStringLiteral("t") + kReplacement });
    QVERIFY2(rp.exitCode == 0, rp.err.constData());
    QFile pdfFile(pdf);
    QVERIFY(pdfFile.open(QIODevice::ReadOnly));
    const QByteArray pdfBytes = pdfFile.readAll();
    QVERIFY(pdfBytes.startsWith("%PDF-"));
    QVERIFY(pdfBytes.trimmed().endsWith("%%EOF"));
}

QTEST_GUILESS_MAIN(TestUtf8Output)
#include "tst_utf8output.moc"
