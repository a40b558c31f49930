#include "api/v1.hpp"

#include <boost/json/monotonic_resource.hpp>

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "api/api_keys.hpp"
#include "api/cookies.hpp"
#include "api/dashboard.hpp"
#include "api/detail/context.hpp"
#include "api/detail/json_body.hpp"
#include "api/domains.hpp"
#include "api/email_content.hpp"
#include "api/emails.hpp"
#include "api/inbound.hpp"
#include "api/keys.hpp"
#include "api/logs.hpp"
#include "api/queue.hpp"
#include "api/stats.hpp"
#include "api/suppressions.hpp"
#include "api/templates.hpp"
#include "api/tracking.hpp"
#include "api/webhooks.hpp"
#include "core/blocking.hpp"
#include "core/id.hpp"
#include "core/log.hpp"
#include "core/text.hpp"
#include "crypto/hash.hpp"
#include "domain/api_keys.hpp"
#include "domain/sending_domain.hpp"
#include "http/router.hpp"

namespace posthorn::api {

using detail::Context;
using domain::KeyNeed;
using RouteFn = asio::awaitable<http::Response> (*)(Context);

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool is_json_media_type(std::string_view content_type) {
    return core::ascii_iequals(trim(content_type.substr(0, content_type.find(';'))),
                               "application/json");
}

// The SHA-256 of the keys the store has known, remembered per network thread: a client
// presents the same key with every request, and hashing it was ~4% of a send's work on the
// network thread (callgrind). Only keys that were found are kept, so a stream of made-up
// keys cannot fill it; whether a key is revoked is still read from the store every time.
// A presented key is compared only with the remembered keys of the bucket its std::hash
// picks (libstdc++ compares their stored hash first), so the lookup's time tells nothing of
// how much of a guess is right. Out of line, so that no thread-local address is kept
// across a coroutine's suspension.
constexpr std::size_t kRememberedKeys = 256;
struct ViewHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
thread_local std::unordered_map<std::string, std::string, ViewHash, std::equal_to<>> key_hashes;

[[gnu::noinline]] std::string hash_of_key(std::string_view key) {
    if (auto it = key_hashes.find(key); it != key_hashes.end()) return it->second;
    return hash_api_key(key);
}

[[gnu::noinline]] void remember_key(std::string_view key, const std::string& hash) {
    if (key_hashes.size() >= kRememberedKeys) key_hashes.clear();
    key_hashes.try_emplace(std::string(key), hash);
}

// Bodies larger than this are parsed on the blocking pool.
constexpr std::size_t kParseOnPool = 1024 * 1024;
// The body limit of every route but the sends': their bodies are a few fields each.
constexpr std::size_t kSmallBodyLimit = 64 * 1024;
// A template's create, update and render: html and text of up to 512 KiB each, escaped in
// JSON, and the variables of a preview.
constexpr std::size_t kTemplateBodyLimit = 2 * 1024 * 1024;

bool is_v1(std::string_view path) { return path == "/v1" || path.starts_with("/v1/"); }

http::Response unauthorized(std::string_view why) {
    auto res = http::error_response(401, "UNAUTHORIZED", why);
    res.headers.emplace_back("WWW-Authenticate", "Bearer");
    return res;
}

}  // namespace

// What a route asks of the key (domain/api_keys.hpp): a full key unless it says otherwise;
// `what` ends the refusal of a key that lacks it ("a full-access key is needed to …").
struct Access {
    KeyNeed need = KeyNeed::full;
    std::string_view what = "use this endpoint";
};

