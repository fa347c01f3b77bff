// SPDX-License-Identifier: GPL-3.0-or-later
#include "import/nsysimporter.h"

#include "import/archivefinder.h"
#include "import/memorybudget.h"
#include "import/parallelread.h"
#include "import/sqlitedb_p.h"
#include "model/tracefinalize.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <set>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>
#include <unordered_map>

extern char** environ;

namespace fs = std::filesystem;

namespace exposure {

namespace {

using nsys::Database;
using nsys::Statement;

// Rows of one table past which a file is refused before anything is read: an interval table indexes with 32 bits.
constexpr std::int64_t kMaxRows = std::int64_t(1) << 31;
constexpr std::uint64_t kNoCorrelation = ~0ull;
constexpr std::uint32_t kNoPeer = 0xFFFFFFFFu;

// Table name -> its column names.
using Schema = std::map<std::string, std::set<std::string>>;

// One statement for every table and its columns (an export holds 20 to 60 tables: one prepared statement per table
// was most of the time it takes to open a small export).
Schema readSchema(const Database& db)
{
    Schema schema;
    Statement s(db,
        "SELECT m.name, p.name FROM sqlite_master AS m LEFT JOIN pragma_table_info(m.name) AS p "
        "WHERE m.type = 'table'");
    while (s.step()) {
        auto& columns = schema[s.text(0)];
        if (!s.isNull(1))
            columns.insert(s.text(1));
    }
    return schema;
}

// The tables alone (what counting rows needs).
Schema readTableNames(const Database& db)
{
    Schema schema;
    Statement s(db, "SELECT name FROM sqlite_master WHERE type = 'table'");
    while (s.step())
        schema[s.text(0)];
    return schema;
}

// The export schema version ("3.11.1"; empty without META_DATA_EXPORT). Throws for a major version other than 2
// or 3: those exports name their tables and columns differently.
std::string checkSchemaVersion(const Database& db, const Schema& schema)
{
    const auto meta = schema.find("META_DATA_EXPORT");
    if (meta == schema.end() || !meta->second.count("name") || !meta->second.count("value"))
        return {};
    Statement s(db, "SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'");
    if (!s.step())
        return {};
    const std::string version = s.text(0);
    const int major = std::atoi(version.c_str());
    if (major != 2 && major != 3)
        throw LoadError(db.path(),
            "Nsight Systems export schema version " + version
                + " is not one Exposure reads (2.x and 3.x): export the report with an "
                  "Nsight Systems of 2021 to 2025");
    return version;
}

const char* const kGpuTables[]
    = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET" };
const char* const kCountedTables[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS", "StringIds" };

// Refuses a table that lacks a column the reader needs (a different schema).
void requireColumns(
    const Database& db, const Schema& schema, const std::string& table, std::initializer_list<const char*> columns)
{
    const auto it = schema.find(table);
    if (it == schema.end())
        return;
    for (const char* c : columns)
        if (!it->second.count(c))
            throw LoadError(db.path(),
                "table " + table + " has no column \"" + c
                    + "\": not an Nsight Systems SQLite export of a schema Exposure reads");
}

struct Counts
{
    std::uint64_t rows = 0; // rows of the tables read
    std::uint64_t bytes = 0; // estimated memory
};

Counts countRows(const Database& db, const Schema& schema)
{
    Counts c;
    for (const char* table : kCountedTables) {
        if (!schema.count(table))
            continue;
        Statement s(db, std::string("SELECT count(*) FROM ") + table);
        if (!s.step())
            continue;
        const std::int64_t n = s.integer(0);
        if (n < 0 || n >= kMaxRows)
            throw LoadError(db.path(),
                std::string(table) + " holds " + std::to_string(n)
                    + " rows, more than Exposure reads from one table (2^31)");
        c.rows += std::uint64_t(n);
    }
    c.bytes = c.rows * kBytesPerNsysRow;
    return c;
}

// Opens an export and checks that it is one Exposure reads: SQLite, a known schema version, the tables and columns
// read, and some GPU work.
struct Opened
{
    std::unique_ptr<Database> db;
    Schema schema;
    std::string version;
};

Opened openExport(const std::string& path)
{
    Opened o;
    o.db = std::make_unique<Database>(path);
    o.schema = readSchema(*o.db);
    const Database& db = *o.db;
    if (!o.schema.count("StringIds"))
        throw LoadError(path, "an SQLite database without the StringIds table: not an Nsight Systems export");
    o.version = checkSchemaVersion(db, o.schema);
    requireColumns(db, o.schema, "StringIds", { "id", "value" });
    for (const char* t : kGpuTables)
        requireColumns(db, o.schema, t, { "start", "end", "deviceId", "streamId", "correlationId" });
    requireColumns(
        db, o.schema, "CUPTI_ACTIVITY_KIND_RUNTIME", { "start", "end", "globalTid", "correlationId", "nameId" });
    requireColumns(
        db, o.schema, "CUPTI_ACTIVITY_KIND_DRIVER", { "start", "end", "globalTid", "correlationId", "nameId" });
    requireColumns(db, o.schema, "NVTX_EVENTS", { "start", "end", "globalTid", "eventType" });
    requireColumns(
        db, o.schema, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", { "start", "end", "correlationId", "syncType" });
    if (std::none_of(
            std::begin(kGpuTables), std::end(kGpuTables), [&](const char* t) { return o.schema.count(t) > 0; }))
        throw LoadError(path,
            "no CUDA kernels, copies or memsets in this Nsight Systems export: was it recorded "
            "with --trace=cuda?");
    return o;
}

// ---- Reading one export --------------------------------------------------------------------------------------

enum class RowKind : std::uint8_t { Kernel, Copy, Memset, Api, Nvtx, Sync };

struct Row
{
    TimeNs start;
    TimeNs end;
    std::uint64_t correlation; // kNoCorrelation if none
    std::uint64_t bytes; // copies and memsets
    std::uint32_t name; // index into FileData::names
    std::uint32_t peer; // peer-to-peer copies: the other device; kNoPeer otherwise
    RowKind kind;
    std::uint32_t params = kNoLaunchParams; // kernels: index into FileData::params
};

struct Process
{
    std::map<std::uint64_t, std::vector<Row>> cpu; // by globalTid
    std::map<std::pair<int, int>, std::vector<Row>> gpu; // by (device, stream)
};

struct FileData
{
    std::string path;
    std::string schemaVersion;
    std::string host;
    std::vector<std::string> names; // local names, interned into the trace at the end
    std::unordered_map<std::string, std::uint32_t> nameIndex;
    std::unordered_map<std::int64_t, std::string> strings; // StringIds
    std::vector<KernelLaunchParams> params; // kernels' launch parameters, interned into the trace at the end
    std::unordered_map<KernelLaunchParams, std::uint32_t, KernelLaunchParamsHash> paramIndex;
    std::map<std::uint64_t, Process> processes; // by globalPid
    std::map<std::uint64_t, std::string> threadNames; // by globalTid
    std::set<std::int64_t> gpus; // TARGET_INFO_GPU ids (empty if absent)
    std::uint64_t rows = 0;
    std::uint64_t badRows = 0; // rows without integer times, with end < start, or with ids out of range
    std::uint64_t openRanges = 0; // NVTX ranges without an end
    std::uint64_t orphanSyncs = 0; // synchronization records whose call is not in the report
    std::uint64_t unknownNames = 0; // name ids not in StringIds
    std::uint64_t unknownDevices = 0; // GPU rows on a device TARGET_INFO_GPU does not list
};

std::uint32_t localName(FileData& f, const std::string& name)
{
    const auto [it, added] = f.nameIndex.emplace(name, std::uint32_t(f.names.size()));
    if (added)
        f.names.push_back(name);
    return it->second;
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": nsys appends the API version to runtime and driver names.
std::string withoutApiVersion(std::string name)
{
    const auto at = name.rfind("_v");
    if (at != std::string::npos && at + 2 < name.size()
        && std::all_of(
            name.begin() + std::ptrdiff_t(at) + 2, name.end(), [](unsigned char c) { return std::isdigit(c); }))
        name.resize(at);
    return name;
}

std::string stringOf(FileData& f, std::int64_t id)
{
    const auto it = f.strings.find(id);
    if (it != f.strings.end())
        return it->second;
    ++f.unknownNames;
    return "(unnamed " + std::to_string(id) + ")";
}

// Calls back every `every` rows so that a long read can be cancelled and report progress.
struct RowTicker
{
    const LoadOptions& options;
    std::function<void(std::uint64_t)> progress; // rows read since the last call
    std::uint64_t pending = 0;
    void tick()
    {
        if (++pending < 16384)
            return;
        flush();
    }
    void flush()
    {
        if (options.cancel && options.cancel->load(std::memory_order_relaxed))
            throw LoadCancelled();
        if (progress)
            progress(pending);
        pending = 0;
    }
};

// Start and end of the row in columns 0 and 1 when they are integers with end >= start.
bool readTimes(const Statement& s, FileData& f, TimeNs& start, TimeNs& end)
{
    if (!s.isInt(0) || !s.isInt(1) || s.integer(1) < s.integer(0)) {
        ++f.badRows;
        return false;
    }
    start = s.integer(0);
    end = s.integer(1);
    return true;
}

std::string column(const Schema& schema, const char* table, const char* name, const char* otherwise = "NULL")
{
    const auto it = schema.find(table);
    return it != schema.end() && it->second.count(name) ? std::string("\"") + name + "\"" : std::string(otherwise);
}

void readStrings(const Database& db, FileData& f, RowTicker& ticker)
{
    Statement s(db, "SELECT id, value FROM StringIds");
    while (s.step()) {
        ticker.tick();
        if (s.isInt(0))
            f.strings[s.integer(0)] = s.text(1);
    }
}

void readGpusAndThreads(const Database& db, const Schema& schema, FileData& f)
{
    if (schema.count("TARGET_INFO_CUDA_DEVICE") && schema.at("TARGET_INFO_CUDA_DEVICE").count("cudaId")) {
        Statement s(db, "SELECT cudaId FROM TARGET_INFO_CUDA_DEVICE");
        while (s.step())
            if (s.isInt(0))
                f.gpus.insert(s.integer(0));
    } else if (schema.count("TARGET_INFO_GPU") && schema.at("TARGET_INFO_GPU").count("id")) {
        // cuDevice (newer exports) is the CUDA device index the activity tables use; id otherwise.
        Statement s(db, "SELECT " + column(schema, "TARGET_INFO_GPU", "cuDevice", "\"id\"") + " FROM TARGET_INFO_GPU");
        while (s.step())
            if (s.isInt(0))
                f.gpus.insert(s.integer(0));
    }
    if (schema.count("ThreadNames") && schema.at("ThreadNames").count("nameId")
        && schema.at("ThreadNames").count("globalTid")) {
        Statement s(db, "SELECT globalTid, nameId FROM ThreadNames");
        while (s.step())
            if (s.isInt(0) && s.isInt(1))
                f.threadNames[std::uint64_t(s.integer(0))] = stringOf(f, s.integer(1));
    }
    if (schema.count("TARGET_INFO_SYSTEM_ENV") && schema.at("TARGET_INFO_SYSTEM_ENV").count("name")
        && schema.at("TARGET_INFO_SYSTEM_ENV").count("value")) {
        Statement s(db, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'");
        if (s.step())
            f.host = s.text(0);
    }
}

// CUPTI's memcpy kinds and memory kinds, named as torch.profiler names copies ("Memcpy HtoD (Pageable -> Device)").
const char* copyKindName(std::int64_t kind)
{
    static const char* const names[]
        = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP" };
    return kind >= 0 && kind < std::int64_t(std::size(names)) ? names[kind] : "Unknown";
}
const char* memoryKindName(std::int64_t kind)
{
    static const char* const names[]
        = { "Unknown", "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static" };
    return kind >= 0 && kind < std::int64_t(std::size(names)) ? names[kind] : "Unknown";
}

// The process of a GPU row (globalPid), or 0 when the table has no such column.
std::uint64_t processKey(const Statement& s, int col)
{
    return s.isInt(col) ? std::uint64_t(s.integer(col)) & ~0xFFFFFFull : 0;
}

// Appends one GPU row; false (counted) when its device or stream is out of range.
bool addGpuRow(FileData& f, const Statement& s, int firstId, Row row)
{
    // Columns firstId..firstId+3: deviceId, streamId, correlationId, globalPid.
    if (!s.isInt(firstId) || !s.isInt(firstId + 1) || s.integer(firstId) < 0 || s.integer(firstId) >= 4096
        || s.integer(firstId + 1) < 0 || s.integer(firstId + 1) >= (std::int64_t(1) << 31)) {
        ++f.badRows;
        return false;
    }
    const int device = int(s.integer(firstId));
    const int stream = int(s.integer(firstId + 1));
    if (!f.gpus.empty() && !f.gpus.count(device))
        ++f.unknownDevices;
    row.correlation
        = s.isInt(firstId + 2) && s.integer(firstId + 2) >= 0 ? std::uint64_t(s.integer(firstId + 2)) : kNoCorrelation;
    f.processes[processKey(s, firstId + 3)].gpu[{ device, stream }].push_back(row);
    return true;
}

// A kernel row's launch parameters from column `first` on (grid x/y/z, block x/y/z, registers, static and dynamic
// shared memory), interned in the file; kNoLaunchParams when the export has none of them.
std::uint32_t launchParams(FileData& f, const Statement& s, int first)
{
    auto value = [&](int i) -> std::uint64_t {
        return s.isInt(first + i) && s.integer(first + i) > 0 ? std::uint64_t(s.integer(first + i)) : 0;
    };
    KernelLaunchParams p;
    for (int d = 0; d < 3; ++d) {
        p.grid[std::size_t(d)] = std::uint32_t(std::min<std::uint64_t>(value(d), 0xFFFFFFFFu));
        p.block[std::size_t(d)] = std::uint32_t(std::min<std::uint64_t>(value(3 + d), 0xFFFFFFFFu));
    }
    p.registersPerThread = value(6);
    p.staticSharedMemory = value(7);
    p.dynamicSharedMemory = value(8);
    if (p == KernelLaunchParams {})
        return kNoLaunchParams;
    p.countFromShapes();
    const auto [it, added] = f.paramIndex.emplace(p, std::uint32_t(f.params.size()));
    if (added)
        f.params.push_back(p);
    return it->second;
}

// Every row of the GPU activity table `t` (none when it is absent): its columns start, end, deviceId, streamId,
// correlationId and globalPid, then the `extra` columns from index 6 on; `fill(s, row)` sets the row's name and
// values from the extra columns before the row is added to its stream.
template <class Fill>
void readGpuActivity(const Database& db, const Schema& schema, const char* t, std::initializer_list<const char*> extra,
    RowKind kind, FileData& f, RowTicker& ticker, const Fill& fill)
{
    if (!schema.count(t))
        return;
    std::string query = "SELECT start, \"end\", deviceId, streamId, correlationId, " + column(schema, t, "globalPid");
    for (const char* name : extra)
        query += ", " + column(schema, t, name);
    Statement s(db, query + " FROM " + t);
    while (s.step()) {
        ticker.tick();
        Row row { 0, 0, kNoCorrelation, 0, 0, kNoPeer, kind };
        if (!readTimes(s, f, row.start, row.end))
            continue;
        fill(s, row);
        addGpuRow(f, s, 2, row);
    }
}

void readKernels(const Database& db, const Schema& schema, FileData& f, RowTicker& ticker)
{
    std::unordered_map<std::int64_t, std::uint32_t> nameOf;
    // Columns 6 and 7 the names, from 8 on the launch parameters (see launchParams).
    readGpuActivity(db, schema, "CUPTI_ACTIVITY_KIND_KERNEL",
        { "demangledName", "shortName", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "registersPerThread",
            "staticSharedMemory", "dynamicSharedMemory" },
        RowKind::Kernel, f, ticker, [&](Statement& s, Row& row) {
            const int nameCol = s.isInt(6) && s.integer(6) != 0 ? 6 : 7;
            const std::int64_t id = s.isInt(nameCol) ? s.integer(nameCol) : -1;
            const auto [it, added] = nameOf.emplace(id, 0);
            if (added)
                it->second = localName(f, stringOf(f, id));
            row.name = it->second;
            row.params = launchParams(f, s, 8);
        });
}

void readCopies(const Database& db, const Schema& schema, FileData& f, RowTicker& ticker)
{
    std::map<std::int64_t, std::uint32_t> nameOf; // copyKind << 16 | srcKind << 8 | dstKind
    readGpuActivity(db, schema, "CUPTI_ACTIVITY_KIND_MEMCPY",
        { "bytes", "copyKind", "srcKind", "dstKind", "srcDeviceId", "dstDeviceId" }, RowKind::Copy, f, ticker,
        [&](Statement& s, Row& row) {
            row.bytes = s.isInt(6) && s.integer(6) > 0 ? std::uint64_t(s.integer(6)) : 0;
            const std::int64_t kind = s.isInt(7) ? s.integer(7) : 0;
            const std::int64_t src = s.isInt(8) ? s.integer(8) : 0;
            const std::int64_t dst = s.isInt(9) ? s.integer(9) : 0;
            const std::int64_t key = (std::clamp<std::int64_t>(kind, -1, 255) << 16)
                | (std::clamp<std::int64_t>(src, 0, 255) << 8) | std::clamp<std::int64_t>(dst, 0, 255);
            const auto [it, added] = nameOf.emplace(key, 0);
            if (added)
                it->second = localName(f,
                    std::string("Memcpy ") + copyKindName(kind) + " (" + memoryKindName(src) + " -> "
                        + memoryKindName(dst) + ")");
            row.name = it->second;
            if (kind == 10 && s.isInt(2) && s.isInt(10) && s.isInt(11)) {
                const std::int64_t other = s.integer(10) == s.integer(2) ? s.integer(11) : s.integer(10);
                if (other >= 0 && other < 4096)
                    row.peer = std::uint32_t(other);
            }
        });
}

void readMemsets(const Database& db, const Schema& schema, FileData& f, RowTicker& ticker)
{
    readGpuActivity(db, schema, "CUPTI_ACTIVITY_KIND_MEMSET", { "bytes", "memKind" }, RowKind::Memset, f, ticker,
        [&](Statement& s, Row& row) {
            row.bytes = s.isInt(6) && s.integer(6) > 0 ? std::uint64_t(s.integer(6)) : 0;
            row.name = localName(f, std::string("Memset (") + memoryKindName(s.isInt(7) ? s.integer(7) : 3) + ")");
        });
}

// Every row of `s` (columns start, end, globalTid, then the table's own) as a CPU row of its thread, in the thread's
// process: rows `skip(s)` passes over are left out (it counts them), rows without valid times or a thread are counted
// bad; `fill(s, row)` sets the name and the rest.
template <class Skip, class Fill>
void readCpuRows(Statement& s, RowKind kind, FileData& f, RowTicker& ticker, const Skip& skip, const Fill& fill)
{
    while (s.step()) {
        ticker.tick();
        if (skip(s))
            continue;
        Row row { 0, 0, kNoCorrelation, 0, 0, kNoPeer, kind };
        if (!readTimes(s, f, row.start, row.end))
            continue;
        if (!s.isInt(2)) {
            ++f.badRows;
            continue;
        }
        fill(s, row);
        const auto tid = std::uint64_t(s.integer(2));
        f.processes[tid & ~0xFFFFFFull].cpu[tid].push_back(row);
    }
}

// CUDA runtime or driver calls: one CPU lane per thread of the process.
void readApiCalls(const Database& db, const Schema& schema, const char* table, FileData& f, RowTicker& ticker)
{
    if (!schema.count(table))
        return;
    Statement s(db, std::string("SELECT start, \"end\", globalTid, correlationId, nameId FROM ") + table);
    std::unordered_map<std::int64_t, std::uint32_t> nameOf;
    readCpuRows(
        s, RowKind::Api, f, ticker, [](const Statement&) { return false; },
        [&](const Statement& r, Row& row) {
            const std::int64_t id = r.isInt(4) ? r.integer(4) : -1;
            const auto [it, added] = nameOf.emplace(id, 0);
            if (added)
                it->second = localName(f, withoutApiVersion(stringOf(f, id)));
            row.name = it->second;
            row.correlation = r.isInt(3) && r.integer(3) >= 0 ? std::uint64_t(r.integer(3)) : kNoCorrelation;
        });
}

// NVTX push/pop (59) and start/end (60) ranges: CPU regions of the thread that opened them; ranges still open at the
// end of the recording are counted and left out.
void readNvtx(const Database& db, const Schema& schema, FileData& f, RowTicker& ticker)
{
    const char* t = "NVTX_EVENTS";
    if (!schema.count(t))
        return;
    Statement s(db,
        "SELECT start, \"end\", globalTid, " + column(schema, t, "text") + ", " + column(schema, t, "textId") + " FROM "
            + t + " WHERE eventType IN (59, 60)");
    const auto open = [&f](const Statement& r) {
        const bool isOpen = r.isNull(1) || (r.isInt(1) && r.integer(1) < 0);
        f.openRanges += isOpen ? 1 : 0;
        return isOpen;
    };
    readCpuRows(s, RowKind::Nvtx, f, ticker, open, [&f](const Statement& r, Row& row) {
        const std::string text = !r.isNull(3) ? r.text(3)
            : r.isInt(4)                      ? stringOf(f, r.integer(4))
                                              : std::string("(NVTX range)");
        row.name = localName(f, text);
    });
}

// Synchronization records: the wait inside the call that made it (found by correlation id), on that call's thread.
void readSyncs(const Database& db, const Schema& schema, FileData& f, RowTicker& ticker)
{
    const char* t = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
    if (!schema.count(t))
        return;
    // correlation id -> thread, per process, from the calls read before.
    std::map<std::uint64_t, std::unordered_map<std::uint64_t, std::uint64_t>> threadOf;
    for (auto& [pid, p] : f.processes)
        for (auto& [tid, rows] : p.cpu)
            for (const Row& r : rows)
                if (r.kind == RowKind::Api && r.correlation != kNoCorrelation)
                    threadOf[pid].emplace(r.correlation, tid);
    Statement s(db, "SELECT start, \"end\", correlationId, syncType, " + column(schema, t, "globalPid") + " FROM " + t);
    while (s.step()) {
        ticker.tick();
        Row row { 0, 0, kNoCorrelation, 0, 0, kNoPeer, RowKind::Sync };
        if (!readTimes(s, f, row.start, row.end) || !s.isInt(2))
            continue;
        const std::int64_t type = s.isInt(3) ? s.integer(3) : 0;
        if (type == 2) // stream wait event: the GPU waits, not the CPU
            continue;
        const char* name = type == 1 ? "Event synchronize"
            : type == 3              ? "Stream synchronize"
            : type == 4              ? "Context synchronize"
                                     : "Synchronize";
        const std::uint64_t pid = s.isInt(4) ? std::uint64_t(s.integer(4)) & ~0xFFFFFFull : 0;
        const auto proc = threadOf.find(pid);
        if (proc == threadOf.end() || !proc->second.count(std::uint64_t(s.integer(2)))) {
            ++f.orphanSyncs;
            continue;
        }
        row.name = localName(f, name);
        f.processes[pid].cpu[proc->second.at(std::uint64_t(s.integer(2)))].push_back(row);
    }
}

// Without globalPid in the GPU tables, GPU rows land in process 0: the whole file is then one process.
void mergeProcessesWithoutPid(FileData& f)
{
    const auto zero = f.processes.find(0);
    if (zero == f.processes.end() || f.processes.size() == 1)
        return;
    Process all = std::move(zero->second);
    f.processes.erase(zero);
    for (auto& [pid, p] : f.processes) {
        for (auto& [tid, rows] : p.cpu)
            all.cpu[tid] = std::move(rows);
        for (auto& [key, rows] : p.gpu)
            all.gpu[key] = std::move(rows);
    }
    f.processes.clear();
    f.processes.emplace(0, std::move(all));
}

FileData readExport(
    const std::string& path, const LoadOptions& options, const std::function<void(std::uint64_t)>& progress)
{
    Opened o = openExport(path);
    const Database& db = *o.db;
    FileData f;
    f.path = path;
    f.schemaVersion = o.version;
    RowTicker ticker { options, progress };
    readStrings(db, f, ticker);
    readGpusAndThreads(db, o.schema, f);
    readKernels(db, o.schema, f, ticker);
    readCopies(db, o.schema, f, ticker);
    readMemsets(db, o.schema, f, ticker);
    readApiCalls(db, o.schema, "CUPTI_ACTIVITY_KIND_RUNTIME", f, ticker);
    readApiCalls(db, o.schema, "CUPTI_ACTIVITY_KIND_DRIVER", f, ticker);
    readNvtx(db, o.schema, f, ticker);
    readSyncs(db, o.schema, f, ticker);
    ticker.flush();
    const bool pidInGpuTables = std::all_of(std::begin(kGpuTables), std::end(kGpuTables),
        [&](const char* t) { return !o.schema.count(t) || o.schema.at(t).count("globalPid"); });
    if (!pidInGpuTables)
        mergeProcessesWithoutPid(f);
    // Processes without GPU work (launchers, data-loader workers) are no ranks.
    for (auto it = f.processes.begin(); it != f.processes.end();)
        it = it->second.gpu.empty() ? f.processes.erase(it) : std::next(it);
    if (f.processes.empty())
        throw LoadError(path,
            "no CUDA kernels, copies or memsets in this Nsight Systems export: was it recorded "
            "with --trace=cuda?");
    std::unordered_map<std::int64_t, std::string>().swap(f.strings);
    return f;
}

// ---- Building the ranks --------------------------------------------------------------------------------------

struct RankBuild
{
    Trace& trace;
    FileData& file;
    std::vector<StringId> globalName; // local name -> trace StringId (kInvalidString until used)
    std::vector<std::uint32_t>
        globalParams; // local launch parameters -> Trace::launchParams (kNoLaunchParams until used)
    std::uint64_t brokenNesting = 0;
    std::uint64_t unlaunched = 0;

    StringId nameOf(std::uint32_t local, RegionKind kind)
    {
        StringId& id = globalName[local];
        if (id == kInvalidString)
            id = trace.strings.intern(file.names[local]);
        if (trace.regionKinds.size() <= id)
            trace.regionKinds.resize(std::size_t(id) + 1, RegionKind::Unknown);
        if (trace.regionKinds[id] == RegionKind::Unknown || kind == RegionKind::Kernel || kind == RegionKind::Memcpy)
            trace.regionKinds[id] = kind;
        return id;
    }

    std::uint32_t paramsOf(std::uint32_t local)
    {
        if (local == kNoLaunchParams || local >= file.params.size())
            return kNoLaunchParams;
        if (globalParams.size() < file.params.size())
            globalParams.resize(file.params.size(), kNoLaunchParams);
        std::uint32_t& id = globalParams[local];
        if (id == kNoLaunchParams) {
            id = std::uint32_t(trace.launchParams.size());
            trace.launchParams.push_back(file.params[local]);
        }
        return id;
    }
};

// One thread's calls, NVTX ranges and waits, nested by time (an interval that outlasts its parent is clipped).
Lane buildCpuLane(RankBuild& b, std::uint64_t tid, std::vector<Row>& rows, std::uint32_t laneIndex,
    std::unordered_map<std::uint64_t, LaunchRef>& launchOf)
{
    Lane lane;
    lane.kind = LaneKind::CpuThread;
    const auto named = b.file.threadNames.find(tid);
    lane.name = named != b.file.threadNames.end() && !named->second.empty()
        ? named->second
        : "thread " + std::to_string(tid & 0xFFFFFF);
    // Parents first: by start, the longer first; at equal extent NVTX ranges enclose calls, calls enclose waits.
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& c) {
        if (a.start != c.start)
            return a.start < c.start;
        if (a.end != c.end)
            return a.end > c.end;
        return (a.kind == RowKind::Nvtx) > (c.kind == RowKind::Nvtx);
    });
    lane.intervals.reserve(rows.size());
    std::vector<TimeNs> open;
    for (Row& r : rows) {
        while (!open.empty() && open.back() <= r.start)
            open.pop_back();
        if (!open.empty() && r.end > open.back()) {
            r.end = open.back();
            ++b.brokenNesting;
        }
        const auto depth = std::uint8_t(std::min<std::size_t>(open.size(), 255));
        const RegionKind kind = r.kind == RowKind::Api ? RegionKind::HostApi : RegionKind::HostRegion;
        const auto index = std::uint32_t(lane.intervals.size());
        lane.intervals.append(r.start, r.end, b.nameOf(r.name, kind), depth);
        open.push_back(r.end);
        if (r.kind == RowKind::Api && r.correlation != kNoCorrelation)
            launchOf.emplace(r.correlation, LaunchRef { laneIndex, index });
    }
    lane.eventCount = rows.size();
    return lane;
}

// One stream's kernels, copies and memsets in start order, with their launches in the same order.
Lane buildGpuLane(RankBuild& b, int device, int stream, std::vector<Row>& rows,
    const std::unordered_map<std::uint64_t, LaunchRef>& launchOf)
{
    Lane lane;
    lane.kind = LaneKind::GpuStream;
    lane.device = device;
    lane.stream = stream;
    lane.name = "CUDA[" + std::to_string(device) + ":" + std::to_string(stream) + "]";
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& c) { return a.start < c.start; });
    lane.intervals.reserve(rows.size());
    const bool anyParams
        = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.params != kNoLaunchParams; });
    for (const Row& r : rows) {
        const auto index = std::uint32_t(lane.intervals.size());
        const RegionKind kind = r.kind == RowKind::Kernel ? RegionKind::Kernel : RegionKind::Memcpy;
        lane.intervals.append(r.start, r.end, b.nameOf(r.name, kind));
        if (anyParams)
            lane.launchParamIds.push_back(b.paramsOf(r.params));
        // Per interval, the call with its correlation id (one call may launch many: a CUDA graph launch).
        const auto l = r.correlation == kNoCorrelation ? launchOf.end() : launchOf.find(r.correlation);
        lane.launchByInterval.push_back(l != launchOf.end() ? l->second : LaunchRef { kUnknownLaunch, 0 });
        if (r.kind == RowKind::Kernel && l == launchOf.end())
            ++b.unlaunched;
        if (r.bytes > 0 && r.kind != RowKind::Kernel)
            lane.copyBytes.emplace_back(index, r.bytes);
        if (r.peer != kNoPeer)
            lane.copyPeers.emplace_back(index, int(r.peer));
    }
    lane.eventCount = rows.size();
    return lane;
}

