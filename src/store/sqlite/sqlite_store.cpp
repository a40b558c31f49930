#include "store/sqlite/sqlite_store.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <condition_variable>
#include <mutex>
#include <vector>

#include <sqlite3.h>
#include <sys/stat.h>

#include "core/blocking.hpp"
#include "core/log.hpp"
#include "store/sqlite/detail/db.hpp"
#include "store/sqlite/detail/impl.hpp"
#include "store/sqlite/detail/migrations.hpp"
#include "store/sqlite/detail/writer.hpp"

namespace posthorn::store::sqlite {

using detail::Db;
using detail::Stmt;

namespace {

// Inside migrate()'s transaction: the migrations the database has not had, in order.
Result<int> apply_migrations(Db& db) {
    auto version_stmt = db.prepare("PRAGMA user_version");
    if (!version_stmt) return version_stmt.error();
    auto row = version_stmt->step();
    if (!row) return row.error();
    int version = static_cast<int>(version_stmt->int64(0));
    (void)version_stmt->step();
    bool applied = false;
    for (const auto& m : detail::migrations()) {
        if (m.version <= version) continue;
        log::info("store: applying migration {}", m.name);
        if (auto r = db.exec(m.sql); !r) return r.error();
        const std::string set = "PRAGMA user_version = " + std::to_string(m.version);
        if (auto r = db.exec(set.c_str()); !r) return r.error();
        version = m.version;
        applied = true;
    }
    // Foreign keys were off (migrate()): whatever a migration did must satisfy them.
    if (applied) {
        auto check = db.prepare("PRAGMA foreign_key_check");
        if (!check) return check.error();
        auto violation = check->step();
        if (!violation) return violation.error();
        if (*violation) {
            log::error("store: a migration broke a foreign key of table {}", check->text(0));
            return errc::io;
        }
    }
    // A migration may edit table definitions in sqlite_schema (006 does): a new schema
    // version makes every connection, this one included, read the definitions again.
    if (applied) {
        auto cookie = db.prepare("PRAGMA schema_version");
        if (!cookie) return cookie.error();
        if (auto r = cookie->step(); !r) return r.error();
        const auto bump = "PRAGMA schema_version = " + std::to_string(cookie->int64(0) + 1);
        (void)cookie->step();
        if (auto r = db.exec(bump.c_str()); !r) return r.error();
    }
    return version;
}

// All or nothing: a migration that fails leaves the database as it was. Foreign keys are
// off meanwhile (a pragma that only takes effect outside a transaction), so that a migration
// can rebuild a table others refer to (008 does): dropping the old one would otherwise
// delete the rows that refer to it.
Result<int> migrate(Db& db) {
    if (auto r = db.exec("PRAGMA foreign_keys=OFF"); !r) return r.error();
    auto version = [&db]() -> Result<int> {
        if (auto r = db.exec("BEGIN IMMEDIATE"); !r) return r.error();
        auto v = apply_migrations(db);
        if (!v) {
            (void)db.exec("ROLLBACK");
            return v.error();
        }
        if (auto r = db.exec("COMMIT"); !r) return r.error();
        return v;
    }();
    if (auto r = db.exec("PRAGMA foreign_keys=ON"); !r) return r.error();
    return version;
}

// The schema version of the database at `path`, 0 when there is none or posthorn never
// migrated it; looked at without writing to it (a read-only connection: not even the
// journal mode changes).
Result<std::int64_t> schema_version_of(const std::string& path) {
    struct stat st {};
    if (path.empty() || path == ":memory:" || ::stat(path.c_str(), &st) != 0 ||
        !S_ISREG(st.st_mode) || st.st_size == 0)
        return 0;
    auto db = Db::open_read_only(path);
    if (!db) return db.error();
    auto version = db->prepare("PRAGMA user_version");
    if (!version) return version.error();
    if (auto row = version->step(); !row) return row.error();
    return version->int64(0);
}

ApiKey read_key(const Stmt& s) {
    return ApiKey{
        .id = s.text(0),
        .account_id = s.text(1),
        .prefix = s.text(2),
        .hash = s.text(3),
        .created_at = s.int64(4),
        .revoked_at = s.opt_int64(5),
        .name = s.text(6),
        // A permission this version does not know: the narrower one.
        .permission = domain::key_permission(s.text(7)).value_or(domain::KeyPermission::sending),
        .domain_id = s.opt_text(8),
        .test = s.int64(9) != 0};
}

constexpr const char* kKeyColumns =
    "id, account_id, prefix, hash, created_at, revoked_at, name, permission, domain_id, test";

Result<ApiKey> key_where(Db& db, const char* where, const std::string& value) {
    auto s = db.prepare(std::string("SELECT ") + kKeyColumns + " FROM api_keys WHERE " + where);
    if (!s) return s.error();
    s->bind(1, value);
    auto row = s->step();
    if (!row) return row.error();
    if (!*row) return errc::not_found;
    return read_key(*s);
}

}  // namespace

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(Options options) {
    if (!options.create) {
        auto version = schema_version_of(options.path);
        if (!version) return version.error();
        if (*version == 0) return errc::no_schema;
    }
    auto wdb = Db::open(options.path, options.create);
    if (!wdb) return wdb.error();
    auto version = migrate(*wdb);
    if (!version) return version.error();
    if (options.readers == 0) options.readers = 1;
    sqlite3* writer_handle = wdb->handle();
    const bool on_file = options.path != ":memory:" && !options.path.empty();
    std::unique_ptr<detail::SearchIndex> search;
    if (options.search_index && on_file) {
        auto index = detail::SearchIndex::open(options.path);
        if (!index) {
            log::error("store: cannot open the search index {}: {}",
                       detail::SearchIndex::path_of(options.path), index.error().message());
            return index.error();
        }
        search = std::move(*index);
    }
    auto impl =
        std::make_unique<Impl>(std::move(*wdb), options.readers, options.path, search != nullptr);
    impl->search_index = std::move(search);
    impl->version = *version;
    // The epoch file (detail/lookup_cache.hpp) is as necessary as the -wal and -shm files:
    // a process that could write the database but not move the count would revoke keys that
    // a server keeps answering from memory. So a store that cannot map it does not open.
    if (options.path != ":memory:" && !options.path.empty()) {
        struct stat st {};
        const unsigned mode = ::stat(options.path.c_str(), &st) == 0 ? st.st_mode : 0644;
        auto epoch = detail::Epoch::open(options.path + "-epoch", mode);
        if (!epoch) {
            log::error("store: cannot map {}-epoch: {}", options.path, epoch.error().message());
            return epoch.error();
        }
        impl->epoch = std::move(*epoch);
    }
    for (std::size_t i = 0; i < options.readers; ++i) {
        auto rdb = detail::open_reader(options.path, impl->search_index != nullptr);
        if (!rdb) return rdb.error();
        impl->reader_pool.add(std::move(*rdb));
    }
    auto cdb = Db::open(options.path, false);
    if (!cdb) return cdb.error();
    impl->checkpointer = std::make_unique<detail::Checkpointer>(std::move(*cdb), writer_handle,
                                                                options.wal_restart_frames);
    impl->writer.between_batches([c = impl->checkpointer.get()](Db& db, bool idle) {
        c->between_batches(db.handle(), idle);
    });
    impl->writer.start();
    if (impl->search_index) impl->search_index->start();
    return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(impl)));
}

