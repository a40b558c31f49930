#include "app/serve.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/signal_set.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>

#include "api/auth_throttle.hpp"
#include "api/dashboard.hpp"
#include "api/domains.hpp"
#include "api/smtp_doors.hpp"
#include "api/v1.hpp"
#include "app/mta_sts_fetcher.hpp"
#include "app/ops_endpoints.hpp"
#include "app/smtp_certificate.hpp"
#include "app/store_open.hpp"
#include "app/web_assets.hpp"
#include "core/client_limits.hpp"
#include "core/clock.hpp"
#include "core/io_pool.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"
#include "core/version.hpp"
#include "crypto/hash.hpp"
#include "crypto/keys.hpp"
#include "delivery/queue_manager.hpp"
#include "dns/cares_resolver.hpp"
#include "domain/scheduling.hpp"
#include "domain/sending_domain.hpp"
#include "domain/vocabulary.hpp"
#include "http/server.hpp"
#include "mail/message.hpp"
#include "smtp/server.hpp"
#include "webhooks/dispatcher.hpp"

namespace posthorn::app {
namespace {

constexpr auto kRetentionEvery = std::chrono::hours(1);
constexpr std::int64_t kDayMs = 86'400'000;

// Config integers are validated non-negative.
std::size_t to_size(int n) { return static_cast<std::size_t>(n); }

// A periodic job runs on one node of those that share the store at a time: the one that
// holds its lease, taken for three of the job's periods and renewed at each run, so that
// another node takes it over once a node that held it is gone.
// The key that signs tracking links, which any node must read back. An install made before
// nodes shared a store has its own file (<data_dir>/tracking.key), kept so that the links in
// mail already sent stay valid; a new install derives the key from the master key, so that
// the master key is the one secret the nodes share.
std::optional<std::string> tracking_secret(const Config& config, const std::string& master_key) {
    const auto legacy = config.server.data_dir + "/tracking.key";
    std::error_code ec;
    if (!std::filesystem::exists(legacy, ec)) {
        const auto mac = crypto::hmac_sha256(master_key, "posthorn tracking links v1");
        return std::string(reinterpret_cast<const char*>(mac.data()), mac.size());
    }
    auto key = crypto::load_or_create_master_key(legacy);
    if (!key) {
        log::error("tracking key {}: {}", legacy, key.error().message());
        return std::nullopt;
    }
    return std::move(*key);
}

asio::awaitable<bool> holds_job(store::JobLeaseStore& leases, std::string job, std::string node,
                                const core::Clock& clock, std::chrono::milliseconds period) {
    const auto now = clock.now_ms();
    auto held = co_await leases.take_job_lease(std::move(job), std::move(node), now,
                                               now + 3 * period.count());
    if (!held) log::warn("job lease: {}", held.error().message());
    co_return held&&* held;
}

// Deletes request-log entries older than retention.logs_days, at start and then hourly.
asio::awaitable<void> retention_loop(store::LogStore& logs, store::JobLeaseStore& leases,
                                     std::string node, const core::Clock& clock, int days) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (;;) {
        const auto cutoff = clock.now_ms() - days * kDayMs;
        auto job = std::string("log-retention");
        auto me = node;
        if (!co_await holds_job(leases, std::move(job), std::move(me), clock, kRetentionEvery)) {
            // Another node runs it.
        } else if (auto n = co_await logs.delete_logs_before(cutoff); !n) {
            log::warn("log retention: {}", n.error().message());
        } else if (*n > 0) {
            log::info("log retention: deleted {} entries older than {} days", *n, days);
        }
        timer.expires_after(kRetentionEvery);
        auto [ec] = co_await timer.async_wait(use_nothrow_awaitable);
        if (ec) co_return;
    }
}

// The dashboard's sessions (docs/dashboard.md): the expired ones are deleted every ten
// minutes (they are refused from the moment they expire), on the node that holds the job's
// lease.
constexpr auto kSessionPurgeEvery = std::chrono::minutes(10);

asio::awaitable<void> session_purge_loop(store::SessionStore& sessions,
                                         store::JobLeaseStore& leases, std::string node,
                                         const core::Clock& clock) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (;;) {
        auto job = std::string("dashboard-sessions");
        auto me = node;
        if (co_await holds_job(leases, std::move(job), std::move(me), clock, kSessionPurgeEvery)) {
            if (auto n = co_await sessions.delete_expired_sessions(clock.now_ms()); !n)
                log::warn("dashboard sessions: {}", n.error().message());
            else if (*n > 0)
                log::info("dashboard sessions: deleted {} expired", *n);
        }
        timer.expires_after(kSessionPurgeEvery);
        auto [ec] = co_await timer.async_wait(use_nothrow_awaitable);
        if (ec) co_return;
    }
}

