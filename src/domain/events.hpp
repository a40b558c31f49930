// domain/events.hpp — the events of DESIGN §8: their payloads (the `data` a webhook
// receives), the body a webhook is sent, and which webhooks an event goes to. Every
// event raised anywhere is made here. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/model.hpp"

namespace posthorn::domain {

// A new event with a fresh id (evt_… of `at`).
Event make_event(EventKind kind, std::string account_id, std::optional<std::string> email_id,
                 std::string data_json, UnixMs at);

// The event an email raises when it reaches a final status.
EventKind event_for(EmailStatus final_status);

// Every email.* event carries the email's tags and metadata as the account gave them, and
// whether it was sent in test mode (test_mode.hpp):
//   "tags":[{"name":…,"value":…}],"metadata":{…} (null when none was given),"test":false

// The data of an email.* event about delivery: the email's id and status, and the
// recipients it is about, each with its address, status, attempts, the last reply and, for
// one given up, its bounce {type, code, message} (null otherwise), then the tags and the
// metadata of `email`:
//   {"email_id":…,"status":…,"recipients":[{"email":…,"status":…,"attempts":…,
//    "response":…,"bounce":…}],"tags":[…],"metadata":…,"test":…}
std::string email_event_data(const Email& email, EmailStatus status,
                             const std::vector<const Recipient*>& about);

// The data of email.opened / email.clicked:
//   {"email_id","ip","user_agent"[,"url"],"tags","metadata","test"}.
std::string engagement_data(const Email& email, std::string_view ip, std::string_view user_agent,
                            const std::optional<std::string>& url);

// What inbound.received tells of a received email.
struct InboundSummary {
    std::string id;  // in_…
    std::string from_email;
    std::string from_name;
    std::string to_address;
    std::string subject;
    std::size_t attachments = 0;
    std::string authentication = "null";  // a JSON object, written as it is (docs/inbound.md)
};
std::string inbound_event_data(const InboundSummary& m);

// The data of suppression.added and suppression.removed: the entry as GET
// /v1/suppressions/{email} shows it —
//   {"email":…,"reason":…,"email_id":…|null,"created_at":…}
// (created_at: when the address was suppressed; for a removal the event's own time says when
// it was removed).
std::string suppression_data(const Suppression& s);

// The addition of `s` to the suppression list, with its suppression.added event (at the
// entry's created_at; about the email that caused it, if any).
SuppressionAdd suppression_added(Suppression s);

// The suppression.removed event of the entry `s`, removed at `at`.
Event suppression_removed(const Suppression& s, UnixMs at);

// The body a webhook is sent: {"type":…,"timestamp":…,"created_at":…,"data":…} (the
// two times are the same: the event's).
std::string event_body(EventKind kind, UnixMs created_at, std::string_view data_json);

// Whether `webhook` is told of events of `kind`: it is active and subscribes to it.
bool subscribes(const Webhook& webhook, EventKind kind);

// The ids of the webhooks `event` goes to, of the webhooks of its account.
std::vector<std::string> webhooks_for(const Event& event, const std::vector<Webhook>& webhooks);

}  // namespace posthorn::domain
