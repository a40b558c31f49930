// store/store.hpp — the persistence seam (CONVENTIONS §9): narrow interfaces, one per
// concern, each consumer taking only those it uses, and `Store`, which a back end
// implements whole (sqlite/ now, pg/ later).
//
// A store stores; it does not decide. It reads and writes rows and keeps its promises
// (atomicity, leases, uniqueness); what a row means — an email's status, the events it
// raises, which webhooks hear of them — is the domain's (src/domain/), handed to the store
// as data (an Event, an EmailChange) or as a pure function that runs inside its
// transaction (EmailDecision, EventRouter). The contract every back end keeps is written
// down once, as tests: store/contract/.
//
// Every write is durable when its awaitable completes: back ends batch concurrent writes
// into one transaction and one fsync (group commit) and acknowledge each after the commit.
// Driver calls never run on the caller's thread; the caller resumes on its own executor.
// All methods are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/asio.hpp"
#include "core/result.hpp"
#include "store/errors.hpp"
#include "store/types.hpp"

namespace posthorn::store {

class AccountStore {
  public:
    virtual ~AccountStore() = default;
    // errc::conflict when the name is taken.
    virtual asio::awaitable<Result<void>> create_account(Account account) = 0;
    virtual asio::awaitable<Result<Account>> find_account_by_name(std::string name) = 0;
    virtual asio::awaitable<Result<void>> create_api_key(ApiKey key) = 0;
    virtual asio::awaitable<Result<std::vector<ApiKey>>> list_api_keys(std::string account_id) = 0;
    // Revoking twice keeps the first time; errc::not_found for an unknown id.
    virtual asio::awaitable<Result<ApiKey>> revoke_api_key(std::string key_id, UnixMs at) = 0;
    // Revokes the key `key_id` of `account_id` at `at` unless `may_revoke`, handed the key and
    // every key of its account as they stand in the write (none of them revoked meanwhile by
    // another node: it waits), answers false: then errc::conflict and nothing changes. A key
    // revoked already is answered as it is (the first time stands; `may_revoke` is not
    // asked). errc::not_found for an unknown id or another account's key. `may_revoke` runs on
    // the store's thread while the write is open (as EmailDecision), and may run more than
    // once.
    virtual asio::awaitable<Result<ApiKey>> revoke_api_key_if(std::string account_id,
                                                              std::string key_id, UnixMs at,
                                                              KeyRevocationCheck may_revoke) = 0;
    // Looks a key up by the hex SHA-256 of the presented key (revoked ones included).
    virtual asio::awaitable<Result<ApiKey>> find_api_key(std::string hash_hex) = 0;
};

// The dashboard's sessions (api/dashboard.hpp, docs/dashboard.md), shared by every node of
// a store. A signed-in browser acts with one API key; the store keeps the hex SHA-256 of the
// session id (the cookie's value), never the id itself. Whether a session may be used
// (expired, its key revoked) is the caller's to decide.
class SessionStore {
  public:
    virtual ~SessionStore() = default;
    // errc::conflict when a session of that id_hash exists.
    virtual asio::awaitable<Result<void>> create_session(DashboardSession session) = 0;
    // The session of `id_hash` with its key, expired or not; errc::not_found when there is
    // none (or its key is gone).
    virtual asio::awaitable<Result<SessionWithKey>> find_session(std::string id_hash) = 0;
    // Answers whether there was one.
    virtual asio::awaitable<Result<bool>> delete_session(std::string id_hash) = 0;
    // Deletes the sessions whose expires_at is at or before `now`; answers how many went.
    virtual asio::awaitable<Result<std::int64_t>> delete_expired_sessions(UnixMs now) = 0;
};

class LogStore {
  public:
    virtual ~LogStore() = default;
    // Queued, and committed within moments with the other entries of that moment; the caller
    // does not wait (the request log is written off the response path). flush() waits for it.
    virtual void append_log(LogEntry entry) = 0;
    virtual asio::awaitable<Result<Page<LogEntry>>> list_logs(LogQuery query) = 0;
    // Deletes entries created before `cutoff`; answers how many went. (By id: an entry's id
    // must be made from its created_at, as new_id(…, created_at) does.)
    virtual asio::awaitable<Result<std::int64_t>> delete_logs_before(UnixMs cutoff) = 0;
};

class DomainStore {
  public:
    virtual ~DomainStore() = default;
    // The domain and its DKIM keys in one transaction; errc::conflict when the account has
    // the name already.
    virtual asio::awaitable<Result<void>> create_domain(Domain domain,
                                                        std::vector<DkimKey> keys) = 0;
    // Scoped to the account: another account's domain is errc::not_found.
    virtual asio::awaitable<Result<Domain>> find_domain_by_id(std::string account_id,
                                                              std::string id) = 0;
    virtual asio::awaitable<Result<Domain>> find_domain_by_name(std::string account_id,
                                                                std::string name) = 0;
    virtual asio::awaitable<Result<Page<Domain>>> list_domains(ListQuery query) = 0;
    virtual asio::awaitable<Result<void>> update_domain_settings(std::string account_id,
                                                                 std::string domain_id,
                                                                 DomainSettings settings,
                                                                 UnixMs now) = 0;
    // Deletes the domain and its DKIM keys (gone from dkim_zone with them). Its emails and
    // inbound emails stay, no longer tied to a domain (their domain_id empty); the next
    // find of its name finds nothing, on every node. errc::not_found for an unknown id or
    // one of another account.
    virtual asio::awaitable<Result<void>> delete_domain(std::string account_id,
                                                        std::string domain_id) = 0;
    // Writes a verification outcome as it is (and its event, if any).
    virtual asio::awaitable<Result<void>> record_domain_check(DomainCheck check) = 0;
    // Moves the next background check of a domain, changing nothing else.
    virtual asio::awaitable<Result<void>> postpone_domain_check(std::string account_id,
                                                                std::string domain_id,
                                                                UnixMs next_check_at) = 0;
    // The domains whose next_check_at has come, oldest first.
    virtual asio::awaitable<Result<std::vector<Domain>>> domains_due(UnixMs now, int limit) = 0;
    // Cached for the lookup-cache epoch (moved by every change of a domain or its keys, on
    // every node), so that the delivery engine may ask before each message it signs.
    virtual asio::awaitable<Result<std::vector<DkimKey>>> dkim_keys(std::string domain_id) = 0;
    // DKIM rotation, in one transaction: `key` replaces the key of its selector (which must
    // not be the active one) and the domain's dkim_pending becomes that selector.
    // errc::conflict when the domain has a rotation pending already; errc::not_found when
    // the account has no such domain.
    virtual asio::awaitable<Result<void>> start_dkim_rotation(std::string account_id,
                                                              std::string domain_id,
                                                              DkimKey key) = 0;
    // Ends the pending rotation to `selector`: its key becomes the only active one, the
    // domain's dkim_selector that selector, dkim_pending none, dkim_rotated_at `now`.
    // errc::not_found when the domain has no rotation to `selector` pending (any more).
    virtual asio::awaitable<Result<void>> finish_dkim_rotation(std::string domain_id,
                                                               std::string selector,
                                                               UnixMs now) = 0;
    // The domains named `name` whose tracking label is `label`, in every account (whether
    // their tracking host <label>.<name> is verified is the caller's to decide). Cached for
    // the lookup-cache epoch, as find_domain_by_name is: the HTTP server asks for each
    // request on a host other than public_url's.
    virtual asio::awaitable<Result<std::vector<Domain>>> tracking_domains(std::string label,
                                                                          std::string name) = 0;
    // The domains with a rotation pending, oldest first.
    virtual asio::awaitable<Result<std::vector<Domain>>> domains_rotating(int limit) = 0;
    // The domains of `status` with no rotation pending whose active key was made at or before
    // `made_before`, oldest key first.
    virtual asio::awaitable<Result<std::vector<Domain>>> domains_with_keys_before(
        domain::DomainStatus status, UnixMs made_before, int limit) = 0;
    // Every DKIM key of every account, for the operator's zone.
    virtual asio::awaitable<Result<std::vector<DkimZoneEntry>>> dkim_zone() = 0;
};

class EmailStore {
  public:
    virtual ~EmailStore() = default;
    // The email, its envelope, recipients, raw message and idempotency key in one durable
    // transaction. If the account already holds the (unexpired) idempotency key, nothing
    // is written and the stored response comes back instead. With `settle`, the email is read
    // back with its recipients in that transaction, handed to it, and what it answers written
    // as change_email writes it (statuses, events, suppressions); delivery is not woken.
    virtual asio::awaitable<Result<std::optional<StoredResponse>>> create_email(NewEmail e) = 0;
    // Several emails, each as create_email stores one, in one durable transaction: all of
    // them are written (or replayed by their idempotency keys), or, when the transaction
    // fails, none. The answers follow the order of `emails`: nullopt for one written, the
    // stored response for one replayed (a key held already, or by an earlier email of the
    // same call). POST /v1/emails/batch.
    virtual asio::awaitable<Result<std::vector<std::optional<StoredResponse>>>> create_emails(
        std::vector<NewEmail> emails) = 0;
    virtual asio::awaitable<Result<std::optional<StoredResponse>>> find_idempotent(
        std::string account_id, std::string key, UnixMs now) = 0;
    // Reads the email (with all its recipients when `with_recipients`), hands it to
    // `decide`, and writes what that answers, in one transaction: the email's status and
    // times, each changed recipient (whose lease is lifted), the suppressions (an address
    // the account suppresses already keeps its entry) and the events. `decide` runs on
    // the store's thread while the write is open: it must be quick, do no I/O, and may run
    // more than once. An empty `account_id` finds the email by its id in any account (a
    // tracking token names only the email). errc::not_found for an unknown email.
    virtual asio::awaitable<Result<void>> change_email(std::string account_id, std::string email_id,
                                                       bool with_recipients,
                                                       EmailDecision decide) = 0;
    // As change_email with all the recipients, each with its lease (Recipient::lease_until),
    // while no claim (QueueStore::claim_due, on any node) takes a recipient of the email: a
    // recipient leased when it is read is seen leased, and one not leased stays unleased until
    // the commit. For changes that must not race an attempt (a cancel, a reschedule:
    // domain/scheduling.hpp). Wakes delivery when the change leaves a recipient due.
    virtual asio::awaitable<Result<void>> change_email_locked(std::string account_id,
                                                              std::string email_id,
                                                              EmailDecision decide) = 0;
    // The emails (without their recipients) whose status is SCHEDULED and whose scheduled_at
    // is at or before `now`, earliest time first, up to `limit`, in every account: the
    // scheduler's (domain::release_scheduled).
    virtual asio::awaitable<Result<std::vector<Email>>> scheduled_due(UnixMs now, int limit) = 0;
    // The email a bounce address (bounces+<token>@…) belongs to, with its recipients. A
    // token is 42 characters: the email's id without "em_", then 16 random ones (earlier
    // versions made 26 random characters, still found).
    virtual asio::awaitable<Result<Email>> find_email_by_return_token(std::string token) = 0;
    // With its recipients, its tags (in the order they were given) and its metadata, as
    // create_email stored them; so too every email this store reads (change_email's).
    // Another account's email is errc::not_found.
    virtual asio::awaitable<Result<Email>> find_email(std::string account_id, std::string id) = 0;
    virtual asio::awaitable<Result<std::string>> email_raw(std::string account_id,
                                                           std::string id) = 0;
    // Every event written about the email (Event::email_id), oldest first: in the order they
    // were written. Another account's email has none (an empty list, as one without events;
    // the caller reads the email first).
    virtual asio::awaitable<Result<std::vector<Event>>> email_events(std::string account_id,
                                                                     std::string id) = 0;
    // sort_by: created_at | to_email. search: subject or any recipient address. statuses,
    // tags: SearchQuery. Each email comes with its tags and metadata (as find_email's).
    virtual asio::awaitable<Result<Page<Email>>> list_emails(SearchQuery query) = 0;
    // sort_by: created_at | subject | from_email. search: sender, subject or envelope id.
    virtual asio::awaitable<Result<Page<Envelope>>> list_envelopes(SearchQuery query) = 0;
};

// The account's statistics (GET /v1/stats): counters kept as emails are stored and change
// (NewEmail::stats, EmailChange::stats, added in the transaction that writes them), read
// back here summed per bucket, without reading any email.
class StatsStore {
  public:
    virtual ~StatsStore() = default;
    // The non-zero sums of the query's counters, by bucket then kind, in time order.
    virtual asio::awaitable<Result<std::vector<StatCount>>> stat_counts(StatQuery query) = 0;
};

class InboundStore {
  public:
    virtual ~InboundStore() = default;
    // The domains named `name`, in every account (which of them take mail is the caller's
    // rule), oldest first, with their ids, accounts, status and inbound switch.
    virtual asio::awaitable<Result<std::vector<Domain>>> inbound_domains(std::string name) = 0;
    // One row per receiving account and recipient, with attachments, and the events, in
    // one transaction.
    virtual asio::awaitable<Result<void>> create_inbound(std::vector<InboundEmail> emails,
                                                         std::vector<Event> events) = 0;
    // sort_by: received_at | subject | from_email. search: sender, recipient or subject.
    virtual asio::awaitable<Result<Page<InboundEmail>>> list_inbound(SearchQuery query) = 0;
    virtual asio::awaitable<Result<InboundEmail>> find_inbound(std::string account_id,
                                                               std::string id) = 0;
};

class QueueStore {
  public:
    virtual ~QueueStore() = default;
    // Leases up to `limit` recipients whose next attempt is due (and whose lease, if any,
    // ran out), with their emails. A lease keeps other nodes off them until `lease_until`.
    virtual asio::awaitable<Result<std::vector<QueuedEmail>>> claim_due(UnixMs now, int limit,
                                                                        std::string owner,
                                                                        UnixMs lease_until) = 0;
    // The outcomes of claimed recipients are written with EmailStore::change_email, which
    // lifts their leases.
    // Lifts the leases `owner` holds (a node at start lifts those its last run left); the
    // leases of other owners stay. Answers how many it lifted.
    virtual asio::awaitable<Result<std::int64_t>> release_leases(std::string owner) = 0;
    // Every lease `owner` holds now runs until `lease_until`: mail claimed and still
    // waiting in memory is not claimed a second time. Answers how many were renewed.
    virtual asio::awaitable<Result<std::int64_t>> renew_leases(std::string owner,
                                                               UnixMs lease_until) = 0;
    // Called (on the caller's executor, after the commit) each time new mail is queued, so that
    // delivery wakes at once instead of at its next poll. Set once, before serving.
    virtual void set_queue_listener(std::function<void()> listener) = 0;
};

// The queue as the operator (`posthorn queue summary`, the metrics) and an account (GET
// /v1/queue) see it. A recipient is in the queue while it is QUEUED, and stands, at a time
// `now`, in one of the states of domain::QueueState: `in_flight` while a lease holds it
// (lease_until > now), else `held` while the operator holds it, else `ready` when its next
// attempt is due (at or before now), else `deferred`.
class QueueViewStore {
  public:
    virtual ~QueueViewStore() = default;
    // The queued recipients `select` names, counted per destination domain and state at
    // `now`, by domain, then state (in the order of QueueState); with the queued_at of the
    // oldest email among them (an email's id is made at its queued_at, as the product makes
    // it, and the store reads the time from there) and their earliest next attempt (that of
    // a recipient never tried: its email's queued_at). One read, which visits the queued
    // recipients only, not the final ones: cheap enough to ask for every metrics scrape.
    virtual asio::awaitable<Result<std::vector<QueueGroup>>> queue_summary(QueueSelector select,
                                                                           UnixMs now) = 0;
};

// The operator's controls over the queue (`posthorn queue hold|release|retry|purge`). Which
// states each command takes, and what a purge makes of an email, are the product's rules
// (domain/queue_control.hpp), handed in as the selector's states and a decision: a back end
// selects and writes. Each answers how many recipients it changed.
class QueueAdminStore {
  public:
    virtual ~QueueAdminStore() = default;
    // Holds the recipients `select` names (at `now`) that are not held yet: claim_due passes
    // over a held recipient, whatever its next attempt, until it is released. A lease it has
    // stays (an attempt under way goes on), and an outcome that leaves it QUEUED keeps the hold
    // (domain::apply_outcomes). A recipient never tried is given its time of acceptance as
    // its next attempt (as a claim gives it).
    virtual asio::awaitable<Result<std::int64_t>> hold_queued(QueueSelector select, UnixMs now) = 0;
    // Releases the held recipients `select` names: each is due at its next attempt as it was
    // (at once if that has passed). Wakes delivery, here (the queue listener) and on the other
    // nodes, when it released any.
    virtual asio::awaitable<Result<std::int64_t>> release_queued(QueueSelector select,
                                                                 UnixMs now) = 0;
    // Makes the recipients `select` names due at `now` (their next attempt), and wakes
    // delivery as release_queued does.
    virtual asio::awaitable<Result<std::int64_t>> make_due(QueueSelector select, UnixMs now) = 0;
    // For each email that has recipients `select` names: reads it with all its recipients,
    // hands it and the ids of those selected to `decide`, and writes what that answers as
    // change_email does (the recipients' leases lifted, suppressions, events) — every email
    // in one transaction, during which no claim takes a selected recipient (one in flight at
    // its start is not selected unless the selector asks for in_flight). `decide` runs on the
    // store's thread, as change_email's. Answers how many recipients the changes wrote.
    virtual asio::awaitable<Result<std::int64_t>> change_queued(QueueSelector select, UnixMs now,
                                                                QueuedDecision decide) = 0;
};

class WebhookStore {
  public:
    virtual ~WebhookStore() = default;
    virtual asio::awaitable<Result<void>> create_webhook(Webhook webhook) = 0;
    virtual asio::awaitable<Result<Page<Webhook>>> list_webhooks(ListQuery query) = 0;
    // errc::not_found for an unknown id or one of another account.
    virtual asio::awaitable<Result<Webhook>> find_webhook(std::string account_id,
                                                          std::string id) = 0;
    virtual asio::awaitable<Result<Webhook>> update_webhook(std::string account_id, std::string id,
                                                            WebhookPatch patch, UnixMs now) = 0;
    // Makes `secret` the webhook's secret and the one it replaces its previous secret, which
    // signs too until `previous_until` (how long is the product's rule). errc::not_found for
    // an unknown id or one of another account.
    virtual asio::awaitable<Result<Webhook>> rotate_webhook_secret(std::string account_id,
                                                                   std::string id,
                                                                   std::string secret,
                                                                   UnixMs previous_until,
                                                                   UnixMs now) = 0;
    // Makes the deliveries `what` names pending again, due at `now`, with no attempt made
    // (their earlier attempts stay listed). Answers how many; errc::not_found when the
    // webhook is not the account's, or when `what` names an event it has no delivery of.
    virtual asio::awaitable<Result<std::int64_t>> replay_webhook_deliveries(std::string account_id,
                                                                            std::string webhook_id,
                                                                            WebhookReplay what,
                                                                            UnixMs now) = 0;
    // Deletes the webhook with its pending deliveries and their attempts.
    virtual asio::awaitable<Result<void>> delete_webhook(std::string account_id,
                                                         std::string id) = 0;
    // Newest first. errc::not_found when the webhook is not the account's.
    virtual asio::awaitable<Result<Page<WebhookAttempt>>> list_webhook_attempts(
        std::string account_id, std::string webhook_id, std::int64_t page, std::int64_t limit) = 0;
    // Leases up to `limit` pending deliveries that are due, of active webhooks, oldest first.
    virtual asio::awaitable<Result<std::vector<DueWebhookDelivery>>> claim_webhook_deliveries(
        UnixMs now, int limit, std::string owner, UnixMs lease_until) = 0;
    // Records the attempt and the delivery's new state, and lifts its lease. A delivery
    // deleted meanwhile (its webhook was) is not an error.
    virtual asio::awaitable<Result<void>> record_webhook_attempt(WebhookAttemptResult result) = 0;
    // Lifts the leases `owner` holds (those its last run left); other owners' stay.
    virtual asio::awaitable<Result<std::int64_t>> release_webhook_leases(std::string owner) = 0;
    // The deliveries of every account still pending (neither done nor given up), due or
    // not: the operator's backlog (posthorn_webhook_backlog).
    virtual asio::awaitable<Result<std::int64_t>> webhook_backlog() = 0;
    // The outbox: hands the events not yet routed, oldest first and up to `limit`, each
    // with the webhooks of its account, to `route`, writes a pending delivery (due at
    // once) for each webhook id it answers, and marks the events routed — in one
    // transaction, so that each event is routed once. `route` runs on the store's thread
    // (as EmailDecision). Answers how many events were routed.
    virtual asio::awaitable<Result<int>> route_events(int limit, EventRouter route) = 0;
    // Called (after the commit) each time events are written, so that the router wakes at
    // once instead of at its next poll. Set once, before serving.
    virtual void set_event_listener(std::function<void()> listener) = 0;
};

// An account's stored templates (/v1/templates). What a template may hold and what it
// renders is the product's (mail/template.hpp, api/templates.cpp); the store keeps rows.
class TemplateStore {
  public:
    virtual ~TemplateStore() = default;
    // errc::conflict when the account has a template of that name already.
    virtual asio::awaitable<Result<void>> create_template(Template t) = 0;
    // Scoped to the account: another account's template is errc::not_found.
    virtual asio::awaitable<Result<Template>> find_template(std::string account_id,
                                                            std::string id) = 0;
    virtual asio::awaitable<Result<Template>> find_template_by_name(std::string account_id,
                                                                    std::string name) = 0;
    // By created_at (then id), in the query's order.
    virtual asio::awaitable<Result<Page<Template>>> list_templates(ListQuery query) = 0;
    // Writes every field of `t` but its created_at over the row of (t.account_id, t.id), and
    // answers the row as it is then. errc::not_found for an unknown id or another account's
    // template; errc::conflict when another template of the account has the name.
    virtual asio::awaitable<Result<Template>> update_template(Template t) = 0;
    // errc::not_found for an unknown id or another account's template.
    virtual asio::awaitable<Result<void>> delete_template(std::string account_id,
                                                          std::string id) = 0;
};

// An account's suppression list: the addresses it never sends to (domain::Suppression;
// delivery's claim marks them, QueueStore::claim_due). Addresses are lower-case, as the
// product writes them. The hard bounces and complaints of delivery join it through
// EmailStore::change_email; these are the account's own reads and changes (the API).
class SuppressionStore {
  public:
    virtual ~SuppressionStore() = default;
    // The page `query` asks for, with the total of entries matching its filters.
    virtual asio::awaitable<Result<Page<Suppression>>> list_suppressions(
        SuppressionQuery query) = 0;
    // errc::not_found when the account does not suppress `address`.
    virtual asio::awaitable<Result<Suppression>> find_suppression(std::string account_id,
                                                                  std::string address) = 0;
    // Writes the entry and its event in one transaction, unless the account suppresses the
    // address already: then nothing is written, and the entry it has comes back (added
    // false). Once committed, claims mark the address.
    virtual asio::awaitable<Result<SuppressionAdded>> add_suppression(SuppressionAdd add) = 0;
    // Deletes the entry and writes the event `removal` makes of it, in one transaction;
    // answers the entry as it was. errc::not_found when the account does not suppress
    // `address` (nothing is written). Once committed, claims no longer mark the address.
    virtual asio::awaitable<Result<Suppression>> remove_suppression(std::string account_id,
                                                                    std::string address,
                                                                    SuppressionRemoval removal) = 0;
};

// Periodic jobs that one node of several runs at a time (log retention, the domain
// re-check): a job lease per job name.
class JobLeaseStore {
  public:
    virtual ~JobLeaseStore() = default;
    // Takes the lease of `job` for `owner` until `until` when it is free, ran out by
    // `now`, or is `owner`'s already (then it is extended). Answers whether `owner` holds it.
    virtual asio::awaitable<Result<bool>> take_job_lease(std::string job, std::string owner,
                                                         UnixMs now, UnixMs until) = 0;
};

// Accepted sends per account and second, one count for every node on the store: the send
// rate (limits.send_rate_per_minute) counted across nodes (api/rate_limiter.hpp).
class SendRateStore {
  public:
    virtual ~SendRateStore() = default;
    // Adds to the account's count of `second` as many of `n` as keep the sum of its counts of
    // the seconds from `since` to `second` at most `cap` — a bounded add, atomic across nodes
    // (nodes adding at once see each other's counts). A negative `n` (sends given back) is
    // added whole. Counts of seconds before `since` may be dropped. Unlike the other writes,
    // a back end may answer before the count is on disk: a count lost in a crash lets a few
    // more sends through, and nothing else depends on it.
    virtual asio::awaitable<Result<SendCounts>> add_sends(std::string account_id,
                                                          std::int64_t since, std::int64_t second,
                                                          std::int64_t n, std::int64_t cap) = 0;
};

// Whether the store can be reached now: false while a server store (PostgreSQL) has lost
// its connection and not yet made a new one. Cheap (no round trip): GET /healthz asks it.
class StoreHealth {
  public:
    virtual ~StoreHealth() = default;
    virtual bool reachable() const noexcept = 0;
};

class Store : public AccountStore,
              public SessionStore,
              public LogStore,
              public DomainStore,
              public EmailStore,
              public InboundStore,
              public QueueStore,
              public QueueViewStore,
              public QueueAdminStore,
              public WebhookStore,
              public SuppressionStore,
              public TemplateStore,
              public JobLeaseStore,
              public StatsStore,
              public SendRateStore,
              public StoreHealth {
  public:
    // Completes when everything submitted before it is durable.
    virtual asio::awaitable<Result<void>> flush() = 0;
    // Drains pending writes, then refuses new work (errc::closed). Blocking; call it from
    // the main thread at shutdown, after the network has stopped.
    virtual void close() = 0;
};

}  // namespace posthorn::store