// Scheduled send (docs/sending.md): every second, the SCHEDULED emails whose time has come
// become QUEUED (domain::release_scheduled). Their recipients do not wait for it: they are due
// at that time as any retry is, and the queue of whichever node claims them sends them; this
// moves the status only. It runs on the node that holds the job's lease, taken only when an
// email is due (an idle second costs a read, not a write); should two nodes run it at once,
// the change of each email is decided again under its lock, and the second finds it QUEUED.
constexpr auto kScheduledEvery = std::chrono::seconds(1);

asio::awaitable<void> scheduled_loop(store::EmailStore& emails, store::JobLeaseStore& leases,
                                     std::string node, const core::Clock& clock) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (;;) {
        auto due = co_await emails.scheduled_due(clock.now_ms(), 100);
        if (!due) log::warn("scheduled send: {}", due.error().message());
        auto job = std::string("scheduled-send");
        auto me = node;
        if (due && !due->empty() &&
            co_await holds_job(leases, std::move(job), std::move(me), clock, kScheduledEvery)) {
            for (auto& e : *due) {
                const auto now = clock.now_ms();
                auto account = e.account_id;
                auto id = e.id;
                store::EmailDecision decide = [now](const store::Email& current) {
                    return domain::release_scheduled(current, now);
                };
                auto r = co_await emails.change_email(std::move(account), std::move(id), false,
                                                      std::move(decide));
                if (!r && r.error() != store::errc::not_found)
                    log::warn("scheduled send of {}: {}", e.id, r.error().message());
            }
        }
        timer.expires_after(kScheduledEvery);
        auto [ec] = co_await timer.async_wait(use_nothrow_awaitable);
        if (ec) co_return;
    }
}

// DKIM rotation (docs/domains.md, "Rotation"), a part of the domain re-check job: each
// domain with a rotation pending switches to its new key once the operator's zone serves it
// (looked up at every pass); then, when dkim.rotate_days is set, VERIFIED domains whose
// active key is that old start a rotation.
asio::awaitable<void> dkim_rotation_pass(api::Deps deps) {
    auto rotating = co_await deps.domains.domains_rotating(50);
    if (!rotating) log::warn("DKIM rotation: {}", rotating.error().message());
    for (auto& d : rotating ? *rotating : std::vector<store::Domain>{}) {
        const auto name = d.name;
        const auto selector = d.dkim_pending;
        auto r = co_await api::finish_dkim_rotation(deps, std::move(d));
        if (!r)
            log::warn("DKIM rotation of {}: {}", name, r.error().message());
        else if (*r)
            log::info("DKIM rotation of {}: the DKIM zone serves the new key, {} signs now", name,
                      selector);
    }
    const auto before =
        domain::rotate_keys_made_before(deps.domain_policy.dkim_rotate_days, deps.clock.now_ms());
    if (!before) co_return;
    auto old =
        co_await deps.domains.domains_with_keys_before(domain::DomainStatus::verified, *before, 10);
    if (!old) log::warn("DKIM rotation: {}", old.error().message());
    for (auto& d : old ? *old : std::vector<store::Domain>{}) {
        const auto name = d.name;
        auto r = co_await api::start_dkim_rotation(deps, std::move(d));
        if (!r)
            log::warn("DKIM rotation of {}: {}", name, r.error().message());
        else
            log::info("DKIM rotation of {}: key older than {} days, new key for {}", name,
                      deps.domain_policy.dkim_rotate_days, r->dkim_pending);
    }
}