Rank buildRank(RankBuild& b, Process& p, int number)
{
    Rank rank;
    rank.rank = number;
    rank.label = "Rank " + std::to_string(number);
    rank.host = b.file.host;
    rank.archivePath = b.file.path;
    rank.timerResolution = 1'000'000'000;
    std::unordered_map<std::uint64_t, LaunchRef> launchOf;
    for (auto& [tid, rows] : p.cpu) {
        rank.lanes.push_back(buildCpuLane(b, tid, rows, std::uint32_t(rank.lanes.size()), launchOf));
        std::vector<Row>().swap(rows);
    }
    for (auto& [key, rows] : p.gpu) {
        rank.lanes.push_back(buildGpuLane(b, key.first, key.second, rows, launchOf));
        if (std::find(rank.devices.begin(), rank.devices.end(), key.first) == rank.devices.end())
            rank.devices.push_back(key.first);
        std::vector<Row>().swap(rows);
    }
    return rank;
}

void addFileWarnings(Trace& trace, const FileData& f, const RankBuild& b)
{
    const std::string file = fs::path(f.path).filename().string();
    auto warn = [&](std::uint64_t n, const std::string& what) {
        if (n > 0)
            trace.warnings.push_back(file + ": " + std::to_string(n) + " " + what);
    };
    warn(b.brokenNesting, "CPU intervals outlast their enclosing call or NVTX range; each was clipped to its end");
    warn(b.unlaunched, "kernels have no launch call with their correlation id");
    warn(f.badRows,
        "rows without integer start and end (or ending before they start, or with a device or stream out "
        "of range) were skipped");
    warn(f.openRanges, "NVTX ranges never ended and were skipped");
    warn(f.orphanSyncs, "synchronization records have no CUDA call with their correlation id and were skipped");
    warn(f.unknownNames, "name ids are not in StringIds");
    warn(f.unknownDevices, "GPU rows run on a device TARGET_INFO_GPU does not list");
}

