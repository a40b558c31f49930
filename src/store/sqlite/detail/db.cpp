#include "store/sqlite/detail/db.hpp"

#include <mutex>

#include "core/log.hpp"
#include "store/errors.hpp"
#include "store/sqlite/detail/wal_writes.hpp"

namespace posthorn::store::sqlite::detail {

error_code to_error(int rc) {
    switch (rc & 0xff) {
        case SQLITE_CONSTRAINT:
            return errc::conflict;
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return errc::busy;
        default:
            return errc::io;
    }
}

Stmt& Stmt::bind(int i, std::string_view v) {
    sqlite3_bind_text64(s_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    return *this;
}
std::string like_pattern(std::string_view needle) {
    std::string out = "%";
    for (char c : needle) {
        if (c == '%' || c == '_' || c == '\\') out.push_back('\\');
        out.push_back(c);
    }
    return out + "%";
}

Stmt& Stmt::bind_blob(int i, std::string_view v) {
    // Not copied: the bytes (a whole message, often) outlive the statement's run, and
    // prepare() clears the bindings before the statement is used again.
    sqlite3_bind_blob64(s_, i, v.data(), v.size(), SQLITE_STATIC);
    return *this;
}
Stmt& Stmt::bind_ref(int i, std::string_view v) {
    // As bind_blob: for the columns of the rows written per send (a copy each, ~20 a send).
    sqlite3_bind_text64(s_, i, v.data(), v.size(), SQLITE_STATIC, SQLITE_UTF8);
    return *this;
}
Stmt& Stmt::bind(int i, std::int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
}
Stmt& Stmt::bind(int i, std::nullopt_t) {
    sqlite3_bind_null(s_, i);
    return *this;
}

Result<bool> Stmt::step() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    log::debug("sqlite step: {}", sqlite3_errmsg(sqlite3_db_handle(s_)));
    return {boost::system::in_place_error, to_error(rc)};
}

Result<void> Stmt::run() {
    for (;;) {
        auto r = step();
        if (!r) return r.error();
        if (!*r) break;
    }
    // Ready to be bound and run again (binding a statement that ran to its end without a
    // reset fails with SQLITE_MISUSE, and the next step would repeat the old values).
    sqlite3_reset(s_);
    return {};
}

std::string Stmt::text(int col) const {
    // Blobs come back byte for byte: column_blob, not column_text, for them.
    const void* p = sqlite3_column_type(s_, col) == SQLITE_BLOB ? sqlite3_column_blob(s_, col)
                                                                : sqlite3_column_text(s_, col);
    if (!p) return {};
    return std::string(reinterpret_cast<const char*>(p),
                       static_cast<std::size_t>(sqlite3_column_bytes(s_, col)));
}

namespace {

void configure_once() {
    // No memory statistics: with them every allocation of every connection takes one
    // global mutex. Must come before SQLite initialises itself (at the first open).
    static std::once_flag configured;
    std::call_once(configured, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

}  // namespace

std::string_view Stmt::view(int col) const {
    const void* p = sqlite3_column_type(s_, col) == SQLITE_BLOB ? sqlite3_column_blob(s_, col)
                                                                : sqlite3_column_text(s_, col);
    if (!p) return {};
    return {static_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(s_, col))};
}

Result<Db> Db::open_read_only(const std::string& path) {
    configure_once();
    sqlite3* raw = nullptr;
    const int rc =
        sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
    Db db;
    db.db_.reset(raw);
    if (rc != SQLITE_OK) {
        log::error("sqlite open {} (read-only): {}", path,
                   raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc));
        return to_error(rc);
    }
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, 10000);
    return db;
}

Result<Db> Db::open(const std::string& path, bool create) {
    configure_once();
    sqlite3* raw = nullptr;
    const int flags =
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
    // The WAL's writes gathered into one call per commit (wal_writes.hpp), safe because
    // every connection syncs each commit (synchronous=FULL, below).
    const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, gathered_wal_vfs());
    Db db;
    db.db_.reset(raw);
    if (rc != SQLITE_OK) {
        log::error("sqlite open {}: {}", path, raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc));
        return to_error(rc);
    }
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, 10000);
    // WAL lets readers go on while the writer commits; synchronous=FULL makes every commit
    // reach the disk (fsync of the WAL) before it is acknowledged.
    if (auto r = db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; "
                         "PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;");
        !r)
        return r.error();
    return db;
}

Result<void> Db::exec(const char* sql) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db_.get(), sql, nullptr, nullptr, &err);
    if (rc != SQLITE_OK) {
        log::error("sqlite exec: {}", err ? err : sqlite3_errstr(rc));
        sqlite3_free(err);
        return to_error(rc);
    }
    return {};
}

Result<void> Db::run(std::string_view sql) {
    auto st = prepare(sql);
    if (!st) return st.error();
    return st->run();
}

Result<Stmt> Db::prepare(std::string_view sql) {
    auto it = cache_.find(sql);
    if (it == cache_.end()) {
        sqlite3_stmt* raw = nullptr;
        const int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                                          SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
        if (rc != SQLITE_OK) {
            log::error("sqlite prepare: {}: {}", sqlite3_errmsg(db_.get()), sql);
            return to_error(rc);
        }
        it = cache_.emplace(std::string(sql), StmtPtr(raw)).first;
    }
    sqlite3_reset(it->second.get());
    sqlite3_clear_bindings(it->second.get());
    return Stmt(it->second.get());
}

}  // namespace posthorn::store::sqlite::detail
