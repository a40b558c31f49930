// The shared insides of SqliteStore, for the .cpp files that implement its parts
// (sqlite_store.cpp, sqlite_domains.cpp). Private to store/sqlite.
#pragma once

#include <condition_variable>
#include <mutex>
#include <vector>

#include "core/blocking.hpp"
#include "core/text.hpp"
#include "domain/vocabulary.hpp"
#include "store/sqlite/detail/checkpointer.hpp"
#include "store/sqlite/detail/db.hpp"
#include "store/sqlite/detail/events.hpp"
#include "store/sqlite/detail/lookup_cache.hpp"
#include "store/sqlite/detail/recent_messages.hpp"
#include "store/sqlite/detail/search_index.hpp"
#include "store/sqlite/detail/writer.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace posthorn::store::sqlite {

namespace detail {
// A read-only connection to the database at `path`, with its search index attached (as
// schema `search`) when `search` is set.
inline Result<Db> open_reader(const std::string& path, bool search) {
    auto db = Db::open(path, false);
    if (!db) return db;
    if (search)
        if (auto r = attach_search_index(*db, path); !r) return r.error();
    (void)db->exec("PRAGMA query_only=ON");
    return db;
}

// Read connections: a fixed set, one per reader thread (take() waits for a free one), or,
// made with the database's path, a set that grows (take_or_open() opens a connection when
// none is free: as many as threads have used at once). A lease returns its connection.
class ReaderPool {
  public:
    class Lease {
      public:
        Lease(ReaderPool& pool, Db db) : pool_(&pool), db_(std::move(db)) {}
        Lease(Lease&&) = delete;
        ~Lease() { pool_->release(std::move(db_)); }
        Db& db() { return db_; }

      private:
        ReaderPool* pool_;
        Db db_;
    };

    ReaderPool() = default;
    ReaderPool(std::string path, bool search) : path_(std::move(path)), search_(search) {}

    void add(Db db) { free_.push_back(std::move(db)); }
    Db take() {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return !free_.empty(); });
        return pop();
    }
    Result<Db> take_or_open() {
        {
            std::lock_guard lock(mutex_);
            if (!free_.empty()) return pop();
        }
        return open_reader(path_, search_);
    }
    void release(Db db) {
        {
            std::lock_guard lock(mutex_);
            free_.push_back(std::move(db));
        }
        cv_.notify_one();
    }

  private:
    Db pop() {  // under mutex_, with a free connection
        Db db = std::move(free_.back());
        free_.pop_back();
        return db;
    }

    const std::string path_;
    const bool search_ = false;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<Db> free_;
};

// The value a stored name stands for (domain/vocabulary.hpp names every value); `fallback`
// for a name this version does not know.
template <class E>
E read_name(std::string_view text, E fallback) {
    return domain::from_name<E>(text).value_or(fallback);
}

// A write job: `sql` lifts the leases of owner ?1, answering how many it lifted. The queue
// and the webhook outbox use it at start.
inline auto lift_leases(const char* sql, std::string owner) {
    return [sql, owner = std::move(owner)](Db& db) -> Result<std::int64_t> {
        auto s = db.prepare(sql);
        if (!s) return s.error();
        if (auto r = s->bind(1, owner).run(); !r) return r.error();
        return db.changes();
    };
}

// The email `where` finds (?1 = a, ?2 = b unless empty), with its recipients when asked
// (sqlite_emails.cpp).
Result<Email> email_where(Db& db, const char* where, const std::string& a, const std::string& b,
                          bool with_recipients = true);
// Writes what the rules made of `e`, as EmailStore::change_email does (sqlite_emails.cpp).
Result<void> write_change(Db& db, const Email& e, const EmailChange& c);
// Adds the entry and writes its event, unless the account suppresses the address already
// (then writes nothing); answers whether it added it (sqlite_suppressions.cpp).
Result<bool> insert_suppression(Db& db, const SuppressionAdd& add);

}  // namespace detail

using core::json_string;
using detail::Db;
using detail::insert_event;
using detail::Stmt;

struct SqliteStore::Impl {
    Impl(Db writer_db, std::size_t readers, std::string path, bool search)
        : writer(std::move(writer_db)),
          reader_threads(readers),
          local_readers(std::move(path), search) {}

