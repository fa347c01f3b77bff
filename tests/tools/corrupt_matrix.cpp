// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-corrupt-matrix: damages every file of a trace folder, one way at a time, and checks that exposure-cli
// handles each damaged copy: it must end within the timeout with exit 0 (the data is still readable) or exit 2 and
// exactly one line on stderr that names a file of the trace. Anything else (a timeout, a crash, another exit code,
// a multi-line or anonymous message) is a failure, listed at the end; the exit status is then 1. What loads is
// checked too: every `stats --json` that exits 0 must print strictly valid JSON (UTF-8 included) whose numbers hold
// together (support/statscheck.h: ranks present, no part greater than its whole), with no more ranks than the intact
// trace, and `info` valid UTF-8. The intact trace is run first: it must load and pass the same checks, and with
// --expect-ranks / --expect-kernels its numbers must be those.
//
// Damage per file: truncation at N evenly spaced points (the kinds of cut a killed job or a full disk leaves) and
// M seeded single-byte flips (media errors, bad copies). With --structural, every uncompressed JSON file
// (torch.profiler traces) also gets the edits that break a JSON document's structure or values while keeping most of
// it (nesting a hundred thousand levels deep, missing or extra brackets, negative, NaN, huge or textual times,
// invalid UTF-8, duplicated keys, binary garbage). The matrix is deterministic for a given seed.
#include "support/statscheck.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Damage
{
    enum Kind { Truncate, Flip, Structural } kind = Truncate;
    std::uintmax_t offset = 0; // truncation size, position of the flipped byte, or index of the structural edit
    unsigned char mask = 0; // XOR mask of the flip (never 0)
};

enum class Outcome { Loaded, CleanError, Timeout, Crash, BadExit, BadMessage, BadOutput };

const char* outcomeName(Outcome o)
{
    static constexpr const char* names[]
        = { "loaded", "clean error", "TIMEOUT", "CRASH", "BAD EXIT CODE", "BAD MESSAGE", "BAD OUTPUT" }; // by order
    return names[std::size_t(o)];
}

struct Job
{
    std::size_t file = 0; // index into the file list
    Damage damage;
};

struct Result
{
    Outcome outcome = Outcome::Loaded;
    std::string command;
    std::string detail; // stderr (first lines) of a failure
    bool namesDamagedFile = false;
    qint64 ms = 0;
    int ranks = 0; // stats that loaded: the ranks it reports
    QByteArray out; // stdout of a run that loaded
};

struct FileRow
{
    std::uintmax_t size = 0;
    int runs = 0, loaded = 0, clean = 0, cleanNamingIt = 0, failed = 0;
    qint64 maxMs = 0;
};

std::vector<char> readAll(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    return { std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>() };
}

void writeAll(const fs::path& p, const std::vector<char>& bytes, std::size_t size)
{
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(size));
}

// Replaces the first occurrence of `from` in `text` by `to` (the text unchanged if there is none).
std::string replaceFirst(std::string text, const std::string& from, const std::string& to)
{
    const auto at = text.find(from);
    if (at != std::string::npos)
        text.replace(at, from.size(), to);
    return text;
}

// Replaces the value after the first `"key":` (up to the next ',' or '}') by `value`.
std::string replaceValue(std::string text, const std::string& key, const std::string& value)
{
    const auto at = text.find("\"" + key + "\":");
    if (at == std::string::npos)
        return text;
    const auto from = at + key.size() + 3;
    const auto to = text.find_first_of(",}", from);
    if (to != std::string::npos)
        text.replace(from, to - from, " " + value);
    return text;
}

struct StructuralEdit
{
    const char* name;
    std::string (*apply)(const std::string& json);
};

