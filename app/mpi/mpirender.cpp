// SPDX-License-Identifier: GPL-3.0-or-later
// exposure-mpi render: the figure of exposure-cli render (same options, same bytes), drawn by process 0 from
// per-row summaries that the processes holding the ranks compute; no interval crosses processes.
//
//  1. Process 0 deals the archives out by size (run.h), to the other processes when there are 3 or more; each
//     process reads and analyses its own.
//  2. Each process sends process 0 its ranks' outline (run.h's global rank index, label, lanes with their name,
//     kind, device, role and nesting depth, which overlap states occur, the training steps) and the (category,
//     sub-group) pairs its names use. Process 0 builds a stand-in trace from these: every rank and lane of the run
//     with empty interval tables, so the rows, row labels, range and axes come out as for the whole trace.
//     The legend names the classes drawn in the figure's range: process 0 broadcasts the range and the row list,
//     every process computes what the rows of its ranks draw there (timeline/rowpaint.h's drawnClasses, the one of
//     exposure-cli render) and process 0 merges the parts, before the layout is fixed.
//  3. Process 0 lays the figure out and paints it. When the plot asks for the rows' paint (timeline/rowpaint.h) at
//     its final pixel grid, process 0 broadcasts the grid and the row list; every process computes the RowPaint of
//     the rows of its ranks (exact time per paint class and pixel column, the wide blocks and their labels) and
//     process 0 gathers them: bytes ∝ rows × pixel columns × classes, independent of the event count.
//  4. Process 0 writes the file; every process exits with its status.
#include "cli/commands.h"
#include "cli/renderrequest.h"
#include "figure/figurerenderer.h"
#include "import/loadoptions.h"
#include "mpiutil.h"
#include "run.h"
#include "timeline/timelineplot.h"
#include "timeline/timelineplottable.h"

#include <QApplication>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sys/resource.h>

