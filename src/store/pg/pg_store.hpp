// store/pg/pg_store.hpp — the PostgreSQL back end (15 or later), the shared store of several
// posthorn nodes (docs/postgresql.md).
//
// libpq, used synchronously on threads of the store's own: one writer connection whose
// thread does group commit (concurrent writes share one transaction and one commit), a pool
// of reader connections each with a thread, and one connection that LISTENs, so that a node
// hears of mail and events that other nodes write. Statements are prepared once per
// connection; parameters and results travel in the binary format (raw messages and keys are
// bytea). Claims take rows with FOR UPDATE SKIP LOCKED under leases that carry the node's
// name; uniqueness (idempotency keys, job leases, deliveries) rests on unique constraints and
// ON CONFLICT, so it holds across nodes. Migrations (src/store/migrations/pg/) are applied at
// open under an advisory lock, so that nodes starting together migrate once; a database of a
// newer schema than this binary knows is refused (errc::newer_schema).
//
// Leaves out: a cache of API keys or domains (every look-up reads the database, so that a
// revocation holds on every node at once), and reconnecting in the middle of a transaction
// (a write that meets a lost connection fails; the next one connects again).
// Thread-safety: as store/store.hpp — every method from any thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "store/store.hpp"

namespace posthorn::store::pg {

struct Options {
    // postgresql://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=…] (postgres:// too), or a libpq
    // key=value string.
    std::string url;
    std::size_t readers = 2;  // read connections, each with a thread
    bool listen = true;       // hear other nodes' new mail and events (LISTEN/NOTIFY)
    // False: open an existing install only. A database without posthorn's schema is
    // errc::no_schema and is left as it was (the CLI's commands that read or change an
    // install).
    bool create = true;
    // Run the lists' search indexer (detail/search_indexer.hpp) in the background; false:
    // emails wait for it until index_searches() (tests).
    bool index_searches = true;
};

// `url` with its password replaced by *** (in the user info of a URI, a password=
// parameter of its query, or a password= of a key=value string): what may be logged.
std::string redact_url(std::string_view url);

// Whether `url` names PostgreSQL: postgresql:// or postgres://.
bool is_pg_url(std::string_view url);

class PgStore final : public Store {
  public:
    // Connects and migrates. Blocking; call before serving. Failures are logged (without
    // the password) and answered as errc::io, errc::newer_schema, or errc::no_schema (not
    // logged: the caller says it).
    static Result<std::unique_ptr<PgStore>> open(Options options);
    ~PgStore() override;

    asio::awaitable<Result<void>> create_account(Account account) override;
    asio::awaitable<Result<Account>> find_account_by_name(std::string name) override;
    asio::awaitable<Result<void>> create_api_key(ApiKey key) override;
    asio::awaitable<Result<std::vector<ApiKey>>> list_api_keys(std::string account_id) override;
    asio::awaitable<Result<ApiKey>> revoke_api_key(std::string key_id, UnixMs at) override;
    asio::awaitable<Result<ApiKey>> revoke_api_key_if(std::string account_id, std::string key_id,
                                                      UnixMs at,
                                                      KeyRevocationCheck may_revoke) override;
    asio::awaitable<Result<ApiKey>> find_api_key(std::string hash_hex) override;

    void append_log(LogEntry entry) override;
    asio::awaitable<Result<Page<LogEntry>>> list_logs(LogQuery query) override;
    asio::awaitable<Result<std::int64_t>> delete_logs_before(UnixMs cutoff) override;