// Re-verifies PENDING domains and re-checks VERIFIED ones when their time has come (DESIGN
// §6). One domain at a time: verification is a handful of DNS queries, never urgent.
asio::awaitable<void> domain_check_loop(api::Deps deps, store::JobLeaseStore& leases,
                                        std::string node, std::chrono::milliseconds tick) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (;;) {
        auto job = std::string("domain-recheck");
        auto me = node;
        Result<std::vector<store::Domain>> due = std::vector<store::Domain>{};
        const bool held =
            co_await holds_job(leases, std::move(job), std::move(me), deps.clock, tick);
        if (held) due = co_await deps.domains.domains_due(deps.clock.now_ms(), 50);
        if (!due) log::warn("domain re-check: {}", due.error().message());
        for (auto& d : due ? *due : std::vector<store::Domain>{}) {
            const bool was_verified = d.status == domain::DomainStatus::verified;
            const auto name = d.name;
            auto r = co_await api::check_domain(deps, std::move(d), was_verified);
            if (!r)
                log::warn("domain re-check of {}: {}", name, r.error().message());
            else if (!r->dns_error.empty())
                log::warn("domain re-check of {}: {}", name, r->dns_error);
            else
                log::info("domain re-check of {}: {}", name, domain::name(r->domain.status));
        }
        if (held) co_await dkim_rotation_pass(deps);
        timer.expires_after(tick);
        auto [ec] = co_await timer.async_wait(use_nothrow_awaitable);
        if (ec) co_return;
    }
}

api::DomainPolicy domain_policy(const Config& c) {
    using std::chrono::milliseconds;
    return {.dkim_zone = c.dns.dkim_zone,
            .spf_include = c.dns.spf_include,
            .inbound_mx = c.dns.inbound_mx,
            .return_path_target =
                c.dns.return_path_target.empty() ? c.dns.inbound_mx : c.dns.return_path_target,
            .pending_recheck = milliseconds(c.dns.pending_recheck_s * 1000LL),
            .verified_recheck = milliseconds(c.dns.verified_recheck_s * 1000LL),
            .dkim_rotate_days = c.dkim.rotate_days,
            .tracking_target = c.tracking_cname_target()};
}

// What a drain stops and waits for.
struct Drain {
    http::Server& server;
    smtp::Server& submission;
    smtp::Server& inbound;
    delivery::QueueManager& queue;
    webhooks::Dispatcher& hooks;
    store::QueueStore& queue_store;
    store::WebhookStore& webhook_store;
    Readiness& readiness;
    std::string node_id;
    std::chrono::seconds grace;
    asio::io_context& main;
};

// On the first SIGTERM or SIGINT: /readyz answers 503, the listeners stop accepting, idle
// connections close, and SMTP transactions, requests and deliveries in flight have
// server.shutdown_grace_s to end; then this node's leases are lifted (other nodes take its
// claimed mail and webhook calls at once, not when the leases run out) and the main loop
// stops. serve() makes the store's writes durable afterwards.
asio::awaitable<void> shutdown_on_signal(asio::signal_set& signals, Drain d) {
    auto [ec, sig] = co_await signals.async_wait(use_nothrow_awaitable);
    if (ec) co_return;
    log::info("signal {}: draining for up to {} s (a second signal stops at once)", sig,
              d.grace.count());
    d.readiness.set(Readiness::State::draining);
    // A second signal cuts the grace period short.
    auto& main = d.main;
    signals.async_wait([&main](error_code again, int) {
        if (again) return;
        log::warn("second signal: stopping now");
        main.stop();
    });
    d.server.stop();
    d.submission.stop();
    d.inbound.stop();
    d.queue.stop();
    d.hooks.stop();
    asio::steady_timer poll(co_await asio::this_coro::executor);
    const auto deadline = std::chrono::steady_clock::now() + d.grace;
    auto open = [&d] {
        return d.server.connections() + d.submission.connections() + d.inbound.connections() +
               static_cast<std::size_t>(d.queue.jobs_in_hand()) +
               static_cast<std::size_t>(d.hooks.in_flight());
    };
    while (open() > 0 && std::chrono::steady_clock::now() < deadline) {
        poll.expires_after(std::chrono::milliseconds(20));
        co_await poll.async_wait(use_nothrow_awaitable);
    }
    if (open() > 0)
        log::warn("{} connections or deliveries still open after the grace period", open());
    auto node = d.node_id;
    auto mail = co_await d.queue_store.release_leases(std::move(node));
    node = d.node_id;
    auto calls = co_await d.webhook_store.release_webhook_leases(std::move(node));
    if (mail && calls)
        log::info("drained: lifted {} delivery and {} webhook leases", *mail, *calls);
    else
        log::warn("drained; lifting the leases failed: {}",
                  (mail ? calls.error() : mail.error()).message());
    main.stop();
}