namespace exposure::mpi {

namespace {

using cli::fail;

// This process's ranks as process 0 needs them for the stand-in trace.
std::string outline(
    const Trace& trace, const Analysis& analysis, const ViewIndex& index, const std::vector<int>& globalIndex)
{
    Bytes b;
    b.i64(std::int64_t(trace.ranks.size()));
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
        const Rank& rank = trace.ranks[r];
        b.i64(globalIndex[r]);
        b.i64(rank.rank);
        b.str(rank.label);
        b.str(rank.host);
        b.str(rank.archivePath);
        b.i64(std::int64_t(rank.lanes.size()));
        for (std::size_t l = 0; l < rank.lanes.size(); ++l) {
            const Lane& lane = rank.lanes[l];
            b.str(lane.name);
            b.i64(std::int64_t(lane.kind));
            b.i64(lane.device);
            b.i64(lane.stream);
            b.i64(lane.nullStream ? 1 : 0);
            b.i64(l < index.roles[r].size() ? std::int64_t(index.roles[r][l]) : std::int64_t(LaneRole::Other));
            b.i64(l < index.depth[r].size() ? std::int64_t(index.depth[r][l].tables.size()) : 0);
        }
        std::int64_t states = 0; // bit s: overlap state s occurs
        const IntervalTable& ov = index.overlap[r];
        for (std::size_t i = 0; i < ov.size(); ++i)
            states |= std::int64_t(1) << std::min<StringId>(ov.name(i), 62);
        b.i64(states);
        const auto& steps = analysis.ranks[r].steps;
        b.i64(std::int64_t(steps.size()));
        for (const StepWindow& st : steps) {
            b.i64(st.index);
            b.str(st.name);
            b.i64(st.range.start);
            b.i64(st.range.end);
            b.i64(st.hostRange.start);
            b.i64(st.hostRange.end);
        }
    }
    // The (category, sub-group) of every name with instances: what the legend lists.
    std::set<std::pair<int, std::string>> used;
    for (std::size_t id = 0; id < trace.strings.size() && id < index.nameStats.size(); ++id) {
        if (index.nameStats[id].count == 0)
            continue;
        const std::string sg = id < analysis.names.size() ? analysis.names[id].subgroup : std::string();
        used.emplace(int(categoryOf(trace, &analysis, StringId(id))), sg);
    }
    b.i64(std::int64_t(used.size()));
    for (const auto& [cat, sg] : used) {
        b.i64(cat);
        b.str(sg);
    }
    return std::move(b.out());
}

// The stand-in of the whole run on process 0: no intervals, everything the figure's layout reads.
struct StandIn
{
    std::shared_ptr<Trace> trace;
    std::shared_ptr<Analysis> analysis;
    std::shared_ptr<ViewIndex> index;
};

StandIn buildStandIn(
    const std::vector<std::string>& outlines, std::size_t totalRanks, const Trace& part, const Rules& rules)
{
    StandIn s;
    s.trace = std::make_shared<Trace>();
    s.analysis = std::make_shared<Analysis>();
    s.index = std::make_shared<ViewIndex>();
    Trace& t = *s.trace;
    Analysis& a = *s.analysis;
    ViewIndex& v = *s.index;
    a.rules = rules; // whose colours the figure paints
    t.sourcePath = part.sourcePath;
    t.originAbsNs = part.originAbsNs;
    t.extent = part.extent;
    t.activity = part.activity;
    t.ranks.resize(totalRanks);
    a.ranks.resize(totalRanks);
    v.resizeRanks(totalRanks);
    std::set<std::pair<int, std::string>> used;
    for (const std::string& bytes : outlines) {
        Cursor c(bytes);
        const auto ranks = c.i64();
        for (std::int64_t k = 0; k < ranks; ++k) {
            const auto g = std::size_t(c.i64());
            Rank& rank = t.ranks.at(g);
            rank.rank = int(c.i64());
            rank.label = c.str();
            rank.host = c.str();
            rank.archivePath = c.str();
            const auto lanes = std::size_t(c.i64());
            rank.lanes.resize(lanes);
            v.lod[g].resize(lanes);
            v.shares[g].resize(lanes);
            v.depth[g].resize(lanes);
            v.roles[g].resize(lanes);
            a.ranks[g].phases.resize(lanes);
            for (std::size_t l = 0; l < lanes; ++l) {
                Lane& lane = rank.lanes[l];
                lane.name = c.str();
                lane.kind = LaneKind(c.i64());
                lane.device = int(c.i64());
                lane.stream = int(c.i64());
                lane.nullStream = c.i64() != 0;
                v.roles[g][l] = LaneRole(c.i64());
                const auto depthRows = std::size_t(c.i64());
                auto& d = v.depth[g][l];
                d.tables.resize(depthRows);
                d.original.resize(depthRows);
                d.lods.resize(depthRows);
                d.shares.resize(depthRows);
            }
            const std::int64_t states = c.i64();
            for (int st = 0; st < 63; ++st)
                if (states & (std::int64_t(1) << st))
                    v.overlap[g].append(st, st + 1, StringId(st)); // only which states occur matters
            const auto steps = c.i64();
            for (std::int64_t i = 0; i < steps; ++i) {
                StepWindow w;
                w.index = int(c.i64());
                w.name = c.str();
                w.range.start = c.i64();
                w.range.end = c.i64();
                w.hostRange.start = c.i64();
                w.hostRange.end = c.i64();
                a.ranks[g].steps.push_back(std::move(w));
            }
            numberSteps(a.ranks[g].steps);
        }
        const auto n = c.i64();
        for (std::int64_t i = 0; i < n; ++i) {
            const int cat = int(c.i64());
            used.emplace(cat, c.str());
        }
    }
    // One stand-in name per (category, sub-group) in use, with one instance.
    for (const auto& [cat, sg] : used) {
        const StringId id = t.strings.intern("class " + std::to_string(cat) + " " + sg);
        if (a.names.size() <= id)
            a.names.resize(std::size_t(id) + 1);
        a.names[id].category = Category(cat);
        a.names[id].subgroup = sg;
    }
    const std::size_t names = t.strings.size();
    a.names.resize(names);
    t.regionKinds.assign(names, RegionKind::Unknown);
    t.canonicalNames.resize(names);
    for (std::size_t id = 0; id < names; ++id)
        t.canonicalNames[id] = StringId(id);
    v.nameStats.assign(names, {});
    for (const auto& [cat, sg] : used)
        v.nameStats[t.strings.find("class " + std::to_string(cat) + " " + sg)].count = 1;
    v.lowPriority.assign(names, 0);
    v.paintClassOfName.assign(names, 0);
    return s;
}

// What process 0 broadcasts: a request kind, then its fields.
enum class Message : std::int64_t { Done = 0, Paint = 1, DrawnClasses = 2 };

// Each request's fields once, in order, for writing (IO = Bytes, R = const T) and reading (IO = Cursor, R = T).
template <class IO, class Row> void rowFields(IO& io, Row& row)
{
    io.pod(row.kind);
    io.pod(row.rank);
    io.pod(row.lane);
    io.pod(row.depth);
}

// One request of process 0: the axis state and the rows of the figure.
struct DrawRequest
{
    static constexpr Message kKind = Message::Paint;
    DrawListParams params;
    ColumnGrid grid;
    double valueLower = 0, valueUpper = 0;
    bool twoTone = false, outline = false, labels = false;
    std::vector<TimelineRow> rows; // rank: the run's index