    asio::awaitable<Result<void>> create_domain(Domain domain, std::vector<DkimKey> keys) override;
    asio::awaitable<Result<Domain>> find_domain_by_id(std::string account_id,
                                                      std::string id) override;
    asio::awaitable<Result<Domain>> find_domain_by_name(std::string account_id,
                                                        std::string name) override;
    asio::awaitable<Result<Page<Domain>>> list_domains(ListQuery query) override;
    asio::awaitable<Result<void>> delete_domain(std::string account_id,
                                                std::string domain_id) override;
    asio::awaitable<Result<void>> update_domain_settings(std::string account_id,
                                                         std::string domain_id,
                                                         DomainSettings settings,
                                                         UnixMs now) override;
    asio::awaitable<Result<void>> record_domain_check(DomainCheck check) override;
    asio::awaitable<Result<void>> postpone_domain_check(std::string account_id,
                                                        std::string domain_id,
                                                        UnixMs next_check_at) override;
    asio::awaitable<Result<std::vector<Domain>>> domains_due(UnixMs now, int limit) override;
    asio::awaitable<Result<std::vector<DkimKey>>> dkim_keys(std::string domain_id) override;
    asio::awaitable<Result<std::vector<DkimZoneEntry>>> dkim_zone() override;
    asio::awaitable<Result<void>> start_dkim_rotation(std::string account_id, std::string domain_id,
                                                      DkimKey key) override;
    asio::awaitable<Result<void>> finish_dkim_rotation(std::string domain_id, std::string selector,
                                                       UnixMs now) override;
    asio::awaitable<Result<std::vector<Domain>>> domains_rotating(int limit) override;
    asio::awaitable<Result<std::vector<Domain>>> tracking_domains(std::string label,
                                                                  std::string name) override;
    asio::awaitable<Result<std::vector<Domain>>> domains_with_keys_before(
        domain::DomainStatus status, UnixMs made_before, int limit) override;

    asio::awaitable<Result<std::optional<StoredResponse>>> create_email(NewEmail e) override;
    asio::awaitable<Result<std::vector<std::optional<StoredResponse>>>> create_emails(
        std::vector<NewEmail> emails) override;
    asio::awaitable<Result<std::optional<StoredResponse>>> find_idempotent(std::string account_id,
                                                                           std::string key,
                                                                           UnixMs now) override;
    asio::awaitable<Result<Email>> find_email(std::string account_id, std::string id) override;
    asio::awaitable<Result<Email>> find_email_by_return_token(std::string token) override;
    asio::awaitable<Result<void>> change_email(std::string account_id, std::string email_id,
                                               bool with_recipients, EmailDecision decide) override;
    asio::awaitable<Result<void>> change_email_locked(std::string account_id, std::string email_id,
                                                      EmailDecision decide) override;
    asio::awaitable<Result<std::vector<Email>>> scheduled_due(UnixMs now, int limit) override;
    asio::awaitable<Result<std::string>> email_raw(std::string account_id, std::string id) override;
    asio::awaitable<Result<std::vector<Event>>> email_events(std::string account_id,
                                                             std::string id) override;
    asio::awaitable<Result<Page<Email>>> list_emails(SearchQuery query) override;
    asio::awaitable<Result<Page<Envelope>>> list_envelopes(SearchQuery query) override;

    asio::awaitable<Result<std::vector<Domain>>> inbound_domains(std::string name) override;
    asio::awaitable<Result<void>> create_inbound(std::vector<InboundEmail> emails,
                                                 std::vector<Event> events) override;
    asio::awaitable<Result<Page<InboundEmail>>> list_inbound(SearchQuery query) override;
    asio::awaitable<Result<InboundEmail>> find_inbound(std::string account_id,
                                                       std::string id) override;

    asio::awaitable<Result<std::vector<QueuedEmail>>> claim_due(UnixMs now, int limit,
                                                                std::string owner,
                                                                UnixMs lease_until) override;
    asio::awaitable<Result<std::int64_t>> release_leases(std::string owner) override;
    asio::awaitable<Result<std::int64_t>> renew_leases(std::string owner,
                                                       UnixMs lease_until) override;
    void set_queue_listener(std::function<void()> listener) override;

    asio::awaitable<Result<std::vector<QueueGroup>>> queue_summary(QueueSelector select,
                                                                   UnixMs now) override;
    asio::awaitable<Result<std::int64_t>> hold_queued(QueueSelector select, UnixMs now) override;
    asio::awaitable<Result<std::int64_t>> release_queued(QueueSelector select, UnixMs now) override;
    asio::awaitable<Result<std::int64_t>> make_due(QueueSelector select, UnixMs now) override;
    asio::awaitable<Result<std::int64_t>> change_queued(QueueSelector select, UnixMs now,
                                                        QueuedDecision decide) override;