struct V1::Impl {
    explicit Impl(Deps d) : deps(std::move(d)) {
        // The host (and port) of public_url, whose requests are never a tracking host's.
        const auto scheme_end = deps.public_url.find("://");
        public_host = deps.public_url.substr(scheme_end == std::string::npos ? 0 : scheme_end + 3);
        public_host = public_host.substr(0, public_host.find('/'));
        constexpr Access kDomains{.what = "manage domains"};
        constexpr Access kWebhooks{.what = "manage webhooks"};
        constexpr Access kList{.what = "list or read the account's emails"};
        constexpr Access kInbound{.what = "read inbound email"};
        add("GET", "/v1/logs", &list_logs, {.what = "read the request log"});
        add("POST", "/v1/domains", &create_domain, kDomains);
        add("GET", "/v1/domains", &list_domains, kDomains);
        add("GET", "/v1/domains/{identifier}", &get_domain, kDomains);
        add("PATCH", "/v1/domains/{identifier}", &update_domain, kDomains);
        add("DELETE", "/v1/domains/{identifier}", &delete_domain, kDomains);
        add("POST", "/v1/domains/{identifier}/verify", &verify_domain, kDomains);
        add("POST", "/v1/domains/{identifier}/dkim/rotate", &rotate_dkim, kDomains);
        add("POST", "/v1/emails", &send_email, {.need = KeyNeed::send}, deps.send_body_limit);
        // A batch's body may be as large as one send's (its emails share that limit), and hold
        // the recipients of kMaxBatchEmails sends.
        add("POST", "/v1/emails/batch", &send_batch, {.need = KeyNeed::send}, deps.send_body_limit,
            kMaxBatchEmails);
        add("GET", "/v1/emails/envelope", &list_envelopes, kList);
        add("GET", "/v1/emails/inbound", &list_inbound, kInbound);
        add("GET", "/v1/emails/inbound/{id}", &get_inbound, kInbound);
        add("GET", "/v1/emails/inbound/{id}/attachments/{index}", &get_inbound_attachment,
            kInbound);
        // A sending key reads the emails it sent (get_email asks domain::may_read_email).
        add("GET", "/v1/emails/{id}", &get_email, {.need = KeyNeed::read_sent_mail});
        // So too its reschedule and cancel: of the emails it sent (domain::may_read_email).
        add("PATCH", "/v1/emails/{id}", &reschedule_email, {.need = KeyNeed::read_sent_mail});
        add("POST", "/v1/emails/{id}/cancel", &cancel_email, {.need = KeyNeed::read_sent_mail});
        // What it was, read back (issue 31's dashboard): as GET /v1/emails/{id} reads it.
        add("GET", "/v1/emails/{id}/events", &get_email_events, {.need = KeyNeed::read_sent_mail});
        add("GET", "/v1/emails/{id}/content", &get_email_content,
            {.need = KeyNeed::read_sent_mail});
        add("GET", "/v1/emails/{id}/raw", &get_email_raw, {.need = KeyNeed::read_sent_mail});
        add("GET", "/v1/emails/{id}/preview", &get_email_preview,
            {.need = KeyNeed::read_sent_mail});
        add("GET", "/v1/email", &list_emails, kList);
        add("POST", "/v1/webhooks", &create_webhook, kWebhooks);
        add("GET", "/v1/webhooks", &list_webhooks, kWebhooks);
        add("GET", "/v1/webhooks/{id}", &get_webhook, kWebhooks);
        add("PATCH", "/v1/webhooks/{id}", &update_webhook, kWebhooks);
        add("DELETE", "/v1/webhooks/{id}", &delete_webhook, kWebhooks);
        add("GET", "/v1/webhooks/{id}/deliveries", &list_webhook_deliveries, kWebhooks);
        add("POST", "/v1/webhooks/{id}/rotate-secret", &rotate_webhook_secret, kWebhooks);
        add("POST", "/v1/webhooks/{id}/replay", &replay_webhook_deliveries, kWebhooks);
        add("GET", "/v1/queue", &get_queue, {.what = "read the queue"});
        // Any key: one tied to a domain reads that domain's (domain::stats_domain_of).
        add("GET", "/v1/stats", &get_stats, {.need = KeyNeed::read_stats});
        constexpr Access kKeys{.what = "manage API keys"};
        add("POST", "/v1/api-keys", &create_api_key, kKeys);
        add("GET", "/v1/api-keys", &list_api_keys, kKeys);
        add("DELETE", "/v1/api-keys/{id}", &revoke_api_key, kKeys);
        constexpr Access kSuppressions{.what = "manage the suppression list"};
        add("GET", "/v1/suppressions", &list_suppressions, kSuppressions);
        add("POST", "/v1/suppressions", &add_suppression, kSuppressions);
        add("GET", "/v1/suppressions/{email}", &get_suppression, kSuppressions);
        add("DELETE", "/v1/suppressions/{email}", &remove_suppression, kSuppressions);
        // A sending key sends with the account's templates (POST /v1/emails) but does not
        // manage or preview them.
        constexpr Access kTemplates{.what = "manage templates"};
        add("POST", "/v1/templates", &create_template, kTemplates, kTemplateBodyLimit);
        add("GET", "/v1/templates", &list_templates, kTemplates);
        add("GET", "/v1/templates/{id}", &get_template, kTemplates);
        add("PATCH", "/v1/templates/{id}", &update_template, kTemplates, kTemplateBodyLimit);
        add("DELETE", "/v1/templates/{id}", &delete_template, kTemplates);
        add("POST", "/v1/templates/{id}/render", &render_template_preview, kTemplates,
            kTemplateBodyLimit);
    }