    template <class IO, class R> static void fields(IO& io, R& r)
    {
        io.pod(r.params.t0);
        io.pod(r.params.t1);
        io.pod(r.params.nsPerPixel);
        io.pod(r.params.minPixels);
        io.pod(r.grid.t0);
        io.pod(r.grid.nsPerPixel);
        io.pod(r.grid.width);
        io.pod(r.valueLower);
        io.pod(r.valueUpper);
        io.flag(r.twoTone);
        io.flag(r.outline);
        io.flag(r.labels);
        io.list(r.rows, [&](auto& row) { rowFields(io, row); });
    }
};

// The question of process 0 for the legend: the figure's range, what decides the legend keys, and the rows.
struct ClassesRequest
{
    static constexpr Message kKind = Message::DrawnClasses;
    TimeRange range;
    PaletteKind palette = PaletteKind::Default;
    bool twoTone = false;
    std::vector<TimelineRow> rows; // rank: the run's index

    template <class IO, class R> static void fields(IO& io, R& r)
    {
        io.pod(r.range);
        io.pod(r.palette);
        io.flag(r.twoTone);
        io.list(r.rows, [&](auto& row) { rowFields(io, row); });
    }
};

// A request as process 0 broadcasts it: its kind, then its fields.
template <class Request> std::string encodeRequest(const Request& r)
{
    Bytes b;
    b.i64(std::int64_t(Request::kKind));
    Request::fields(b, r);
    return std::move(b.out());
}

// A request's fields (after its kind, which the caller has read).
template <class Request> Request decodeRequest(Cursor& c)
{
    Request r;
    Request::fields(c, r);
    return r;
}

// What this process holds of the run, and how it answers process 0's requests.
class RowServer
{
public:
    RowServer(std::shared_ptr<const Trace> trace, std::shared_ptr<const Analysis> analysis,
        std::shared_ptr<const ViewIndex> index, const std::vector<int>& globalIndex)
    {
        m_scene.trace = std::move(trace);
        m_scene.analysis = std::move(analysis);
        m_scene.index = std::move(index);
        for (std::size_t r = 0; r < globalIndex.size(); ++r)
            m_localOf[globalIndex[r]] = int(r);
    }

    // The answer to one message of process 0 (after its kind), as bytes.
    std::string serve(Message kind, Cursor& c)
    {
        return kind == Message::DrawnClasses ? serveClasses(c) : servePaints(c);
    }

    // The RowPaints of this process's rows.
    std::string servePaints(Cursor& c)
    {
        const DrawRequest request = decodeRequest<DrawRequest>(c);
        m_scene.options.twoToneCommunication = request.twoTone;
        m_scene.options.outlineBackwardOverlap = request.outline;
        m_scene.options.blockLabels = request.labels;
        const std::vector<int> mine = takeRows(request.rows);
        return rowPaintsToBytes(
            paintRows(m_scene, mine, request.params, request.grid, request.valueLower, request.valueUpper));
    }