// Each request: the operator's endpoints, else the dashboard and the API.
asio::awaitable<http::Response> answer(OpsEndpoints* ops, api::Dashboard* front,
                                       http::Request req) {
    if (OpsEndpoints::owns(req.path)) co_return co_await ops->handle(std::move(req));
    co_return co_await front->handle(std::move(req));
}

// Each connection is a descriptor, and the SMTP listeners alone may hold 1000 sessions
// each (smtp::ServerOptions): the soft limit on open files (1024 under many service
// managers) goes up to the hard one, as nginx's worker_rlimit_nofile or Go's runtime do.
void raise_open_files_limit() {
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= lim.rlim_max ||
        lim.rlim_cur >= rlim_t{1} << 20)
        return;
    const auto was = lim.rlim_cur;
    lim.rlim_cur = lim.rlim_max == RLIM_INFINITY ? rlim_t{1} << 20 : lim.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &lim) != 0)
        log::warn("open files: cannot raise the limit of {} to {}", was, lim.rlim_cur);
}

}  // namespace

int serve(const Config& config) {
    raise_open_files_limit();
    const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
    // Unless server.network_threads says otherwise, the network threads take every core but
    // one, which is the store writer's: it is the stage every write passes through, one at a
    // time (docs/architecture.md#threads). On two cores, one network thread instead of two:
    // 8-10% more sends per second at full load, and at half load 9% less CPU per send and a
    // p99 of 4.5-4.8 against 5.0-6.6 ms; reads (GET /v1/logs) 18% fewer per second
    // (bench/RESULTS.md).
    const std::size_t io_threads = config.server.network_threads > 0
                                       ? static_cast<std::size_t>(config.server.network_threads)
                                   : cores > 1 ? cores - 1
                                               : 1;
    // The threads are made before the store so that the store goes first at the end: work
    // still queued on its threads holds the network contexts' executors, and is dropped
    // while those contexts exist (what is queued on theirs holds nothing of the store's).
    core::IoPool pool(io_threads);
    asio::thread_pool blocking(cores);
    // Inbound SPF/DKIM/DMARC checks mostly wait on DNS (docs/inbound.md): 8 at once.
    asio::thread_pool inbound_auth(8);
    auto store = open_store(config, cores);
    if (!store) return 1;

    // The master key seals DKIM keys and webhook secrets at rest: every node of a store
    // reads the same one (server.master_key_file). The first node started makes it.
    auto master_key = crypto::load_or_create_master_key(config.server.master_key_file);
    if (!master_key) {
        log::error("master key {}: {}", config.server.master_key_file,
                   master_key.error().message());
        return 1;
    }
    auto tracking_key = tracking_secret(config, *master_key);
    if (!tracking_key) return 1;

    core::SystemClock clock;
    dns::library_init();
    std::vector<dns::ServerAddress> servers;
    for (const auto& s : config.dns.servers) servers.push_back({s.host, s.port});
    auto resolver =
        dns::CaresResolver::create(pool.context(0).get_executor(), {.servers = servers});
    if (!resolver) {
        log::error("cannot set up the DNS resolver: {}", resolver.error().message());
        return 1;
    }
    mail::init();
    auto& stores = **store;
    // One node counts the send rate in memory; nodes that share a store count it there.
    std::unique_ptr<api::RateLimiter> rate_limiter;
    api::SharedRateLimiter* shared_rate = nullptr;
    if (store_is_shared(config)) {
        auto shared =
            std::make_unique<api::SharedRateLimiter>(stores, config.limits.send_rate_per_minute);
        shared_rate = shared.get();
        rate_limiter = std::move(shared);
    } else {
        rate_limiter = std::make_unique<api::LocalRateLimiter>(config.limits.send_rate_per_minute);
    }
    // Failed SMTP AUTH, per client, on this node (each node of several counts its own).
    api::AuthThrottle auth_throttle({.max_failures = config.smtp.auth_max_failures,
                                     .window = std::chrono::seconds(config.smtp.auth_lockout_s)});
    api::Deps deps{.accounts = stores,
                   .logs = stores,
                   .domains = stores,
                   .emails = stores,
                   .inbound = stores,
                   .webhooks = stores,
                   .queue = stores,
                   .suppressions = stores,
                   .templates = stores,
                   .stats = stores,
                   .store_health = stores,
                   .clock = clock,
                   .resolver = **resolver,
                   .blocking = blocking.get_executor(),
                   .inbound_auth = inbound_auth.get_executor(),
                   .master_key = *master_key,
                   .domain_policy = domain_policy(config),
                   .sending = {.send_rate_per_minute = config.limits.send_rate_per_minute,
                               .max_recipients = config.limits.max_recipients,
                               .max_attachment_bytes = config.limits.max_attachment_bytes},
                   .smtp_hostname = config.smtp.hostname,
                   .public_url = config.server.public_url,
                   .tracking_secret = *tracking_key,
                   .allow_private_webhooks = config.webhooks.allow_private_targets,
                   .rate_limiter = *rate_limiter,
                   .send_body_limit = config.http_body_limit(),
                   .auth_throttle = &auth_throttle,
                   // /v1 takes the dashboard's session cookie while the dashboard is served.
                   .sessions = config.dashboard.enabled ? &stores : nullptr};
    api::V1 v1(deps);
    // The dashboard in front of the API (docs/dashboard.md).
    api::Dashboard dashboard({.accounts = stores,
                              .domains = stores,
                              .sessions = stores,
                              .clock = clock,
                              .auth_throttle = &auth_throttle},
                             {.enabled = config.dashboard.enabled,
                              .session_ttl_s = config.dashboard.session_ttl_s,
                              .secure_cookie = config.dashboard_secure_cookie(),
                              .files = web_assets(),
                              .public_url = config.server.public_url},
                             v1);

    // MTA-STS policies come through a client of their own: its own CAs and private-address
    // setting (delivery.tls_ca_file, delivery.mta_sts_allow_private), not the webhooks'.
    webhooks::HttpClient mta_sts_client({.timeout = std::chrono::seconds(10),
                                         .allow_private = config.delivery.mta_sts_allow_private,
                                         .user_agent = "posthorn-mta-sts/1",
                                         .ca_file = config.delivery.tls_ca_file,
                                         .private_setting = "delivery.mta_sts_allow_private"});
    MtaStsFetcher mta_sts_fetcher(mta_sts_client);
    delivery::Options dopts{
        .hostname = config.smtp.hostname,
        .mx_port = static_cast<std::uint16_t>(config.delivery.mx_port),
        .tls = config.delivery.tls == TlsMode::off        ? delivery::TlsSetting::off
               : config.delivery.tls == TlsMode::required ? delivery::TlsSetting::required
               : config.delivery.tls == TlsMode::verify   ? delivery::TlsSetting::verify
                                                          : delivery::TlsSetting::opportunistic,
        .tls_ca_file = config.delivery.tls_ca_file,
        .policy_fetcher = &mta_sts_fetcher,
        .mta_sts_port = static_cast<std::uint16_t>(config.delivery.mta_sts_port),
        // DANE trusts the AD bit only from resolvers the operator named (RFC 7672 §2.1:
        // a validating resolver of its own, on a path it trusts), never /etc/resolv.conf's.
        .dane = !config.dns.servers.empty(),
        .retry_schedule_s = config.delivery.retry_schedule_s,
        .connect_timeout = std::chrono::seconds(config.delivery.connect_timeout_s),
        .command_timeout = std::chrono::seconds(config.delivery.command_timeout_s),
        .max_connections = config.delivery.max_connections,
        .max_connections_per_domain = config.delivery.max_connections_per_domain,
        .lease = std::chrono::seconds(config.delivery.lease_s),
        .master_key = *master_key,
        .node_id = config.server.node_id};
    if (config.delivery.relay)
        dopts.relay = delivery::Relay{config.delivery.relay->host, config.delivery.relay->port};
    dopts.allow_private_targets = config.delivery.allow_private_targets;
    delivery::QueueManager queue(pool.context(pool.size() - 1).get_executor(),
                                 blocking.get_executor(),
                                 {.queue = stores, .emails = stores, .domains = stores}, **resolver,
                                 clock, std::move(dopts));
    (*store)->set_queue_listener([&queue] { queue.wake(); });

    // Webhook calls go out from their own thread (libcurl), never a network thread.
    webhooks::HttpClient webhook_client({.allow_private = config.webhooks.allow_private_targets});
    webhooks::Dispatcher hooks(
        pool.context(0).get_executor(), stores, clock, webhook_client,
        {.retry_schedule_s = config.webhooks.retry_schedule_s, .node_id = config.server.node_id});
    stores.set_event_listener([&hooks] { hooks.wake(); });

    Readiness readiness;
    std::vector<core::Network> metrics_trusted;
    for (const auto& n : config.metrics.trusted_networks)
        metrics_trusted.push_back(*core::parse_network(n));
    metrics::set_enabled(config.metrics.enabled);
    OpsEndpoints ops({.metrics_enabled = config.metrics.enabled,
                      .trusted = std::move(metrics_trusted),
                      .token = config.metrics.token},
                     {.health = stores, .webhooks = stores, .queue = stores}, clock, readiness);

    error_code ec;
    const auto address = asio::ip::make_address(config.http.listen.host, ec);
    std::vector<core::Network> trusted;
    for (const auto& n : config.server.trusted_networks) trusted.push_back(*core::parse_network(n));
    const core::ClientLimitOptions smtp_limits{
        .max_connections = to_size(config.smtp.max_connections),
        .max_connections_per_client = to_size(config.smtp.max_connections_per_client),
        .connection_rate_per_client = to_size(config.smtp.connection_rate_per_client),
        .trusted = trusted};
    http::Server server(
        pool,
        {.listen = {address, config.http.listen.port},
         .body_limit = config.http_body_limit(),
         .admit = [&dashboard](http::Request& req) { return dashboard.admit(req); },
         .busy_idle_timeout = std::chrono::seconds(config.http.busy_idle_timeout_s),
         .limits = {.max_connections = to_size(config.http.max_connections),
                    .max_connections_per_client = to_size(config.http.max_connections_per_client),
                    .connection_rate_per_client = to_size(config.http.connection_rate_per_client),
                    .trusted = trusted},
         .proxy_protocol = config.http.proxy_protocol},
        [&ops, &dashboard](http::Request req) { return answer(&ops, &dashboard, std::move(req)); });
    // SMTP: one server implementation, two doors with their own policies.
    std::shared_ptr<crypto::ServerCertificate> smtp_cert;
    try {
        smtp_cert = smtp_certificate(config);
    } catch (const std::exception& e) {
        log::error("SMTP TLS certificate: {}", e.what());
        return 1;
    }
    const auto smtp_tls = smtp_cert->context();
    auto smtp_address = [](const HostPort& hp) {
        return asio::ip::tcp::endpoint(asio::ip::make_address(hp.host), hp.port);
    };
    smtp::Server submission(
        pool,
        {.name = "submission",
         .listen = smtp_address(config.smtp.submission_listen),
         .hostname = config.smtp.hostname,
         .max_message_bytes = config.http_body_limit(),
         .max_recipients = static_cast<std::size_t>(config.limits.max_recipients),
         .offer_auth = true,
         .auth_requires_tls = !config.smtp.allow_auth_without_tls,
         .require_auth = true,
         .tls = smtp_tls,
         .busy_idle_timeout = std::chrono::seconds(config.smtp.busy_idle_timeout_s),
         .limits = smtp_limits,
         .proxy_protocol = config.smtp.submission_proxy_protocol},
        [&v1_deps = deps](std::string ip) {
            return api::make_submission_handler(v1_deps, std::move(ip));
        });
    smtp::Server inbound(
        pool,
        {.name = "inbound",
         .listen = smtp_address(config.smtp.inbound_listen),
         .hostname = config.smtp.hostname,
         .max_message_bytes = config.http_body_limit(),
         .max_recipients = static_cast<std::size_t>(config.limits.max_recipients),
         .tls = smtp_tls,
         .busy_idle_timeout = std::chrono::seconds(config.smtp.busy_idle_timeout_s),
         .limits = smtp_limits,
         .proxy_protocol = config.smtp.inbound_proxy_protocol},
        [&v1_deps = deps](std::string ip) {
            return api::make_inbound_handler(v1_deps, std::move(ip));
        });
    // SIGTERM and SIGINT are caught from before the first listener opens: a signal that
    // comes once a client could have reached us waits for shutdown_on_signal (a signal_set
    // keeps what arrives before its wait) instead of killing the process as it stands.
    asio::io_context main;
    asio::signal_set signals(main, SIGINT, SIGTERM);
    // SIGHUP re-reads the TLS certificate (caught from here on too: its default ends us).
    asio::signal_set hup(main, SIGHUP);
    auto sub_bound = submission.start();
    if (!sub_bound) {
        log::error("cannot listen on {} (submission): {}",
                   config.smtp.submission_listen.to_string(), sub_bound.error().message());
        (*store)->close();
        return 1;
    }
    auto in_bound = inbound.start();
    if (!in_bound) {
        log::error("cannot listen on {} (inbound): {}", config.smtp.inbound_listen.to_string(),
                   in_bound.error().message());
        (*store)->close();
        return 1;
    }

    auto bound = server.start();
    if (!bound) {
        log::error("cannot listen on {}: {}", config.http.listen.to_string(),
                   bound.error().message());
        (*store)->close();
        return 1;
    }
    pool.start();
    asio::co_spawn(pool.context(pool.size() - 1), queue.run(), asio::detached);
    asio::co_spawn(pool.context(0), hooks.run(), asio::detached);
    log::info(
        "posthorn {} serving: http on {}:{}, submission on {}:{}, inbound on {}:{} ({} network "
        "thread{}), database {}, node {}",
        core::version(), bound->address().to_string(), bound->port(),
        sub_bound->address().to_string(), sub_bound->port(), in_bound->address().to_string(),
        in_bound->port(), io_threads, io_threads == 1 ? "" : "s", database_for_log(config),
        config.server.node_id);

    readiness.set(Readiness::State::serving);
    // Named, not a braced temporary argument of the coroutine (GCC 12 destroys those twice).
    Drain drain{.server = server,
                .submission = submission,
                .inbound = inbound,
                .queue = queue,
                .hooks = hooks,
                .queue_store = stores,
                .webhook_store = stores,
                .readiness = readiness,
                .node_id = config.server.node_id,
                .grace = std::chrono::seconds(config.server.shutdown_grace_s),
                .main = main};
    asio::co_spawn(main, shutdown_on_signal(signals, std::move(drain)), asio::detached);
    asio::co_spawn(main, reload_on_signal(hup, smtp_cert), asio::detached);
    asio::co_spawn(
        main,
        retention_loop(stores, stores, config.server.node_id, clock, config.retention.logs_days),
        asio::detached);
    const auto tick = std::chrono::seconds(
        std::clamp(std::min(config.dns.pending_recheck_s, config.dns.verified_recheck_s), 1, 30));
    asio::co_spawn(main, domain_check_loop(deps, stores, config.server.node_id, tick),
                   asio::detached);
    asio::co_spawn(main, scheduled_loop(stores, stores, config.server.node_id, clock),
                   asio::detached);
    if (shared_rate) asio::co_spawn(main, shared_rate->run(clock), asio::detached);
    if (config.dashboard.enabled)
        asio::co_spawn(main, session_purge_loop(stores, stores, config.server.node_id, clock),
                       asio::detached);
    main.run();

    // The network is quiet: cancel the lookups still pending (while the resolver's context
    // still runs; the resolver itself lives on until the threads are gone, for coroutines
    // that still hold it), make every pending write durable, then stop the threads.
    (*resolver)->close();
    (*store)->close();
    pool.stop();
    blocking.join();
    inbound_auth.join();
    log::info("posthorn stopped");
    return 0;
}

}  // namespace posthorn::app
