// SqliteStore: webhooks; the event outbox, routed to their deliveries by route_events(); and
// the deliveries — claimed under a lease, attempted, recorded.
#include <map>

#include "store/sqlite/detail/impl.hpp"

namespace posthorn::store::sqlite {
namespace {

// The events column holds a JSON array of event names; SQLite's json_each reads it back
// as one space-separated string (names have no spaces).
constexpr const char* kWebhookColumns =
    "w.id, w.account_id, w.url, (SELECT group_concat(value, ' ') FROM json_each(w.events)), "
    "w.active, w.secret, w.created_at, w.updated_at, w.previous_secret, w.previous_secret_until";

std::string events_json(const std::vector<domain::EventKind>& events) {
    std::string out = "[";
    for (const auto e : events) {
        if (out.size() > 1) out += ",";
        out += json_string(domain::name(e));
    }
    return out + "]";
}

// The kinds a space-separated list names (a name this version does not know is left out).
std::vector<domain::EventKind> kinds_of(const std::string& s) {
    std::vector<domain::EventKind> out;
    std::size_t i = 0;
    while (i < s.size()) {
        const auto j = s.find(' ', i);
        const auto end = j == std::string::npos ? s.size() : j;
        if (auto k = domain::from_name<domain::EventKind>(std::string_view(s).substr(i, end - i)))
            out.push_back(*k);
        i = end + 1;
    }
    return out;
}

Webhook read_webhook(const Stmt& s) {
    Webhook w{.id = s.text(0),
              .account_id = s.text(1),
              .url = s.text(2),
              .events = kinds_of(s.text(3)),
              .active = s.int64(4) != 0,
              .secret = s.text(5),
              .created_at = s.int64(6),
              .updated_at = s.int64(7)};
    if (!s.is_null(8)) w.previous_secret = s.text(8);
    if (!s.is_null(9)) w.previous_secret_until = s.int64(9);
    return w;
}

Result<Webhook> one_webhook(Db& db, const std::string& account_id, const std::string& id) {
    auto s = db.prepare(std::string("SELECT ") + kWebhookColumns +
                        " FROM webhooks w WHERE w.account_id = ?1 AND w.id = ?2");
    if (!s) return s.error();
    s->bind(1, account_id).bind(2, id);
    auto row = s->step();
    if (!row) return row.error();
    if (!*row) return errc::not_found;
    return read_webhook(*s);
}

Result<std::int64_t> count(Db& db, const char* sql, const std::string& a,
                           const std::string& b = {}) {
    auto c = db.prepare(sql);
    if (!c) return c.error();
    c->bind(1, a);
    if (!b.empty()) c->bind(2, b);
    auto row = c->step();
    if (!row) return row.error();
    return c->int64(0);
}

}  // namespace

asio::awaitable<Result<void>> SqliteStore::create_webhook(Webhook w) {
    return impl_->writer.write<void>([w = std::move(w)](Db& db) -> Result<void> {
        auto s = db.prepare(
            "INSERT INTO webhooks (id, account_id, url, events, active, secret, created_at, "
            "updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
        if (!s) return s.error();
        return s->bind(1, w.id)
            .bind(2, w.account_id)
            .bind(3, w.url)
            .bind(4, events_json(w.events))
            .bind(5, w.active ? 1 : 0)
            .bind_blob(6, w.secret)
            .bind(7, w.created_at)
            .bind(8, w.updated_at)
            .run();
    });
}

asio::awaitable<Result<Page<Webhook>>> SqliteStore::list_webhooks(ListQuery q) {
    return impl_->read([q = std::move(q)](Db& db) -> Result<Page<Webhook>> {
        Page<Webhook> page;
        auto total = count(db, "SELECT COUNT(*) FROM webhooks WHERE account_id = ?1", q.account_id);
        if (!total) return total.error();
        page.total = *total;
        const char* order = q.order == SortOrder::asc ? " ORDER BY w.created_at ASC, w.id ASC"
                                                      : " ORDER BY w.created_at DESC, w.id DESC";
        auto s =
            db.prepare(std::string("SELECT ") + kWebhookColumns +
                       " FROM webhooks w WHERE w.account_id = ?1" + order + " LIMIT ?2 OFFSET ?3");
        if (!s) return s.error();
        s->bind(1, q.account_id).bind(2, q.limit).bind(3, (q.page - 1) * q.limit);
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) return page;
            page.items.push_back(read_webhook(*s));
        }
    });
}