    // What this process's rows draw in the figure's range (for the legend).
    std::string serveClasses(Cursor& c)
    {
        const ClassesRequest request = decodeRequest<ClassesRequest>(c);
        m_scene.options.palette = request.palette;
        m_scene.options.twoToneCommunication = request.twoTone;
        const std::vector<int> mine = takeRows(request.rows);
        return drawnClasses(m_scene, mine, request.range).toBytes();
    }

private:
    // Makes `rows` the scene's rows, in this trace's rank indices; returns those of this process's ranks.
    std::vector<int> takeRows(const std::vector<TimelineRow>& rows)
    {
        m_scene.rows = rows;
        std::vector<int> mine;
        for (std::size_t i = 0; i < m_scene.rows.size(); ++i) {
            TimelineRow& row = m_scene.rows[i];
            const auto it = m_localOf.find(row.rank);
            // Rows of other processes' ranks: never drawn here, and no rank of this process matches them.
            row.rank = it == m_localOf.end() ? -1 : it->second;
            if (row.rank >= 0)
                mine.push_back(int(i));
        }
        ++m_scene.generation;
        return mine;
    }

    TimelineScene m_scene;
    std::map<int, int> m_localOf; // the run's rank index -> this trace's
};

// EXPOSURE_MPI_TIMINGS=1: every process prints the bytes it sent or received and its peak memory (stderr).
struct Exchanged
{
    std::size_t bytes = 0;
    int rank = 0;
    ~Exchanged()
    {
        if (!std::getenv("EXPOSURE_MPI_TIMINGS"))
            return;
        rusage u {};
        getrusage(RUSAGE_SELF, &u);
        std::fprintf(stderr, "exposure-mpi: process %d: render exchanged %zu bytes; peak RSS %ld MiB\n", rank, bytes,
            long(u.ru_maxrss / 1024));
    }
};

// Processes other than 0: answer draw requests until process 0 says it is done.
void serveUntilDone(RowServer* server, Exchanged& exchanged)
{
    for (;;) {
        std::string message;
        broadcast(message);
        Cursor c(message);
        const auto kind = Message(c.i64());
        if (kind == Message::Done)
            return;
        const std::string mine = server     ? server->serve(kind, c)
            : kind == Message::DrawnClasses ? DrawnClasses().toBytes()
                                            : rowPaintsToBytes({});
        exchanged.bytes += message.size() + mine.size();
        gather(mine);
    }
}

void sendDone()
{
    Bytes b;
    b.i64(std::int64_t(Message::Done));
    broadcast(b.out());
}

int writeFigure(FigureRenderer& renderer, const cli::RenderRequest& request)
{
    try {
        renderer.renderToFile(request.spec, request.output, request.force);
        if (!request.saveSpec.isEmpty())
            request.spec.save(request.saveSpec);
    } catch (const std::exception& e) {
        return fail(e.what());
    }
    return 0;
}

// Process 0 alone, exactly as exposure-cli render (torch.profiler traces); the others wait for its status.
int runSingle(const World& world, const cli::RenderRequest& request)
{
    std::int64_t status = 0;
    if (world.root()) {
        status = [&]() -> int {
            std::string error; // loaded as by exposure-cli render
            const auto run = openRunOrError(request.spec.tracePath.toStdString(), request.run, error);
            if (!run)
                return fail(error);
            FigureRenderer renderer(run->trace, run->analysis);
            renderer.setCollectives(run->collectives);
            return writeFigure(renderer, request);
        }();
    }
    broadcast(status);
    return int(status);
}

} // namespace