    void add(std::string method, std::string_view pattern, RouteFn fn, Access access = {},
             std::size_t body_limit = kSmallBodyLimit, std::size_t sends = 1) {
        const auto id = router.add(std::move(method), pattern);
        if (routes.size() <= id) routes.resize(id + 1);
        routes[id] = Route{fn, body_limit, access, sends};
    }

    // The largest body the route of `req` takes (a path that is no route: the small one,
    // and the handler answers 404 or 405 without reading it).
    std::size_t body_limit(const http::Request& req) const {
        auto m = router.match(req.method, req.path);
        return m.route ? routes[*m.route].body_limit : kSmallBodyLimit;
    }

    // Whether the request's Host is a verified custom tracking host (docs/tracking.md): then
    // only the tracking paths are served there. A Host of public_url, of fewer than three
    // labels or an IP address costs no lookup; the others one, from the store's lookup cache.
    asio::awaitable<bool> on_tracking_host(const http::Request& req) const {
        const auto host = req.header("host");
        if (!host) co_return false;
        auto parts = domain::tracking_host_parts(*host);
        if (!parts || domain::tracking_host_parts(public_host) == parts) co_return false;
        // Named strings, not a structured binding: GCC 12 mishandles those in coroutines.
        std::string label = std::move(parts->first);
        std::string name = std::move(parts->second);
        auto found = co_await deps.domains.tracking_domains(std::move(label), std::move(name));
        if (!found) co_return false;  // the store unreachable: routed as any other host
        co_return std::any_of(found->begin(), found->end(),
                              [](const store::Domain& d) { return tracking_verified(d); });
    }

    // Answers a valid, unrevoked key (the Bearer key, or the key of the dashboard session the
    // cookie of a request without an Authorization header names), or the answer to send
    // instead (401; 403 for a change made with a session without its CSRF token; 503).
    asio::awaitable<std::variant<Principal, http::Response>> authenticate(const http::Request& req);
    asio::awaitable<std::variant<Principal, http::Response>> authenticate_session(
        const http::Request& req);
    asio::awaitable<http::Response> dispatch(http::Request req, Principal who);

    struct Route {
        RouteFn fn = nullptr;
        std::size_t body_limit = kSmallBodyLimit;
        Access access;
        std::size_t sends = 1;  // the sends its body may hold (JSON bounds scale with them)
    };
    Deps deps;
    std::string public_host;  // of public_url, with its port if it names one
    http::Router router;
    std::vector<Route> routes;
};