// Rank numbers of the files' processes, in file order then process order, and a warning saying where they come from.
std::vector<int> rankNumbers(const std::vector<FileData>& files, std::string& note)
{
    std::vector<int> numbers;
    bool onePerFile = true;
    for (const auto& f : files)
        onePerFile = onePerFile && f.processes.size() == 1;
    std::set<int> seen;
    bool named = onePerFile;
    for (const auto& f : files) {
        const int n = rankFromFileName(f.path);
        named = named && n >= 0 && seen.insert(n).second;
        numbers.push_back(n);
    }
    if (named)
        return numbers;
    numbers.clear();
    for (const auto& f : files)
        for (std::size_t p = 0; p < f.processes.size(); ++p)
            numbers.push_back(int(numbers.size()));
    if (files.size() > 1)
        note = "rank numbers follow the natural order of the files (not every file name holds a distinct "
               "\"rank<N>\")";
    if (numbers.size() > files.size())
        note += std::string(note.empty() ? "" : "; ")
            + "the processes of a report are ranks in the order of their process ids";
    return numbers;
}

} // namespace

std::uint64_t countNsysRows(const std::vector<std::string>& files, const LoadOptions& options)
{
    std::uint64_t rows = 0;
    LoadProgress progress;
    for (const auto& path : files) {
        if (options.cancel && options.cancel->load(std::memory_order_relaxed))
            throw LoadCancelled();
        Opened o = openExport(path);
        rows += countRows(*o.db, o.schema).rows;
        if (options.progress) {
            progress.currentFile = path;
            progress.eventsRead = rows;
            options.progress(progress);
        }
    }
    return rows;
}

