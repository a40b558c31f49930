// domain/model.hpp — an email and its recipients as the product's rules see them, the
// events those rules raise, and the changes they make (EmailChange), which a store writes
// as they are: a store reads and writes these rows; what they mean is decided here
// (email_rules.hpp, events.hpp). Plain structs; times are UnixMs (UTC milliseconds), ids
// the prefixed strings of core/id.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/time.hpp"
#include "domain/vocabulary.hpp"

namespace posthorn::domain {

// Why a recipient was given up (delivery_policy.hpp).
struct Bounce {
    BounceType type = BounceType::undetermined;
    std::string code;     // the enhanced status code (RFC 3463) "5.1.1"; "" when none came
    std::string message;  // what the server said, or our words for what happened
    bool operator==(const Bounce&) const = default;
};

// The TLS of a recipient's last attempt that reached the point of choosing it: which
// policy applied (delivery/tls_policy.hpp: none, opportunistic, required, verify, mta-sts,
// dane) and what came of it.
struct TlsOutcome {
    std::string policy;
    std::string version;    // "TLSv1.3"; "" when the connection was not encrypted
    bool verified = false;  // the certificate passed the policy's check
    std::string failure;    // why not, or why the host was refused; "" when nothing failed
    bool operator==(const TlsOutcome&) const = default;
};

struct Recipient {
    std::int64_t id = 0;
    std::string address;  // local@domain, domain canonical
    std::string domain;
    RecipientType type = RecipientType::to;
    RecipientStatus status = RecipientStatus::queued;
    int attempts = 0;
    std::optional<UnixMs> next_attempt_at;
    std::optional<std::string> last_response;  // the remote server's reply, verbatim
    std::optional<UnixMs> sent_at;             // when a server first took the message for it
    std::optional<Bounce> bounce;              // set when it was given up
    std::optional<TlsOutcome> tls;             // of the last attempt that got that far
    std::optional<UnixMs> held_at;  // held by the operator since then (queue_control.hpp)
    // A node claimed it for an attempt until then (its attempt is under way while that is
    // ahead); read, never written, by the rules (scheduling.hpp: an attempt in flight is not
    // canceled).
    std::optional<UnixMs> lease_until;
};

// A label an account puts on an email to find and group it (POST /v1/emails `tags`,
// X-Posthorn-Tag over SMTP); the API checks what a name and a value may hold.
struct Tag {
    std::string name;
    std::string value;
    bool operator==(const Tag&) const = default;
};

struct Email {
    std::string id;  // em_…
    std::string account_id;
    std::string domain_id;
    std::string envelope_id;
    EmailStatus status = EmailStatus::queued;
    std::string from_email;
    std::string from_name;   // "" when none
    std::string to_display;  // the To recipients joined by ", "
    std::string subject;
    std::string message_id;
    std::string return_token;
    // The domain of its envelope sender (bounces+<token>@<return_path>), decided at
    // acceptance: a verified custom return path (<label>.<domain>); "": smtp.hostname.
    std::string return_path;
    bool track_opens = false;
    bool track_clicks = false;
    std::string source = "api";
    std::string api_key_id;  // the key that sent it (key_…); "" for mail from before keys were kept
    std::int64_t size_bytes = 0;
    UnixMs created_at = 0;
    UnixMs queued_at = 0;
    std::optional<UnixMs> sent_at;
    std::optional<UnixMs> delivered_at;
    std::optional<UnixMs> failed_at;
    std::optional<UnixMs> opened_at;
    std::optional<UnixMs> clicked_at;
    // The time the account asked it to be sent at (scheduling.hpp); SCHEDULED until then.
    std::optional<UnixMs> scheduled_at;
    std::vector<Tag> tags;      // in the order given; names unique
    std::string metadata_json;  // the account's JSON object, serialized; "" when none
    // Sent with a test key (test_mode.hpp): never delivered, its recipients' outcomes decided
    // when it was accepted; every event of it says so.
    bool test = false;
    std::vector<Recipient> recipients;  // filled where asked for
};

// An entry of the event outbox: webhooks are told of it (webhooks/, events.hpp).
struct Event {
    std::string id;  // evt_…
    std::string account_id;
    EventKind kind = EventKind::email_sent;
    std::optional<std::string> email_id;
    std::string data_json;  // the payload's `data` (events.hpp)
    UnixMs created_at = 0;
};

// A customer's endpoint that is told of the events it subscribes to (DESIGN §8).
struct Webhook {
    std::string id;  // wh_…
    std::string account_id;
    std::string url;
    std::vector<EventKind> events;
    bool active = true;
    std::string secret;  // the raw signing key (whsec_ + its base64 is shown once)
    // The secret a rotation replaced, which still signs until previous_secret_until; ""
    // when there is none.
    std::string previous_secret;
    std::optional<UnixMs> previous_secret_until;
    UnixMs created_at = 0;
    UnixMs updated_at = 0;
};

// An address of an account that is not sent to any more.
struct Suppression {
    std::string account_id;
    std::string address;  // lower-case
    SuppressionReason reason = SuppressionReason::hard_bounce;
    std::string email_id;  // the email that caused it; "" when none (added over the API)
    UnixMs created_at = 0;
    bool operator==(const Suppression&) const = default;
};

// An address to put on the suppression list, with the event its addition raises
// (suppression.added, events.hpp). A store writes both, or neither when the account
// suppresses the address already: the entry it has stays as it is, and nothing is raised.
struct SuppressionAdd {
    Suppression entry;
    Event event;
};

// One counter of the account's statistics to add to (domain/stats.hpp): `count` more of
// `kind` in the hour starting at `hour` (UTC, a multiple of 3,600,000 ms), for `dimension`
// ("" every email of the account; "domain:<domain id>", "tag:<name>:<value>" those of one
// domain or tag). A store adds it to the row it names, which it makes when there is none.
struct StatBump {
    std::string account_id;
    UnixMs hour = 0;
    std::string dimension;
    StatKind kind = StatKind::accepted;
    std::int64_t count = 1;
    bool operator==(const StatBump&) const = default;
};

// A recipient's new state: every field is written as it stands.
struct RecipientChange {
    std::int64_t id = 0;
    RecipientStatus status = RecipientStatus::queued;
    int attempts = 0;
    std::optional<UnixMs> next_attempt_at;
    std::optional<std::string> last_response;
    std::optional<UnixMs> sent_at;
    std::optional<UnixMs> final_at;  // when it reached a final state
    std::optional<Bounce> bounce;
    std::optional<TlsOutcome> tls;
    std::optional<UnixMs> held_at;  // held by the operator (only while queued)
};

// What the rules make of something that happened to an email: its new status and times,
// the recipients that changed, the addresses to suppress and the events to raise. A store
// writes all of it in one transaction (store/store.hpp, EmailStore::change_email).
struct EmailChange {
    EmailStatus status = EmailStatus::queued;
    std::optional<UnixMs> sent_at;
    std::optional<UnixMs> delivered_at;
    std::optional<UnixMs> failed_at;
    std::optional<UnixMs> opened_at;
    std::optional<UnixMs> clicked_at;
    // A new scheduled time (a reschedule, scheduling.hpp); unset: the email's stays as it is.
    std::optional<UnixMs> scheduled_at;
    UnixMs at = 0;  // the email's updated_at
    std::vector<RecipientChange> recipients;
    std::vector<SuppressionAdd> suppressions;
    std::vector<Event> events;
    // The statistics' counters the change adds to (stats.hpp), written in its transaction.
    std::vector<StatBump> stats;
};

}  // namespace posthorn::domain
