// SPDX-License-Identifier: GPL-3.0-or-later
// Read-only SQLite access for the Nsight Systems importer (nsysimporter.cpp): a database that fails with a LoadError
// naming the file and what to do, and a prepared statement stepped row by row.
#pragma once

#include "import/loadoptions.h"
#include "import/nsysimporter.h"

#include <cstdint>
#include <filesystem>
#include <sqlite3.h>
#include <string>

namespace exposure::nsys {

class Database
{
public:
    explicit Database(const std::string& path)
        : m_path(path)
    {
        if (!hasSqliteHeader(path)) {
            std::error_code ec;
            if (!std::filesystem::is_regular_file(path, ec))
                throw LoadError(path, "not a regular file");
            throw LoadError(path,
                "not an SQLite database (an Nsight Systems export is made with `nsys export --type "
                "sqlite`)");
        }
        const int rc = sqlite3_open_v2(path.c_str(), &m_db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
        if (rc != SQLITE_OK)
            fail("cannot open");
        sqlite3_busy_timeout(m_db, 2000);
        sqlite3_extended_result_codes(m_db, 1);
    }
    ~Database() { sqlite3_close(m_db); }
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    [[noreturn]] void fail(const std::string& what) const
    {
        const int code = m_db ? sqlite3_errcode(m_db) : SQLITE_CANTOPEN;
        std::string message = m_db ? sqlite3_errmsg(m_db) : "out of memory";
        if ((code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED)
            message += " (another program holds a lock on it: close it there, or copy the file)";
        else if ((code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB || (code & 0xff) == SQLITE_IOERR)
            message += " (the file is truncated or damaged: export the report again)";
        throw LoadError(m_path, "SQLite: " + what + ": " + message);
    }
    sqlite3* handle() const { return m_db; }
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
    sqlite3* m_db = nullptr;
};

class Statement
{
public:
    Statement(const Database& db, const std::string& sql)
        : m_db(db)
    {
        if (sqlite3_prepare_v2(db.handle(), sql.c_str(), int(sql.size()), &m_stmt, nullptr) != SQLITE_OK)
            db.fail("cannot read (" + sql.substr(0, 60) + ")");
    }
    ~Statement() { sqlite3_finalize(m_stmt); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    bool step()
    {
        const int rc = sqlite3_step(m_stmt);
        if (rc == SQLITE_ROW)
            return true;
        if (rc != SQLITE_DONE)
            m_db.fail("cannot read");
        return false;
    }
    bool isInt(int col) const { return sqlite3_column_type(m_stmt, col) == SQLITE_INTEGER; }
    bool isNull(int col) const { return sqlite3_column_type(m_stmt, col) == SQLITE_NULL; }
    std::int64_t integer(int col) const { return sqlite3_column_int64(m_stmt, col); }
    std::string text(int col) const
    {
        const auto* p = sqlite3_column_text(m_stmt, col);
        return p ? std::string(reinterpret_cast<const char*>(p), std::size_t(sqlite3_column_bytes(m_stmt, col)))
                 : std::string();
    }

private:
    const Database& m_db;
    sqlite3_stmt* m_stmt = nullptr;
};

} // namespace exposure::nsys