asio::awaitable<std::variant<Principal, http::Response>> V1::Impl::authenticate(
    const http::Request& req) {
    auto header = req.header("authorization");
    if (!header) {
        // No key: the dashboard session's cookie may stand in for one (a request with an
        // Authorization header is judged by it alone, whatever its cookie).
        if (deps.sessions && req.header("cookie")) co_return co_await authenticate_session(req);
        co_return unauthorized("missing Authorization header (Bearer <API key>)");
    }
    const auto token = bearer_token(*header);
    if (!token) co_return unauthorized("Authorization must be: Bearer <API key>");
    const auto key = *token;
    if (!looks_like_api_key(key)) co_return unauthorized("invalid API key");
    const auto hash = hash_of_key(key);
    auto found = co_await deps.accounts.find_api_key(hash);
    if (!found) {
        if (found.error() != store::errc::not_found) {
            log::error("api key lookup: {}", found.error().message());
            if (found.error() == store::errc::unavailable) co_return detail::store_unavailable();
            co_return http::error_response(500, "INTERNAL_ERROR", "could not check the API key");
        }
        co_return unauthorized("invalid API key");
    }
    // The row was found by its hash; compare again in constant time, so that no timing of
    // ours depends on how much of a presented key is right.
    if (!crypto::equal_ct(found->hash, hash)) co_return unauthorized("invalid API key");
    if (found->revoked_at) co_return unauthorized("API key has been revoked");
    remember_key(key, hash);
    co_return Principal{.key = std::move(*found)};
}

// The dashboard's session (docs/dashboard.md#the-api-with-a-session): its key, and for a
// change its X-CSRF-Token, checked before the body is read.
asio::awaitable<std::variant<Principal, http::Response>> V1::Impl::authenticate_session(
    const http::Request& req) {
    auto found = co_await session_of(*deps.sessions, deps.clock, req);
    if (auto* res = std::get_if<http::Response>(&found)) {
        if (res->status == 401) res->headers.emplace_back("WWW-Authenticate", "Bearer");
        co_return std::move(*res);
    }
    auto& s = std::get<store::SessionWithKey>(found);
    if (auto refusal = csrf_refusal(req, s.session)) co_return std::move(*refusal);
    co_return Principal{.key = std::move(s.key), .via_session = true};
}

