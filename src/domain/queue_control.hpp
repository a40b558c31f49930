// domain/queue_control.hpp — the operator's controls over the delivery queue (`posthorn queue
// hold|release|retry|purge`, docs/delivery.md "Queue control") as rules: which queued
// recipients each command takes, by where they stand in the queue (QueueState,
// vocabulary.hpp), and what a purge makes of an email. A store selects the recipients and
// writes what these answer (store/store.hpp, QueueAdminStore); it decides neither. Pure;
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "domain/model.hpp"

namespace posthorn::domain {

enum class QueueAction : std::uint8_t { hold, release, retry, purge };

// Where the QUEUED recipient `r` of an email in `email_status` stands at `now`, in this order
// of precedence: in_flight (a live lease), held (held_at), scheduled (its email is SCHEDULED
// and its next attempt, the scheduled time, is still to come), deferred (its next attempt is
// still to come: a retry), ready. A store's queries (QueueViewStore, QueueAdminStore) select
// and count by the same conditions; the contract suite checks that they agree.
QueueState queue_state(const Recipient& r, EmailStatus email_status, UnixMs now);

// The states of the queued recipients `action` takes:
//   hold     ready, deferred, scheduled, in flight: an attempt under way finishes, and a retry
//            it ends in waits for the release; a scheduled one held keeps its time;
//   release  held, and in flight (held while its attempt was under way);
//   retry    deferred: ready ones are due already, held ones stay held (release them), in
//            flight ones are being attempted, and scheduled ones wait for their time (a retry
//            would send them early: reschedule the email instead, PATCH /v1/emails/{id});
//   purge    ready, deferred, scheduled, held; not in flight: an attempt under way may still
//            deliver, and its outcome would come after the purge. Purge them once it has
//            ended.
std::vector<QueueState> queue_states_for(QueueAction action);

// The last response, and the bounce's message, of a purged recipient.
inline constexpr std::string_view kPurgedResponse = "purged";

// What purging the recipients `ids` of `email` (which holds all of its recipients) makes of
// it: each of them still QUEUED is given up — FAILED, its last response "purged", a bounce
// of type `undetermined` without a code and with the message "purged", attempts unchanged,
// not suppressed (the address did nothing wrong), no longer held — and the email's status,
// times and events follow as for any outcome (apply_outcomes): email.failed when the email
// becomes FAILED, email.bounced when another recipient had bounced, nothing while some
// recipient is still open. nullopt when none of them is still queued.
std::optional<EmailChange> purge(const Email& email, const std::vector<std::int64_t>& ids,
                                 UnixMs at);

}  // namespace posthorn::domain
