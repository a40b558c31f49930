// SqliteStore: the delivery queue — claiming due recipients under a lease, renewing and
// lifting leases. What delivery makes of them is written by change_email.
#include <algorithm>
#include <map>
#include <set>

#include "store/sqlite/detail/impl.hpp"

namespace posthorn::store::sqlite {
namespace {

// One claim of due recipients, in the writer's transaction: leases them (take()) and then
// reads the emails they belong to (emails()).
struct Claim {
    Db& db;
    UnixMs now;
    const std::string& owner;
    UnixMs lease_until;
    // Per email: its account (the emails' key begins with it) and the recipients taken.
    std::map<std::string, std::pair<std::string, std::vector<QueuedRecipient>>> by_email;

    struct Taken {
        int n = 0;              // how many
        std::int64_t last = 0;  // the largest id among them
    };

    // Leases up to `n` recipients: retries whose time has come (recipients_due), or fresh
    // ones (never tried, above queue_state.fresh_after: migration 012) in the order of ids.
    Result<Taken> take(bool fresh, int n) {
        // Held recipients are not due (migration 017: nor in recipients_due).
        static constexpr const char* kDue =
            "SELECT id FROM recipients WHERE next_attempt_at IS NOT NULL AND held_at IS NULL "
            "AND next_attempt_at <= ?3 AND (lease_until IS NULL OR lease_until <= ?3) "
            "ORDER BY next_attempt_at LIMIT ?4";
        static constexpr const char* kFresh =
            "SELECT id FROM recipients WHERE id > (SELECT fresh_after FROM queue_state) "
            "AND next_attempt_at IS NULL AND status = ?5 ORDER BY id LIMIT ?4";
        Taken t;
        if (n <= 0) return t;
        // A fresh recipient claimed gets the time it was accepted (its updated_at until now)
        // as its next_attempt_at: from then on it is in recipients_due, where its lease runs
        // out if its node dies, and the API shows that time while QUEUED.
        auto s = db.prepare(
            std::string("UPDATE recipients SET lease_owner = ?1, lease_until = ?2, "
                        "next_attempt_at = COALESCE(next_attempt_at, updated_at) "
                        "WHERE id IN (") +
            (fresh ? kFresh : kDue) +
            ") RETURNING id, email_id, address, domain, type, attempts, EXISTS (SELECT 1 "
            "FROM suppressions s WHERE s.account_id = recipients.account_id AND s.address = "
            "lower(recipients.address)), account_id");
        if (!s) return s.error();
        s->bind(1, owner).bind(2, lease_until).bind(4, n);
        if (!fresh) s->bind(3, now);
        // Fresh: open (the vocabulary's QUEUED) and never tried (no next_attempt_at yet).
        if (fresh) s->bind_ref(5, domain::name(domain::RecipientStatus::queued));
        for (;;) {
            auto row = s->step();
            if (!row) return row.error();
            if (!*row) break;
            auto& [account_id, recipients] = by_email[s->text(1)];
            if (account_id.empty()) account_id = s->text(7);
            recipients.push_back(
                QueuedRecipient{.id = s->int64(0),
                                .address = s->text(2),
                                .domain = s->text(3),
                                .type = detail::read_name(s->text(4), domain::RecipientType::to),
                                .attempts = static_cast<int>(s->int64(5)),
                                .suppressed = s->int64(6) != 0});
            ++t.n;
            t.last = std::max(t.last, s->int64(0));
        }
        return t;
    }

