// SPDX-License-Identifier: GPL-3.0-or-later
// Writes the seed corpora of the fuzz targets from the project's fixtures (generated OTF2 archives, the Kineto test
// traces, the default rules file, figure specs): `fuzz_make_seeds OUTDIR` writes OUTDIR/{otf2,kineto,rules,
// figurespec}/. The committed corpus in tests/fuzz/corpus was made with it.
#include "analysis/rules.h"
#include "figure/figurespec.h"
#include "fuzzfiles.h"
#include "support/kinetotraces.h"
#include "support/nsystraces.h"
#include "synth/archivewriter.h"

#include <QTemporaryDir>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace fs = std::filesystem;
using namespace exposure;
using namespace exposure::synth;

namespace {

void writeFile(const fs::path& path, const std::string& bytes)
{
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

std::string readFile(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return { std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>() };
}

// Every file under `root`, packed with paths relative to it (anchor and definitions first, as a reader wants).
std::string packFolder(const fs::path& root)
{
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.is_regular_file())
            files.emplace_back(fs::relative(e.path(), root).generic_string(), readFile(e.path()));
    std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
        const auto rank = [](const std::string& n) { return n.ends_with(".otf2") ? 0 : n.ends_with(".evt") ? 2 : 1; };
        return std::pair(rank(a.first), a.first) < std::pair(rank(b.first), b.first);
    });
    return fuzz::packFiles(files);
}

std::string packArchive(const ArchiveSpec& spec, bool rankFolders)
{
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    if (rankFolders)
        writeArchive(dir, spec);
    else
        writeRankArchive(dir, spec, 0);
    return packFolder(dir);
}

