// store/types.hpp — the rows the store reads and writes, as plain structs. Times are
// UnixMs (UTC milliseconds); ids are the prefixed strings of core/id.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.hpp"

namespace posthorn::store {

struct Account {
    std::string id;  // acc_…
    std::string name;
    UnixMs created_at = 0;
};

struct ApiKey {
    std::string id;  // key_…
    std::string account_id;
    std::string prefix;  // the first characters of the key, for people to recognise it
    std::string hash;    // lower-case hex SHA-256 of the whole key; the key itself is never stored
    UnixMs created_at = 0;
    std::optional<UnixMs> revoked_at;
};

struct LogEntry {
    std::string id;  // log_…
    std::string account_id;
    UnixMs created_at = 0;
    std::string method;
    std::string url;  // the request target: path and query
    int status = 0;
    std::int64_t duration_ms = 0;
    std::string ip;
    std::string user_agent;
};

enum class SortOrder { asc, desc };

struct LogQuery {
    std::string account_id;
    std::int64_t page = 1;  // 1-based
    std::int64_t limit = 20;
    std::optional<int> status;
    std::optional<std::string> method;
    SortOrder order = SortOrder::desc;
};

struct Domain {
    std::string id;  // dom_…
    std::string account_id;
    std::string name;                    // canonical: lower-case, IDN as punycode
    std::string status = "NOT_STARTED";  // NOT_STARTED | PENDING | VERIFIED | FAILED
    std::string token;                   // DNS label of the DKIM CNAME targets
    bool sending = true;
    bool inbound = false;
    bool open_tracking = false;
    bool click_tracking = false;
    std::string records_json = "{}";  // the records object; its shape belongs to the API
    std::optional<UnixMs> first_verify_at;
    std::optional<UnixMs> last_checked_at;
    std::optional<UnixMs> next_check_at;
    std::optional<UnixMs> verified_at;
    UnixMs created_at = 0;
    UnixMs updated_at = 0;
};

struct DkimKey {
    std::string id;  // dk_…
    std::string domain_id;
    std::string selector;
    std::string sealed_private_key;  // AES-256-GCM under the master key (crypto::seal)
    std::string public_key;          // base64 SPKI, the p= of the TXT record
    bool active = false;
    UnixMs created_at = 0;
};

// A DKIM TXT record the operator's DNS must serve (`posthorn dns zone`).
struct DkimZoneEntry {
    std::string selector;
    std::string token;
    std::string public_key;
    std::string domain;  // for a comment next to the record
};

// An entry of the event outbox (webhooks read them).
struct Event {
    std::string id;  // evt_…
    std::string account_id;
    std::string type;  // "domain.verified", "email.sent", …
    std::optional<std::string> email_id;
    std::string data_json;
    UnixMs created_at = 0;
};

struct DomainSettings {
    std::optional<bool> sending;
    std::optional<bool> inbound;
    std::optional<bool> open_tracking;
    std::optional<bool> click_tracking;
};

// The outcome of one verification, written in one transaction with its event.
struct DomainCheck {
    std::string account_id;
    std::string domain_id;
    std::string status;
    std::string records_json;
    UnixMs checked_at = 0;
    std::optional<UnixMs> next_check_at;  // nullopt: no background re-check
    std::optional<Event> event;           // domain.verified / domain.failed on a change
};

struct Recipient {
    std::int64_t id = 0;
    std::string address;  // local@domain, domain canonical
    std::string domain;
    std::string type;  // to | cc | bcc
    std::string status = "QUEUED";
    int attempts = 0;
    std::optional<UnixMs> next_attempt_at;
    std::optional<std::string> last_response;  // the remote server's reply, verbatim
};

struct Email {
    std::string id;  // em_…
    std::string account_id;
    std::string domain_id;
    std::string envelope_id;
    std::string status = "QUEUED";
    std::string from_email;
    std::string from_name;   // "" when none
    std::string to_display;  // the To recipients joined by ", "
    std::string subject;
    std::string message_id;
    std::string return_token;
    bool track_opens = false;
    bool track_clicks = false;
    std::string source = "api";
    std::int64_t size_bytes = 0;
    UnixMs created_at = 0;
    UnixMs queued_at = 0;
    std::optional<UnixMs> sent_at;
    std::optional<UnixMs> delivered_at;
    std::optional<UnixMs> failed_at;
    std::optional<UnixMs> opened_at;
    std::optional<UnixMs> clicked_at;
    std::vector<Recipient> recipients;  // filled by find_email only
};

struct Envelope {
    std::string id;  // env_…
    std::string account_id;
    std::string email_id;
    std::string subject;
    std::string from_email;
    std::string from_name;
    int total_recipients = 0;
    UnixMs created_at = 0;
};

// The answer an idempotency key replays (INTERFACE: "returns the previous response").
struct StoredResponse {
    int status = 0;
    std::string body;
};

struct NewEmail {
    Email email;               // its envelope_id set
    int total_recipients = 0;  // of the envelope: to + cc + bcc as given
    std::vector<Recipient> recipients;
    std::string raw;  // the message as built, before DKIM signing
    std::optional<std::string> idempotency_key;
    StoredResponse response;  // what an idempotent replay answers
    UnixMs idempotency_expires_at = 0;
    bool announced = false;  // announce_email() was called for it
};

struct SearchQuery {
    std::string account_id;
    std::int64_t page = 1;
    std::int64_t limit = 20;
    std::string sort_by = "created_at";  // a column the back end knows for this list
    SortOrder order = SortOrder::desc;
    std::optional<std::string> search;  // case-insensitive substring
    std::optional<UnixMs> start;        // created on or after
    std::optional<UnixMs> end;          // created on or before
};

// ---- inbound mail ----

struct InboundAttachment {
    int index = 0;
    std::string filename;
    std::string content_type;
    std::int64_t size = 0;
    std::string content_id;
};

struct InboundEmail {
    std::string id;  // in_…
    std::string account_id;
    std::string domain_id;
    std::string from_email;
    std::string from_name;
    std::string to_address;
    std::string subject;
    std::string reply_to;           // "" when none
    std::string cc_json = "null";   // JSON array of the header Cc addresses, or null
    std::string bcc_json = "null";  // JSON array: envelope recipients in neither To nor Cc
    std::string raw;                // the message as received; filled only by find_inbound
    UnixMs received_at = 0;
    std::vector<InboundAttachment> attachments;
};

// ---- the delivery queue ----

struct QueuedRecipient {
    std::int64_t id = 0;
    std::string address;
    std::string domain;
    std::string type;
    int attempts = 0;
    bool suppressed = false;  // on the account's suppression list: never attempted
};

// An email with the recipients of it that a claim leased.
struct QueuedEmail {
    std::string id;
    std::string account_id;
    std::string domain_id;
    std::string from_domain;  // the sender's domain name (DKIM d=)
    std::string return_token;
    std::string message_id;
    // The message itself is not claimed with it: a session reads it (EmailStore::email_raw)
    // when it is about to send it, so that claimed mail does not sit in memory.
    std::vector<QueuedRecipient> recipients;
};

struct RecipientOutcome {
    std::int64_t recipient_id = 0;
    std::string address;
    std::string status;  // QUEUED (to retry), DELIVERED, BOUNCED, FAILED, BLOCKED
    int attempts = 0;
    std::optional<UnixMs> next_attempt_at;     // for QUEUED
    std::optional<std::string> last_response;  // the server's reply, or our words
    bool transmitted = false;                  // the message went through (2xx after DATA)
    bool suppress = false;                     // add the address to the suppression list
    std::string suppress_reason = "bounce";    // bounce | complaint
};

struct DeliveryReport {
    std::string email_id;
    std::string account_id;
    std::vector<RecipientOutcome> outcomes;
    UnixMs at = 0;
    bool complaint = false;  // an abuse report (ARF): the email becomes COMPLAINED
};

struct ListQuery {
    std::string account_id;
    std::int64_t page = 1;
    std::int64_t limit = 20;
    SortOrder order = SortOrder::desc;
};

// Every event type a webhook may subscribe to (DESIGN §8).
inline constexpr std::string_view kEventTypes[] = {
    "email.sent",       "email.delivered", "email.bounced",    "email.failed",
    "email.opened",     "email.clicked",   "email.complained", "email.blocked",
    "inbound.received", "domain.verified", "domain.failed"};

struct Webhook {
    std::string id;  // wh_…
    std::string account_id;
    std::string url;
    std::vector<std::string> events;
    bool active = true;
    std::string secret;  // the raw signing key (whsec_ + its base64 is shown once)
    UnixMs created_at = 0;
    UnixMs updated_at = 0;
};

struct WebhookPatch {
    std::optional<std::string> url;
    std::optional<std::vector<std::string>> events;
    std::optional<bool> active;
};

// One attempt at delivering an event to a webhook, as GET /webhooks/{id}/deliveries shows it.
struct WebhookAttempt {
    std::int64_t id = 0;
    std::string event_id;
    std::string event_type;
    int attempt = 0;                 // 1-based
    std::optional<int> status_code;  // none when no HTTP answer came
    std::optional<std::string> error;
    std::int64_t duration_ms = 0;
    UnixMs created_at = 0;
};

// A delivery claimed for an attempt: the event with what is needed to send and sign it.
struct DueWebhookDelivery {
    std::int64_t delivery_id = 0;
    std::string webhook_id;
    std::string url;
    std::string secret;
    std::string event_id;
    std::string event_type;
    std::optional<std::string> email_id;
    std::string data_json;
    UnixMs event_created_at = 0;
    int attempts = 0;  // made before this one
};

// What an attempt came to. `next_attempt_at` set: pending again; unset: done when
// `delivered`, else given up.
struct WebhookAttemptResult {
    std::int64_t delivery_id = 0;
    int attempt = 0;
    std::optional<int> status_code;
    std::optional<std::string> error;
    std::int64_t duration_ms = 0;
    UnixMs at = 0;
    bool delivered = false;
    std::optional<UnixMs> next_attempt_at;
};

template <class T>
struct Page {
    std::vector<T> items;
    std::int64_t total = 0;  // rows matching the filter, over all pages
};

}  // namespace posthorn::store
