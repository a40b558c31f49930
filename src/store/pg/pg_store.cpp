// PgStore: opening (connections, migrations, the threads), accounts and API keys, the
// request log, job leases.
#include "store/pg/pg_store.hpp"

#include <algorithm>

#include "core/log.hpp"
#include "store/pg/detail/impl.hpp"
#include "store/pg/detail/migrations.hpp"

namespace posthorn::store::pg {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

// Replaces the value of each `password=` in `s` (up to `stop`, a space or the end) with ***.
std::string redact_parameter(std::string s, std::string_view stops) {
    static constexpr std::string_view kKey = "password=";
    for (std::size_t at = s.find(kKey); at != std::string::npos; at = s.find(kKey, at + 1)) {
        const bool starts = at == 0 || stops.find(s[at - 1]) != std::string_view::npos ||
                            s[at - 1] == '?' || s[at - 1] == ' ';
        if (!starts) continue;
        const std::size_t from = at + kKey.size();
        std::size_t to = from;
        if (to < s.size() && s[to] == '\'') {  // a quoted value: up to the closing quote
            for (++to; to < s.size() && s[to] != '\''; ++to)
                if (s[to] == '\\') ++to;
            to = std::min(to + 1, s.size());
        } else {
            while (to < s.size() && stops.find(s[to]) == std::string_view::npos) ++to;
        }
        s.replace(from, to - from, "***");
    }
    return s;
}

}  // namespace

bool is_pg_url(std::string_view url) {
    return starts_with(url, "postgresql://") || starts_with(url, "postgres://");
}

