// domain/email_rules.hpp — what happens to an email when something happens to its
// recipients (DESIGN §3): the status that follows from their states, the times it stamps,
// the addresses it suppresses and the events it raises. Delivery and the bounce and
// complaint reports of the inbound door hand their outcomes here; a store writes the
// EmailChange that comes back. Pure: no I/O, no clock; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/model.hpp"

namespace posthorn::domain {

// What happened to one recipient: the decision on an attempt (delivery_policy.hpp), a
// suppressed address that is not attempted, or a bounce or complaint report.
struct RecipientOutcome {
    std::int64_t recipient_id = 0;
    RecipientStatus status = RecipientStatus::queued;
    int attempts = 0;                           // attempts made, this one included
    std::optional<UnixMs> next_attempt_at;      // for `queued`: when to try again
    std::optional<std::string> response;        // the server's reply, or our words
    bool transmitted = false;                   // a server took the message (2xx after DATA)
    std::optional<Bounce> bounce;               // for a give-up
    std::optional<SuppressionReason> suppress;  // put the address on the suppression list
    std::optional<TlsOutcome> tls;              // the attempt's TLS (kept when unset)
};

struct Outcomes {
    std::vector<RecipientOutcome> recipients;
    UnixMs at = 0;
    bool complaint = false;  // an abuse report (ARF): the email becomes COMPLAINED
};

// The email's status from its recipients' states: QUEUED while some are open and the
// message went nowhere yet, SENT while some are open and it went somewhere; once all are
// final, the worst outcome (BOUNCED, then FAILED, then BLOCKED) over DELIVERED. A late DSN
// that bounces a delivered recipient makes a DELIVERED email BOUNCED. A complaint makes it
// COMPLAINED, which nothing undoes; a CANCELED email stays CANCELED (scheduling.hpp), and
// a SCHEDULED one becomes QUEUED (or what its outcomes make it). `any_sent`: the message was sent
// to some recipient.
EmailStatus email_status(const std::vector<Recipient>& recipients, bool any_sent,
                         EmailStatus before, bool complaint);

// What `outcomes` do to `email` (which holds all of its recipients): each named recipient
// takes its outcome (one not of the email is ignored); the email takes its status, sent_at
// when the message first went out, delivered_at when it becomes DELIVERED, failed_at when
// it first fails, bounces or is blocked; suppressions for the outcomes that ask for them,
// each with its suppression.added event (written only if the address is not suppressed yet);
// and the events: email.sent when the message first went out, email.delivery_delayed
// (about those recipients only) when a recipient's first attempt left it queued for a
// retry, and email.<status> when the status changes to a final one. nullopt when no
// recipient of the email is named and there is no complaint.
std::optional<EmailChange> apply_outcomes(const Email& email, const Outcomes& outcomes);

enum class Engagement { open, click };

// An open or a click: the first sets opened_at / clicked_at; every one raises an
// email.opened / email.clicked event with `data_json` (events.hpp, engagement_data).
EmailChange engage(const Email& email, Engagement what, std::string data_json, UnixMs at);

// The recipients an abuse report (RFC 5965) is about: those it names, or, when it names
// none, the email's To recipients, each as the delivery policy decides a complaint
// (decide_complaint: COMPLAINED and suppressed; a `not-spam` report is about nobody).
Outcomes complaint_outcomes(const Email& email, const std::vector<std::string>& named,
                            const std::string& feedback_type, UnixMs at);

}  // namespace posthorn::domain