SqliteStore::SqliteStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SqliteStore::~SqliteStore() { close(); }

int SqliteStore::schema_version() const { return impl_->version; }

bool SqliteStore::wait_search_indexed(std::chrono::milliseconds limit) {
    return impl_->search_index && impl_->search_index->wait_caught_up(limit);
}

void SqliteStore::close() {
    if (impl_->search_index) impl_->search_index->stop();
    impl_->writer.stop();
    impl_->checkpointer.reset();
    impl_->reader_threads.join();
}

asio::awaitable<Result<void>> SqliteStore::flush() {
    impl_->writer.hurry_lazy();
    return impl_->writer.write<void>([](Db&) -> Result<void> { return {}; });
}

// ---- accounts and keys ----

asio::awaitable<Result<void>> SqliteStore::create_account(Account a) {
    return impl_->writer.write<void>([a = std::move(a)](Db& db) -> Result<void> {
        auto s = db.prepare("INSERT INTO accounts (id, name, created_at) VALUES (?1, ?2, ?3)");
        if (!s) return s.error();
        return s->bind(1, a.id).bind(2, a.name).bind(3, a.created_at).run();
    });
}

asio::awaitable<Result<Account>> SqliteStore::find_account_by_name(std::string name) {
    return impl_->read([name = std::move(name)](Db& db) -> Result<Account> {
        auto s = db.prepare("SELECT id, name, created_at FROM accounts WHERE name = ?1");
        if (!s) return s.error();
        s->bind(1, name);
        auto row = s->step();
        if (!row) return row.error();
        if (!*row) return errc::not_found;
        return Account{.id = s->text(0), .name = s->text(1), .created_at = s->int64(2)};
    });
}

