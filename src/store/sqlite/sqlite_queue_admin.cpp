// SqliteStore: the queue as the operator and an account see it, and the operator's controls
// (store.hpp, QueueViewStore and QueueAdminStore). Which recipients a command takes, and what
// a purge makes of an email, are the caller's (domain/queue_control.hpp).
#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "core/id.hpp"
#include "store/sqlite/detail/impl.hpp"

namespace posthorn::store::sqlite {
namespace {

using domain::QueueState;

// At most this many selected recipients are changed in one transaction of change_queued(),
// so that a purge of a large queue does not hold the writer (and every send) for long.
constexpr int kChangeChunk = 500;

// Whether the recipient's email (of the row `recipients` read) is SCHEDULED, as SQL.
std::string of_scheduled_email() {
    return "EXISTS (SELECT 1 FROM emails se WHERE se.account_id = recipients.account_id AND "
           "se.id = recipients.email_id AND se.status = '" +
           std::string(domain::name(domain::EmailStatus::scheduled)) + "')";
}

// A recipient's state at ?1 (domain::QueueState, as domain::queue_state decides it), as SQL:
// a live lease first, then a hold, then whether its next attempt is still to come (its
// email's scheduled time, or a retry's) or due (one never tried has none: it is due).
std::string state_case() {
    return std::string("CASE WHEN lease_until > ?1 THEN '") +
           std::string(domain::name(QueueState::in_flight)) + "' WHEN held_at IS NOT NULL THEN '" +
           std::string(domain::name(QueueState::held)) + "' WHEN next_attempt_at > ?1 AND " +
           of_scheduled_email() + " THEN '" + std::string(domain::name(QueueState::scheduled)) +
           "' WHEN next_attempt_at > ?1 THEN '" + std::string(domain::name(QueueState::deferred)) +
           "' ELSE '" + std::string(domain::name(QueueState::ready)) + "' END";
}

// The SQL condition of one state at ?1, the same order of precedence as state_case().
std::string state_condition(QueueState s) {
    const std::string waiting =
        "(lease_until IS NULL OR lease_until <= ?1) AND held_at IS NULL AND next_attempt_at > ?1";
    switch (s) {
        case QueueState::in_flight:
            return "lease_until > ?1";
        case QueueState::held:
            return "(lease_until IS NULL OR lease_until <= ?1) AND held_at IS NOT NULL";
        case QueueState::ready:
            return "(lease_until IS NULL OR lease_until <= ?1) AND held_at IS NULL AND "
                   "(next_attempt_at IS NULL OR next_attempt_at <= ?1)";
        case QueueState::scheduled:
            return waiting + " AND " + of_scheduled_email();
        case QueueState::deferred:
            return waiting + " AND NOT " + of_scheduled_email();
    }
    return "0";
}

// The queued recipients a selector names, as SQL: `columns` of each, from a UNION ALL of the
// three ways to them that read no final recipient — the due index (recipients_due: tried
// before, or held while never tried, and not held; migration 017), the held ones
// (recipients_held), and those never claimed (above queue_state.fresh_after: migration 012).
// `extra` narrows further, and `after` to the ids above it. Its parameters: ?1 is `now`, then
// `texts` in their order, then `after`.
struct Queued {
    std::string sql;
    std::vector<std::string> texts;
    std::optional<std::int64_t> after;

    Queued(const QueueSelector& sel, std::string_view columns, std::string_view extra = {},
           std::optional<std::int64_t> after_id = std::nullopt)
        : after(after_id) {
        std::string filter =
            " AND status = '" + std::string(domain::name(domain::RecipientStatus::queued)) + "'";
        auto add = [&](const char* column, const std::optional<std::string>& value) {
            if (!value) return;
            texts.push_back(*value);
            filter += std::string(" AND ") + column + " = ?" + std::to_string(texts.size() + 1);
        };
        add("account_id", sel.account_id);
        add("domain", sel.domain);
        add("email_id", sel.email_id);
        if (!sel.states.empty()) {
            filter += " AND (";
            for (std::size_t i = 0; i < sel.states.size(); ++i)
                filter += std::string(i ? " OR (" : "(") + state_condition(sel.states[i]) + ")";
            filter += ")";
        }
        if (!extra.empty()) filter += " AND " + std::string(extra);
        if (after) filter += " AND id > ?" + std::to_string(texts.size() + 2);
        const std::string select = "SELECT " + std::string(columns) + " FROM recipients WHERE ";
        sql = select + "next_attempt_at IS NOT NULL AND held_at IS NULL" + filter + " UNION ALL " +
              select + "held_at IS NOT NULL" + filter + " UNION ALL " + select +
              "id > (SELECT fresh_after FROM queue_state) AND next_attempt_at IS NULL AND "
              "held_at IS NULL" +
              filter;
    }

