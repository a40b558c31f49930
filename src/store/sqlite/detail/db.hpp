// A SQLite connection with a cache of prepared statements, and typed bind/column helpers.
// One Db is used by one thread at a time. Private to store/sqlite.
#pragma once

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/c_ptr.hpp"
#include "core/result.hpp"
#include "domain/model.hpp"

namespace posthorn::store::sqlite::detail {

using DbPtr = CPtr<sqlite3, sqlite3_close_v2>;
using StmtPtr = CPtr<sqlite3_stmt, sqlite3_finalize>;

error_code to_error(int rc);

// A LIKE pattern (used with ESCAPE '\\') for a substring; % _ and the backslash are taken
// literally. LIKE folds ASCII case only.
std::string like_pattern(std::string_view needle);

// A use of a cached statement. It is reset when the use ends, so that no half-read result
// keeps a read transaction (and with it an old WAL snapshot) open on the connection.
class Stmt {
  public:
    explicit Stmt(sqlite3_stmt* s) : s_(s) {}
    Stmt(Stmt&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    Stmt& operator=(Stmt&&) = delete;
    Stmt(const Stmt&) = delete;
    ~Stmt() {
        if (s_) sqlite3_reset(s_);
    }

    Stmt& bind(int i, std::string_view v);
    Stmt& bind(int i, std::int64_t v);
    Stmt& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
    Stmt& bind(int i, std::nullopt_t);
    Stmt& bind_blob(int i, std::string_view v);  // not copied: `v` must outlive run/step
    Stmt& bind_ref(int i, std::string_view v);   // text, not copied: the same
    template <class T>
    Stmt& bind(int i, const std::optional<T>& v) {
        return v ? bind(i, *v) : bind(i, std::nullopt);
    }

    // true: a row is ready; false: done. Errors map through to_error().
    Result<bool> step();
    // Steps to the end, for statements that return no rows, then resets (bind and run again).
    Result<void> run();

    std::int64_t int64(int col) const { return sqlite3_column_int64(s_, col); }
    std::string text(int col) const;
    // The bytes of a text or blob column without a copy: valid until the next step or reset.
    std::string_view view(int col) const;
    int column_count() const { return sqlite3_column_count(s_); }
    bool is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
    std::optional<std::int64_t> opt_int64(int col) const {
        return is_null(col) ? std::nullopt : std::optional(int64(col));
    }
    std::optional<std::string> opt_text(int col) const {
        return is_null(col) ? std::nullopt : std::optional(text(col));
    }

  private:
    sqlite3_stmt* s_;
};

class Db {
  public:
    // Opens (creating if asked) with WAL, foreign keys, synchronous=FULL and a busy timeout.
    static Result<Db> open(const std::string& path, bool create);
    // Opens an existing database read-only, as it is: no pragma that writes (journal mode),
    // no migration. For reading a store out (sqlite_copy_source.hpp).
    static Result<Db> open_read_only(const std::string& path);

    // Runs one or more statements without results.
    Result<void> exec(const char* sql);
    // A cached prepared statement, reset and with bindings cleared.
    Result<Stmt> prepare(std::string_view sql);
    // A statement without parameters or rows (BEGIN, SAVEPOINT…), prepared once through the
    // statement cache instead of parsed at each use as exec() does.
    Result<void> run(std::string_view sql);
    std::int64_t changes() const { return sqlite3_changes64(db_.get()); }
    std::int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(db_.get()); }
    sqlite3* handle() const { return db_.get(); }

    // The statistics counters the open write transaction adds to (detail::add_stats): kept
    // here and written summed, one upsert a counter, just before its COMMIT (the Writer's
    // before-commit step, detail::write_pending_stats), as the PostgreSQL writer does; the
    // Writer forgets a job's when it rolls the job back.
    std::vector<domain::StatBump>& pending_stats() { return pending_stats_; }

  private:
    // Looked up by the caller's text as it is, without a std::string made of it each time,
    // and hashed by its length and a few of its bytes, not all of them: the statements are
    // a few dozen, the lookup is on every statement run, and equal hashes are told apart by
    // comparing the whole text.
    struct SqlHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view sql) const noexcept {
            std::uint64_t h = sql.size();
            if (sql.size() >= 8) {
                for (const auto at : {sql.size() / 3, sql.size() * 2 / 3, sql.size() - 8}) {
                    std::uint64_t word = 0;
                    std::memcpy(&word, sql.data() + std::min(at, sql.size() - 8), 8);
                    h = (h ^ word) * 0x9e3779b97f4a7c15ull;
                }
            }
            return static_cast<std::size_t>(h ^ (h >> 29));
        }
    };
    DbPtr db_;
    std::unordered_map<std::string, StmtPtr, SqlHash, std::equal_to<>> cache_;
    std::vector<domain::StatBump> pending_stats_;
};

}  // namespace posthorn::store::sqlite::detail