    // The emails of the recipients taken, each with them (an email deleted meanwhile is
    // left out).
    Result<std::vector<QueuedEmail>> emails() {
        std::vector<QueuedEmail> out;
        for (auto& [email_id, of_email] : by_email) {
            auto& [account_id, recipients] = of_email;
            auto e = db.prepare(
                "SELECT e.account_id, COALESCE(e.domain_id, ''), COALESCE(d.name, ''), "
                "e.return_token, e.message_id, COALESCE(e.return_path, '') FROM emails e "
                "LEFT JOIN domains d ON d.id = e.domain_id WHERE e.account_id = ?2 AND e.id = ?1");
            if (!e) return e.error();
            e->bind(1, email_id).bind_ref(2, account_id);
            auto row = e->step();
            if (!row) return row.error();
            if (!*row) continue;
            out.push_back(QueuedEmail{.id = email_id,
                                      .account_id = e->text(0),
                                      .domain_id = e->text(1),
                                      .from_domain = e->text(2),
                                      .return_token = e->text(3),
                                      .return_path = e->text(5),
                                      .message_id = e->text(4),
                                      .recipients = std::move(recipients)});
        }
        return out;
    }
};

// Moves queue_state.fresh_after up to `last` (the largest fresh id claimed), or, with none,
// to the largest id of all recipients (every fresh one was claimed); never down.
Result<void> move_fresh_mark(Db& db, std::optional<std::int64_t> last) {
    auto u = db.prepare(
        "UPDATE queue_state SET fresh_after = max(fresh_after, "
        "COALESCE(?1, (SELECT coalesce(max(id), 0) FROM recipients)))");
    if (!u) return u.error();
    u->bind(1, last);
    return u->run();
}

}  // namespace

void SqliteStore::set_queue_listener(std::function<void()> listener) {
    impl_->queue_listener = std::move(listener);
}

asio::awaitable<Result<std::vector<QueuedEmail>>> SqliteStore::claim_due(UnixMs now, int limit,
                                                                         std::string owner,
                                                                         UnixMs lease_until) {
    // Polled every second when idle: a reader looks first, so that an idle poll costs the
    // writer nothing. Due: a recipient tried before whose time has come (recipients_due), or
    // one never tried (fresh, above queue_state.fresh_after: migration 012; every recipient
    // above that mark is one never claimed, so open); neither held (a held one has a
    // next_attempt_at: migration 017).
    if (co_await impl_->nothing_due(
            "SELECT 1 FROM recipients WHERE next_attempt_at IS NOT NULL AND held_at IS NULL "
            "AND next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1) UNION ALL "
            "SELECT 1 FROM recipients WHERE id > (SELECT fresh_after FROM queue_state) "
            "AND next_attempt_at IS NULL LIMIT 1",
            now))
        co_return std::vector<QueuedEmail>{};
    auto job = [now, limit, owner = std::move(owner),
                lease_until](Db& db) -> Result<std::vector<QueuedEmail>> {
        Claim claim{.db = db, .now = now, .owner = owner, .lease_until = lease_until};
        // Half of the batch for retries, the rest for fresh mail, and what one leaves to the
        // other: neither waits behind a backlog of the other.
        const int half = (limit + 1) / 2;
        auto retries = claim.take(false, half);
        if (!retries) return retries.error();
        const int want_fresh = limit - retries->n;
        auto fresh = claim.take(true, want_fresh);
        if (!fresh) return fresh.error();
        if (retries->n == half) {
            if (auto more = claim.take(false, want_fresh - fresh->n); !more) return more.error();
        }
        // Every fresh recipient up to the last one taken is claimed now; when fewer than
        // asked for were left, every one there is.
        const bool all_fresh_taken = want_fresh > 0 && fresh->n < want_fresh;
        if (all_fresh_taken || fresh->n > 0) {
            auto moved = move_fresh_mark(
                db, all_fresh_taken ? std::nullopt : std::optional<std::int64_t>(fresh->last));
            if (!moved) return moved.error();
        }
        return claim.emails();
    };
    co_return co_await impl_->writer.write<std::vector<QueuedEmail>>(std::move(job));
}

asio::awaitable<Result<std::int64_t>> SqliteStore::release_leases(std::string owner) {
    auto job = detail::lift_leases(
        "UPDATE recipients SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = ?1",
        std::move(owner));
    co_return co_await impl_->writer.write<std::int64_t>(std::move(job));
}

asio::awaitable<Result<std::int64_t>> SqliteStore::renew_leases(std::string owner,
                                                                UnixMs lease_until) {
    auto job = [owner = std::move(owner), lease_until](Db& db) -> Result<std::int64_t> {
        auto s = db.prepare("UPDATE recipients SET lease_until = ?2 WHERE lease_owner = ?1");
        if (!s) return s.error();
        if (auto r = s->bind(1, owner).bind(2, lease_until).run(); !r) return r.error();
        return db.changes();
    };
    co_return co_await impl_->writer.write<std::int64_t>(std::move(job));
}

}  // namespace posthorn::store::sqlite
