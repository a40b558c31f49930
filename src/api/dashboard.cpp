#include "api/dashboard.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <chrono>

#include "api/cookies.hpp"
#include "api/detail/context.hpp"
#include "api/domains.hpp"
#include "api/keys.hpp"
#include "core/client_limits.hpp"
#include "core/log.hpp"
#include "core/text.hpp"
#include "core/time.hpp"
#include "crypto/hash.hpp"
#include "crypto/keys.hpp"
#include "domain/sending_domain.hpp"
#include "domain/vocabulary.hpp"

namespace posthorn::api {

namespace json = boost::json;

namespace {

constexpr std::string_view kCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; frame-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'";

constexpr std::string_view kSessionPath = "/dashboard/session";
// A sign-in: {"key": "ph_…"}.
constexpr std::size_t kSessionBodyLimit = 4 * 1024;

http::Response dashboard_error(unsigned status, std::string_view code, std::string_view message) {
    auto res = http::error_response(status, code, message);
    add_dashboard_headers(res);
    return res;
}

http::Response not_found(std::string_view what) { return dashboard_error(404, "NOT_FOUND", what); }

http::Response method_not_allowed(const http::Request& req, std::string_view allow) {
    auto res =
        dashboard_error(405, "METHOD_NOT_ALLOWED", req.method + " is not allowed on " + req.path);
    res.headers.emplace_back("Allow", std::string(allow));
    return res;
}

http::Response unauthorized(std::string_view why) {
    return dashboard_error(401, "UNAUTHORIZED", why);
}

// Whether an If-None-Match value names `etag` (or is `*`).
bool etag_matches(std::string_view if_none_match, std::string_view etag) {
    while (!if_none_match.empty()) {
        const auto comma = if_none_match.find(',');
        auto tag = if_none_match.substr(0, comma);
        while (!tag.empty() && tag.front() == ' ') tag.remove_prefix(1);
        while (!tag.empty() && tag.back() == ' ') tag.remove_suffix(1);
        if (tag.starts_with("W/")) tag.remove_prefix(2);
        if (tag == "*" || tag == etag) return true;
        if (comma == std::string_view::npos) break;
        if_none_match.remove_prefix(comma + 1);
    }
    return false;
}

http::Response serve_file(const DashboardOptions& opts, const http::Request& req) {
    if (req.method != "GET" && req.method != "HEAD") return method_not_allowed(req, "GET, HEAD");
    const std::string_view name =
        req.path == "/" ? std::string_view("index.html") : std::string_view(req.path).substr(1);
    const auto file = std::find_if(opts.files.begin(), opts.files.end(),
                                   [&](const StaticFile& f) { return f.path == name; });
    // Only index.html is served at `/`, and nothing but assets/* beside it.
    if (file == opts.files.end() || (req.path != "/" && !name.starts_with("assets/")))
        return not_found("no such file: " + req.path);
    http::Response res{.status = 200, .content_type = std::string(file->content_type)};
    add_dashboard_headers(res);
    res.headers.emplace_back("ETag", std::string(file->etag));
    const bool immutable =
        req.path != "/" && is_hashed_asset_name(name.substr(std::string_view("assets/").size()));
    res.headers.emplace_back("Cache-Control",
                             immutable ? "public, max-age=31536000, immutable" : "no-cache");
    if (auto inm = req.header("if-none-match"); inm && etag_matches(*inm, file->etag)) {
        res.status = 304;
        return res;
    }
    res.body = std::string(file->body);
    return res;
}

std::string session_id_hash(std::string_view id) { return crypto::to_hex(crypto::sha256(id)); }

std::string client_of(const std::string& ip) {
    error_code ec;
    const auto a = asio::ip::make_address(ip, ec);
    return ec ? ip : core::client_of(a);
}

http::Response with_cleared_cookie(http::Response res, bool secure) {
    res.headers.emplace_back("Set-Cookie", session_set_cookie("", 0, secure));
    return res;
}

}  // namespace

void add_dashboard_headers(http::Response& res) {
    res.headers.emplace_back("Content-Security-Policy", std::string(kCsp));
    res.headers.emplace_back("X-Content-Type-Options", "nosniff");
    res.headers.emplace_back("Referrer-Policy", "no-referrer");
    res.headers.emplace_back("X-Frame-Options", "DENY");
}

bool is_dashboard_path(std::string_view path) noexcept {
    return path == "/" || path.starts_with("/assets/") || path == "/dashboard" ||
           path.starts_with("/dashboard/");
}

bool is_hashed_asset_name(std::string_view name) noexcept {
    const auto dot = name.rfind('.');
    if (dot == std::string_view::npos || dot == 0) return false;
    const auto stem = name.substr(0, dot);
    const auto sep = stem.find_last_of("-.");
    if (sep == std::string_view::npos) return false;
    const auto run = stem.substr(sep + 1);
    if (run.size() < 8) return false;
    const bool alnum = std::all_of(run.begin(), run.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    });
    return alnum &&
           std::any_of(run.begin(), run.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Dashboard::Dashboard(DashboardDeps deps, DashboardOptions options, V1& v1)
    : deps_(deps), options_(std::move(options)), v1_(v1) {
    const auto& url = options_.public_url;
    const auto scheme_end = url.find("://");
    public_host_ = url.substr(scheme_end == std::string::npos ? 0 : scheme_end + 3);
    public_host_ = public_host_.substr(0, public_host_.find('/'));
}

asio::awaitable<bool> Dashboard::on_tracking_host(const http::Request& req) {
    const auto host = req.header("host");
    if (!host) co_return false;
    auto parts = domain::tracking_host_parts(*host);
    if (!parts || domain::tracking_host_parts(public_host_) == parts) co_return false;
    // Named strings, not a structured binding: GCC 12 mishandles those in coroutines.
    std::string label = std::move(parts->first);
    std::string name = std::move(parts->second);
    auto found = co_await deps_.domains.tracking_domains(std::move(label), std::move(name));
    if (!found) co_return false;
    co_return std::any_of(found->begin(), found->end(),
                          [](const store::Domain& d) { return tracking_verified(d); });
}

asio::awaitable<http::Admission> Dashboard::admit(http::Request& req) {
    if (options_.enabled && is_dashboard_path(req.path))
        co_return http::Admission{.body_limit = kSessionBodyLimit};
    co_return co_await v1_.admit(req);
}

asio::awaitable<http::Response> Dashboard::handle(http::Request req) {
    if (!options_.enabled || !is_dashboard_path(req.path))
        co_return co_await v1_.handle(std::move(req));
    // A tracking host is an account's domain: V1 serves the tracking paths there, and answers
    // 404 for anything else.
    const bool tracking_host = co_await on_tracking_host(req);
    if (tracking_host) co_return co_await v1_.handle(std::move(req));
    if (req.path == kSessionPath) co_return co_await session_endpoint(std::move(req));
    if (req.path == "/" || req.path.starts_with("/assets/")) co_return serve_file(options_, req);
    co_return not_found("no route for " + req.path);
}

// The answer of the session endpoints: who the session is.
asio::awaitable<json::object> Dashboard::session_json(const store::SessionWithKey& s) {
    json::value domain = nullptr;
    if (s.key.domain_id) {
        auto account = s.key.account_id;
        auto id = *s.key.domain_id;
        auto d = co_await deps_.domains.find_domain_by_id(std::move(account), std::move(id));
        if (d) domain = json::value(d->name);
    }
    co_return json::object{{"signed_in", true},
                           {"account_id", s.session.account_id},
                           {"key",
                            {{"id", s.key.id},
                             {"name", s.key.name},
                             {"permission", domain::name(s.key.permission)},
                             {"domain", domain}}},
                           {"csrf_token", s.session.csrf_token},
                           {"expires_at", format_iso8601(s.session.expires_at)}};
}

// A failed sign-in: counted as a failed SMTP AUTH is (api/auth_throttle.hpp), answered late
// once the client or the key's prefix has failed more than twice.
asio::awaitable<http::Response> Dashboard::failed_sign_in(std::string client, std::string prefix,
                                                          std::string why) {
    if (auto* throttle = deps_.auth_throttle) {
        const auto [wait, n] = throttle->failed(client, prefix, AuthThrottle::Clock::now());
        log::event(log::Level::warn, "dashboard sign-in failed",
                   {{"client", client},
                    {"key_prefix", prefix},
                    {"failures", n},
                    {"locked_out", n >= throttle->options().max_failures}});
        if (wait.count() > 0) {
            asio::steady_timer timer(co_await asio::this_coro::executor, wait);
            co_await timer.async_wait(use_nothrow_awaitable);
        }
    }
    co_return unauthorized(why);
}

asio::awaitable<http::Response> Dashboard::sign_in(http::Request req) {
    const auto client = client_of(req.remote_ip);
    if (deps_.auth_throttle) {
        // Locked out: refused without looking at the key, saying when to come back.
        const auto wait = deps_.auth_throttle->locked_for(client, AuthThrottle::Clock::now());
        if (wait.count() > 0) {
            const auto seconds = std::to_string(wait.count());
            auto res = dashboard_error(
                429, "RATE_LIMITED",
                "too many failed sign-ins from your address; retry after " + seconds + " s");
            res.headers.emplace_back("Retry-After", seconds);
            co_return res;
        }
    }
    const auto ct = req.header("content-type");
    if (!ct || !core::ascii_iequals(ct->substr(0, std::min(ct->find(';'), ct->size())),
                                    "application/json"))
        co_return dashboard_error(400, "INVALID_JSON",
                                  "request body must be JSON (Content-Type: application/json)");
    error_code ec;
    auto body = json::parse(req.body, ec);
    if (ec)
        co_return dashboard_error(400, "INVALID_JSON",
                                  "request body is not valid JSON: " + ec.message());
    const auto* obj = body.if_object();
    const auto* key_value = obj ? obj->if_contains("key") : nullptr;
    if (!key_value || !key_value->is_string())
        co_return dashboard_error(422, "VALIDATION_ERROR", "key: an API key is required");
    const std::string key(key_value->get_string());
    if (!looks_like_api_key(key)) {
        std::string none;
        std::string why = "invalid API key";
        co_return co_await failed_sign_in(client, std::move(none), std::move(why));
    }
    auto hash = hash_api_key(key);
    auto found = co_await deps_.accounts.find_api_key(hash);
    if (!found && found.error() != store::errc::not_found) {
        if (found.error() == store::errc::unavailable) {
            auto res = detail::store_unavailable();
            add_dashboard_headers(res);
            co_return res;
        }
        log::error("dashboard sign-in: api key lookup: {}", found.error().message());
        co_return dashboard_error(500, "INTERNAL_ERROR", "could not check the API key");
    }
    if (!found || !crypto::equal_ct(found->hash, hash) || found->revoked_at) {
        std::string prefix = key.substr(0, 11);
        std::string why =
            found && found->revoked_at ? "API key has been revoked" : "invalid API key";
        co_return co_await failed_sign_in(client, std::move(prefix), std::move(why));
    }
    // 256 random bits each: the id only in the cookie, its hash in the store.
    const auto id = crypto::to_hex(crypto::random_string(32));
    const auto now = deps_.clock.now_ms();
    store::SessionWithKey s{.session = {.id_hash = session_id_hash(id),
                                        .account_id = found->account_id,
                                        .key_id = found->id,
                                        .csrf_token = crypto::to_hex(crypto::random_string(32)),
                                        .created_at = now,
                                        .expires_at = now + options_.session_ttl_s * 1000},
                            .key = std::move(*found)};
    auto row = s.session;
    auto made = co_await deps_.sessions.create_session(std::move(row));
    if (!made) {
        auto res = detail::internal_error("start a session", made.error());
        add_dashboard_headers(res);
        co_return res;
    }
    auto res = detail::json(200, co_await session_json(s));
    add_dashboard_headers(res);
    res.headers.emplace_back(
        "Set-Cookie", session_set_cookie(id, options_.session_ttl_s, options_.secure_cookie));
    co_return res;
}

asio::awaitable<http::Response> Dashboard::session_endpoint(http::Request req) {
    if (req.method == "POST") co_return co_await sign_in(std::move(req));
    if (req.method != "GET" && req.method != "DELETE")
        co_return method_not_allowed(req, "GET, POST, DELETE");
    auto found = co_await session_of(deps_.sessions, deps_.clock, req);
    if (auto* res = std::get_if<http::Response>(&found)) {
        // No session (none, ended, expired, its key revoked): a question answered, for the
        // page that asks it on every load (200, no error in the browser's console), when it
        // is asked (GET); a refusal for a sign-out. Either way the browser forgets its cookie.
        if (res->status == 401 && req.method == "GET")
            *res = detail::json(200, json::object{{"signed_in", false}});
        add_dashboard_headers(*res);
        co_return res->status < 500 ? with_cleared_cookie(std::move(*res), options_.secure_cookie)
                                    : std::move(*res);
    }
    auto& s = std::get<store::SessionWithKey>(found);
    if (req.method == "GET") {
        auto res = detail::json(200, co_await session_json(s));
        add_dashboard_headers(res);
        co_return res;
    }
    if (auto refusal = csrf_refusal(req, s.session)) {
        add_dashboard_headers(*refusal);
        co_return std::move(*refusal);
    }
    auto hash = s.session.id_hash;
    auto gone = co_await deps_.sessions.delete_session(std::move(hash));
    if (!gone) {
        auto res = detail::internal_error("end the session", gone.error());
        add_dashboard_headers(res);
        co_return res;
    }
    http::Response res{.status = 204, .content_type = ""};
    add_dashboard_headers(res);
    co_return with_cleared_cookie(std::move(res), options_.secure_cookie);
}

asio::awaitable<std::variant<store::SessionWithKey, http::Response>> session_of(
    store::SessionStore& sessions, const core::Clock& clock, const http::Request& req) {
    using R = std::variant<store::SessionWithKey, http::Response>;
    // Plain answers: the caller adds its own headers (the dashboard's, or none on /v1).
    const auto refused = [](std::string_view why) {
        return http::error_response(401, "UNAUTHORIZED", why);
    };
    const auto cookies = req.header("cookie");
    const auto id = cookies ? cookie_value(*cookies, kSessionCookie) : std::nullopt;
    if (!id) co_return R(refused("missing Authorization header (Bearer <API key>)"));
    auto hash = session_id_hash(*id);
    auto found = co_await sessions.find_session(std::move(hash));
    if (!found) {
        if (found.error() == store::errc::not_found)
            co_return R(refused("the dashboard session has ended; sign in again"));
        if (found.error() == store::errc::unavailable) co_return R(detail::store_unavailable());
        log::error("dashboard session lookup: {}", found.error().message());
        co_return R(http::error_response(500, "INTERNAL_ERROR", "could not check the session"));
    }
    if (found->session.expires_at <= clock.now_ms())
        co_return R(refused("the dashboard session has expired; sign in again"));
    // A revoked key ends its sessions at once.
    if (found->key.revoked_at) co_return R(refused("API key has been revoked"));
    co_return R(std::move(*found));
}

}  // namespace posthorn::api