void importNsys(Trace& trace, const std::vector<std::string>& files, const LoadOptions& options)
{
    std::vector<FileData> data(files.size());
    // Progress counts rows (the rows of every file are counted first, which also refuses tables too large to hold:
    // a count is quick next to the reading).
    LoadProgress progress;
    std::mutex progressMutex;
    for (const auto& f : files) {
        const Database db(f); // checked by openExport when it is read
        progress.eventsTotal += countRows(db, readTableNames(db)).rows;
    }
    readFilesInParallel(files.size(), fileReadThreads(options, files.size()), [&](std::size_t i) {
        std::uint64_t rowsSeen = 0;
        data[i] = readExport(files[i], options, [&](std::uint64_t rows) {
            rowsSeen += rows;
            if (!options.progress)
                return;
            std::lock_guard lock(progressMutex);
            progress.eventsRead += rows;
            progress.currentFile = files[i];
            options.progress(progress);
        });
        data[i].rows = rowsSeen;
    });
    std::string note;
    const std::vector<int> numbers = rankNumbers(data, note);
    if (!note.empty())
        trace.warnings.push_back(note);
    std::vector<Rank> ranks;
    std::size_t next = 0;
    for (FileData& f : data) {
        RankBuild b { trace, f, std::vector<StringId>(f.names.size(), kInvalidString),
            std::vector<std::uint32_t>(f.params.size(), kNoLaunchParams) };
        for (auto& [pid, p] : f.processes)
            ranks.push_back(buildRank(b, p, numbers[next++]));
        addFileWarnings(trace, f, b);
        trace.eventCount += f.rows;
    }
    std::stable_sort(ranks.begin(), ranks.end(), [](const Rank& a, const Rank& c) { return a.rank < c.rank; });
    for (auto& r : ranks)
        trace.ranks.push_back(std::move(r));
    trace.regionKinds.resize(trace.strings.size(), RegionKind::Unknown);
    finalizeTrace(trace, true, options.threads);
}

} // namespace exposure