asio::awaitable<Result<Webhook>> SqliteStore::find_webhook(std::string account_id, std::string id) {
    return impl_->read([account_id = std::move(account_id), id = std::move(id)](
                           Db& db) -> Result<Webhook> { return one_webhook(db, account_id, id); });
}

asio::awaitable<Result<Webhook>> SqliteStore::update_webhook(std::string account_id, std::string id,
                                                             WebhookPatch patch, UnixMs now) {
    return impl_->writer.write<Webhook>([account_id = std::move(account_id), id = std::move(id),
                                         patch = std::move(patch), now](Db& db) -> Result<Webhook> {
        auto s = db.prepare(
            "UPDATE webhooks SET url = COALESCE(?3, url), events = COALESCE(?4, events), "
            "active = COALESCE(?5, active), updated_at = ?6 WHERE account_id = ?1 AND id = ?2");
        if (!s) return s.error();
        std::optional<std::string> events;
        if (patch.events) events = events_json(*patch.events);
        std::optional<std::int64_t> active;
        if (patch.active) active = *patch.active ? 1 : 0;
        if (auto r = s->bind(1, account_id)
                         .bind(2, id)
                         .bind(3, patch.url)
                         .bind(4, events)
                         .bind(5, active)
                         .bind(6, now)
                         .run();
            !r)
            return r.error();
        if (db.changes() == 0) return errc::not_found;
        return one_webhook(db, account_id, id);
    });
}

asio::awaitable<Result<Webhook>> SqliteStore::rotate_webhook_secret(
    std::string account_id, std::string id, std::string secret, UnixMs previous_until, UnixMs now) {
    return impl_->writer.write<Webhook>([account_id = std::move(account_id), id = std::move(id),
                                         secret = std::move(secret), previous_until,
                                         now](Db& db) -> Result<Webhook> {
        auto s = db.prepare(
            "UPDATE webhooks SET previous_secret = secret, previous_secret_until = ?4, "
            "secret = ?3, updated_at = ?5 WHERE account_id = ?1 AND id = ?2");
        if (!s) return s.error();
        if (auto r = s->bind(1, account_id)
                         .bind(2, id)
                         .bind_blob(3, secret)
                         .bind(4, previous_until)
                         .bind(5, now)
                         .run();
            !r)
            return r.error();
        if (db.changes() == 0) return errc::not_found;
        return one_webhook(db, account_id, id);
    });
}

asio::awaitable<Result<std::int64_t>> SqliteStore::replay_webhook_deliveries(std::string account_id,
                                                                             std::string webhook_id,
                                                                             WebhookReplay what,
                                                                             UnixMs now) {
    return impl_->writer.write<std::int64_t>(
        [account_id = std::move(account_id), webhook_id = std::move(webhook_id),
         what = std::move(what), now](Db& db) -> Result<std::int64_t> {
            if (auto w = one_webhook(db, account_id, webhook_id); !w) return w.error();
            auto s = db.prepare(
                what.event_id
                    ? "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, "
                      "next_attempt_at = ?3, lease_owner = NULL, lease_until = NULL "
                      "WHERE webhook_id = ?1 AND event_id = ?2"
                    : "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, "
                      "next_attempt_at = ?3, lease_owner = NULL, lease_until = NULL "
                      "WHERE webhook_id = ?1 AND state = 'failed' AND (SELECT e.created_at FROM "
                      "events e WHERE e.id = webhook_deliveries.event_id) >= ?4");
            if (!s) return s.error();
            s->bind(1, webhook_id).bind(3, now);
            if (what.event_id)
                s->bind(2, *what.event_id);
            else
                s->bind(4, what.failed_since.value_or(0));
            if (auto r = s->run(); !r) return r.error();
            const auto n = static_cast<std::int64_t>(db.changes());
            if (what.event_id && n == 0) return errc::not_found;
            return n;
        });
}

asio::awaitable<Result<void>> SqliteStore::delete_webhook(std::string account_id, std::string id) {
    return impl_->writer.write<void>(
        [account_id = std::move(account_id), id = std::move(id)](Db& db) -> Result<void> {
            // Deliveries and their attempts go with it (ON DELETE CASCADE).
            auto s = db.prepare("DELETE FROM webhooks WHERE account_id = ?1 AND id = ?2");
            if (!s) return s.error();
            if (auto r = s->bind(1, account_id).bind(2, id).run(); !r) return r;
            if (db.changes() == 0) return errc::not_found;
            return {};
        });
}