ArchiveSpec smallSpec()
{
    ArchiveSpec spec;
    auto& r = spec.addRank(0);
    r.metricEvents = 0;
    r.kernelCounters = false;
    r.threads[0].regions
        = { { "ProfilerStep#1", 0, 50'000 }, { "cuLaunchKernel", 1'000, 2'000, RegionRole::Wrapper, 0 } };
    auto& s = r.addStream(0, 7);
    s.kernels = { { "ampere_sgemm_128x64_nn", 3'000, 4'000 }, { "k2", 5'000, 9'000 } };
    return spec;
}

ArchiveSpec richSpec(Layout layout)
{
    ArchiveSpec spec;
    spec.layout = layout;
    auto& r = spec.addRank(0);
    r.metricEvents = 2;
    r.threads[0].regions = { { "ProfilerStep#1", 0, 90'000 }, { "DistributedDataParallel.forward", 500, 20'000 },
        { "cuLaunchKernel", 1'000, 2'000, RegionRole::Wrapper, 1 },
        { "cudaMemcpyAsync", 2'500, 2'800, RegionRole::Wrapper, 0 },
        { "ncclAllReduce", 21'000, 22'000, RegionRole::Wrapper, 1 } };
    CpuThreadSpec bwd;
    bwd.name = "autograd thread";
    bwd.regions = { { "autograd::engine::evaluate_function: AddmmBackward0", 30'000, 60'000 } };
    r.threads.push_back(bwd);
    auto& null = r.addStream(0, 0);
    null.copies = { { CopyKind::HtoD, 3'000, 3'500, 4096 }, { CopyKind::DtoH, 70'000, 70'400, 512 } };
    auto& compute = r.addStream(0, 7);
    compute.kernels = { { "_ZN2at6native29vectorized_elementwise_kernelILi4EEEvi", 4'000, 9'000,
                            "_ZN2at6native29vectorized_elementwise_kernelILi4EEEvi" },
        { "ampere_sgemm_64x64_tn", 31'000, 40'000 } };
    compute.idle = { { 9'000, 31'000 } };
    compute.copies = { { CopyKind::DtoD, 41'000, 41'500, 1024, 2 } };
    auto& nccl = r.addStream(0, 17);
    nccl.kernels = { { "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 23'000, 50'000 } };
    return spec;
}

ArchiveSpec rawEventsSpec()
{
    ArchiveSpec spec = smallSpec();
    auto& t = spec.ranks[0].threads[0];
    t.regions.clear();
    t.raw = { { RawEvent::Enter, 0, "ProfilerStep#1" }, { RawEvent::Enter, 100, "cuLaunchKernel" },
        { RawEvent::Leave, 200, "ProfilerStep#1" }, { RawEvent::Leave, 300, "unmatched" } };
    return spec;
}

ArchiveSpec twoRanks()
{
    ArchiveSpec spec = smallSpec();
    auto& r1 = spec.addRank(1, "node1");
    r1.metricEvents = 0;
    r1.kernelCounters = false;
    r1.threads[0].regions = { { "ProfilerStep#1", 100, 40'000 } };
    r1.addStream(1, 7).kernels = { { "ncclDevKernel_Broadcast_RING_LL", 2'000, 30'000 } };
    return spec;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    const fs::path out = argv[1];

    // OTF2: one-rank archives packed with the container of fuzzfiles.h (paths relative to the archive folder).
    writeFile(out / "otf2/small", packArchive(smallSpec(), false));
    writeFile(out / "otf2/rich-scorep8", packArchive(richSpec(Layout::ScoreP8), false));
    writeFile(out / "otf2/rich-scorep7", packArchive(richSpec(Layout::ScoreP7), false));
    writeFile(out / "otf2/raw-events", packArchive(rawEventsSpec(), false));
    writeFile(out / "otf2/two-ranks", packArchive(twoRanks(), true));
    {
        ArchiveSpec hip = smallSpec();
        hip.paradigm = "HIP";
        hip.kernelRole = KernelRole::Function;
        hip.timerResolution = 1'000'000'000;
        hip.globalOffsetTicks = 12'345;
        writeFile(out / "otf2/hip", packArchive(hip, false));
    }
    {
        ArchiveSpec mpi = twoRanks();
        mpi.mpi = true;
        writeFile(out / "otf2/mpi", packArchive(mpi, true));
    }

    // Kineto: the test traces of tests/support/kinetotraces.h, plain, gzip-compressed and as two ranks.
    writeFile(out / "kineto/rank0", testing::rankTrace(0, 2).toStdString());
    writeFile(out / "kineto/no-info", testing::rankTrace(3, 4, false).toStdString());
    {
        QTemporaryDir tmp;
        const QString gz = testing::write(tmp, QStringLiteral("r.json.gz"), testing::rankTrace(1, 2));
        writeFile(out / "kineto/rank1-gzip", readFile(gz.toStdString()));
    }
    writeFile(out / "kineto/two-ranks",
        fuzz::packFiles({ { "rank0.pt.trace.json", testing::rankTrace(0, 2).toStdString() },
            { "rank1.pt.trace.json", testing::rankTrace(1, 2).toStdString() } }));

    // Nsight Systems: small exports of the documented schema, one and two processes, and two files (ranks).
    {
        QTemporaryDir tmp;
        auto report = [&](const char* name, std::initializer_list<std::int64_t> pids) {
            const std::string path = tmp.filePath(QString::fromLatin1(name)).toStdString();
            {
                testing::NsysWriter w(path);
                w.gpu(0, "NVIDIA H200");
                for (const auto pid : pids) {
                    const std::int64_t main = testing::nsysTid(pid, pid);
                    w.nvtx(main, 1'000, 90'000, "ProfilerStep#1");
                    w.nvtx(main, 1'100, 40'000, "forward");
                    w.runtime(main, 1'200, 1'300, pid * 10 + 1, "cudaLaunchKernel_v7000");
                    w.kernel(pid, 0, 7, 2'000, 12'000, pid * 10 + 1, "ampere_sgemm_128x64_nn");
                    w.runtime(main, 41'000, 41'010, pid * 10 + 2, "cudaLaunchKernel_v7000");
                    w.kernel(pid, 0, 17, 42'000, 62'000, pid * 10 + 2, "ncclKernel_AllReduce_RING_LL_Sum_float");
                    w.runtime(main, 63'000, 63'100, pid * 10 + 3, "cudaMemcpyAsync_v3020");
                    w.memcpy(pid, 0, 7, 63'200, 64'000, pid * 10 + 3, 4096, 2, 3, 1);
                    w.memset(pid, 0, 7, 65'000, 65'100, 0, 512);
                    w.runtime(main, 70'000, 80'000, pid * 10 + 4, "cudaStreamSynchronize_v3020");
                    w.sync(pid, 70'010, 79'990, pid * 10 + 4, 3);
                }
            }
            // Small pages keep the seeds small (one page per table at least).
            sqlite3* db = nullptr;
            sqlite3_open(path.c_str(), &db);
            sqlite3_exec(db, "PRAGMA page_size = 512; VACUUM;", nullptr, nullptr, nullptr);
            sqlite3_close(db);
            return readFile(path);
        };
        writeFile(out / "nsys/one-process", report("a.sqlite", { 7 }));
        writeFile(out / "nsys/two-processes", report("b.sqlite", { 7, 8 }));
        writeFile(out / "nsys/two-files",
            fuzz::packFiles(
                { { "rank0.sqlite", report("c.sqlite", { 3 }) }, { "rank1.sqlite", report("d.sqlite", { 4 }) } }));
    }

    // Rules: the built-in file and a small one with every target and category.
    writeFile(out / "rules/default", Rules::defaultJson());
    writeFile(out / "rules/small", R"json({
  "description": "fuzz seed",
  "rules": [
    {"id": "mm", "pattern": "gemm|matmul", "target": "kernel", "category": "compute", "subgroup": "gemm"},
    {"id": "ar", "pattern": "^nccl.*AllReduce", "target": "any", "category": "communication", "subgroup": "AllReduce"},
    {"id": "cp", "pattern": "memcpy (HtoD|DtoH)", "target": "kernel", "category": "memcpy", "subgroup": "HtoD"},
    {"id": "bw", "pattern": "Backward", "target": "region", "category": "phase", "subgroup": "backward"},
    {"id": "st", "pattern": "ProfilerStep#\\d+", "target": "region", "category": "step"},
    {"id": "rest", "pattern": ".*", "target": "kernel", "category": "compute", "subgroup": "other", "catchAll": true}
  ]
})json");

    // Figure specs: the documented example, the defaults, pixel and millimetre sizes, every range kind.
    writeFile(out / "figurespec/example", R"json({
  "exposureFigure": 1,
  "trace": "/data/run3",
  "format": "pdf",
  "range": { "kind": "step", "step": 4 },
  "rows": { "select": "list", "list": ["0", "1:2", "1:overlap"], "overlapLanes": true },
  "palette": "grayscale",
  "size": { "unit": "mm", "width": 178, "height": 60, "dpi": 600 },
  "font": { "family": "DejaVu Sans", "size": 8 },
  "legend": { "show": true, "position": "top" },
  "title": "BERT, 2 ranks, step 4",
  "timeAxis": { "label": "Time since trace start", "unit": "ms" }
})json");
    writeFile(out / "figurespec/default", FigureSpec().toJson().toStdString());
    {
        FigureSpec s;
        s.format = FigureSpec::Format::Svg;
        s.rangeKind = FigureSpec::RangeKind::Custom;
        s.range = { 1'000, 2'500'000 };
        s.rows = FigureSpec::RowsKind::Gpu;
        s.palette = PaletteKind::ColorBlind;
        s.legendPosition = LegendPosition::InsideTopRight;
        s.timeUnit = TimeUnit::Microseconds;
        writeFile(out / "figurespec/custom-range", s.toJson().toStdString());
    }
    writeFile(out / "figurespec/from-to",
        R"json({"exposureFigure": 1, "range": {"kind": "range", "from": "1.5ms", "to": "2 ms"},
 "rows": {"select": "overlap"}, "size": {"unit": "px", "width": 800, "height": 300, "dpi": 192}})json");
    writeFile(out / "figurespec/rows-argument", "0,1:2,1:overlap");
    std::printf("seeds written to %s\n", out.string().c_str());
    return 0;
}