int runRender(const World& world, int argc, char** argv)
{
    cli::prepareRenderProcess();
    QApplication app(argc, argv);
    cli::RenderRequest request;
    // Every process parses the same command line; process 0 prints the outcome.
    const int status = cli::parseRenderRequest(request);
    QCoreApplication::setApplicationName(QStringLiteral("exposure-mpi render"));
    const auto agreed = int(allMax(status));
    if (agreed >= 0) {
        if (status < 0 && world.root())
            fail("render: another process could not read the arguments or the spec");
        return agreed;
    }
    if (request.spec.heatmap) { // every process read the same command line
        if (world.root())
            fail("render --heatmap: not drawn by exposure-mpi; use exposure-cli render --heatmap");
        return 2;
    }

    const std::string path = request.spec.tracePath.toStdString();
    std::string planBytes;
    if (world.root())
        // From 3 processes on, process 0 only draws: its memory is the stand-in and the rows' paints, whatever the
        // event count (with 2, both read, so that they share the load).
        planBytes = encode(makePlan(path, request.run.load.ranks, world.size, world.size > 2 ? 1 : 0));
    broadcast(planBytes);
    const Plan plan = decode(planBytes);
    if (plan.mode != Mode::Distributed) // torch.profiler files: drawn by process 0 alone
        return runSingle(world, request);

    // 1. This process's archives, in the run's order.
    std::vector<std::size_t> mineIndex;
    const std::vector<ArchiveRef> mine = plan.archivesOf(world.rank, mineIndex);
    RunOptions share;
    share.part = &mine;
    share.analyse = false; // after joinRun
    share.load.threads = 1; // one process per core
    share.load.keepLaunchParameters = false; // not drawn
    share.load.memoryLimit = request.run.load.memoryLimit; // checked against this process's archives
    std::string error;
    const auto run = openRunOrError(path, share, error);
    if (agreeOnError(world, error))
        return 2;
    const std::shared_ptr<Trace> trace = run->trace;
    std::size_t totalRanks = 0;
    const std::vector<int> globalIndex = joinRun(*trace, plan, mine, mineIndex, totalRanks);
    std::shared_ptr<const Analysis> analysis = analyzeRanks(*trace, request.run.rules, 1);
    const std::shared_ptr<const ViewIndex> index = ViewIndex::build(*trace, analysis.get());
    RowServer server(trace, analysis, index, globalIndex);

    // 2. The outline of the run, on process 0.
    Exchanged exchanged;
    exchanged.rank = world.rank;
    const std::string myOutline = outline(*trace, *analysis, *index, globalIndex);
    const std::vector<std::string> outlines = gather(myOutline);
    if (!world.root()) {
        exchanged.bytes += myOutline.size();
        serveUntilDone(&server, exchanged);
        std::int64_t result = 0;
        broadcast(result);
        return int(result);
    }

    // 3. Process 0 draws; its paint source asks every process for the rows of its ranks.
    for (std::size_t p = 1; p < outlines.size(); ++p)
        exchanged.bytes += outlines[p].size();
    std::int64_t result = 0;
    try {
        const StandIn standIn = buildStandIn(outlines, totalRanks, *trace, request.run.rules);
        FigureRenderer renderer(standIn.trace, standIn.analysis, standIn.index);
        TimelinePlot* plot = renderer.plot();
        // A request of process 0: broadcast, answered by every process (this one too), the answers gathered.
        const auto ask = [&](std::string message) {
            broadcast(message);
            Cursor c(message);
            const auto kind = Message(c.i64());
            std::vector<std::string> parts = gather(server.serve(kind, c));
            exchanged.bytes += message.size() * std::size_t(world.size - 1);
            for (std::size_t p = 1; p < parts.size(); ++p)
                exchanged.bytes += parts[p].size();
            return parts;
        };
        plot->plottable()->setPaintSource([&](const DrawListParams& params, const ColumnGrid& grid, double lower,
                                              double upper) -> std::vector<RowPaint> {
            DrawRequest r;
            r.params = params;
            r.grid = grid;
            r.valueLower = lower;
            r.valueUpper = upper;
            r.twoTone = plot->options().twoToneCommunication;
            r.outline = plot->options().outlineBackwardOverlap;
            r.labels = plot->options().blockLabels;
            r.rows = plot->rows();
            const std::vector<std::string> parts = ask(encodeRequest(r));
            std::vector<RowPaint> paints(r.rows.size());
            for (const std::string& part : parts)
                for (auto& [row, paint] : rowPaintsFromBytes(part))
                    paints.at(std::size_t(row)) = std::move(paint);
            return paints;
        });
        plot->setDrawnClassesSource([&](TimeRange range) {
            ClassesRequest r;
            r.range = range;
            r.palette = plot->options().palette;
            r.twoTone = plot->options().twoToneCommunication;
            r.rows = plot->rows();
            DrawnClasses drawn;
            for (const std::string& part : ask(encodeRequest(r)))
                drawn.merge(DrawnClasses::fromBytes(part));
            return drawn;
        });
        result = writeFigure(renderer, request);
    } catch (const std::exception& e) {
        result = fail(e.what());
    }
    sendDone();
    broadcast(result);
    return int(result);
}

} // namespace exposure::mpi
