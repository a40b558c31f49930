// PgStore: the delivery queue — claiming due recipients under a lease, renewing and lifting
// leases. What delivery makes of them is written by change_email.
#include <algorithm>
#include <map>

#include "store/pg/detail/impl.hpp"

namespace posthorn::store::pg {
namespace {

// A recipient due at $1: its time has come, no live lease holds it, and the operator does not
// hold it (migration 004). With `attempts = 0` or `attempts > 0` before it, the conditions of
// one of the two indexes of due recipients (recipients_fresh, recipients_retry).
constexpr const char* kDue =
    " 0 AND next_attempt_at <= $1 AND held_at IS NULL AND (lease_until IS NULL OR "
    "lease_until <= $1)";

}  // namespace

namespace detail {

// Before a claim: whether any recipient is due. It looks as the claims do, in the two indexes
// of due recipients, whose conditions it names so that they can be used: without them, every
// recipient was read.
const std::string kAnyDueSql = std::string(
                                   "SELECT 1 WHERE EXISTS (SELECT 1 FROM recipients "
                                   "WHERE attempts =") +
                               kDue + ") OR EXISTS (SELECT 1 FROM recipients WHERE attempts >" +
                               kDue + ")";

}  // namespace detail

namespace {

// Leases up to $2 due recipients (never tried: `fresh`; or tried before), oldest due first.
// FOR UPDATE SKIP LOCKED: a claimer on another node (whose transaction holds rows it took and
// has not committed yet) passes over those rows instead of waiting for them, and a row taken by
// a claim that committed meanwhile is checked again (its lease now live) and left out; so no
// recipient is leased twice.
std::string claim(const char* attempts) {
    return std::string("WITH due AS (SELECT id FROM recipients WHERE attempts ") + attempts + kDue +
           " ORDER BY next_attempt_at, id LIMIT $2 FOR UPDATE SKIP LOCKED) "
           "UPDATE recipients r SET lease_owner = $3, lease_until = $4 FROM due WHERE r.id = "
           "due.id RETURNING r.id, r.email_id, r.account_id, r.address, r.domain, r.type, "
           "r.attempts, EXISTS (SELECT 1 FROM suppressions s WHERE s.account_id = r.account_id "
           "AND s.address = lower(r.address))";
}

const std::string& claim_sql(bool fresh) {
    static const std::string kFresh = claim("=");
    static const std::string kRetry = claim(">");
    return fresh ? kFresh : kRetry;
}

// One claim: the recipients taken, by email (with the email's account).
struct Claim {
    Conn& conn;
    UnixMs now;
    const std::string& owner;
    UnixMs lease_until;
    std::map<std::string, std::pair<std::string, std::vector<QueuedRecipient>>> by_email;

    Result<int> take(bool fresh, int n) {
        if (n <= 0) return 0;
        auto rows =
            conn.exec(claim_sql(fresh), Params().add(now).add(n).add(owner).add(lease_until));
        if (!rows) return rows.error();
        for (int i = 0; i < rows->size(); ++i) {
            const auto r = rows->row(i);
            auto& [account_id, recipients] = by_email[r.text(1)];
            if (account_id.empty()) account_id = r.text(2);
            recipients.push_back(
                QueuedRecipient{.id = r.int64(0),
                                .address = r.text(3),
                                .domain = r.text(4),
                                .type = detail::read_name(r.text(5), domain::RecipientType::to),
                                .attempts = r.int32(6),
                                .suppressed = r.boolean(7)});
        }
        return rows->size();
    }

    // The emails of the recipients taken, each with them (in the order of their ids).
    Result<std::vector<QueuedEmail>> emails() {
        std::vector<QueuedEmail> out;
        if (by_email.empty()) return out;
        std::vector<std::string_view> ids;
        for (const auto& [id, of_email] : by_email) ids.emplace_back(id);
        auto rows = conn.exec(
            "SELECT e.id, e.account_id, coalesce(e.domain_id, ''), coalesce(d.name, ''), "
            "e.return_token, e.message_id, coalesce(e.return_path, '') FROM emails e "
            "LEFT JOIN domains d ON d.id = e.domain_id "
            "WHERE e.id = ANY ($1::text[])",
            Params().texts(ids));
        if (!rows) return rows.error();
        for (int i = 0; i < rows->size(); ++i) {
            const auto r = rows->row(i);
            auto it = by_email.find(r.text(0));
            if (it == by_email.end()) continue;
            auto& recipients = it->second.second;
            std::sort(recipients.begin(), recipients.end(),
                      [](const auto& a, const auto& b) { return a.id < b.id; });
            out.push_back(QueuedEmail{.id = it->first,
                                      .account_id = r.text(1),
                                      .domain_id = r.text(2),
                                      .from_domain = r.text(3),
                                      .return_token = r.text(4),
                                      .return_path = r.text(6),
                                      .message_id = r.text(5),
                                      .recipients = std::move(recipients)});
        }
        std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
        return out;
    }
};

}  // namespace

asio::awaitable<Result<std::vector<QueuedEmail>>> PgStore::claim_due(UnixMs now, int limit,
                                                                     std::string owner,
                                                                     UnixMs lease_until) {
    // Polled every second when idle: a reader looks first, so that an idle poll costs the
    // writer nothing.
    if (co_await impl_->nothing_due(detail::kAnyDueSql.c_str(), now))
        co_return std::vector<QueuedEmail>{};
    auto job = [now, limit, owner = std::move(owner), lease_until](
                   Conn& c, Batch&) -> Result<std::vector<QueuedEmail>> {
        Claim claim{.conn = c, .now = now, .owner = owner, .lease_until = lease_until};
        // Half of the batch for retries, the rest for fresh mail, and what one leaves to the
        // other: neither waits behind a backlog of the other.
        const int half = (limit + 1) / 2;
        auto retries = claim.take(false, half);
        if (!retries) return retries.error();
        const int want_fresh = limit - *retries;
        auto fresh = claim.take(true, want_fresh);
        if (!fresh) return fresh.error();
        if (*retries == half)
            if (auto more = claim.take(false, want_fresh - *fresh); !more) return more.error();
        return claim.emails();
    };
    co_return co_await impl_->writer.write<std::vector<QueuedEmail>>(std::move(job));
}

asio::awaitable<Result<std::int64_t>> PgStore::release_leases(std::string owner) {
    auto job = [owner = std::move(owner)](Conn& c, Batch& b) -> Result<std::int64_t> {
        auto r = c.exec(
            "UPDATE recipients SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1",
            Params().add(owner));
        if (!r) return r.error();
        // Lifted leases are mail to deliver now, on whichever node is free.
        if (r->affected() > 0) b.notify(detail::kQueueChannel);
        return r->affected();
    };
    co_return co_await impl_->writer.write<std::int64_t>(std::move(job));
}

asio::awaitable<Result<std::int64_t>> PgStore::renew_leases(std::string owner, UnixMs lease_until) {
    auto job = [owner = std::move(owner), lease_until](Conn& c, Batch&) -> Result<std::int64_t> {
        auto r = c.exec("UPDATE recipients SET lease_until = $2 WHERE lease_owner = $1",
                        Params().add(owner).add(lease_until));
        if (!r) return r.error();
        return r->affected();
    };
    co_return co_await impl_->writer.write<std::int64_t>(std::move(job));
}

}  // namespace posthorn::store::pg