asio::awaitable<Result<Page<WebhookAttempt>>> SqliteStore::list_webhook_attempts(
    std::string account_id, std::string webhook_id, std::int64_t page_no, std::int64_t limit) {
    return impl_->read([account_id = std::move(account_id), webhook_id = std::move(webhook_id),
                        page_no, limit](Db& db) -> Result<Page<WebhookAttempt>> {
        if (auto w = one_webhook(db, account_id, webhook_id); !w) return w.error();
        Page<WebhookAttempt> page;
        auto total = count(db,
                           "SELECT COUNT(*) FROM webhook_attempts a JOIN webhook_deliveries d "
                           "ON d.id = a.delivery_id WHERE d.webhook_id = ?1",
                           webhook_id);
        if (!total) return total.error();
        page.total = *total;
        auto s = db.prepare(
            "SELECT a.id, d.event_id, e.type, a.attempt, a.status_code, a.error, a.duration_ms, "
            "a.created_at FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = "
            "a.delivery_id JOIN events e ON e.id = d.event_id WHERE d.webhook_id = ?1 "
            "ORDER BY a.id DESC LIMIT ?2 OFFSET ?3");
        if (!s) return s.error();
        s->bind(1, webhook_id).bind(2, limit).bind(3, (page_no - 1) * limit);
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) return page;
            WebhookAttempt a{
                .id = s->int64(0),
                .event_id = s->text(1),
                .event_kind = detail::read_name(s->text(2), domain::EventKind::email_sent),
                .attempt = static_cast<int>(s->int64(3)),
                .duration_ms = s->int64(6),
                .created_at = s->int64(7)};
            if (!s->is_null(4)) a.status_code = static_cast<int>(s->int64(4));
            if (!s->is_null(5)) a.error = s->text(5);
            page.items.push_back(std::move(a));
        }
    });
}

asio::awaitable<Result<std::vector<DueWebhookDelivery>>> SqliteStore::claim_webhook_deliveries(
    UnixMs now, int limit, std::string owner, UnixMs lease_until) {
    // Polled every second: a reader looks first, so that an idle poll costs the writer
    // nothing.
    if (co_await impl_->nothing_due(
            "SELECT 1 FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= ?1 "
            "AND (lease_until IS NULL OR lease_until <= ?1) LIMIT 1",
            now))
        co_return std::vector<DueWebhookDelivery>{};
    auto job = [now, limit, owner = std::move(owner),
                lease_until](Db& db) -> Result<std::vector<DueWebhookDelivery>> {
        auto s = db.prepare(
            "SELECT d.id, w.id, w.url, w.secret, e.id, e.type, e.email_id, e.data, "
            "e.created_at, d.attempts, w.previous_secret, w.previous_secret_until "
            "FROM webhook_deliveries d "
            "JOIN webhooks w ON w.id = d.webhook_id JOIN events e ON e.id = d.event_id "
            "WHERE d.state = 'pending' AND d.next_attempt_at <= ?1 AND w.active = 1 "
            "AND (d.lease_until IS NULL OR d.lease_until <= ?1) "
            "ORDER BY d.next_attempt_at, d.id LIMIT ?2");
        if (!s) return s.error();
        s->bind(1, now).bind(2, limit);
        std::vector<DueWebhookDelivery> out;
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) break;
            DueWebhookDelivery d{
                .delivery_id = s->int64(0),
                .webhook_id = s->text(1),
                .url = s->text(2),
                .secret = s->text(3),
                .event_id = s->text(4),
                .event_kind = detail::read_name(s->text(5), domain::EventKind::email_sent),
                .data_json = s->text(7),
                .event_created_at = s->int64(8),
                .attempts = static_cast<int>(s->int64(9))};
            if (!s->is_null(6)) d.email_id = s->text(6);
            if (!s->is_null(10)) d.previous_secret = s->text(10);
            if (!s->is_null(11)) d.previous_secret_until = s->int64(11);
            out.push_back(std::move(d));
        }
        auto lease = db.prepare(
            "UPDATE webhook_deliveries SET lease_owner = ?2, lease_until = ?3 WHERE id = ?1");
        if (!lease) return lease.error();
        for (const auto& d : out)
            if (auto r = lease->bind(1, d.delivery_id).bind(2, owner).bind(3, lease_until).run();
                !r)
                return r.error();
        return out;
    };
    co_return co_await impl_->writer.write<std::vector<DueWebhookDelivery>>(std::move(job));
}

