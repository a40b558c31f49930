// PgStore: the queue as the operator and an account see it, and the operator's controls
// (store.hpp, QueueViewStore and QueueAdminStore). Which recipients a command takes, and what
// a purge makes of an email, are the caller's (domain/queue_control.hpp).
#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "core/id.hpp"
#include "store/pg/detail/impl.hpp"

namespace posthorn::store::pg {
namespace {

using domain::QueueState;

// At most this many selected recipients are changed in one transaction of change_queued(),
// so that a purge of a large queue holds no lock (and the writer) for long.
constexpr int kChangeChunk = 500;

std::string quoted(QueueState s) { return "'" + std::string(domain::name(s)) + "'"; }

// Whether the recipient's email (of the row `recipients` read) is SCHEDULED, as SQL.
std::string of_scheduled_email() {
    return "EXISTS (SELECT 1 FROM emails se WHERE se.id = recipients.email_id AND "
           "se.account_id = recipients.account_id AND se.status = '" +
           std::string(domain::name(domain::EmailStatus::scheduled)) + "')";
}

// A recipient's state at `now` (domain::QueueState, as domain::queue_state decides it), as
// SQL: a live lease first, then a hold, then whether its next attempt is still to come (its
// email's scheduled time, or a retry's) or due.
std::string state_case(const std::string& now) {
    return "CASE WHEN lease_until > " + now + " THEN " + quoted(QueueState::in_flight) +
           " WHEN held_at IS NOT NULL THEN " + quoted(QueueState::held) +
           " WHEN next_attempt_at > " + now + " AND " + of_scheduled_email() + " THEN " +
           quoted(QueueState::scheduled) + " WHEN next_attempt_at > " + now + " THEN " +
           quoted(QueueState::deferred) + " ELSE " + quoted(QueueState::ready) + " END";
}

// The SQL condition of one state at `now`, the same order of precedence as state_case().
std::string state_condition(QueueState s, const std::string& now) {
    const std::string unleased = "(lease_until IS NULL OR lease_until <= " + now + ")";
    switch (s) {
        case QueueState::in_flight:
            return "lease_until > " + now;
        case QueueState::held:
            return unleased + " AND held_at IS NOT NULL";
        case QueueState::ready:
            return unleased + " AND held_at IS NULL AND next_attempt_at <= " + now;
        case QueueState::scheduled:
            return unleased + " AND held_at IS NULL AND next_attempt_at > " + now + " AND " +
                   of_scheduled_email();
        case QueueState::deferred:
            return unleased + " AND held_at IS NULL AND next_attempt_at > " + now + " AND NOT " +
                   of_scheduled_email();
    }
    return "false";
}

// The conditions a queued recipient `sel` names meets at `now` (an argument of `p`), as
// " AND …", its values added to `p` (which `sel` outlives).
std::string filter_of(const QueueSelector& sel, Params& p, const std::string& now) {
    std::string f =
        " AND status = '" + std::string(domain::name(domain::RecipientStatus::queued)) + "'";
    if (sel.account_id) f += " AND account_id = " + p.arg(*sel.account_id);
    if (sel.domain) f += " AND domain = " + p.arg(*sel.domain);
    if (sel.email_id) f += " AND email_id = " + p.arg(*sel.email_id);
    if (!sel.states.empty()) {
        f += " AND (";
        for (std::size_t i = 0; i < sel.states.size(); ++i)
            f += std::string(i ? " OR (" : "(") + state_condition(sel.states[i], now) + ")";
        f += ")";
    }
    return f;
}

// The queued recipients with `filter`, as a UNION ALL of `columns` of the three ways to them
// that read no final recipient: the indexes of due recipients never tried
// (recipients_fresh) and tried before (recipients_retry), neither of which holds a held one
// (migration 004), and the index of the held ones (recipients_held).
std::string queued(const std::string& columns, const std::string& filter) {
    const std::string select = "SELECT " + columns + " FROM recipients WHERE ";
    return select + "attempts = 0 AND next_attempt_at IS NOT NULL AND held_at IS NULL" + filter +
           " UNION ALL " + select +
           "attempts > 0 AND next_attempt_at IS NOT NULL AND held_at IS NULL" + filter +
           " UNION ALL " + select + "held_at IS NOT NULL" + filter;
}

// A write job: `set` (SQL assignments, $1 = now) on the queued recipients `sel` names (and
// `extra`), answering how many it changed; `wake`: a change is mail due, which the other
// nodes hear of with the commit. `lock_emails`: their emails are locked first, in the order
// of their ids, as change_email locks an email before it reads and writes its recipients:
// an outcome written meanwhile (which writes held_at as it read it) comes wholly before or
// wholly after this change, never across it.
auto update_queued(QueueSelector sel, UnixMs now, const char* set, const char* extra, bool wake,
                   bool lock_emails) {
    return [sel = std::move(sel), now, set, extra, wake, lock_emails](
               Conn& c, Batch& b) -> Result<std::int64_t> {
        Params p;
        const auto at = p.arg(now);
        const auto filter = filter_of(sel, p, at) + " AND " + extra;
        if (lock_emails) {
            auto locked = c.exec("SELECT id FROM emails WHERE id IN (SELECT email_id FROM (" +
                                     queued("email_id", filter) + ") q) ORDER BY id FOR UPDATE",
                                 p);
            if (!locked) return locked.error();
        }
        // The conditions again on the row updated: a claim or an outcome that changed it
        // meanwhile is seen there (PostgreSQL checks them again on the row as it was left).
        auto r = c.exec(std::string("UPDATE recipients SET ") + set + " WHERE id IN (" +
                            queued("id", filter) + ")" + filter,
                        p);
        if (!r) return r.error();
        if (wake && r->affected() > 0) b.notify(detail::kQueueChannel);
        return r->affected();
    };
}

struct Changed {
    std::int64_t recipients = 0;  // written by the changes
    int selected = 0;             // selected, up to kChangeChunk
    std::int64_t last = 0;        // the largest id selected
    bool events = false;          // some change raised events
};

// One chunk of change_queued(): the first kChangeChunk recipients `sel` names above `after`,
// by email; each email locked, its selected recipients locked and checked again (a claim
// that took one meanwhile has a live lease now), then decided and written.
Result<Changed> change_chunk(Conn& c, Batch& b, const QueueSelector& sel, UnixMs now,
                             std::optional<std::int64_t> after, const QueuedDecision& decide) {
    Params p;
    const auto at = p.arg(now);
    std::string filter = filter_of(sel, p, at);
    if (after) filter += " AND id > " + p.arg(*after);
    auto rows = c.exec("SELECT account_id, email_id, id FROM (" +
                           queued("account_id, email_id, id", filter) + ") q ORDER BY id LIMIT " +
                           std::to_string(kChangeChunk),
                       p);
    if (!rows) return rows.error();
    Changed changed;
    std::map<std::pair<std::string, std::string>, std::vector<std::int64_t>> by_email;
    for (int i = 0; i < rows->size(); ++i) {
        const auto r = rows->row(i);
        by_email[{r.text(0), r.text(1)}].push_back(r.int64(2));
        ++changed.selected;
        changed.last = std::max(changed.last, r.int64(2));
    }
    for (const auto& [key, ids] : by_email) {
        // The email first, as change_email locks it, then its recipients.
        auto e = detail::email_by_id(c, key.second, key.first, false, true);
        if (!e && e.error() == errc::not_found) continue;  // deleted meanwhile
        if (!e) return e.error();
        Params lp;
        const auto lat = lp.arg(now);
        const auto still_filter = filter_of(sel, lp, lat);
        lp.int8s(ids);
        auto still =
            c.exec("SELECT id FROM recipients WHERE id = ANY ($" + std::to_string(lp.size()) +
                       "::bigint[])" + still_filter + " ORDER BY id FOR UPDATE",
                   lp);
        if (!still) return still.error();
        std::vector<std::int64_t> selected;
        selected.reserve(static_cast<std::size_t>(still->size()));
        for (int i = 0; i < still->size(); ++i) selected.push_back(still->row(i).int64(0));
        if (selected.empty()) continue;
        auto email = detail::email_by_id(c, key.second, key.first, true);
        if (!email) return email.error();
        const auto change = decide(*email, selected);
        if (!change) continue;
        if (auto w = detail::write_change(c, b, *email, *change); !w) return w.error();
        changed.recipients += static_cast<std::int64_t>(change->recipients.size());
        changed.events = changed.events || !change->events.empty() || !change->suppressions.empty();
    }
    return changed;
}

}  // namespace

asio::awaitable<Result<std::vector<QueueGroup>>> PgStore::queue_summary(QueueSelector select,
                                                                        UnixMs now) {
    auto job = [select = std::move(select), now](Conn& c) -> Result<std::vector<QueueGroup>> {
        Params p;
        const auto at = p.arg(now);
        const auto filter = filter_of(select, p, at);
        // An email's id is made at its queued_at (core/id.hpp): the smallest id is the oldest.
        auto rows = c.exec(
            "SELECT domain, state, count(*), min(email_id), min(next_attempt_at) "
            "FROM (" +
                queued("domain, email_id, next_attempt_at, " + state_case(at) + " AS state",
                       filter) +
                ") q GROUP BY domain, state",
            p);
        if (!rows) return rows.error();
        std::vector<QueueGroup> out;
        for (int i = 0; i < rows->size(); ++i) {
            const auto r = rows->row(i);
            out.push_back(QueueGroup{.domain = r.text(0),
                                     .state = detail::read_name(r.text(1), QueueState::ready),
                                     .recipients = r.int64(2),
                                     .oldest_queued_at = id_time(r.text(3), "em_"),
                                     .next_attempt_at = r.opt_int64(4).value_or(0)});
        }
        std::sort(out.begin(), out.end(), [](const QueueGroup& a, const QueueGroup& b) {
            return std::tie(a.domain, a.state) < std::tie(b.domain, b.state);
        });
        return out;
    };
    co_return co_await impl_->read(std::move(job), false);
}

asio::awaitable<Result<std::int64_t>> PgStore::hold_queued(QueueSelector select, UnixMs now) {
    auto job = update_queued(std::move(select), now, "held_at = $1, updated_at = $1",
                             "held_at IS NULL", false, true);
    co_return co_await impl_->writer.write<std::int64_t>(std::move(job));
}

asio::awaitable<Result<std::int64_t>> PgStore::release_queued(QueueSelector select, UnixMs now) {
    auto job = update_queued(std::move(select), now, "held_at = NULL, updated_at = $1",
                             "held_at IS NOT NULL", true, true);
    auto r = co_await impl_->writer.write<std::int64_t>(std::move(job));
    if (r && *r > 0) impl_->queued();
    co_return r;
}

asio::awaitable<Result<std::int64_t>> PgStore::make_due(QueueSelector select, UnixMs now) {
    // It changes only next_attempt_at, which an outcome written meanwhile sets anew: no
    // lock needed.
    auto job = update_queued(std::move(select), now, "next_attempt_at = $1, updated_at = $1",
                             "true", true, false);
    auto r = co_await impl_->writer.write<std::int64_t>(std::move(job));
    if (r && *r > 0) impl_->queued();
    co_return r;
}

asio::awaitable<Result<std::int64_t>> PgStore::change_queued(QueueSelector select, UnixMs now,
                                                             QueuedDecision decide) {
    // In transactions of up to kChangeChunk selected recipients, in the order of their ids:
    // each selects those above the last one the previous took, so that each is decided once.
    std::int64_t total = 0;
    std::optional<std::int64_t> after;
    for (;;) {
        // The job refers to `select` and `decide`, which outlive it: this frame waits for it.
        auto job = [&select, now, &decide, after](Conn& c, Batch& b) {
            return change_chunk(c, b, select, now, after, decide);
        };
        auto r = co_await impl_->writer.write<Changed>(std::move(job));
        if (!r) co_return r.error();
        if (r->events) impl_->events_written();
        total += r->recipients;
        if (r->selected < kChangeChunk) break;
        after = r->last;
    }
    co_return total;
}

}  // namespace posthorn::store::pg