asio::awaitable<Result<void>> SqliteStore::create_api_key(ApiKey k) {
    auto job = [k = std::move(k)](Db& db) -> Result<void> {
        auto s = db.prepare(
            "INSERT INTO api_keys (id, account_id, prefix, hash, created_at, revoked_at, name, "
            "permission, domain_id, test) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
        if (!s) return s.error();
        return s->bind(1, k.id)
            .bind(2, k.account_id)
            .bind(3, k.prefix)
            .bind(4, k.hash)
            .bind(5, k.created_at)
            .bind(6, k.revoked_at)
            .bind(7, k.name)
            .bind(8, domain::name(k.permission))
            .bind(9, k.domain_id)
            .bind(10, k.test ? 1 : 0)
            .run();
    };
    return impl_->write_lookups<void>(std::move(job));
}

namespace {

Result<std::vector<ApiKey>> keys_of(Db& db, const std::string& account_id) {
    auto s = db.prepare(std::string("SELECT ") + kKeyColumns +
                        " FROM api_keys WHERE account_id = ?1 ORDER BY id");
    if (!s) return s.error();
    s->bind(1, account_id);
    std::vector<ApiKey> out;
    for (;;) {
        auto row = s->step();
        if (!row) return row.error();
        if (!*row) return out;
        out.push_back(read_key(*s));
    }
}

}  // namespace

asio::awaitable<Result<std::vector<ApiKey>>> SqliteStore::list_api_keys(std::string account_id) {
    return impl_->read([account_id = std::move(account_id)](Db& db) -> Result<std::vector<ApiKey>> {
        return keys_of(db, account_id);
    });
}

asio::awaitable<Result<ApiKey>> SqliteStore::revoke_api_key(std::string key_id, UnixMs at) {
    auto job = [key_id = std::move(key_id), at](Db& db) -> Result<ApiKey> {
        auto s =
            db.prepare("UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL");
        if (!s) return s.error();
        if (auto r = s->bind(1, key_id).bind(2, at).run(); !r) return r.error();
        return key_where(db, "id = ?1", key_id);
    };
    return impl_->write_lookups<ApiKey>(std::move(job));
}

asio::awaitable<Result<ApiKey>> SqliteStore::revoke_api_key_if(std::string account_id,
                                                               std::string key_id, UnixMs at,
                                                               KeyRevocationCheck may_revoke) {
    // The write transaction (BEGIN IMMEDIATE) holds every other writer off, another
    // process's too: the keys read here are those the update changes.
    auto job = [account_id = std::move(account_id), key_id = std::move(key_id), at,
                may_revoke = std::move(may_revoke)](Db& db) -> Result<ApiKey> {
        auto keys = keys_of(db, account_id);
        if (!keys) return keys.error();
        auto it = std::find_if(keys->begin(), keys->end(),
                               [&](const ApiKey& k) { return k.id == key_id; });
        if (it == keys->end()) return errc::not_found;
        if (it->revoked_at) return *it;
        if (may_revoke && !may_revoke(*it, *keys)) return errc::conflict;
        auto s = db.prepare("UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1");
        if (!s) return s.error();
        if (auto r = s->bind(1, key_id).bind(2, at).run(); !r) return r.error();
        it->revoked_at = at;
        return *it;
    };
    return impl_->write_lookups<ApiKey>(std::move(job));
}

asio::awaitable<Result<ApiKey>> SqliteStore::find_api_key(std::string hash_hex) {
    return impl_->read_cached(impl_->keys, hash_hex, [hash_hex](Db& db) -> Result<ApiKey> {
        return key_where(db, "hash = ?1", hash_hex);
    });
}

// ---- dashboard sessions ----

asio::awaitable<Result<void>> SqliteStore::create_session(DashboardSession d) {
    return impl_->writer.write<void>([d = std::move(d)](Db& db) -> Result<void> {
        auto s = db.prepare(
            "INSERT INTO dashboard_sessions (id_hash, account_id, key_id, csrf_token, created_at, "
            "expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
        if (!s) return s.error();
        return s->bind(1, d.id_hash)
            .bind(2, d.account_id)
            .bind(3, d.key_id)
            .bind(4, d.csrf_token)
            .bind(5, d.created_at)
            .bind(6, d.expires_at)
            .run();
    });
}

asio::awaitable<Result<SessionWithKey>> SqliteStore::find_session(std::string id_hash) {
    return impl_->read([id_hash = std::move(id_hash)](Db& db) -> Result<SessionWithKey> {
        auto s = db.prepare(
            "SELECT k.id, k.account_id, k.prefix, k.hash, k.created_at, k.revoked_at, k.name, "
            "k.permission, k.domain_id, k.test, s.account_id, s.key_id, s.csrf_token, "
            "s.created_at, s.expires_at FROM dashboard_sessions s "
            "JOIN api_keys k ON k.id = s.key_id WHERE s.id_hash = ?1");
        if (!s) return s.error();
        s->bind(1, id_hash);
        auto row = s->step();
        if (!row) return row.error();
        if (!*row) return errc::not_found;
        return SessionWithKey{.session = {.id_hash = id_hash,
                                          .account_id = s->text(10),
                                          .key_id = s->text(11),
                                          .csrf_token = s->text(12),
                                          .created_at = s->int64(13),
                                          .expires_at = s->int64(14)},
                              .key = read_key(*s)};
    });
}

asio::awaitable<Result<bool>> SqliteStore::delete_session(std::string id_hash) {
    return impl_->writer.write<bool>([id_hash = std::move(id_hash)](Db& db) -> Result<bool> {
        auto s = db.prepare("DELETE FROM dashboard_sessions WHERE id_hash = ?1");
        using R = Result<bool>;
        if (!s) return R(boost::system::in_place_error, s.error());
        if (auto r = s->bind(1, id_hash).run(); !r)
            return R(boost::system::in_place_error, r.error());
        return R(db.changes() > 0);
    });
}

asio::awaitable<Result<std::int64_t>> SqliteStore::delete_expired_sessions(UnixMs now) {
    return impl_->writer.write<std::int64_t>([now](Db& db) -> Result<std::int64_t> {
        auto s = db.prepare("DELETE FROM dashboard_sessions WHERE expires_at <= ?1");
        if (!s) return s.error();
        if (auto r = s->bind(1, now).run(); !r) return r.error();
        return db.changes();
    });
}

// ---- request log ----

namespace {

// The request log's INSERT for 1, 2, 4 … kLogRows rows (?1…?10 the first row's, ?11…?20
// the second's…). One statement's rows share its cursor, so that each row after the first
// is appended where the last one went (the entries of a batch come in key order, mostly)
// instead of sought from the root of the B-tree: −26% of the writer's work a logged request.
constexpr std::size_t kLogRows = 32;
constexpr std::size_t kLogColumns = 10;

const std::string& insert_logs_sql(std::size_t rows) {
    static const auto kSql = [] {
        std::array<std::string, std::countr_zero(kLogRows) + 1> sql;
        for (std::size_t k = 0; k < sql.size(); ++k) {
            sql[k] =
                "INSERT INTO request_logs (account_id, created_at, id, method, url, status, "
                "duration_ms, ip, user_agent, session) VALUES ";
            for (std::size_t r = 0; r < (std::size_t{1} << k); ++r) {
                sql[k] += r ? ",(" : "(";
                for (std::size_t c = 1; c <= kLogColumns; ++c)
                    sql[k] += (c > 1 ? ",?" : "?") + std::to_string(r * kLogColumns + c);
                sql[k] += ')';
            }
        }
        return sql;
    }();
    return kSql.at(static_cast<std::size_t>(std::countr_zero(rows)));
}

// Inserts entries [first, first + rows) with one statement; `rows` a power of two.
Result<void> insert_log_rows(Db& db, const std::vector<LogEntry>& entries, std::size_t first,
                             std::size_t rows) {
    auto s = db.prepare(insert_logs_sql(rows));
    if (!s) return s.error();
    for (std::size_t r = 0; r < rows; ++r) {
        const auto& e = entries[first + r];
        const int at = static_cast<int>(r * kLogColumns);
        s->bind_ref(at + 1, e.account_id)  // `entries` outlive the run: no copies
            .bind(at + 2, e.created_at)
            .bind_ref(at + 3, e.id)
            .bind_ref(at + 4, e.method)
            .bind_ref(at + 5, e.url)
            .bind(at + 6, e.status)
            .bind(at + 7, e.duration_ms)
            .bind_ref(at + 8, e.ip)
            .bind_ref(at + 9, e.user_agent)
            .bind(at + 10, static_cast<std::int64_t>(e.session));
    }
    return s->run();
}

// Inserts the entries and adds each account's number to its count, one update per account.
// An entry that cannot be written is left out (and not counted); the others go on, unless
// the failure took the transaction with it.
error_code insert_logs(Db& db, const std::vector<LogEntry>& entries) {
    std::vector<std::pair<std::string_view, std::int64_t>> counts;  // few accounts a batch
    auto count = [&](const LogEntry& e) {
        auto it = std::find_if(counts.begin(), counts.end(),
                               [&](const auto& c) { return c.first == e.account_id; });
        if (it == counts.end())
            counts.emplace_back(e.account_id, 1);
        else
            ++it->second;
    };
    // In statements of 32 rows, then of the powers of two that make up the rest; when one
    // fails, its rows go again one by one, so that one bad entry costs only itself.
    for (std::size_t first = 0; first < entries.size();) {
        const std::size_t left = entries.size() - first;
        const std::size_t rows = left >= kLogRows ? kLogRows : std::bit_floor(left);
        auto r = insert_log_rows(db, entries, first, rows);
        if (!r && sqlite3_get_autocommit(db.handle())) return r.error();  // rolled back
        for (std::size_t i = first; i < first + rows; ++i) {
            if (!r) {  // each row again on its own, unless it was alone
                auto one = rows > 1 ? insert_log_rows(db, entries, i, 1) : r;
                if (!one) {
                    if (sqlite3_get_autocommit(db.handle())) return one.error();
                    log::warn("request log write failed: {}", one.error().message());
                    continue;
                }
            }
            count(entries[i]);
        }
        first += rows;
    }
    for (const auto& [account_id, n] : counts) {
        auto c = db.prepare(
            "INSERT INTO request_log_counts (account_id, n) VALUES (?1, ?2) "
            "ON CONFLICT (account_id) DO UPDATE SET n = n + excluded.n");
        if (!c) return c.error();
        if (auto r = c->bind(1, account_id).bind(2, n).run(); !r) return r.error();
    }
    return {};
}

}  // namespace

// Entries wait in the store's buffer; the first of them submits the lazy write that takes
// them all (it goes within about 25 ms: detail/writer.hpp), so that a batch of entries
// updates each account's count once, where a trigger (until migration 007) did it for
// every entry.
void SqliteStore::append_log(LogEntry e) {
    {
        std::lock_guard lock(impl_->log_mutex);
        impl_->log_buffer.push_back(std::move(e));
        if (impl_->log_buffer.size() > 1) return;  // the write that takes it is on its way
    }
    impl_->writer.submit(
        [impl = impl_.get(), entries = std::vector<LogEntry>(),
         taken = false](Db& db) mutable -> error_code {
            if (!taken) {  // a batch may run twice (detail/writer.hpp): the same entries
                std::lock_guard lock(impl->log_mutex);
                entries.swap(impl->log_buffer);
                taken = true;
            }
            return insert_logs(db, entries);
        },
        {});
}

asio::awaitable<Result<Page<LogEntry>>> SqliteStore::list_logs(LogQuery q) {
    return impl_->read([q = std::move(q)](Db& db) -> Result<Page<LogEntry>> {
        // Only the filters that are set go into the SQL, so that the planner reads the
        // account's range of the table's key, (account_id, created_at, id), in order.
        std::string where = " FROM request_logs WHERE account_id = ?1";
        if (q.status) where += " AND status = ?2";
        if (q.method) where += " AND method = ?3";
        Page<LogEntry> page;
        {
            auto c =
                db.prepare(q.status || q.method
                               ? "SELECT COUNT(*)" + where
                               : std::string("SELECT COALESCE((SELECT n FROM request_log_counts "
                                             "WHERE account_id = ?1), 0)"));
            if (!c) return c.error();
            c->bind(1, q.account_id);
            if (q.status) c->bind(2, *q.status);
            if (q.method) c->bind(3, *q.method);
            auto row = c->step();
            if (!row) return row.error();
            page.total = c->int64(0);
        }
        const char* order = q.order == SortOrder::asc ? " ORDER BY created_at ASC, id ASC"
                                                      : " ORDER BY created_at DESC, id DESC";
        auto s = db.prepare(
            "SELECT id, created_at, method, url, status, duration_ms, ip, "
            "user_agent, session" +
            where + order + " LIMIT ?4 OFFSET ?5");
        if (!s) return s.error();
        s->bind(1, q.account_id).bind(4, q.limit).bind(5, (q.page - 1) * q.limit);
        if (q.status) s->bind(2, *q.status);
        if (q.method) s->bind(3, *q.method);
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) break;
            page.items.push_back(LogEntry{.id = s->text(0),
                                          .account_id = q.account_id,
                                          .created_at = s->int64(1),
                                          .method = s->text(2),
                                          .url = s->text(3),
                                          .status = static_cast<int>(s->int64(4)),
                                          .duration_ms = s->int64(5),
                                          .ip = s->text(6),
                                          .user_agent = s->text(7),
                                          .session = s->int64(8) != 0});
        }
        return page;
    });
}