asio::awaitable<Result<void>> SqliteStore::record_webhook_attempt(WebhookAttemptResult r) {
    return impl_->writer.write<void>([r = std::move(r)](Db& db) -> Result<void> {
        auto u = db.prepare(
            "UPDATE webhook_deliveries SET state = ?2, attempts = ?3, next_attempt_at = ?4, "
            "lease_owner = NULL, lease_until = NULL WHERE id = ?1");
        if (!u) return u.error();
        const char* state = r.delivered ? "done" : r.next_attempt_at ? "pending" : "failed";
        if (auto x = u->bind(1, r.delivery_id)
                         .bind(2, state)
                         .bind(3, r.attempt)
                         .bind(4, r.next_attempt_at)
                         .run();
            !x)
            return x;
        if (db.changes() == 0) return {};  // its webhook was deleted meanwhile
        auto a = db.prepare(
            "INSERT INTO webhook_attempts (delivery_id, attempt, status_code, error, duration_ms, "
            "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
        if (!a) return a.error();
        return a->bind(1, r.delivery_id)
            .bind(2, r.attempt)
            .bind(3, r.status_code)
            .bind(4, r.error)
            .bind(5, r.duration_ms)
            .bind(6, r.at)
            .run();
    });
}

asio::awaitable<Result<std::int64_t>> SqliteStore::release_webhook_leases(std::string owner) {
    return impl_->writer.write<std::int64_t>(
        detail::lift_leases("UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL "
                            "WHERE lease_owner = ?1",
                            std::move(owner)));
}

asio::awaitable<Result<std::int64_t>> SqliteStore::webhook_backlog() {
    return impl_->read([](Db& db) -> Result<std::int64_t> {
        auto s = db.prepare("SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'");
        if (!s) return s.error();
        auto row = s->step();
        if (!row) return row.error();
        return s->int64(0);
    });
}

void SqliteStore::set_event_listener(std::function<void()> listener) {
    impl_->event_listener = std::move(listener);
}

asio::awaitable<Result<int>> SqliteStore::route_events(int limit, EventRouter route) {
    // Polled: a reader looks first, so that an idle poll costs the writer nothing.
    if (co_await impl_->nothing_due(
            "SELECT 1 FROM events WHERE rowid > (SELECT routed_through FROM event_routing) "
            "LIMIT 1"))
        co_return 0;
    auto job = [limit, route = std::move(route)](Db& db) -> Result<int> {
        auto s = db.prepare(
            "SELECT rowid, id, account_id, type, email_id, data, created_at FROM events "
            "WHERE rowid > (SELECT routed_through FROM event_routing) ORDER BY rowid LIMIT ?1");
        if (!s) return s.error();
        s->bind(1, limit);
        std::vector<Event> events;
        std::int64_t last = 0;
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) break;
            last = s->int64(0);
            events.push_back(
                Event{.id = s->text(1),
                      .account_id = s->text(2),
                      .kind = detail::read_name(s->text(3), domain::EventKind::email_sent),
                      .email_id = s->opt_text(4),
                      .data_json = s->text(5),
                      .created_at = s->int64(6)});
        }
        if (events.empty()) return 0;
        // The webhooks of each account the events are of, read once.
        std::map<std::string, std::vector<Webhook>> hooks;
        auto insert = db.prepare(
            "INSERT OR IGNORE INTO webhook_deliveries (webhook_id, event_id, state, attempts, "
            "next_attempt_at, created_at) VALUES (?1, ?2, 'pending', 0, ?3, ?3)");
        if (!insert) return insert.error();
        for (const auto& e : events) {
            auto it = hooks.find(e.account_id);
            if (it == hooks.end()) {
                auto w = db.prepare(std::string("SELECT ") + kWebhookColumns +
                                    " FROM webhooks w WHERE w.account_id = ?1");
                if (!w) return w.error();
                w->bind(1, e.account_id);
                std::vector<Webhook> of_account;
                for (;;) {
                    auto row = w->step();
                    if (!row) return row.error();
                    if (!*row) break;
                    of_account.push_back(read_webhook(*w));
                }
                it = hooks.emplace(e.account_id, std::move(of_account)).first;
            }
            for (const auto& webhook_id : route(e, it->second))
                if (auto r = insert->bind(1, webhook_id).bind(2, e.id).bind(3, e.created_at).run();
                    !r)
                    return r.error();
        }
        auto mark = db.prepare("UPDATE event_routing SET routed_through = ?1");
        if (!mark) return mark.error();
        if (auto r = mark->bind(1, last).run(); !r) return r.error();
        return static_cast<int>(events.size());
    };
    co_return co_await impl_->writer.write<int>(std::move(job));
}

}  // namespace posthorn::store::sqlite
