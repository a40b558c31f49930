// The shared insides of PgStore, for the .cpp files that implement its parts. Private to
// store/pg.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "core/blocking.hpp"
#include "domain/vocabulary.hpp"
#include "store/detail/lookup_cache.hpp"
#include "store/pg/detail/conn.hpp"
#include "store/pg/detail/listener.hpp"
#include "store/pg/detail/search_indexer.hpp"
#include "store/pg/detail/writer.hpp"
#include "store/pg/pg_store.hpp"

namespace posthorn::store::pg {

namespace detail {

// The channels a commit notifies (writer.hpp) and other nodes listen on (listener.hpp).
inline constexpr const char* kQueueChannel = "posthorn_queue";
inline constexpr const char* kEventChannel = "posthorn_events";
// A commit that changed an API key or a domain: the nodes drop what they cached (Impl::keys).
inline constexpr const char* kLookupChannel = "posthorn_lookups";

// Read connections, one per reader thread: take() waits for a free one; a lease gives it
// back.
class ReaderPool {
  public:
    class Lease {
      public:
        Lease(ReaderPool& pool, Conn conn) : pool_(&pool), conn_(std::move(conn)) {}
        Lease(Lease&&) = delete;
        ~Lease() { pool_->release(std::move(conn_)); }
        Conn& conn() { return conn_; }

      private:
        ReaderPool* pool_;
        Conn conn_;
    };

    void add(Conn c) { free_.push_back(std::move(c)); }
    Conn take() {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return !free_.empty(); });
        Conn c = std::move(free_.back());
        free_.pop_back();
        return c;
    }
    void release(Conn c) {
        {
            std::lock_guard lock(mutex_);
            free_.push_back(std::move(c));
        }
        cv_.notify_one();
    }
    void clear() {
        std::lock_guard lock(mutex_);
        free_.clear();
    }

  private:
    std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<Conn> free_;
};

// The value a stored name stands for (domain/vocabulary.hpp names every value); `fallback`
// for a name this version does not know.
template <class E>
E read_name(std::string_view text, E fallback) {
    return domain::from_name<E>(text).value_or(fallback);
}

// Writes the event into the outbox; route_events() gives it its webhook deliveries. Queued
// (Conn::queue): a failure may come with the job's next statement, or the batch's end.
Result<void> insert_event(Conn& c, Batch& b, const Event& e);

// The hot lookups by a key, each written so that its one fitting index is the only one a plan
// can take, whatever the statistics: a prepared statement's generic plan is made once, often
// on a new table's (no rows yet), and kept until the table is analyzed. A test checks their
// plans on a new database (pg_store_pgtest.cpp). An email by its id ($1), a delivery's
// message (its raw and account, by the id $1), and whether any recipient is due at $1.
extern const std::string kEmailByIdSql;
extern const char* const kEmailRawSql;
extern const std::string kAnyDueSql;

// The email `id` of `account_id` (of any account when it is empty), with its recipients when
// asked; `lock`: FOR UPDATE (pg_emails.cpp).
Result<Email> email_by_id(Conn& c, const std::string& id, const std::string& account_id,
                          bool with_recipients, bool lock = false);
// New emails a statement, at most: the batch's emails wait for this many (or the batch's end)
// before they are written together (Batch::emails).
constexpr std::size_t kEmailsPerStatement = 64;
// Inserts the emails the batch holds (Batch::emails), in one statement, and forgets them
// (pg_emails.cpp).
Result<void> write_emails(Conn& c, Batch& b);
// The writer's last statements of each transaction (Writer's `finish`): the emails still
// waiting in the batch, then its statistics counters (pg_emails.cpp).
error_code finish_batch(Conn& c, Batch& b);
// Adds each bump to its statistics counter (stat_counters, migration 016), making the row
// when there is none; the writer's last statement of each transaction, for the bumps its
// jobs left in the Batch (pg_emails.cpp).
Result<void> add_stats(Conn& c, const std::vector<StatBump>& stats);
// Writes what the rules made of `e`, as EmailStore::change_email does (pg_emails.cpp).
Result<void> write_change(Conn& c, Batch& b, const Email& e, const EmailChange& ch);
// Adds the entry and writes its event, unless the account suppresses the address already
// (then writes nothing); answers whether it added it (pg_suppressions.cpp).
Result<bool> insert_suppression(Conn& c, Batch& b, const SuppressionAdd& add);

}  // namespace detail

using detail::Batch;
using detail::Conn;
using detail::Params;
using detail::Row;
using detail::Rows;

struct PgStore::Impl {
    Impl(std::vector<Conn> writer_conns, std::size_t readers)
        : writer(std::move(writer_conns), detail::finish_batch), reader_threads(readers) {}

    // `fn(Conn&) -> Result<T>` on a reader thread, in a read-only REPEATABLE READ transaction
    // when `snapshot` (so that a page of a list and its total agree even when a commit lands
    // between them); the caller resumes on its own executor. A connection found broken is
    // made again, and a read it broke is tried once more. Not a coroutine, for the reason
    // given at Writer::write.
    template <class F>
    asio::awaitable<std::invoke_result_t<F&, Conn&>> read(F fn, bool snapshot = true) {
        return core::run_blocking(reader_threads.get_executor(),
                                  [this, fn = std::move(fn), snapshot]() mutable {
                                      detail::ReaderPool::Lease lease(readers, readers.take());
                                      return read_now(lease.conn(), fn, snapshot);
                                  });
    }