    // Not a coroutine, for the reason given at Writer::write.
    template <class F>
    asio::awaitable<std::invoke_result_t<F&, Db&>> read(F fn) {
        return core::run_blocking(
            reader_threads.get_executor(), [this, fn = std::move(fn)]() mutable {
                detail::ReaderPool::Lease lease(reader_pool, reader_pool.take());
                // One snapshot for all the statements of the read: a page and its total
                // agree even when a commit lands between them.
                auto& db = lease.db();
                (void)db.run("BEGIN");
                auto result = fn(db);
                (void)db.run("COMMIT");
                return result;
            });
    }

    // A point read by an index (an API key, a sending domain, an idempotency key: what every
    // request or send looks up) on the caller's own thread: it takes microseconds, less
    // than handing it to a reader thread and back, and a WAL reader never waits for the
    // writer. Everything else goes through read().
    template <class F>
    std::invoke_result_t<F&, Db&> read_now(F& fn) {
        using R = std::invoke_result_t<F&, Db&>;
        auto db = local_readers.take_or_open();
        if (!db) return R(boost::system::in_place_error, db.error());
        detail::ReaderPool::Lease lease(local_readers, std::move(*db));
        return fn(lease.db());
    }
    template <class F>
    asio::awaitable<std::invoke_result_t<F&, Db&>> read_here(F fn) {
        return ready(read_now(fn));
    }
    // read_now() of a row that `cache` may hold under `key` (detail/lookup_cache.hpp).
    template <class V, class F>
    asio::awaitable<Result<V>> read_cached(detail::LookupCache<V>& cache, const std::string& key,
                                           F fn) {
        if (!epoch.valid()) return ready(read_now(fn));
        const auto e = epoch.load();
        if (auto hit = cache.find(key, e)) return ready(Result<V>(std::move(*hit)));
        Result<V> r = read_now(fn);
        if (r) cache.put(key, *r, e);
        return ready(std::move(r));
    }
    // A write that changes an API key or a domain: the epoch moves once it is committed, so
    // that no process answers from a cached copy once the caller has had its answer.
    template <class T, class Fn>
    asio::awaitable<Result<T>> write_lookups(Fn fn) {
        auto r = co_await writer.write<T>(std::move(fn));
        epoch.bump();
        co_return r;
    }
    template <class T>
    static asio::awaitable<T> ready(T value) {
        co_return value;
    }

    // Whether a reader finds no row for `sql` (whose one parameter ?1, if `now` is given, is
    // `now`): the pollers ask this before they claim through the writer, so that an idle
    // poll costs the writer nothing. A failed read answers false: the claim then goes ahead
    // and reports it.
    asio::awaitable<bool> nothing_due(const char* sql, std::optional<UnixMs> now = {}) {
        auto check = [sql, now](Db& db) -> Result<bool> {
            using R = Result<bool>;  // a bool and an error code would be ambiguous
            auto s = db.prepare(sql);
            if (!s) return R(boost::system::in_place_error, s.error());
            if (now) s->bind(1, *now);
            auto row = s->step();
            if (!row) return R(boost::system::in_place_error, row.error());
            return R(*row);
        };
        auto any = co_await read(std::move(check));
        co_return any && !*any;
    }

    detail::Writer writer;
    std::unique_ptr<detail::Checkpointer> checkpointer;  // after the writer has stopped
    asio::thread_pool reader_threads;
    detail::ReaderPool reader_pool;
    detail::ReaderPool local_readers;  // for read_here: grows as needed
    std::mutex log_mutex;
    std::vector<LogEntry> log_buffer;     // guarded by log_mutex: entries not yet taken
    detail::Epoch epoch;                  // moved by every committed change of a key or domain
    detail::LookupCache<ApiKey> keys;     // by hash
    detail::LookupCache<Domain> domains;  // by account id, NUL, name
    detail::LookupCache<std::vector<DkimKey>> dkim_keys;      // by domain id
    detail::LookupCache<std::vector<Domain>> tracking_hosts;  // by label, NUL, name
    int version = 0;
    std::function<void()> queue_listener;               // set before serving, then only read
    std::function<void()> event_listener;               // the same
    std::unique_ptr<detail::SearchIndex> search_index;  // null without one (":memory:")
    detail::RecentMessages recent_messages{32u << 20};
    // After a commit that wrote events: the router may route them now.
    void events_written() const {
        if (event_listener) event_listener();
    }
};

}  // namespace posthorn::store::sqlite