    // `s` with ?1 = now and the texts bound.
    void bind(Stmt& s, UnixMs now) const {
        s.bind(1, now);
        for (std::size_t i = 0; i < texts.size(); ++i)
            s.bind_ref(static_cast<int>(i + 2), texts[i]);
        if (after) s.bind(static_cast<int>(texts.size() + 2), *after);
    }
};

// A write job: `set` (SQL assignments, ?1 = now) on the queued recipients `sel` names (and
// `extra`), answering how many it changed.
auto update_queued(QueueSelector sel, UnixMs now, const char* set, const char* extra) {
    return [sel = std::move(sel), now, set, extra](Db& db) -> Result<std::int64_t> {
        const Queued q(sel, "id", extra);
        auto s = db.prepare(std::string("UPDATE recipients SET ") + set + " WHERE id IN (" + q.sql +
                            ")");
        if (!s) return s.error();
        q.bind(*s, now);
        if (auto r = s->run(); !r) return r.error();
        return db.changes();
    };
}

struct Changed {
    std::int64_t recipients = 0;  // written by the changes
    int selected = 0;             // selected, up to kChangeChunk
    std::int64_t last = 0;        // the largest id selected
    bool events = false;          // some change raised events
};

}  // namespace

asio::awaitable<Result<std::vector<QueueGroup>>> SqliteStore::queue_summary(QueueSelector select,
                                                                            UnixMs now) {
    auto job = [select = std::move(select), now](Db& db) -> Result<std::vector<QueueGroup>> {
        const Queued q(select, "domain, email_id, next_attempt_at, " + state_case() + " AS state");
        // An email's id is made at its queued_at (core/id.hpp): the smallest id is the oldest.
        auto s = db.prepare(
            "SELECT domain, state, count(*), min(email_id), min(next_attempt_at), "
            "min(CASE WHEN next_attempt_at IS NULL THEN email_id END) FROM (" +
            q.sql + ") GROUP BY domain, state");
        if (!s) return s.error();
        q.bind(*s, now);
        std::vector<QueueGroup> out;
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) break;
            QueueGroup g{.domain = s->text(0),
                         .state = detail::read_name(s->text(1), QueueState::ready),
                         .recipients = s->int64(2),
                         .oldest_queued_at = id_time(s->text(3), "em_")};
            // A recipient never tried has no next_attempt_at (migration 012): it is due since
            // its email was queued.
            const auto never_tried = s->opt_text(5);
            const auto fresh_due =
                never_tried ? std::optional<UnixMs>(id_time(*never_tried, "em_")) : std::nullopt;
            constexpr auto kNever = std::numeric_limits<UnixMs>::max();
            g.next_attempt_at =
                std::min(s->opt_int64(4).value_or(kNever), fresh_due.value_or(kNever));
            out.push_back(std::move(g));
        }
        std::sort(out.begin(), out.end(), [](const QueueGroup& a, const QueueGroup& b) {
            return std::tie(a.domain, a.state) < std::tie(b.domain, b.state);
        });
        return out;
    };
    co_return co_await impl_->read(std::move(job));
}

asio::awaitable<Result<std::int64_t>> SqliteStore::hold_queued(QueueSelector select, UnixMs now) {
    // One never tried gets its time of acceptance (its updated_at until now) as its next
    // attempt, as a claim gives it: a held recipient is never "fresh" (migration 017).
    auto job = update_queued(std::move(select), now,
                             "held_at = ?1, next_attempt_at = COALESCE(next_attempt_at, "
                             "updated_at), updated_at = ?1",
                             "held_at IS NULL");
    co_return co_await impl_->writer.write<std::int64_t>(std::move(job));
}

asio::awaitable<Result<std::int64_t>> SqliteStore::release_queued(QueueSelector select,
                                                                  UnixMs now) {
    auto job = update_queued(std::move(select), now, "held_at = NULL, updated_at = ?1",
                             "held_at IS NOT NULL");
    auto r = co_await impl_->writer.write<std::int64_t>(std::move(job));
    if (r && *r > 0 && impl_->queue_listener) impl_->queue_listener();
    co_return r;
}

asio::awaitable<Result<std::int64_t>> SqliteStore::make_due(QueueSelector select, UnixMs now) {
    auto job = update_queued(std::move(select), now, "next_attempt_at = ?1, updated_at = ?1", "");
    auto r = co_await impl_->writer.write<std::int64_t>(std::move(job));
    if (r && *r > 0 && impl_->queue_listener) impl_->queue_listener();
    co_return r;
}

asio::awaitable<Result<std::int64_t>> SqliteStore::change_queued(QueueSelector select, UnixMs now,
                                                                 QueuedDecision decide) {
    // In transactions of up to kChangeChunk selected recipients, in the order of their ids:
    // each selects those above the last one the previous took, so that each is decided once.
    std::int64_t total = 0;
    std::optional<std::int64_t> after;
    for (;;) {
        auto job = [&select, now, &decide, after](Db& db) -> Result<Changed> {
            const Queued q(select, "account_id, email_id, id", {}, after);
            auto s = db.prepare("SELECT * FROM (" + q.sql + ") ORDER BY id LIMIT " +
                                std::to_string(kChangeChunk));
            if (!s) return s.error();
            q.bind(*s, now);
            Changed changed;
            std::map<std::pair<std::string, std::string>, std::vector<std::int64_t>> by_email;
            for (;;) {
                auto row = s->step();
                if (!row) return row.error();
                if (!*row) break;
                by_email[{s->text(0), s->text(1)}].push_back(s->int64(2));
                ++changed.selected;
                changed.last = s->int64(2);
            }
            for (const auto& [key, ids] : by_email) {
                auto e = detail::email_where(db, "e.account_id = ?1 AND e.id = ?2", key.first,
                                             key.second);
                if (!e && e.error() == errc::not_found) continue;  // deleted meanwhile
                if (!e) return e.error();
                const auto change = decide(*e, ids);
                if (!change) continue;
                if (auto w = detail::write_change(db, *e, *change); !w) return w.error();
                changed.recipients += static_cast<std::int64_t>(change->recipients.size());
                changed.events =
                    changed.events || !change->events.empty() || !change->suppressions.empty();
            }
            return changed;
        };
        // The job refers to `select` and `decide`, which outlive it: this frame waits for it.
        auto r = co_await impl_->writer.write<Changed>(std::move(job));
        if (!r) co_return r.error();
        if (r->events) impl_->events_written();
        total += r->recipients;
        if (r->selected < kChangeChunk) break;
        after = r->last;
    }
    co_return total;
}

}  // namespace posthorn::store::sqlite