    template <class F>
    static std::invoke_result_t<F&, Conn&> read_now(Conn& c, F& fn, bool snapshot) {
        using R = std::invoke_result_t<F&, Conn&>;
        for (int attempt = 0;; ++attempt) {
            if (!c.ok())
                if (auto r = c.reconnect(); !r) return R(boost::system::in_place_error, r.error());
            if (snapshot) {
                if (auto b = c.run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); !b) {
                    if (attempt == 0 && !c.ok()) continue;
                    return R(boost::system::in_place_error, b.error());
                }
            }
            R result = fn(c);
            if (snapshot) (void)c.run(result ? "COMMIT" : "ROLLBACK");
            if (!result && attempt == 0 && !c.ok()) continue;  // broken: once more
            return result;
        }
    }

    // Whether a reader finds no row for `sql` (whose one parameter $1, if `now` is given, is
    // `now`): the pollers ask this before they claim through the writer, so that an idle
    // poll costs the writer nothing. A failed read answers false: the claim then goes ahead
    // and reports it.
    asio::awaitable<bool> nothing_due(const char* sql, std::optional<UnixMs> now = {}) {
        auto check = [sql, now](Conn& c) -> Result<bool> {
            Params p;
            if (now) p.add(*now);
            auto rows = c.exec(sql, p);
            if (!rows) return detail::fail<bool>(rows.error());
            return Result<bool>(!rows->empty());
        };
        auto any = co_await read(std::move(check), false);
        co_return any && !*any;
    }

    // The lookups every request makes, its API key and a send's sender domain, answered from
    // memory while nothing changed them. A change is announced to every node (NOTIFY
    // posthorn_lookups with its commit; this store moves on itself once it is committed), and
    // the listener, when its connection was lost and is back, moves on too, since it may
    // have missed some; and whatever happens, nothing cached is older than kLookupMaxAge.
    // Without a listener (it could not connect) nothing is cached.
    static constexpr std::chrono::seconds kLookupMaxAge{10};
    std::uint64_t lookup_epoch() const {
        const auto age = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::steady_clock::now().time_since_epoch()) /
                         kLookupMaxAge;
        return (lookup_changes.load() << 32) | (static_cast<std::uint64_t>(age) & 0xffffffffU);
    }
    template <class V, class F>
    asio::awaitable<Result<V>> read_cached(store::detail::LookupCache<V>& cache, std::string key,
                                           F fn) {
        if (!listener) co_return co_await read(std::move(fn), false);
        const auto e = lookup_epoch();
        if (auto hit = cache.find(key, e)) co_return std::move(*hit);
        Result<V> r = co_await read(std::move(fn), false);
        if (r) cache.put(std::move(key), *r, e);
        co_return r;
    }
    // A write that changes an API key or a domain: announced with its commit, and moving
    // this node on once committed, so that no node answers from a cached copy once the
    // caller has had its answer (the others once the notification is there: milliseconds).
    template <class T, class Fn>
    asio::awaitable<Result<T>> write_lookups(Fn fn) {
        auto job = [fn = std::move(fn)](Conn& c, Batch& b) mutable -> Result<T> {
            b.notify(detail::kLookupChannel);
            return fn(c, b);
        };
        auto r = co_await writer.write<T>(std::move(job));
        ++lookup_changes;
        co_return r;
    }

    // After a commit that queued mail or wrote events, on the caller's executor.
    void queued() const {
        if (queue_listener) queue_listener();
    }
    void events_written() const {
        if (event_listener) event_listener();
    }
    // From the listener's thread (another node's commit), under the lock: the listeners
    // are set before serving, but the thread may be running by then.
    std::function<void()> listener_of(bool queue) {
        std::lock_guard lock(listener_mutex);
        return queue ? queue_listener : event_listener;
    }

    detail::Writer writer;
    asio::thread_pool reader_threads;
    detail::ReaderPool readers;
    std::unique_ptr<detail::Listener> listener;
    std::unique_ptr<detail::SearchIndexer> search_indexer;
    std::atomic<std::uint64_t> lookup_changes{0};
    store::detail::LookupCache<ApiKey> keys;                         // by the key's hash
    store::detail::LookupCache<Domain> domains;                      // by account and name
    store::detail::LookupCache<std::vector<DkimKey>> dkim_keys;      // by domain id
    store::detail::LookupCache<std::vector<Domain>> tracking_hosts;  // by label, NUL, name
    std::mutex log_mutex;
    std::vector<LogEntry> log_buffer;  // guarded by log_mutex: entries not yet taken
    int version = 0;
    std::shared_ptr<std::atomic<bool>> up;  // reachable(): told by every connection
    std::mutex listener_mutex;              // guards the two below against the listener thread
    std::function<void()> queue_listener;   // set before serving, then only read
    std::function<void()> event_listener;   // the same
};

}  // namespace posthorn::store::pg