// Edits that keep most of a JSON document but break its structure or its values.
const std::vector<StructuralEdit>& structuralEdits()
{
    static const std::vector<StructuralEdit> edits {
        { "100000 nested '['", [](const std::string&) { return std::string(100'000, '['); } },
        { "100000 nested '{\"a\":' in args",
            [](const std::string& j) {
                std::string deep;
                for (int i = 0; i < 100'000; ++i)
                    deep += "{\"a\":";
                return replaceFirst(j, "\"args\": ", "\"args\": " + deep);
            } },
        { "no closing brackets", [](const std::string& j) { return j.substr(0, j.find_last_of("]")); } },
        { "no opening bracket", [](const std::string& j) { return replaceFirst(j, "[", ""); } },
        { "extra closing brackets", [](const std::string& j) { return replaceFirst(j, "}", "}]]}}"); } },
        { "missing comma", [](const std::string& j) { return replaceFirst(j, "},", "}"); } },
        { "negative duration", [](const std::string& j) { return replaceValue(j, "dur", "-5"); } },
        { "NaN duration", [](const std::string& j) { return replaceValue(j, "dur", "NaN"); } },
        { "huge duration", [](const std::string& j) { return replaceValue(j, "dur", "1e400"); } },
        { "timestamp as text", [](const std::string& j) { return replaceValue(j, "ts", "\"soon\""); } },
        { "timestamp beyond int64",
            [](const std::string& j) { return replaceValue(j, "ts", "99999999999999999999999"); } },
        { "invalid UTF-8 in a name",
            [](const std::string& j) { return replaceFirst(j, "\"name\": \"", "\"name\": \"\xff\xfe\xc0"); } },
        { "NUL byte", [](const std::string& j) { return replaceFirst(j, "\"ph\"", std::string("\"p\0h\"", 5)); } },
        { "duplicated traceEvents",
            [](const std::string& j) {
                return replaceFirst(j, "\"traceEvents\"", "\"traceEvents\": [], \"traceEvents\"");
            } },
        { "traceEvents not an array",
            [](const std::string& j) { return replaceFirst(j, "\"traceEvents\": [", "\"traceEvents\": {\"x\": ["); } },
        { "correlation as object", [](const std::string& j) { return replaceValue(j, "correlation", "{\"id\": 1}"); } },
        { "stream beyond int32", [](const std::string& j) { return replaceValue(j, "stream", "4294967296"); } },
        { "binary garbage", [](const std::string&) { return std::string("\x1f\x8b\x08\0garbage\xff\0\x01", 14); } },
        { "empty file", [](const std::string&) { return std::string(); } },
    };
    return edits;
}

Result runOne(
    const QString& cli, const std::string& command, const fs::path& root, const fs::path& damaged, int timeoutMs)
{
    Result r;
    r.command = command;
    QProcess p;
    p.setProgram(cli);
    QStringList args { QString::fromStdString(command) };
    if (command == "stats")
        args << QStringLiteral("--json");
    args << QString::fromStdString(root.string());
    p.setArguments(args);
    QElapsedTimer t;
    t.start();
    p.start();
    if (!p.waitForStarted(timeoutMs)) {
        r.outcome = Outcome::Crash;
        r.detail = "could not start " + cli.toStdString();
        return r;
    }
    const bool finished = p.waitForFinished(timeoutMs);
    r.ms = t.elapsed();
    if (!finished) {
        p.kill();
        p.waitForFinished(5000);
        r.outcome = Outcome::Timeout;
        r.detail = "no end within " + std::to_string(timeoutMs) + " ms";
        return r;
    }
    const std::string err = p.readAllStandardError().toStdString();
    if (p.exitStatus() != QProcess::NormalExit) {
        r.outcome = Outcome::Crash;
        r.detail = err.substr(0, 400);
        return r;
    }
    if (p.exitCode() == 0) {
        r.out = p.readAllStandardOutput();
        const std::string problem = command == "stats" ? exposure::testing::statsJsonProblem(r.out, &r.ranks)
                                                       : exposure::testing::utf8Problem(r.out);
        r.outcome = problem.empty() ? Outcome::Loaded : Outcome::BadOutput;
        r.detail = problem;
        return r;
    }
    if (p.exitCode() != 2) {
        r.outcome = Outcome::BadExit;
        r.detail = "exit " + std::to_string(p.exitCode()) + ": " + err.substr(0, 400);
        return r;
    }
    // One line, "exposure-cli: <file>: <problem>", where <file> lies inside the damaged trace.
    const bool oneLine = !err.empty() && err.back() == '\n' && std::count(err.begin(), err.end(), '\n') == 1;
    const bool namesTraceFile = err.find(root.string()) != std::string::npos;
    if (!oneLine || !namesTraceFile || err.rfind("exposure-cli: ", 0) != 0) {
        r.outcome = Outcome::BadMessage;
        r.detail = err.substr(0, 400);
        return r;
    }
    r.outcome = Outcome::CleanError;
    r.namesDamagedFile = err.find(damaged.string()) != std::string::npos;
    return r;
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("exposure-corrupt-matrix"));
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Damages every file of TRACE (a copy of it) at N truncation points and M seeded byte flips, runs\n"
        "`exposure-cli info` and `exposure-cli stats --json` on each damaged copy, and checks that each run ends\n"
        "within the timeout with exit 0, or exit 2 and one line naming a file of the trace. Prints a table per\n"
        "file; exit status 1 when any run failed."));
    parser.addHelpOption();
    const QCommandLineOption cliOpt(
        QStringLiteral("cli"), QStringLiteral("The exposure-cli to test."), QStringLiteral("PATH"));
    const QCommandLineOption truncOpt(QStringLiteral("truncations"), QStringLiteral("Truncation points per file (10)."),
        QStringLiteral("N"), QStringLiteral("10"));
    const QCommandLineOption flipOpt(QStringLiteral("flips"), QStringLiteral("Seeded byte flips per file (10)."),
        QStringLiteral("N"), QStringLiteral("10"));
    const QCommandLineOption seedOpt(
        QStringLiteral("seed"), QStringLiteral("Seed of the flips (1)."), QStringLiteral("S"), QStringLiteral("1"));
    const QCommandLineOption timeoutOpt(QStringLiteral("timeout"),
        QStringLiteral("Seconds a run may take before it counts as a hang (10)."), QStringLiteral("S"),
        QStringLiteral("10"));
    const QCommandLineOption jobsOpt(
        QStringLiteral("jobs"), QStringLiteral("Runs in parallel (2)."), QStringLiteral("N"), QStringLiteral("2"));
    const QCommandLineOption structuralOpt(QStringLiteral("structural"),
        QStringLiteral("Also apply the structural JSON edits to every uncompressed .json file."));
    const QCommandLineOption onlyOpt(QStringLiteral("only"),
        QStringLiteral("Damage only files whose path contains TEXT (e.g. .evt)."), QStringLiteral("TEXT"));
    const QCommandLineOption ranksOpt(QStringLiteral("expect-ranks"),
        QStringLiteral("The intact trace's stats must report N ranks."), QStringLiteral("N"));
    const QCommandLineOption kernelsOpt(QStringLiteral("expect-kernels"),
        QStringLiteral("The intact trace's stats must count K kernels in total."), QStringLiteral("K"));
    for (const auto* o : { &cliOpt, &truncOpt, &flipOpt, &seedOpt, &timeoutOpt, &jobsOpt, &structuralOpt, &onlyOpt,
             &ranksOpt, &kernelsOpt })
        parser.addOption(*o);
    parser.addPositionalArgument(
        QStringLiteral("TRACE"), QStringLiteral("A trace folder (it is copied, not changed)."));
    parser.process(app);
    const auto positional = parser.positionalArguments();
    if (positional.size() != 1 || !parser.isSet(cliOpt)) {
        std::fprintf(stderr, "exposure-corrupt-matrix: expected --cli PATH and one TRACE folder (see --help)\n");
        return 2;
    }
    const QString cli = parser.value(cliOpt);
    const int truncations = parser.value(truncOpt).toInt();
    const int flips = parser.value(flipOpt).toInt();
    const unsigned seed = parser.value(seedOpt).toUInt();
    const int timeoutMs = parser.value(timeoutOpt).toInt() * 1000;
    const int jobs = std::max(1, parser.value(jobsOpt).toInt());
    const std::string only = parser.value(onlyOpt).toStdString();
    const bool structural = parser.isSet(structuralOpt);
    const fs::path source = fs::path(positional.front().toStdString());
    if (!fs::is_directory(source)) {
        std::fprintf(stderr, "exposure-corrupt-matrix: %s: not a folder\n", source.c_str());
        return 2;
    }

    // The intact trace first: it must load, pass the output checks and give the expected numbers.
    const Result intact = runOne(cli, "stats", source, source, timeoutMs);
    if (intact.outcome != Outcome::Loaded) {
        std::fprintf(stderr, "exposure-corrupt-matrix: the intact trace: %s: %s\n", outcomeName(intact.outcome),
            intact.detail.c_str());
        return 1;
    }
    const auto intactTotal = QJsonDocument::fromJson(intact.out).object().value(QLatin1String("total")).toObject();
    const long long intactKernels = intactTotal.value(QLatin1String("kernel_count")).toInteger(-1);
    std::printf("intact trace: %d ranks, %lld kernels, GPU busy %lld ns\n", intact.ranks, intactKernels,
        intactTotal.value(QLatin1String("gpu_busy_ns")).toInteger(-1));
    if ((parser.isSet(ranksOpt) && intact.ranks != parser.value(ranksOpt).toInt())
        || (parser.isSet(kernelsOpt) && intactKernels != parser.value(kernelsOpt).toLongLong())) {
        std::fprintf(stderr,
            "exposure-corrupt-matrix: the intact trace does not give --expect-ranks %s "
            "--expect-kernels %s\n",
            qPrintable(parser.value(ranksOpt)), qPrintable(parser.value(kernelsOpt)));
        return 1;
    }

    // The files to damage, relative to the trace root, in a stable order.
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(source))
        if (e.is_regular_file()) {
            const auto rel = fs::relative(e.path(), source);
            if (only.empty() || rel.string().find(only) != std::string::npos)
                files.push_back(rel);
        }
    std::sort(files.begin(), files.end());

    // The matrix: per file, truncations at size*i/(N+1) (distinct sizes below the full size) and seeded flips.
    std::vector<Job> matrix;
    for (std::size_t f = 0; f < files.size(); ++f) {
        const std::uintmax_t size = fs::file_size(source / files[f]);
        std::vector<std::uintmax_t> cuts;
        for (int i = 0; i < truncations; ++i)
            cuts.push_back(size * std::uintmax_t(i) / std::uintmax_t(truncations));
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        for (auto c : cuts)
            if (c < size)
                matrix.push_back({ f, { Damage::Truncate, c, 0 } });
        std::mt19937_64 rng(seed * 1'000'003ull + f);
        for (int i = 0; i < flips && size > 0; ++i) {
            const auto pos = std::uniform_int_distribution<std::uintmax_t>(0, size - 1)(rng);
            const auto mask = static_cast<unsigned char>(std::uniform_int_distribution<int>(1, 255)(rng));
            matrix.push_back({ f, { Damage::Flip, pos, mask } });
        }
        if (structural && files[f].extension() == ".json")
            for (std::size_t e = 0; e < structuralEdits().size(); ++e)
                matrix.push_back({ f, { Damage::Structural, e, 0 } });
    }

    // One working copy per worker; a worker damages one file, runs the commands and restores the file.
    std::vector<std::unique_ptr<QTemporaryDir>> copies;
    for (int j = 0; j < jobs; ++j) {
        copies.push_back(std::make_unique<QTemporaryDir>());
        if (!copies.back()->isValid()) {
            std::fprintf(stderr, "exposure-corrupt-matrix: cannot create a temporary folder\n");
            return 2;
        }
        fs::copy(source, fs::path(copies.back()->path().toStdString()) / "trace", fs::copy_options::recursive);
    }

    std::vector<FileRow> rows(files.size());
    struct Failure
    {
        std::size_t file;
        Damage damage;
        Result result;
    };
    std::vector<Failure> failures;
    std::mutex mutex;
    std::atomic<std::size_t> next { 0 };
    QElapsedTimer total;
    total.start();
    auto worker = [&](int j) {
        const fs::path root = fs::path(copies[std::size_t(j)]->path().toStdString()) / "trace";
        while (true) {
            const std::size_t k = next++;
            if (k >= matrix.size())
                return;
            const Job& job = matrix[k];
            const fs::path target = root / files[job.file];
            const auto original = readAll(target);
            if (job.damage.kind == Damage::Truncate) {
                writeAll(target, original, std::size_t(job.damage.offset));
            } else if (job.damage.kind == Damage::Structural) {
                const std::string edited = structuralEdits()[std::size_t(job.damage.offset)].apply(
                    std::string(original.begin(), original.end()));
                writeAll(target, std::vector<char>(edited.begin(), edited.end()), edited.size());
            } else {
                auto bytes = original;
                bytes[std::size_t(job.damage.offset)] = static_cast<char>(
                    static_cast<unsigned char>(bytes[std::size_t(job.damage.offset)]) ^ job.damage.mask);
                writeAll(target, bytes, bytes.size());
            }
            std::vector<Result> results;
            for (const char* command : { "info", "stats" }) {
                results.push_back(runOne(cli, command, root, target, timeoutMs));
                // Damage removes or garbles data; it never adds a rank.
                if (results.back().outcome == Outcome::Loaded && results.back().ranks > intact.ranks) {
                    results.back().outcome = Outcome::BadOutput;
                    results.back().detail = std::to_string(results.back().ranks) + " ranks, the intact trace has "
                        + std::to_string(intact.ranks);
                }
            }
            writeAll(target, original, original.size());
            std::lock_guard lock(mutex);
            auto& row = rows[job.file];
            row.size = original.size();
            for (const auto& r : results) {
                ++row.runs;
                row.maxMs = std::max(row.maxMs, r.ms);
                switch (r.outcome) {
                case Outcome::Loaded:
                    ++row.loaded;
                    break;
                case Outcome::CleanError:
                    ++row.clean;
                    row.cleanNamingIt += r.namesDamagedFile ? 1 : 0;
                    break;
                default:
                    ++row.failed;
                    failures.push_back({ job.file, job.damage, r });
                }
            }
        }
    };
    std::vector<std::thread> threads;
    for (int j = 0; j < jobs; ++j)
        threads.emplace_back(worker, j);
    for (auto& t : threads)
        t.join();

    std::printf("%-44s %10s %6s %7s %7s %9s %7s %8s\n", "file", "bytes", "runs", "loaded", "errors", "name it",
        "failed", "max ms");
    FileRow sum;
    for (std::size_t f = 0; f < files.size(); ++f) {
        const auto& r = rows[f];
        std::printf("%-44s %10ju %6d %7d %7d %9d %7d %8lld\n", files[f].c_str(), r.size, r.runs, r.loaded, r.clean,
            r.cleanNamingIt, r.failed, static_cast<long long>(r.maxMs));
        sum.runs += r.runs;
        sum.loaded += r.loaded;
        sum.clean += r.clean;
        sum.cleanNamingIt += r.cleanNamingIt;
        sum.failed += r.failed;
        sum.maxMs = std::max(sum.maxMs, r.maxMs);
    }
    std::printf("%-44s %10s %6d %7d %7d %9d %7d %8lld\n", "total", "", sum.runs, sum.loaded, sum.clean,
        sum.cleanNamingIt, sum.failed, static_cast<long long>(sum.maxMs));
    std::printf("%zu files, %zu damaged copies, %d runs in %.1f s ('name it': the error names the damaged file)\n",
        files.size(), matrix.size(), sum.runs, double(total.elapsed()) / 1000.0);
    for (const auto& f : failures) {
        const std::string what = f.damage.kind == Damage::Truncate ? "cut at " + std::to_string(f.damage.offset)
            : f.damage.kind == Damage::Flip
            ? "byte flip at " + std::to_string(f.damage.offset) + " ^" + std::to_string(f.damage.mask)
            : std::string("edit: ") + structuralEdits()[std::size_t(f.damage.offset)].name;
        std::printf("FAILED %s: %s %s: %s: %s\n", f.result.command.c_str(), files[f.file].c_str(), what.c_str(),
            outcomeName(f.result.outcome), f.result.detail.c_str());
    }
    return failures.empty() ? 0 : 1;
}