asio::awaitable<Result<std::int64_t>> SqliteStore::delete_logs_before(UnixMs cutoff) {
    // Each account's entries from the start of its range of the key up to the cutoff.
    return impl_->writer.write<std::int64_t>([cutoff](Db& db) -> Result<std::int64_t> {
        auto s = db.prepare(
            "DELETE FROM request_logs WHERE account_id IN (SELECT id FROM accounts) "
            "AND created_at < ?1");
        if (!s) return s.error();
        if (auto r = s->bind(1, cutoff).run(); !r) return r.error();
        return db.changes();
    });
}

asio::awaitable<Result<bool>> SqliteStore::take_job_lease(std::string job, std::string owner,
                                                          UnixMs now, UnixMs until) {
    return impl_->writer.write<bool>(
        [job = std::move(job), owner = std::move(owner), now, until](Db& db) -> Result<bool> {
            // Taken when there is none, it ran out, or it is the owner's own (extended).
            auto s = db.prepare(
                "INSERT INTO job_leases (job, owner, lease_until) VALUES (?1, ?2, ?4) "
                "ON CONFLICT (job) DO UPDATE SET owner = ?2, lease_until = ?4 "
                "WHERE job_leases.owner = ?2 OR job_leases.lease_until <= ?3");
            using R = Result<bool>;
            if (!s) return R(boost::system::in_place_error, s.error());
            if (auto r = s->bind(1, job).bind(2, owner).bind(3, now).bind(4, until).run(); !r)
                return R(boost::system::in_place_error, r.error());
            return R(db.changes() > 0);
        });
}