    asio::awaitable<Result<void>> create_webhook(Webhook webhook) override;
    asio::awaitable<Result<Page<Webhook>>> list_webhooks(ListQuery query) override;
    asio::awaitable<Result<Webhook>> find_webhook(std::string account_id, std::string id) override;
    asio::awaitable<Result<Webhook>> update_webhook(std::string account_id, std::string id,
                                                    WebhookPatch patch, UnixMs now) override;
    asio::awaitable<Result<Webhook>> rotate_webhook_secret(std::string account_id, std::string id,
                                                           std::string secret,
                                                           UnixMs previous_until,
                                                           UnixMs now) override;
    asio::awaitable<Result<std::int64_t>> replay_webhook_deliveries(std::string account_id,
                                                                    std::string webhook_id,
                                                                    WebhookReplay what,
                                                                    UnixMs now) override;
    asio::awaitable<Result<void>> delete_webhook(std::string account_id, std::string id) override;
    asio::awaitable<Result<Page<WebhookAttempt>>> list_webhook_attempts(
        std::string account_id, std::string webhook_id, std::int64_t page,
        std::int64_t limit) override;
    asio::awaitable<Result<std::vector<DueWebhookDelivery>>> claim_webhook_deliveries(
        UnixMs now, int limit, std::string owner, UnixMs lease_until) override;
    asio::awaitable<Result<void>> record_webhook_attempt(WebhookAttemptResult result) override;
    asio::awaitable<Result<std::int64_t>> release_webhook_leases(std::string owner) override;
    asio::awaitable<Result<std::int64_t>> webhook_backlog() override;
    asio::awaitable<Result<int>> route_events(int limit, EventRouter route) override;
    void set_event_listener(std::function<void()> listener) override;

    asio::awaitable<Result<Page<Suppression>>> list_suppressions(SuppressionQuery query) override;
    asio::awaitable<Result<Suppression>> find_suppression(std::string account_id,
                                                          std::string address) override;
    asio::awaitable<Result<SuppressionAdded>> add_suppression(SuppressionAdd add) override;
    asio::awaitable<Result<Suppression>> remove_suppression(std::string account_id,
                                                            std::string address,
                                                            SuppressionRemoval removal) override;

    asio::awaitable<Result<void>> create_template(Template t) override;
    asio::awaitable<Result<Template>> find_template(std::string account_id,
                                                    std::string id) override;
    asio::awaitable<Result<Template>> find_template_by_name(std::string account_id,
                                                            std::string name) override;
    asio::awaitable<Result<Page<Template>>> list_templates(ListQuery query) override;
    asio::awaitable<Result<Template>> update_template(Template t) override;
    asio::awaitable<Result<void>> delete_template(std::string account_id, std::string id) override;

    asio::awaitable<Result<void>> create_session(DashboardSession session) override;
    asio::awaitable<Result<SessionWithKey>> find_session(std::string id_hash) override;
    asio::awaitable<Result<bool>> delete_session(std::string id_hash) override;
    asio::awaitable<Result<std::int64_t>> delete_expired_sessions(UnixMs now) override;
    asio::awaitable<Result<std::vector<StatCount>>> stat_counts(StatQuery query) override;

    asio::awaitable<Result<bool>> take_job_lease(std::string job, std::string owner, UnixMs now,
                                                 UnixMs until) override;

    asio::awaitable<Result<SendCounts>> add_sends(std::string account_id, std::int64_t since,
                                                  std::int64_t second, std::int64_t n,
                                                  std::int64_t cap) override;

    asio::awaitable<Result<void>> flush() override;
    void close() override;
    // False from the moment a connection is found gone until one is made again.
    bool reachable() const noexcept override;

    // The schema version the database is at (the last migration applied).
    int schema_version() const;
    // Indexes every email waiting for the lists' search index now (detail/search_indexer.hpp),
    // blocking; answers how many.
    Result<std::int64_t> index_searches();

  private:
    struct Impl;
    explicit PgStore(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace posthorn::store::pg
