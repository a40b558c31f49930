// PgStore: webhooks; the event outbox, routed to their deliveries by route_events(); and the
// deliveries — claimed under a lease, attempted, recorded.
#include <algorithm>
#include <map>

#include "store/pg/detail/impl.hpp"

namespace posthorn::store::pg {
namespace {

// The events column is a text[] of event names; it is read back as one space-separated
// string (names have no spaces).
constexpr const char* kWebhookColumns =
    "w.id, w.account_id, w.url, array_to_string(w.events, ' '), w.active, w.secret, "
    "w.created_at, w.updated_at, w.previous_secret, w.previous_secret_until";

std::vector<std::string_view> names_of(const std::vector<domain::EventKind>& events) {
    std::vector<std::string_view> out;
    out.reserve(events.size());
    for (const auto e : events) out.push_back(domain::name(e));
    return out;
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

Webhook read_webhook(const Row& r) {
    return Webhook{.id = r.text(0),
                   .account_id = r.text(1),
                   .url = r.text(2),
                   .events = kinds_of(r.text(3)),
                   .active = r.boolean(4),
                   .secret = r.text(5),
                   .previous_secret = r.opt_text(8).value_or(""),
                   .previous_secret_until = r.opt_int64(9),
                   .created_at = r.int64(6),
                   .updated_at = r.int64(7)};
}

Result<Webhook> one_webhook(const Result<Rows>& rows) {
    if (!rows) return rows.error();
    if (rows->empty()) return errc::not_found;
    return read_webhook(rows->row(0));
}

Result<Webhook> find_one(Conn& c, const std::string& account_id, const std::string& id) {
    return one_webhook(c.exec(std::string("SELECT ") + kWebhookColumns +
                                  " FROM webhooks w WHERE w.account_id = $1 AND w.id = $2",
                              Params().add(account_id).add(id)));
}

Result<std::int64_t> count(const Result<Rows>& rows) {
    if (!rows) return rows.error();
    return rows->row(0).int64(0);
}

}  // namespace

asio::awaitable<Result<void>> PgStore::create_webhook(Webhook w) {
    return impl_->writer.write<void>([w = std::move(w)](Conn& c, Batch&) -> Result<void> {
        Params p;
        p.add(w.id).add(w.account_id).add(w.url).texts(names_of(w.events)).add(w.active);
        p.bytes(w.secret).add(w.created_at).add(w.updated_at);
        auto r = c.exec(
            "INSERT INTO webhooks (id, account_id, url, events, active, secret, created_at, "
            "updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            p);
        if (!r) return r.error();
        return {};
    });
}

asio::awaitable<Result<Page<Webhook>>> PgStore::list_webhooks(ListQuery q) {
    return impl_->read([q = std::move(q)](Conn& c) -> Result<Page<Webhook>> {
        Page<Webhook> page;
        auto total = count(c.exec("SELECT count(*) FROM webhooks WHERE account_id = $1",
                                  Params().add(q.account_id)));
        if (!total) return total.error();
        page.total = *total;
        const char* order = q.order == SortOrder::asc ? " ORDER BY w.created_at ASC, w.id ASC"
                                                      : " ORDER BY w.created_at DESC, w.id DESC";
        auto rows =
            c.exec(std::string("SELECT ") + kWebhookColumns +
                       " FROM webhooks w WHERE w.account_id = $1" + order + " LIMIT $2 OFFSET $3",
                   Params().add(q.account_id).add(q.limit).add((q.page - 1) * q.limit));
        if (!rows) return rows.error();
        page.items = rows->map(read_webhook);
        return page;
    });
}

asio::awaitable<Result<Webhook>> PgStore::find_webhook(std::string account_id, std::string id) {
    return impl_->read([account_id = std::move(account_id),
                        id = std::move(id)](Conn& c) { return find_one(c, account_id, id); },
                       false);
}

asio::awaitable<Result<Webhook>> PgStore::update_webhook(std::string account_id, std::string id,
                                                         WebhookPatch patch, UnixMs now) {
    return impl_->writer.write<Webhook>([account_id = std::move(account_id), id = std::move(id),
                                         patch = std::move(patch),
                                         now](Conn& c, Batch&) -> Result<Webhook> {
        // What the patch leaves unset is NULL, and keeps the column's value.
        Params p;
        p.add(account_id).add(id).add(patch.url);
        if (patch.events)
            p.texts(names_of(*patch.events));
        else
            p.null(detail::Type::text_array);
        p.add(patch.active).add(now);
        return one_webhook(
            c.exec(std::string("UPDATE webhooks w SET url = coalesce($3, w.url), "
                               "events = coalesce($4, w.events), active = coalesce($5, w.active), "
                               "updated_at = $6 WHERE w.account_id = $1 AND w.id = $2 RETURNING ") +
                       kWebhookColumns,
                   p));
    });
}

asio::awaitable<Result<Webhook>> PgStore::rotate_webhook_secret(std::string account_id,
                                                                std::string id, std::string secret,
                                                                UnixMs previous_until, UnixMs now) {
    return impl_->writer.write<Webhook>([account_id = std::move(account_id), id = std::move(id),
                                         secret = std::move(secret), previous_until,
                                         now](Conn& c, Batch&) -> Result<Webhook> {
        Params p;
        p.add(account_id).add(id).bytes(secret).add(previous_until).add(now);
        return one_webhook(
            c.exec(std::string("UPDATE webhooks w SET previous_secret = w.secret, "
                               "previous_secret_until = $4, secret = $3, updated_at = $5 "
                               "WHERE w.account_id = $1 AND w.id = $2 RETURNING ") +
                       kWebhookColumns,
                   p));
    });
}

asio::awaitable<Result<std::int64_t>> PgStore::replay_webhook_deliveries(std::string account_id,
                                                                         std::string webhook_id,
                                                                         WebhookReplay what,
                                                                         UnixMs now) {
    return impl_->writer.write<std::int64_t>(
        [account_id = std::move(account_id), webhook_id = std::move(webhook_id),
         what = std::move(what), now](Conn& c, Batch&) -> Result<std::int64_t> {
            if (auto w = find_one(c, account_id, webhook_id); !w) return w.error();
            auto r =
                what.event_id
                    ? c.exec(
                          "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, "
                          "next_attempt_at = $3, lease_owner = NULL, lease_until = NULL "
                          "WHERE webhook_id = $1 AND event_id = $2",
                          Params().add(webhook_id).add(*what.event_id).add(now))
                    : c.exec(
                          "UPDATE webhook_deliveries d SET state = 'pending', "
                          "attempts = 0, next_attempt_at = $3, lease_owner = NULL, "
                          "lease_until = NULL FROM events e WHERE d.webhook_id = $1 "
                          "AND d.state = 'failed' AND e.id = d.event_id "
                          "AND e.created_at >= $2",
                          Params().add(webhook_id).add(what.failed_since.value_or(0)).add(now));
            if (!r) return r.error();
            const auto n = static_cast<std::int64_t>(r->affected());
            if (what.event_id && n == 0) return errc::not_found;
            return n;
        });
}

asio::awaitable<Result<void>> PgStore::delete_webhook(std::string account_id, std::string id) {
    return impl_->writer.write<void>(
        [account_id = std::move(account_id), id = std::move(id)](Conn& c, Batch&) -> Result<void> {
            // Its deliveries and their attempts go with it (ON DELETE CASCADE).
            auto r = c.exec("DELETE FROM webhooks WHERE account_id = $1 AND id = $2",
                            Params().add(account_id).add(id));
            if (!r) return r.error();
            if (r->affected() == 0) return errc::not_found;
            return {};
        });
}

asio::awaitable<Result<Page<WebhookAttempt>>> PgStore::list_webhook_attempts(std::string account_id,
                                                                             std::string webhook_id,
                                                                             std::int64_t page_no,
                                                                             std::int64_t limit) {
    return impl_->read([account_id = std::move(account_id), webhook_id = std::move(webhook_id),
                        page_no, limit](Conn& c) -> Result<Page<WebhookAttempt>> {
        if (auto w = find_one(c, account_id, webhook_id); !w) return w.error();
        Page<WebhookAttempt> page;
        auto total =
            count(c.exec("SELECT count(*) FROM webhook_attempts a JOIN webhook_deliveries d "
                         "ON d.id = a.delivery_id WHERE d.webhook_id = $1",
                         Params().add(webhook_id)));
        if (!total) return total.error();
        page.total = *total;
        auto rows = c.exec(
            "SELECT a.id, d.event_id, e.type, a.attempt, a.status_code, a.error, a.duration_ms, "
            "a.created_at FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = "
            "a.delivery_id JOIN events e ON e.id = d.event_id WHERE d.webhook_id = $1 "
            "ORDER BY a.id DESC LIMIT $2 OFFSET $3",
            Params().add(webhook_id).add(limit).add((page_no - 1) * limit));
        if (!rows) return rows.error();
        for (int i = 0; i < rows->size(); ++i) {
            const auto r = rows->row(i);
            WebhookAttempt a{
                .id = r.int64(0),
                .event_id = r.text(1),
                .event_kind = detail::read_name(r.text(2), domain::EventKind::email_sent),
                .attempt = r.int32(3),
                .duration_ms = r.int64(6),
                .created_at = r.int64(7)};
            if (!r.is_null(4)) a.status_code = r.int32(4);
            if (!r.is_null(5)) a.error = r.text(5);
            page.items.push_back(std::move(a));
        }
        return page;
    });
}

asio::awaitable<Result<std::vector<DueWebhookDelivery>>> PgStore::claim_webhook_deliveries(
    UnixMs now, int limit, std::string owner, UnixMs lease_until) {
    // Polled every second: a reader looks first, so that an idle poll costs the writer
    // nothing.
    if (co_await impl_->nothing_due(
            "SELECT 1 FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= $1 "
            "AND (lease_until IS NULL OR lease_until <= $1) LIMIT 1",
            now))
        co_return std::vector<DueWebhookDelivery>{};
    auto job = [now, limit, owner = std::move(owner), lease_until](
                   Conn& c, Batch&) -> Result<std::vector<DueWebhookDelivery>> {
        // As claim_due: FOR UPDATE SKIP LOCKED, so that no delivery is leased twice.
        auto rows = c.exec(
            "WITH due AS (SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON "
            "w.id = d.webhook_id WHERE d.state = 'pending' AND d.next_attempt_at <= $1 "
            "AND w.active AND (d.lease_until IS NULL OR d.lease_until <= $1) "
            "ORDER BY d.next_attempt_at, d.id LIMIT $2 FOR UPDATE OF d SKIP LOCKED) "
            "UPDATE webhook_deliveries d SET lease_owner = $3, lease_until = $4 "
            "FROM due, webhooks w, events e "
            "WHERE d.id = due.id AND w.id = d.webhook_id AND e.id = d.event_id "
            "RETURNING d.id, w.id, w.url, w.secret, e.id, e.type, e.email_id, e.data, "
            "e.created_at, d.attempts, d.next_attempt_at, w.previous_secret, "
            "w.previous_secret_until",
            Params().add(now).add(limit).add(owner).add(lease_until));
        if (!rows) return rows.error();
        std::vector<std::pair<std::pair<UnixMs, std::int64_t>, DueWebhookDelivery>> due;
        for (int i = 0; i < rows->size(); ++i) {
            const auto r = rows->row(i);
            DueWebhookDelivery d{
                .delivery_id = r.int64(0),
                .webhook_id = r.text(1),
                .url = r.text(2),
                .secret = r.text(3),
                .event_id = r.text(4),
                .event_kind = detail::read_name(r.text(5), domain::EventKind::email_sent),
                .email_id = r.opt_text(6),
                .data_json = r.text(7),
                .event_created_at = r.int64(8),
                .attempts = r.int32(9)};
            d.previous_secret = r.opt_text(11).value_or("");
            d.previous_secret_until = r.opt_int64(12);
            due.emplace_back(std::pair(r.int64(10), d.delivery_id), std::move(d));
        }
        // Oldest due first (RETURNING keeps no order).
        std::sort(due.begin(), due.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        std::vector<DueWebhookDelivery> out;
        out.reserve(due.size());
        for (auto& [key, d] : due) out.push_back(std::move(d));
        return out;
    };
    co_return co_await impl_->writer.write<std::vector<DueWebhookDelivery>>(std::move(job));
}

asio::awaitable<Result<void>> PgStore::record_webhook_attempt(WebhookAttemptResult r) {
    return impl_->writer.write<void>([r = std::move(r)](Conn& c, Batch&) -> Result<void> {
        const char* state = r.delivered ? "done" : r.next_attempt_at ? "pending" : "failed";
        auto u = c.exec(
            "UPDATE webhook_deliveries SET state = $2, attempts = $3, next_attempt_at = $4, "
            "lease_owner = NULL, lease_until = NULL WHERE id = $1",
            Params().add(r.delivery_id).add(state).add(r.attempt).add(r.next_attempt_at));
        if (!u) return u.error();
        if (u->affected() == 0) return {};  // its webhook was deleted meanwhile
        auto a = c.exec(
            "INSERT INTO webhook_attempts (delivery_id, attempt, status_code, error, "
            "duration_ms, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
            Params()
                .add(r.delivery_id)
                .add(r.attempt)
                .add(r.status_code)
                .add(r.error)
                .add(r.duration_ms)
                .add(r.at));
        if (!a) return a.error();
        return {};
    });
}

asio::awaitable<Result<std::int64_t>> PgStore::release_webhook_leases(std::string owner) {
    return impl_->writer.write<std::int64_t>(
        [owner = std::move(owner)](Conn& c, Batch&) -> Result<std::int64_t> {
            auto r = c.exec(
                "UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL "
                "WHERE lease_owner = $1",
                Params().add(owner));
            if (!r) return r.error();
            return r->affected();
        });
}

asio::awaitable<Result<std::int64_t>> PgStore::webhook_backlog() {
    return impl_->read(
        [](Conn& c) -> Result<std::int64_t> {
            auto rows = c.exec("SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'");
            if (!rows) return rows.error();
            return rows->row(0).int64(0);
        },
        false);
}

asio::awaitable<Result<int>> PgStore::route_events(int limit, EventRouter route) {
    // Polled: a reader looks first, so that an idle poll costs the writer nothing. In the
    // order of the unrouted events' own index (events_unrouted): without ORDER BY the planner
    // scanned the table, 1.4 ms a poll at 10,000 events (pg_stat_statements during
    // bench/delivery.sh: the third costliest statement of a delivery).
    if (co_await impl_->nothing_due("SELECT 1 FROM events WHERE NOT routed ORDER BY seq LIMIT 1"))
        co_return 0;
    auto job = [limit, route = std::move(route)](Conn& c, Batch&) -> Result<int> {
        // The oldest events not routed yet that no other router holds (SKIP LOCKED: routers
        // on several nodes take different events; one that committed meanwhile has marked
        // its events routed, which the lock's re-check sees).
        auto rows = c.exec(
            "SELECT seq, id, account_id, type, email_id, data, created_at FROM events "
            "WHERE NOT routed ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED",
            Params().add(limit));
        if (!rows) return rows.error();
        if (rows->empty()) return 0;
        std::vector<Event> events;
        std::vector<std::int64_t> seqs;
        for (int i = 0; i < rows->size(); ++i) {
            const auto r = rows->row(i);
            seqs.push_back(r.int64(0));
            events.push_back(
                Event{.id = r.text(1),
                      .account_id = r.text(2),
                      .kind = detail::read_name(r.text(3), domain::EventKind::email_sent),
                      .email_id = r.opt_text(4),
                      .data_json = r.text(5),
                      .created_at = r.int64(6)});
        }
        // The webhooks of each account the events are of, read once; a pending delivery,
        // due at once, for each webhook the router answers.
        std::map<std::string, std::vector<Webhook>> hooks;
        std::vector<std::string> webhook_ids, event_ids;
        std::vector<std::int64_t> times;
        for (const auto& e : events) {
            auto it = hooks.find(e.account_id);
            if (it == hooks.end()) {
                auto w = c.exec(std::string("SELECT ") + kWebhookColumns +
                                    " FROM webhooks w WHERE w.account_id = $1 "
                                    "ORDER BY w.created_at, w.id",
                                Params().add(e.account_id));
                if (!w) return w.error();
                it = hooks.emplace(e.account_id, w->map(read_webhook)).first;
            }
            for (auto& webhook_id : route(e, it->second)) {
                webhook_ids.push_back(std::move(webhook_id));
                event_ids.push_back(e.id);
                times.push_back(e.created_at);
            }
        }
        if (!webhook_ids.empty()) {
            Params p;
            p.texts(webhook_ids).texts(event_ids).int8s(times);
            auto ins = c.exec(
                "INSERT INTO webhook_deliveries (webhook_id, event_id, state, attempts, "
                "next_attempt_at, created_at) SELECT w, e, 'pending', 0, t, t "
                "FROM unnest($1::text[], $2::text[], $3::int8[]) AS u (w, e, t) "
                "ON CONFLICT (webhook_id, event_id) DO NOTHING",
                p);
            if (!ins) return ins.error();
        }
        auto mark = c.exec("UPDATE events SET routed = true WHERE seq = ANY ($1::int8[])",
                           Params().int8s(seqs));
        if (!mark) return mark.error();
        return static_cast<int>(events.size());
    };
    co_return co_await impl_->writer.write<int>(std::move(job));
}

}  // namespace posthorn::store::pg