std::string redact_url(std::string_view url) {
    const auto scheme = url.find("://");
    if (scheme == std::string_view::npos) return redact_parameter(std::string(url), " \t\n");
    // scheme://[user[:password]@]host…: the user info ends at the last @ of the authority.
    std::string out(url);
    const std::size_t start = scheme + 3;
    const std::size_t end = std::min(out.find_first_of("/?#", start), out.size());
    const std::size_t at = out.rfind('@', end);
    if (at != std::string::npos && at >= start) {
        const std::size_t colon = out.find(':', start);
        if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
    return redact_parameter(std::move(out), "&#");
}

Result<std::unique_ptr<PgStore>> PgStore::open(Options options) {
    auto first = Conn::open(options.url);
    if (!first) return first.error();
    // Every connection tells whether the server can be reached (reachable()).
    auto up = std::make_shared<std::atomic<bool>>(true);
    first->report_to(up);
    auto version = detail::migrate(*first, detail::migrations(), options.create);
    if (!version) return version.error();
    if (options.readers == 0) options.readers = 1;
    std::vector<Conn> readers;
    for (std::size_t i = 0; i < options.readers; ++i) {
        auto c = Conn::open(options.url);
        if (!c) return c.error();
        c->report_to(up);
        readers.push_back(std::move(*c));
    }
    // The writer's lanes: the connection that migrated, and more.
    std::vector<Conn> writers;
    writers.push_back(std::move(*first));
    while (writers.size() < detail::Writer::kLanes) {
        auto c = Conn::open(options.url);
        if (!c) return c.error();
        c->report_to(up);
        writers.push_back(std::move(*c));
    }
    std::optional<Conn> listening;
    if (options.listen) {
        auto c = Conn::open(options.url);
        if (!c) return c.error();
        c->report_to(up);
        listening = std::move(*c);
    }
    auto indexing = Conn::open(options.url);
    if (!indexing) return indexing.error();
    auto impl = std::make_unique<Impl>(std::move(writers), options.readers);
    impl->version = *version;
    impl->up = up;
    for (auto& c : readers) impl->readers.add(std::move(c));
    if (listening) {
        Impl* self = impl.get();
        std::vector<detail::Listener::Channel> channels{
            {detail::kQueueChannel,
             [self] {
                 if (auto f = self->listener_of(true)) f();
             }},
            {detail::kEventChannel,
             [self] {
                 if (auto f = self->listener_of(false)) f();
             }},
            {detail::kLookupChannel, [self] { ++self->lookup_changes; }}};
        impl->listener = std::make_unique<detail::Listener>(
            std::move(*listening), std::move(channels),
            [self](int pid) { return self->writer.owns_backend(pid); });
        impl->listener->start();
    }
    impl->writer.start();
    const detail::Writer* writer = &impl->writer;
    impl->search_indexer = std::make_unique<detail::SearchIndexer>(std::move(*indexing), [writer] {
        return std::chrono::steady_clock::now() - writer->last_submit() >=
               detail::SearchIndexer::kQuiet;
    });
    if (options.index_searches) impl->search_indexer->start();
    return std::unique_ptr<PgStore>(new PgStore(std::move(impl)));
}

PgStore::PgStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PgStore::~PgStore() { close(); }

int PgStore::schema_version() const { return impl_->version; }

bool PgStore::reachable() const noexcept { return impl_->up->load(); }

Result<std::int64_t> PgStore::index_searches() { return impl_->search_indexer->index_all(); }

void PgStore::close() {
    impl_->search_indexer->stop();
    if (impl_->listener) impl_->listener->stop();
    impl_->writer.stop();
    impl_->reader_threads.join();
    impl_->readers.clear();
    impl_->listener.reset();
}

asio::awaitable<Result<void>> PgStore::flush() { return impl_->writer.drained(); }

void PgStore::set_queue_listener(std::function<void()> listener) {
    std::lock_guard lock(impl_->listener_mutex);
    impl_->queue_listener = std::move(listener);
}

void PgStore::set_event_listener(std::function<void()> listener) {
    std::lock_guard lock(impl_->listener_mutex);
    impl_->event_listener = std::move(listener);
}

// ---- accounts and keys ----

namespace {

constexpr const char* kKeyColumns =
    "id, account_id, prefix, hash, created_at, revoked_at, name, permission, domain_id, test";

ApiKey read_key(const Row& r) {
    return ApiKey{
        .id = r.text(0),
        .account_id = r.text(1),
        .prefix = r.text(2),
        .hash = r.text(3),
        .created_at = r.int64(4),
        .revoked_at = r.opt_int64(5),
        .name = r.text(6),
        // A permission this version does not know: the narrower one.
        .permission = domain::key_permission(r.text(7)).value_or(domain::KeyPermission::sending),
        .domain_id = r.opt_text(8),
        .test = r.boolean(9)};
}

Result<ApiKey> one_key(const Result<Rows>& rows) {
    if (!rows) return rows.error();
    if (rows->empty()) return errc::not_found;
    return read_key(rows->row(0));
}

}  // namespace

asio::awaitable<Result<void>> PgStore::create_account(Account a) {
    return impl_->writer.write<void>([a = std::move(a)](Conn& c, Batch&) -> Result<void> {
        auto r = c.exec("INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)",
                        Params().add(a.id).add(a.name).add(a.created_at));
        if (!r) return r.error();
        return {};
    });
}

asio::awaitable<Result<Account>> PgStore::find_account_by_name(std::string name) {
    return impl_->read(
        [name = std::move(name)](Conn& c) -> Result<Account> {
            auto rows = c.exec("SELECT id, name, created_at FROM accounts WHERE name = $1",
                               Params().add(name));
            if (!rows) return rows.error();
            if (rows->empty()) return errc::not_found;
            const auto r = rows->row(0);
            return Account{.id = r.text(0), .name = r.text(1), .created_at = r.int64(2)};
        },
        false);
}

asio::awaitable<Result<void>> PgStore::create_api_key(ApiKey k) {
    return impl_->writer.write<void>([k = std::move(k)](Conn& c, Batch&) -> Result<void> {
        auto r = c.exec(
            "INSERT INTO api_keys (id, account_id, prefix, hash, created_at, revoked_at, name, "
            "permission, domain_id, test) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            Params()
                .add(k.id)
                .add(k.account_id)
                .add(k.prefix)
                .add(k.hash)
                .add(k.created_at)
                .add(k.revoked_at)
                .add(k.name)
                .add(domain::name(k.permission))
                .add(k.domain_id)
                .add(k.test));
        if (!r) return r.error();
        return {};
    });
}

asio::awaitable<Result<std::vector<ApiKey>>> PgStore::list_api_keys(std::string account_id) {
    return impl_->read(
        [account_id = std::move(account_id)](Conn& c) -> Result<std::vector<ApiKey>> {
            auto rows = c.exec(std::string("SELECT ") + kKeyColumns +
                                   " FROM api_keys WHERE account_id = $1 ORDER BY id",
                               Params().add(account_id));
            if (!rows) return rows.error();
            return rows->map(read_key);
        },
        false);
}

asio::awaitable<Result<ApiKey>> PgStore::revoke_api_key(std::string key_id, UnixMs at) {
    // Revoking twice keeps the first time.
    return impl_->write_lookups<ApiKey>(
        [key_id = std::move(key_id), at](Conn& c, Batch&) -> Result<ApiKey> {
            return one_key(
                c.exec(std::string("UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2) "
                                   "WHERE id = $1 RETURNING ") +
                           kKeyColumns,
                       Params().add(key_id).add(at)));
        });
}

asio::awaitable<Result<ApiKey>> PgStore::revoke_api_key_if(std::string account_id,
                                                           std::string key_id, UnixMs at,
                                                           KeyRevocationCheck may_revoke) {
    // The account's keys locked (in the order of their ids, as every revocation locks them):
    // a revocation on another node waits for this one's commit, then reads what it wrote,
    // so that two revocations at once cannot both take the last full key.
    return impl_->write_lookups<ApiKey>(
        [account_id = std::move(account_id), key_id = std::move(key_id), at,
         may_revoke = std::move(may_revoke)](Conn& c, Batch&) -> Result<ApiKey> {
            auto rows = c.exec(std::string("SELECT ") + kKeyColumns +
                                   " FROM api_keys WHERE account_id = $1 ORDER BY id FOR UPDATE",
                               Params().add(account_id));
            if (!rows) return rows.error();
            auto keys = rows->map(read_key);
            auto it = std::find_if(keys.begin(), keys.end(),
                                   [&](const ApiKey& k) { return k.id == key_id; });
            if (it == keys.end()) return errc::not_found;
            if (it->revoked_at) return *it;
            if (may_revoke && !may_revoke(*it, keys)) return errc::conflict;
            auto r = c.exec("UPDATE api_keys SET revoked_at = $2 WHERE id = $1",
                            Params().add(key_id).add(at));
            if (!r) return r.error();
            it->revoked_at = at;
            return *it;
        });
}

asio::awaitable<Result<ApiKey>> PgStore::find_api_key(std::string hash_hex) {
    // Cached until a change of a key or a domain on any node (Impl::read_cached).
    auto key = hash_hex;
    return impl_->read_cached(
        impl_->keys, std::move(key), [hash_hex = std::move(hash_hex)](Conn& c) -> Result<ApiKey> {
            return one_key(
                c.exec(std::string("SELECT ") + kKeyColumns + " FROM api_keys WHERE hash = $1",
                       Params().add(hash_hex)));
        });
}

// ---- dashboard sessions ----

asio::awaitable<Result<void>> PgStore::create_session(DashboardSession d) {
    return impl_->writer.write<void>([d = std::move(d)](Conn& c, Batch&) -> Result<void> {
        auto r = c.exec(
            "INSERT INTO dashboard_sessions (id_hash, account_id, key_id, csrf_token, created_at, "
            "expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
            Params()
                .add(d.id_hash)
                .add(d.account_id)
                .add(d.key_id)
                .add(d.csrf_token)
                .add(d.created_at)
                .add(d.expires_at));
        if (!r) return r.error();
        return {};
    });
}

asio::awaitable<Result<SessionWithKey>> PgStore::find_session(std::string id_hash) {
    return impl_->read(
        [id_hash = std::move(id_hash)](Conn& c) -> Result<SessionWithKey> {
            auto rows = c.exec(
                "SELECT k.id, k.account_id, k.prefix, k.hash, k.created_at, k.revoked_at, "
                "k.name, k.permission, k.domain_id, k.test, s.account_id, s.key_id, "
                "s.csrf_token, s.created_at, s.expires_at FROM dashboard_sessions s "
                "JOIN api_keys k ON k.id = s.key_id WHERE s.id_hash = $1",
                Params().add(id_hash));
            if (!rows) return rows.error();
            if (rows->empty()) return errc::not_found;
            const auto r = rows->row(0);
            return SessionWithKey{.session = {.id_hash = id_hash,
                                              .account_id = r.text(10),
                                              .key_id = r.text(11),
                                              .csrf_token = r.text(12),
                                              .created_at = r.int64(13),
                                              .expires_at = r.int64(14)},
                                  .key = read_key(r)};
        },
        false);
}

asio::awaitable<Result<bool>> PgStore::delete_session(std::string id_hash) {
    return impl_->writer.write<bool>([id_hash = std::move(id_hash)](Conn& c,
                                                                    Batch&) -> Result<bool> {
        auto r = c.exec("DELETE FROM dashboard_sessions WHERE id_hash = $1", Params().add(id_hash));
        if (!r) return detail::fail<bool>(r.error());
        return Result<bool>(r->affected() > 0);
    });
}

asio::awaitable<Result<std::int64_t>> PgStore::delete_expired_sessions(UnixMs now) {
    return impl_->writer.write<std::int64_t>([now](Conn& c, Batch&) -> Result<std::int64_t> {
        auto r = c.exec("DELETE FROM dashboard_sessions WHERE expires_at <= $1", Params().add(now));
        if (!r) return r.error();
        return r->affected();
    });
}

// ---- request log ----

namespace {

// The entries as one statement: a column an array, a row a position (unnest).
constexpr const char* kInsertLogs =
    "INSERT INTO request_logs (account_id, created_at, id, method, url, status, duration_ms, "
    "ip, user_agent, session) SELECT a, t, i, m, u, s, d, ip, ua, se <> 0 FROM unnest($1::text[], "
    "$2::int8[], $3::text[], $4::text[], $5::text[], $6::int8[], $7::int8[], $8::text[], "
    "$9::text[], $10::int8[]) AS x (a, t, i, m, u, s, d, ip, ua, se) ON CONFLICT DO NOTHING";

Result<void> insert_log_rows(Conn& c, const std::vector<LogEntry>& entries, std::size_t first,
                             std::size_t n) {
    std::vector<std::string_view> accounts, ids, methods, urls, ips, agents;
    std::vector<std::int64_t> times, statuses, durations, sessions;
    for (std::size_t i = first; i < first + n; ++i) {
        const auto& e = entries[i];
        accounts.emplace_back(e.account_id);
        times.push_back(e.created_at);
        ids.emplace_back(e.id);
        methods.emplace_back(e.method);
        urls.emplace_back(e.url);
        statuses.push_back(e.status);
        durations.push_back(e.duration_ms);
        ips.emplace_back(e.ip);
        agents.emplace_back(e.user_agent);
        sessions.push_back(e.session ? 1 : 0);
    }
    Params p;
    p.texts(accounts).int8s(times).texts(ids).texts(methods).texts(urls).int8s(statuses).int8s(
        durations);
    p.texts(ips).texts(agents).int8s(sessions);
    auto r = c.exec(kInsertLogs, p);
    if (!r) return r.error();
    return {};
}

// All the entries in one statement, in a savepoint; when it fails, each again in one of its
// own, so that one bad entry (of an account deleted meanwhile, or not UTF-8) costs only
// itself and the batch's transaction goes on.
error_code insert_logs(Conn& c, const std::vector<LogEntry>& entries) {
    if (entries.empty()) return {};
    if (auto r = c.run("SAVEPOINT logs"); !r) return r.error();
    if (insert_log_rows(c, entries, 0, entries.size()))
        return c.run("RELEASE SAVEPOINT logs").error();
    if (auto r = c.run("ROLLBACK TO SAVEPOINT logs"); !r) return r.error();
    for (std::size_t i = 0; i < entries.size(); ++i) {
        auto one = insert_log_rows(c, entries, i, 1);
        if (one) {
            if (auto r = c.run("RELEASE SAVEPOINT logs"); !r) return r.error();
            if (auto r = c.run("SAVEPOINT logs"); !r) return r.error();
            continue;
        }
        log::warn("request log write failed: {}", one.error().message());
        if (auto r = c.run("ROLLBACK TO SAVEPOINT logs"); !r) return r.error();
    }
    return c.run("RELEASE SAVEPOINT logs").error();
}

}  // namespace

// Entries wait in the store's buffer; the first of them submits the lazy write that takes
// them all (it goes within about 25 ms: detail/writer.hpp).
void PgStore::append_log(LogEntry e) {
    {
        std::lock_guard lock(impl_->log_mutex);
        impl_->log_buffer.push_back(std::move(e));
        if (impl_->log_buffer.size() > 1) return;  // the write that takes it is on its way
    }
    impl_->writer.submit(
        [impl = impl_.get(), entries = std::vector<LogEntry>(), taken = false](
            Conn& c, Batch&) mutable -> error_code {
            if (!taken) {  // a batch may run twice (detail/writer.hpp): the same entries
                std::lock_guard lock(impl->log_mutex);
                entries.swap(impl->log_buffer);
                taken = true;
            }
            return insert_logs(c, entries);
        },
        {});
}

asio::awaitable<Result<Page<LogEntry>>> PgStore::list_logs(LogQuery q) {
    return impl_->read([q = std::move(q)](Conn& c) -> Result<Page<LogEntry>> {
        Params p;
        std::string where = " FROM request_logs WHERE account_id = " + p.arg(q.account_id);
        if (q.status) where += " AND status = " + p.arg(*q.status);
        if (q.method) where += " AND method = " + p.arg(*q.method);
        Page<LogEntry> page;
        auto total = c.exec("SELECT count(*)" + where, p);
        if (!total) return total.error();
        page.total = total->row(0).int64(0);
        const char* order = q.order == SortOrder::asc ? " ORDER BY created_at ASC, id ASC"
                                                      : " ORDER BY created_at DESC, id DESC";
        const auto limit = p.arg(q.limit);
        const auto offset = p.arg((q.page - 1) * q.limit);
        auto rows = c.exec(
            "SELECT id, created_at, method, url, status, duration_ms, ip, user_agent, "
            "session" +
                where + order + " LIMIT " + limit + " OFFSET " + offset,
            p);
        if (!rows) return rows.error();
        for (int i = 0; i < rows->size(); ++i) {
            const auto r = rows->row(i);
            page.items.push_back(LogEntry{.id = r.text(0),
                                          .account_id = q.account_id,
                                          .created_at = r.int64(1),
                                          .method = r.text(2),
                                          .url = r.text(3),
                                          .status = r.int32(4),
                                          .duration_ms = r.int64(5),
                                          .ip = r.text(6),
                                          .user_agent = r.text(7),
                                          .session = r.boolean(8)});
        }
        return page;
    });
}

asio::awaitable<Result<std::int64_t>> PgStore::delete_logs_before(UnixMs cutoff) {
    // Each account's entries from the start of its range of the key up to the cutoff.
    return impl_->writer.write<std::int64_t>([cutoff](Conn& c, Batch&) -> Result<std::int64_t> {
        auto r = c.exec(
            "DELETE FROM request_logs WHERE account_id IN (SELECT id FROM accounts) "
            "AND created_at < $1",
            Params().add(cutoff));
        if (!r) return r.error();
        return r->affected();
    });
}

// ---- job leases ----

asio::awaitable<Result<bool>> PgStore::take_job_lease(std::string job, std::string owner,
                                                      UnixMs now, UnixMs until) {
    return impl_->writer.write<bool>([job = std::move(job), owner = std::move(owner), now, until](
                                         Conn& c, Batch&) -> Result<bool> {
        // Taken when there is none, it ran out, or it is the owner's own (extended); a row
        // comes back only then. Racing nodes: the insert of one waits for the other's commit
        // and then sees its lease.
        auto r = c.exec(
            "INSERT INTO job_leases (job, owner, lease_until) VALUES ($1, $2, $4) "
            "ON CONFLICT (job) DO UPDATE SET owner = excluded.owner, "
            "lease_until = excluded.lease_until "
            "WHERE job_leases.owner = excluded.owner OR job_leases.lease_until <= $3 "
            "RETURNING 1",
            Params().add(job).add(owner).add(now).add(until));
        if (!r) return detail::fail<bool>(r.error());
        return Result<bool>(!r->empty());
    });
}

// ---- the send rate ----

asio::awaitable<Result<SendCounts>> PgStore::add_sends(std::string account_id, std::int64_t since,
                                                       std::int64_t second, std::int64_t n,
                                                       std::int64_t cap) {
    // On a reader's connection, in a short transaction of its own rather than the writer's
    // group commit: a send that needs a grant does not wait for a commit of other sends' rows
    // and its fsync first, and the commit does not wait for the disk (synchronous_commit off:
    // counts lost in a crash of the server let a few more sends through, nothing else).
    auto job = [account = std::move(account_id), since, second, n,
                cap](Conn& c) -> Result<SendCounts> {
        if (auto b = c.run("BEGIN"); !b) return b.error();
        auto counts = [&]() -> Result<SendCounts> {
            if (auto r = c.run("SET LOCAL synchronous_commit TO off"); !r) return r.error();
            // Nodes adding to one account take turns: the lock is the account's (its key a
            // hash of the id, in a class of its own) and lasts until the commit.
            auto r = c.exec("SELECT pg_advisory_xact_lock(1346912077, hashtext($1))",
                            Params().add(account));
            if (!r) return r.error();
            r = c.exec("DELETE FROM send_counts WHERE account_id = $1 AND second < $2",
                       Params().add(account).add(since));
            if (!r) return r.error();
            r = c.exec(
                "SELECT coalesce(sum(n), 0)::bigint, "
                "coalesce(min(second) FILTER (WHERE n > 0), 0) "
                "FROM send_counts WHERE account_id = $1 AND second <= $2",
                Params().add(account).add(second));
            if (!r) return r.error();
            SendCounts out{.total = r->row(0).int64(0), .oldest_second = r->row(0).int64(1)};
            out.added = n < 0 ? n : std::clamp<std::int64_t>(cap - out.total, 0, n);
            if (out.added == 0) return out;
            r = c.exec(
                "INSERT INTO send_counts (account_id, second, n) VALUES ($1, $2, $3) "
                "ON CONFLICT (account_id, second) DO UPDATE SET n = send_counts.n + excluded.n",
                Params().add(account).add(second).add(out.added));
            if (!r) return r.error();
            out.total += out.added;
            if (out.oldest_second == 0 && out.added > 0) out.oldest_second = second;
            return out;
        }();
        if (auto end = c.run(counts ? "COMMIT" : "ROLLBACK"); !end && counts) return end.error();
        return counts;
    };
    return impl_->read(std::move(job), false);
}

}  // namespace posthorn::store::pg