asio::awaitable<Result<SendCounts>> SqliteStore::add_sends(std::string account_id,
                                                           std::int64_t since, std::int64_t second,
                                                           std::int64_t n, std::int64_t cap) {
    return impl_->writer.write<SendCounts>(
        [account = std::move(account_id), since, second, n, cap](Db& db) -> Result<SendCounts> {
            using R = Result<SendCounts>;
            auto drop = db.prepare("DELETE FROM send_counts WHERE account_id = ?1 AND second < ?2");
            if (!drop) return R(boost::system::in_place_error, drop.error());
            if (auto r = drop->bind(1, account).bind(2, since).run(); !r)
                return R(boost::system::in_place_error, r.error());
            auto sum = db.prepare(
                "SELECT coalesce(sum(n), 0), coalesce(min(CASE WHEN n > 0 THEN second END), 0) "
                "FROM send_counts WHERE account_id = ?1 AND second <= ?2");
            if (!sum) return R(boost::system::in_place_error, sum.error());
            sum->bind(1, account).bind(2, second);
            auto row = sum->step();
            if (!row) return R(boost::system::in_place_error, row.error());
            SendCounts out{.total = sum->int64(0), .oldest_second = sum->int64(1)};
            out.added = n < 0 ? n : std::clamp<std::int64_t>(cap - out.total, 0, n);
            if (out.added == 0) return R(out);
            auto add = db.prepare(
                "INSERT INTO send_counts (account_id, second, n) VALUES (?1, ?2, ?3) "
                "ON CONFLICT (account_id, second) DO UPDATE SET n = n + excluded.n");
            if (!add) return R(boost::system::in_place_error, add.error());
            if (auto r = add->bind(1, account).bind(2, second).bind(3, out.added).run(); !r)
                return R(boost::system::in_place_error, r.error());
            out.total += out.added;
            if (out.oldest_second == 0 && out.added > 0) out.oldest_second = second;
            return R(out);
        });
}

}  // namespace posthorn::store::sqlite
