// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Nsight Systems SQLite exports for tests, written with the tables and columns of the documented export schema
// (`nsys export --type sqlite`, schema 3.x): nsys itself is not in Debian, so tests build their own reports.
#include <cstdint>
#include <map>
#include <sqlite3.h>
#include <stdexcept>
#include <string>

namespace exposure::testing {

// globalPid / globalTid as nsys serialises them: the process id above bit 24, the thread id below.
inline std::int64_t nsysPid(std::int64_t pid)
{
    return pid << 24;
}
inline std::int64_t nsysTid(std::int64_t pid, std::int64_t tid)
{
    return (pid << 24) + tid;
}

class NsysWriter
{
public:
    // Creates `path` with the export's tables (all of them empty), META_DATA_EXPORT saying `schemaVersion`.
    explicit NsysWriter(const std::string& path, const std::string& schemaVersion = "3.11.1")
    {
        if (sqlite3_open(path.c_str(), &m_db) != SQLITE_OK)
            throw std::runtime_error("cannot create " + path);
        exec("BEGIN");
        exec(R"(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL PRIMARY KEY, name TEXT, busLocation TEXT, isDiscrete INTEGER,
  l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER,
  pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT);
CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, pid INTEGER, uuid TEXT,
  numMultiprocessors INTEGER);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
  gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
  sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER,
  srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER,
  dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
  callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
)");
        exec("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '" + schemaVersion + "')");
        exec("INSERT INTO META_DATA_EXPORT VALUES ('NSYS_VERSION', '2024.5.1')");
    }
    ~NsysWriter()
    {
        if (m_db) {
            exec("COMMIT");
            sqlite3_close(m_db);
        }
    }
    NsysWriter(const NsysWriter&) = delete;
    NsysWriter& operator=(const NsysWriter&) = delete;

    void exec(const std::string& sql)
    {
        char* error = nullptr;
        if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
            const std::string message = error ? error : "?";
            sqlite3_free(error);
            throw std::runtime_error(message + " in " + sql);
        }
    }
    // The StringIds id of `text` (added on first use).
    std::int64_t str(const std::string& text)
    {
        const auto it = m_ids.find(text);
        if (it != m_ids.end())
            return it->second;
        const std::int64_t id = std::int64_t(m_ids.size()) + 1;
        m_ids.emplace(text, id);
        exec("INSERT INTO StringIds VALUES (" + std::to_string(id) + ", " + quote(text) + ")");
        return id;
    }
    void gpu(int cudaId, const std::string& name)
    {
        exec("INSERT INTO TARGET_INFO_GPU (id, name, chipName) VALUES (" + std::to_string(cudaId) + ", " + quote(name)
            + ", 'GH100')");
        exec("INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid) VALUES (" + std::to_string(cudaId) + ", "
            + std::to_string(cudaId) + ", 0)");
    }
    // A process of the report (PROCESSES: what `nsys` records of each process it saw).
    void process(std::int64_t pid, const std::string& name)
    {
        exec("INSERT INTO PROCESSES VALUES (" + std::to_string(nsysPid(pid)) + ", " + std::to_string(pid) + ", "
            + quote(name) + ")");
    }
    // The recording host's name (TARGET_INFO_SYSTEM_ENV, name 'Hostname').
    void host(const std::string& name)
    {
        exec("CREATE TABLE IF NOT EXISTS TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT NOT NULL, "
             "name TEXT NOT NULL, nameEnum INTEGER NOT NULL, value TEXT NOT NULL)");
        exec("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (0, 'Default', 'Hostname', 0, " + quote(name) + ")");
    }
    // The session's start, ns since the epoch (TARGET_INFO_SESSION_START_TIME): the times of the report count from it.
    void sessionStart(std::int64_t utcEpochNs)
    {
        exec("CREATE TABLE IF NOT EXISTS TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, "
             "localTime TEXT)");
        exec("INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs) VALUES (" + std::to_string(utcEpochNs) + ")");
    }
    void threadName(std::int64_t gtid, const std::string& name)
    {
        exec("INSERT INTO ThreadNames VALUES (" + std::to_string(str(name)) + ", 0, " + std::to_string(gtid) + ")");
    }
    void kernel(std::int64_t pid, int device, int stream, std::int64_t start, std::int64_t end,
        std::int64_t correlation, const std::string& name)
    {
        const std::int64_t id = str(name);
        exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
             "globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
             "staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId) VALUES ("
            + list({ start, end, device, 1, stream, correlation, nsysPid(pid), id, id, 32, 80, 1, 1, 256, 1, 1, 0, 0, 0,
                0, correlation })
            + ")");
    }
    // copyKind: CUPTI's memcpy kind (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP); kinds of memory: 1 pageable, 2 pinned, 3 device.
    void memcpy(std::int64_t pid, int device, int stream, std::int64_t start, std::int64_t end,
        std::int64_t correlation, std::int64_t bytes, int copyKind, int srcKind, int dstKind, int srcDevice = 0,
        int dstDevice = 0)
    {
        exec("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
             "globalPid, bytes, copyKind, srcKind, dstKind, srcDeviceId, dstDeviceId) VALUES ("
            + list({ start, end, device, 1, stream, correlation, nsysPid(pid), bytes, copyKind, srcKind, dstKind,
                srcDevice, dstDevice })
            + ")");
    }
    void memset(std::int64_t pid, int device, int stream, std::int64_t start, std::int64_t end,
        std::int64_t correlation, std::int64_t bytes)
    {
        exec("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, "
             "globalPid, value, bytes, memKind) VALUES ("
            + list({ start, end, device, 1, stream, correlation, nsysPid(pid), 0, bytes, 3 }) + ")");
    }
    void runtime(
        std::int64_t gtid, std::int64_t start, std::int64_t end, std::int64_t correlation, const std::string& name)
    {
        exec("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, "
             "returnValue) VALUES ("
            + list({ start, end, 0, gtid, correlation, str(name), 0 }) + ")");
    }
    // syncType: 1 event, 2 stream wait event, 3 stream, 4 context.
    void sync(std::int64_t pid, std::int64_t start, std::int64_t end, std::int64_t correlation, int syncType)
    {
        exec("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES ("
            + list({ start, end, 0, 1, 7, correlation, nsysPid(pid), syncType, 0 }) + ")");
    }
    // A push/pop range (eventType 59); with `registered`, its text through StringIds (textId) instead of `text`.
    void nvtx(std::int64_t gtid, std::int64_t start, std::int64_t end, const std::string& text, bool registered = false)
    {
        const std::string endText = end < 0 ? std::string("NULL") : std::to_string(end);
        if (registered)
            exec("INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId) VALUES (" + std::to_string(start)
                + ", " + endText + ", 59, " + std::to_string(gtid) + ", " + std::to_string(str(text)) + ")");
        else
            exec("INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, text) VALUES (" + std::to_string(start)
                + ", " + endText + ", 59, " + std::to_string(gtid) + ", " + quote(text) + ")");
    }

    static std::string quote(const std::string& text)
    {
        std::string out = "'";
        for (const char c : text)
            out += c == '\'' ? std::string("''") : std::string(1, c);
        return out + "'";
    }

private:
    static std::string list(std::initializer_list<std::int64_t> values)
    {
        std::string out;
        for (const auto v : values)
            out += (out.empty() ? "" : ", ") + std::to_string(v);
        return out;
    }

    sqlite3* m_db = nullptr;
    std::map<std::string, std::int64_t> m_ids;
};

} // namespace exposure::testing