asio::awaitable<http::Response> V1::Impl::dispatch(http::Request req, Principal who) {
    // The document's nodes come from one block, freed at once with its last value (a
    // reference-counted resource: a copy kept past this request keeps it alive), not one
    // allocation each. A value keeps the resource it was made with: `body` is made with
    // it, so that the parsed document moves into it rather than being copied.
    boost::json::storage_ptr memory;
    if (!req.body.empty())
        memory = boost::json::make_shared_resource<boost::json::monotonic_resource>(
            req.body.size() + 1024);
    boost::json::value body(memory);
    auto m = router.match(req.method, req.path);
    if (!req.body.empty()) {
        auto ct = req.header("content-type");
        if (!ct || !is_json_media_type(*ct))
            co_return http::error_response(
                400, "INVALID_JSON", "request body must be JSON (Content-Type: application/json)");
        // An email may name max_recipients addresses (a batch's emails as many each);
        // anything else in a body is a few hundred values at most.
        const std::size_t sends = m.route ? routes[*m.route].sends : 1;
        const detail::JsonLimits limits{
            .max_values = 100'000 + sends * static_cast<std::size_t>(deps.sending.max_recipients)};
        std::optional<std::string> too_complex;
        error_code ec;
        auto parse = [&] {
            too_complex = detail::exceeds_json_limits(req.body, limits);
            if (!too_complex) detail::parse_json_body(req.body, body, ec);
            return true;
        };
        // A large body (attachments) is scanned and parsed off the network thread, so that
        // no other request on it waits for this one (tens of milliseconds at 25 MB).
        if (req.body.size() > kParseOnPool)
            co_await core::run_blocking(deps.blocking, parse);
        else
            parse();
        if (too_complex) co_return detail::validation_error(*too_complex);
        if (ec)
            co_return http::error_response(400, "INVALID_JSON",
                                           "request body is not valid JSON: " + ec.message());
    }
    if (!m.route) {
        if (m.path_known) {
            auto res = http::error_response(405, "METHOD_NOT_ALLOWED",
                                            req.method + " is not allowed on " + req.path);
            res.headers.emplace_back("Allow", m.allowed);
            co_return res;
        }
        co_return detail::not_found("no route for " + req.path);
    }
    const auto& route = routes[*m.route];
    if (auto lacks = domain::key_lacks(who.key, route.access.need, route.access.what))
        co_return detail::forbidden(*lacks);
    auto account_id = who.key.account_id;
    Context ctx{.req = std::move(req),
                .account_id = std::move(account_id),
                .key = std::move(who.key),
                .via_session = who.via_session,
                .params = std::move(m.params),
                .body = std::move(body),
                .deps = deps};
    co_return co_await route.fn(std::move(ctx));
}

V1::V1(Deps deps) : impl_(std::make_shared<Impl>(std::move(deps))) {}
V1::~V1() = default;

asio::awaitable<http::Admission> V1::admit(http::Request& req) {
    http::Admission admission{.body_limit = impl_->body_limit(req)};
    if (!is_v1(req.path)) co_return admission;
    if (co_await impl_->on_tracking_host(req)) {
        admission.refusal = detail::not_found("no route for " + req.path);
        co_return admission;
    }
    auto auth = co_await impl_->authenticate(req);
    if (auto* res = std::get_if<http::Response>(&auth))
        admission.refusal = std::move(*res);
    else
        req.principal = std::get<Principal>(std::move(auth));
    co_return admission;
}

asio::awaitable<http::Response> V1::handle(http::Request req) {
    const auto started = std::chrono::steady_clock::now();
    const auto received_at = impl_->deps.clock.now_ms();
    if (req.path == "/healthz") {
        if (req.method != "GET" && req.method != "HEAD") {
            auto res = http::error_response(405, "METHOD_NOT_ALLOWED", "use GET /healthz");
            res.headers.emplace_back("Allow", "GET, HEAD");
            co_return res;
        }
        // Liveness, and whether the store answers: a load balancer takes a node whose
        // database is out of its reach out of rotation (sends would answer 503 there).
        if (!impl_->deps.store_health.reachable())
            co_return http::Response{.status = 503, .body = R"({"status":"store_unavailable"})"};
        co_return http::Response{.status = 200, .body = R"({"status":"ok"})"};
    }
    const bool tracking_path =
        req.method == "GET" && (req.path.rfind("/t/o/", 0) == 0 || req.path.rfind("/t/c/", 0) == 0);
    if (tracking_path) co_return co_await handle_tracking(impl_->deps, std::move(req));
    // A custom tracking host serves the tracking paths and nothing else.
    if (co_await impl_->on_tracking_host(req))
        co_return detail::not_found("no route for " + req.path);
    if (!is_v1(req.path)) co_return detail::not_found("no route for " + req.path);

    // Admitted by the server (admit()), or called directly: then the key is checked here.
    Principal who;
    if (auto* admitted = std::any_cast<Principal>(&req.principal)) {
        who = std::move(*admitted);
    } else {
        auto auth = co_await impl_->authenticate(req);
        if (auto* res = std::get_if<http::Response>(&auth)) co_return std::move(*res);
        who = std::get<Principal>(std::move(auth));
    }

    store::LogEntry entry{.account_id = who.key.account_id,
                          .method = req.method,
                          .url = req.target,
                          .ip = req.remote_ip,
                          .user_agent = std::string(req.header("user-agent").value_or("")),
                          .session = who.via_session};  // "source": "dashboard" (logs.cpp)
    http::Response res;
    bool threw = false;
    try {
        res = co_await impl_->dispatch(std::move(req), std::move(who));
    } catch (const std::exception& e) {
        log::error("handler for {} {} threw: {}", entry.method, entry.url, e.what());
        threw = true;
    }
    if (threw) res = http::error_response(500, "INTERNAL_ERROR", "internal error");

    entry.created_at = received_at;
    entry.id = new_id("log_", entry.created_at);
    entry.status = static_cast<int>(res.status);
    entry.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - started)
                            .count();
    impl_->deps.logs.append_log(std::move(entry));
    co_return res;
}

}  // namespace posthorn::api
