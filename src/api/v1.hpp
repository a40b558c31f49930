// api/v1.hpp — the REST front door: authentication, the request log, body checks and the
// /v1 routes (one file per resource: logs.cpp, …). Mounted on http::Server as its handler.
//
// Order of checks for /v1: Bearer key — or, without an Authorization header, the dashboard
// session's cookie and, for a change, its X-CSRF-Token (docs/dashboard.md) — (401, 403
// CSRF_TOKEN_INVALID, not logged) and the route's body limit (413), both before the body
// is read → JSON body (400 INVALID_JSON) → route (404, 405 with
// Allow) → the key's permission (403 FORBIDDEN, domain/api_keys.hpp) → handler. Every
// authenticated request is logged after its answer is made, off the response path.
// `GET /healthz` needs no key. Thread-safe.
#pragma once

#include <memory>

#include <chrono>
#include <string>

#include "api/auth_throttle.hpp"
#include "api/rate_limiter.hpp"
#include "core/clock.hpp"
#include "dns/resolver.hpp"
#include "http/message.hpp"
#include "store/store.hpp"

namespace posthorn::api {

// What domains need to know of the operator's set-up (config [dns], DESIGN §6).
struct DomainPolicy {
    std::string dkim_zone = "dkim.localhost";
    std::string spf_include = "spf.localhost";
    std::string inbound_mx = "localhost";
    std::string return_path_target = "localhost";  // of the return-path CNAMEs: dns.*
    std::chrono::milliseconds pending_recheck{300'000};
    std::chrono::milliseconds verified_recheck{86'400'000};
    std::chrono::milliseconds give_up_after{72 * 3'600'000};  // PENDING this long → FAILED
    int dkim_rotate_days = 0;                   // rotate VERIFIED domains' keys this old; 0: never
    std::string tracking_target = "localhost";  // the CNAME target of custom tracking hosts
};

// The API's limits on sending (config [limits]).
struct SendingPolicy {
    int send_rate_per_minute = 1000;
    int max_recipients = 10000;
    std::int64_t max_attachment_bytes = 26214400;
};

// What the front doors need. The stores: the HTTP handlers use these nine; SMTP submission
// accounts (keys), domains and emails; the inbound door inbound and emails. None of them
// claims from the queue or changes it (the queue is delivery's: api never calls it,
// CONVENTIONS §1); GET /v1/queue reads the account's part of it (QueueViewStore).
struct Deps {
    store::AccountStore& accounts;
    store::LogStore& logs;
    store::DomainStore& domains;
    store::EmailStore& emails;
    store::InboundStore& inbound;
    store::WebhookStore& webhooks;
    store::QueueViewStore& queue;
    store::SuppressionStore& suppressions;
    store::TemplateStore& templates;
    store::StatsStore& stats;                // GET /v1/stats
    const store::StoreHealth& store_health;  // GET /healthz
    const core::Clock& clock;
    dns::Resolver& resolver;
    asio::any_io_executor blocking;  // CPU-heavy work (RSA key generation)
    // The SPF, DKIM and DMARC checks of inbound mail, which wait on DNS: threads of their
    // own so that they never hold up `blocking`'s (none: they run on `blocking`).
    asio::any_io_executor inbound_auth;
    std::string master_key;  // seals DKIM private keys at rest
    DomainPolicy domain_policy;
    SendingPolicy sending;
    std::string smtp_hostname = "localhost";           // Message-ID domain, bounce address host
    std::string public_url = "http://localhost:8080";  // base of tracking links
    std::string tracking_secret;                       // signs tracking tokens
    bool allow_private_webhooks = false;               // webhooks.allow_private_targets
    RateLimiter& rate_limiter;
    std::size_t send_body_limit = 37'049'688;  // POST /v1/emails(/batch): Config::http_body_limit
    AuthThrottle* auth_throttle = nullptr;     // SMTP AUTH failures; none: not throttled
    // The dashboard's sessions (dashboard.enabled): a /v1 request without an Authorization
    // header may act with the key of the session its cookie names. None: no cookie is taken.
    store::SessionStore* sessions = nullptr;
};

// Who a /v1 request acts as (in http::Request::principal from admit() to handle()): the
// key, and whether it came by a dashboard session's cookie rather than the Authorization
// header.
struct Principal {
    store::ApiKey key;
    bool via_session = false;
};

class V1 {
  public:
    explicit V1(Deps deps);
    ~V1();
    // The server's admission check (http::Admit): the key of a /v1 request (its Bearer key or
    // its dashboard session's), before its body is read (it goes to handle() in
    // req.principal, a Principal), and the route's body
    // limit: Deps::send_body_limit for POST /v1/emails and /v1/emails/batch, 2 MiB for the
    // templates' create, update and render, 64 KiB for every other route.
    asio::awaitable<http::Admission> admit(http::Request& req);
    asio::awaitable<http::Response> handle(http::Request req);

  private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace posthorn::api
