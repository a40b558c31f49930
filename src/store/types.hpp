// store/types.hpp — the rows the store reads and writes, as plain structs. Times are
// UnixMs (UTC milliseconds); ids are the prefixed strings of core/id.hpp. The email, its
// recipients, events, webhooks and the changes the product's rules make are the domain's
// own types (domain/model.hpp), stored as they are.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.hpp"
#include "domain/api_keys.hpp"
#include "domain/model.hpp"
#include "domain/vocabulary.hpp"

namespace posthorn::store {

using domain::ApiKey;
using domain::Bounce;
using domain::Email;
using domain::EmailChange;
using domain::Event;
using domain::Recipient;
using domain::RecipientChange;
using domain::StatBump;
using domain::Suppression;
using domain::SuppressionAdd;
using domain::Tag;
using domain::Webhook;

struct Account {
    std::string id;  // acc_…
    std::string name;
    UnixMs created_at = 0;
};

// Whether a key may be revoked, given it and every key of its account
// (AccountStore::revoke_api_key_if).
using KeyRevocationCheck =
    std::function<bool(const ApiKey& key, const std::vector<ApiKey>& account_keys)>;

// ---- the dashboard's sessions (SessionStore) ----

struct DashboardSession {
    std::string id_hash;  // hex SHA-256 of the session id
    std::string account_id;
    std::string key_id;
    std::string csrf_token;
    UnixMs created_at = 0;
    UnixMs expires_at = 0;
};

// A session with its key as the key stands now (revoked or not).
struct SessionWithKey {
    DashboardSession session;
    ApiKey key;
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
    bool session = false;  // made by a dashboard session (its cookie), not a key it gave
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
    std::string name;  // canonical: lower-case, IDN as punycode
    domain::DomainStatus status = domain::DomainStatus::not_started;
    std::string token;  // DNS label of the DKIM CNAME targets
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
    // DKIM rotation (docs/domains.md, "Rotation"): the selector that signs, the one whose
    // new key waits for the operator's zone ("" when none), and the last switch.
    std::string dkim_selector = "ph1";
    std::string dkim_pending;
    std::optional<UnixMs> dkim_rotated_at;
    // The custom tracking host is <tracking_label>.<name> (docs/tracking.md).
    std::string tracking_label = "links";
    // The custom return path (docs/domains.md#return-path): the label of its host
    // (<label>.<name>), and whether its CNAME was found as published at the last check.
    std::string return_path_label = "bounces";
    bool return_path_verified = false;
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

struct DomainSettings {
    std::optional<bool> sending;
    std::optional<bool> inbound;
    std::optional<bool> open_tracking;
    std::optional<bool> click_tracking;
    std::optional<std::string> tracking_label;
    // A new return-path label: unverified until it is checked again.
    std::optional<std::string> return_path_label;
    std::optional<std::string> records_json;  // the records, rewritten with a new label
};

// The outcome of one verification, written in one transaction with its event.
struct DomainCheck {
    std::string account_id;
    std::string domain_id;
    domain::DomainStatus status = domain::DomainStatus::pending;
    std::string records_json;
    UnixMs checked_at = 0;
    std::optional<UnixMs> next_check_at;  // nullopt: no background re-check
    std::optional<UnixMs> first_verify_at;
    std::optional<UnixMs> verified_at;
    std::optional<Event> event;  // domain.verified / domain.failed on a change
    // The return-path label that was looked up and whether its CNAME was right; stored only
    // while the domain still has that label (a PATCH may have changed it meanwhile).
    std::string return_path_label;
    bool return_path_verified = false;
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

// What the product's rules make of an email as it stands (with its recipients when asked
// for): the change to write, or nullopt for none (EmailStore::change_email).
using EmailDecision = std::function<std::optional<EmailChange>(const Email& current)>;

struct NewEmail {
    Email email;               // its envelope_id set
    int total_recipients = 0;  // of the envelope: to + cc + bcc as given
    std::vector<Recipient> recipients;
    std::string raw;  // the message as built, before DKIM signing
    std::optional<std::string> idempotency_key;
    StoredResponse response;  // what an idempotent replay answers
    UnixMs idempotency_expires_at = 0;
    // The product's decision on the email as just stored (with all its recipients and their
    // ids), written in the same transaction as change_email writes one: the recipients'
    // outcomes decided at acceptance (test mode, domain/test_mode.hpp), whose final
    // recipients the queue never claims. Empty: none; the recipients wait in the queue.
    EmailDecision settle;
    // The statistics' counters its acceptance adds to (domain::accepted_stats), written with
    // it (not when an idempotency key replays an earlier answer).
    std::vector<StatBump> stats;
};

// A question to the statistics' counters (StatsStore): the counts of `dimension`'s counters
// of `account_id` whose hour is in [from, to), summed per bucket of `width` ms starting at
// `from` (from, to and width multiples of an hour).
struct StatQuery {
    std::string account_id;
    std::string dimension;  // "" every email of the account; StatBump::dimension
    UnixMs from = 0;
    UnixMs to = 0;
    UnixMs width = 3'600'000;
};

// One sum: `count` of `kind` in the bucket that starts at `bucket`.
struct StatCount {
    UnixMs bucket = 0;
    domain::StatKind kind = domain::StatKind::accepted;
    std::int64_t count = 0;
    bool operator==(const StatCount&) const = default;
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
    // Emails and envelopes only: the email's status is one of these (none: any status),
    // and it carries every one of these tags (a tag filter is answered from an index of
    // the tags, not by reading every email of the account).
    std::vector<domain::EmailStatus> statuses;
    std::vector<Tag> tags;
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
    // JSON object: the receiver's SPF, DKIM and DMARC results (docs/inbound.md); "null" for
    // mail stored before they were kept.
    std::string authentication_json = "null";
    std::string raw;  // the message as received; filled only by find_inbound
    UnixMs received_at = 0;
    std::vector<InboundAttachment> attachments;
};

// ---- the delivery queue ----

struct QueuedRecipient {
    std::int64_t id = 0;
    std::string address;
    std::string domain;
    domain::RecipientType type = domain::RecipientType::to;
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
    std::string return_path;  // the envelope sender's domain; "": smtp.hostname
    std::string message_id;
    // The message itself is not claimed with it: a session reads it (EmailStore::email_raw)
    // when it is about to send it, so that claimed mail does not sit in memory.
    std::vector<QueuedRecipient> recipients;
};

// Which queued (QUEUED) recipients a look at the queue or an operator's command is about.
// Each filter given narrows the selection; none given: the whole queue, every account's.
struct QueueSelector {
    std::optional<std::string> account_id;
    std::optional<std::string> domain;    // the recipient's destination domain, canonical
    std::optional<std::string> email_id;  // em_…
    // Where they stand at the time given with the selector (domain::QueueState); empty:
    // every state.
    std::vector<domain::QueueState> states;
};

// The queued recipients of one destination domain in one state (QueueViewStore).
struct QueueGroup {
    std::string domain;
    domain::QueueState state = domain::QueueState::ready;
    std::int64_t recipients = 0;
    UnixMs oldest_queued_at = 0;  // when the oldest email among them was queued
    UnixMs next_attempt_at = 0;   // the earliest next attempt among them (held: once released)
};

// What the product's rules make of an email some of whose queued recipients a selection
// named (their ids): the change to write, or nullopt for none (QueueAdminStore::
// change_queued; as EmailDecision).
using QueuedDecision = std::function<std::optional<EmailChange>(
    const Email& current, const std::vector<std::int64_t>& selected)>;

struct ListQuery {
    std::string account_id;
    std::int64_t page = 1;
    std::int64_t limit = 20;
    SortOrder order = SortOrder::desc;
};

struct WebhookPatch {
    std::optional<std::string> url;
    std::optional<std::vector<domain::EventKind>> events;
    std::optional<bool> active;
};

// One attempt at delivering an event to a webhook, as GET /webhooks/{id}/deliveries shows it.
struct WebhookAttempt {
    std::int64_t id = 0;
    std::string event_id;
    domain::EventKind event_kind = domain::EventKind::email_sent;
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
    std::string previous_secret;  // of a rotation ("" when none), signing until:
    std::optional<UnixMs> previous_secret_until;
    std::string event_id;
    domain::EventKind event_kind = domain::EventKind::email_sent;
    std::optional<std::string> email_id;
    std::string data_json;
    UnixMs event_created_at = 0;
    int attempts = 0;  // made before this one
};

// Which deliveries of a webhook to make pending again (WebhookStore::replay_webhook_deliveries):
// the delivery of one event, whatever became of it, or every delivery given up (failed) of
// the events created at or after a time.
struct WebhookReplay {
    std::optional<std::string> event_id;
    std::optional<UnixMs> failed_since;
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

// Hands an event and the webhooks of its account (active or not) to the product's rules,
// which answer the ids of those it goes to (WebhookStore::route_events).
using EventRouter =
    std::function<std::vector<std::string>(const Event& event, const std::vector<Webhook>& all)>;

// What SendRateStore::add_sends did: how many of the sends asked for it added, the
// account's sum over the window after it, and the earliest second of the window that holds
// a count (0 when none does).
struct SendCounts {
    std::int64_t added = 0;
    std::int64_t total = 0;
    std::int64_t oldest_second = 0;
};

// ---- the suppression list ----

// A page of an account's suppression list, by created_at (then address) in `order`.
struct SuppressionQuery {
    std::string account_id;
    std::int64_t page = 1;
    std::int64_t limit = 20;
    SortOrder order = SortOrder::desc;
    std::optional<std::string> search;  // a substring of the address (lower-case)
    std::optional<domain::SuppressionReason> reason;
};

// What SuppressionStore::add_suppression found: the account's entry for the address, and
// whether it is the one just added (false: it was there already, and stays as it was).
struct SuppressionAdded {
    Suppression entry;
    bool added = false;
};

// The event the removal of an entry raises, made from the entry as it was
// (SuppressionStore::remove_suppression; runs on the store's thread, as EmailDecision).
using SuppressionRemoval = std::function<Event(const Suppression& removed)>;

// A stored template of an account (TemplateStore; docs/templates.md): its parts in Mustache
// syntax, kept as the account gave them, and its default variables.
struct Template {
    std::string id;  // tpl_…
    std::string account_id;
    std::string name;  // unique in the account
    std::string subject;
    std::optional<std::string> html;
    std::optional<std::string> text;
    std::string variables_json = "{}";  // the defaults: a JSON object, as the API wrote it
    UnixMs created_at = 0;
    UnixMs updated_at = 0;
};

template <class T>
struct Page {
    std::vector<T> items;
    std::int64_t total = 0;  // rows matching the filter, over all pages
};

}  // namespace posthorn::store
