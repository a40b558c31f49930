// domain/vocabulary.hpp — the product's words as enums, and the one place that names them:
// the states of an email, a recipient and a sending domain (DESIGN §3, §6), the kinds of
// event a webhook subscribes to (DESIGN §8), the classes of a bounce and the reasons for a
// suppression. The names are what the API shows, the webhooks send and the stores keep;
// nothing else spells them. Pure; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace posthorn::domain {

enum class EmailStatus : std::uint8_t {
    queued,
    sent,
    delivered,
    bounced,
    failed,
    complained,
    blocked,
    // Waiting for its scheduled time (scheduled_at, scheduling.hpp); then QUEUED.
    scheduled,
    // Canceled by the account before every recipient was attempted (scheduling.hpp). Final,
    // and it stays: a recipient whose attempt was under way keeps its own outcome.
    canceled,
};

// A recipient's own delivery state. `queued` is open (a first attempt or a retry is due);
// every other state is final, except that a late report may still turn `delivered` into
// `bounced` or `complained`. `canceled`: its email was canceled before it was attempted
// (scheduling.hpp); never attempted.
enum class RecipientStatus : std::uint8_t {
    queued,
    delivered,
    bounced,
    failed,
    blocked,
    complained,
    canceled,
};

enum class DomainStatus : std::uint8_t { not_started, pending, verified, failed };

enum class EventKind : std::uint8_t {
    email_sent,
    email_delivered,
    email_bounced,
    email_failed,
    email_opened,
    email_clicked,
    email_complained,
    email_blocked,
    inbound_received,
    domain_verified,
    domain_failed,
    email_delivery_delayed,
    suppression_added,
    suppression_removed,
    email_canceled,
};

// Why a recipient was given up (delivery_policy.hpp): the address does not exist (`hard`);
// the mailbox or the message was the trouble, or retries ran out (`soft`); the receiver
// refused for reputation or policy (`block`); or nothing says which (`undetermined`).
enum class BounceType : std::uint8_t { hard, soft, block, undetermined };

enum class SuppressionReason : std::uint8_t { hard_bounce, complaint, manual, unsubscribe };

enum class RecipientType : std::uint8_t { to, cc, bcc };

// Where a queued (QUEUED) recipient stands in the queue at a given moment: its lease is live
// (`in_flight`: a node has claimed it and its attempt is under way or about to be), else it
// is held by the operator (`held`: not attempted until released), else its next attempt is
// due (`ready`) or still to come: waiting for the time its SCHEDULED email was scheduled at
// (`scheduled`: issue 30), or waiting for a retry (`deferred`). queue_control.hpp (queue_state
// is the rule; a store's queries follow it).
enum class QueueState : std::uint8_t { ready, deferred, in_flight, held, scheduled };

// What the account's statistics count (GET /v1/stats, domain/stats.hpp): emails accepted,
// and emails that became DELIVERED, BOUNCED (one counter per bounce class), COMPLAINED,
// FAILED or BLOCKED, or were opened or clicked for the first time.
enum class StatKind : std::uint8_t {
    accepted,
    delivered,
    bounced_hard,
    bounced_soft,
    bounced_block,
    bounced_undetermined,
    complained,
    failed,
    blocked,
    opened,
    clicked,
};

// The names, in the order of each enum's values.
inline constexpr std::array<std::string_view, 9> kEmailStatusNames = {
    "QUEUED",     "SENT",    "DELIVERED", "BOUNCED", "FAILED",
    "COMPLAINED", "BLOCKED", "SCHEDULED", "CANCELED"};
inline constexpr std::array<std::string_view, 7> kRecipientStatusNames = {
    "QUEUED", "DELIVERED", "BOUNCED", "FAILED", "BLOCKED", "COMPLAINED", "CANCELED"};
inline constexpr std::array<std::string_view, 4> kDomainStatusNames = {"NOT_STARTED", "PENDING",
                                                                       "VERIFIED", "FAILED"};
inline constexpr std::array<std::string_view, 15> kEventKindNames = {
    "email.sent",        "email.delivered",     "email.bounced",    "email.failed",
    "email.opened",      "email.clicked",       "email.complained", "email.blocked",
    "inbound.received",  "domain.verified",     "domain.failed",    "email.delivery_delayed",
    "suppression.added", "suppression.removed", "email.canceled"};
inline constexpr std::array<std::string_view, 4> kBounceTypeNames = {"hard", "soft", "block",
                                                                     "undetermined"};
inline constexpr std::array<std::string_view, 4> kSuppressionReasonNames = {
    "hard_bounce", "complaint", "manual", "unsubscribe"};
inline constexpr std::array<std::string_view, 3> kRecipientTypeNames = {"to", "cc", "bcc"};
inline constexpr std::array<std::string_view, 5> kQueueStateNames = {
    "ready", "deferred", "in_flight", "held", "scheduled"};
inline constexpr std::array<std::string_view, 11> kStatKindNames = {
    "accepted",     "delivered",     "bounced.hard",
    "bounced.soft", "bounced.block", "bounced.undetermined",
    "complained",   "failed",        "blocked",
    "opened",       "clicked"};

namespace detail {
template <class E>
struct Names;
template <>
struct Names<EmailStatus> {
    static constexpr const auto& all = kEmailStatusNames;
};
template <>
struct Names<RecipientStatus> {
    static constexpr const auto& all = kRecipientStatusNames;
};
template <>
struct Names<DomainStatus> {
    static constexpr const auto& all = kDomainStatusNames;
};
template <>
struct Names<EventKind> {
    static constexpr const auto& all = kEventKindNames;
};
template <>
struct Names<BounceType> {
    static constexpr const auto& all = kBounceTypeNames;
};
template <>
struct Names<SuppressionReason> {
    static constexpr const auto& all = kSuppressionReasonNames;
};
template <>
struct Names<RecipientType> {
    static constexpr const auto& all = kRecipientTypeNames;
};
template <>
struct Names<QueueState> {
    static constexpr const auto& all = kQueueStateNames;
};
template <>
struct Names<StatKind> {
    static constexpr const auto& all = kStatKindNames;
};
}  // namespace detail

template <class E>
constexpr std::string_view name(E value) {
    return detail::Names<E>::all[static_cast<std::size_t>(value)];
}

// The value named `text` exactly (names are case-sensitive), or nullopt.
template <class E>
constexpr std::optional<E> from_name(std::string_view text) {
    const auto& all = detail::Names<E>::all;
    for (std::size_t i = 0; i < all.size(); ++i)
        if (all[i] == text) return static_cast<E>(i);
    return std::nullopt;
}

// Every value of E, in order (for tables and tests).
template <class E>
constexpr auto all_values() {
    std::array<E, detail::Names<E>::all.size()> out{};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<E>(i);
    return out;
}

// A final state of an email: one that its recipients' outcomes can no longer leave by
// themselves (a late report still can: DELIVERED → BOUNCED | COMPLAINED). SCHEDULED is open:
// it becomes QUEUED at its time.
constexpr bool is_final(EmailStatus s) {
    return s != EmailStatus::queued && s != EmailStatus::sent && s != EmailStatus::scheduled;
}
constexpr bool is_final(RecipientStatus s) { return s != RecipientStatus::queued; }

}  // namespace posthorn::domain
