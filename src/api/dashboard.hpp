// api/dashboard.hpp — the web dashboard's server side (docs/dashboard.md): its static files
// (built from web/ and compiled into the binary by app/, handed over as a table), served at
// `/` and `/assets/*` with a strict Content-Security-Policy, and its sessions
// (`/dashboard/session`): signing in with an API key gives an HttpOnly, SameSite=Strict
// cookie holding a random session id and a CSRF token; the store keeps the id's SHA-256.
// A session acts with its key on /v1, where V1's own authentication takes its cookie
// (session_of below, and the CSRF rule of api/cookies.hpp; api/v1.hpp). Dashboard stands in
// front of V1 as the HTTP server's admission check and handler only to serve its own paths.
// Not here: the pages themselves (web/). Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include <boost/json/object.hpp>

#include "api/auth_throttle.hpp"
#include "api/v1.hpp"
#include "core/asio.hpp"
#include "core/clock.hpp"
#include "http/message.hpp"
#include "store/store.hpp"

namespace posthorn::api {

// One static file of the dashboard: `path` relative to the build's output ("index.html",
// "assets/app-3F2A9C1B.js"), its media type, its bytes and its ETag (quoted).
struct StaticFile {
    std::string_view path;
    std::string_view content_type;
    std::string_view body;
    std::string_view etag;
};

// Config [dashboard].
struct DashboardOptions {
    bool enabled = false;
    std::int64_t session_ttl_s = 43200;
    bool secure_cookie = false;  // the session cookie carries Secure
    std::span<const StaticFile> files;
    // server.public_url: the dashboard is not served on a verified custom tracking host
    // (docs/tracking.md), which is an account's domain, only on the others.
    std::string public_url = "http://localhost:8080";
};

// The headers of every dashboard answer (the CSP, nosniff, no referrer, no framing).
void add_dashboard_headers(http::Response& res);

// `/`, `/assets/…` and `/dashboard/…`: the paths the dashboard answers (404 while disabled).
bool is_dashboard_path(std::string_view path) noexcept;

// Whether an asset's name carries a content hash (`app-3F2A9C1B.js`, `chunk.5b1c0f9e2d.css`:
// a run of at least 8 letters and digits, with a digit among them, before the extension,
// after `-` or `.`): such a file never changes under its name and is cached for a year.
bool is_hashed_asset_name(std::string_view name) noexcept;

struct DashboardDeps {
    store::AccountStore& accounts;  // the keys signed in with
    store::DomainStore& domains;    // the name of a key's domain
    store::SessionStore& sessions;
    const core::Clock& clock;
    AuthThrottle* auth_throttle = nullptr;  // failed sign-ins; none: not throttled
};

class Dashboard {
  public:
    // `v1` answers everything that is not the dashboard's; it outlives this.
    Dashboard(DashboardDeps deps, DashboardOptions options, V1& v1);
    // The server's admission check (http::Admit): the dashboard's paths take a body of up to
    // 4 KiB (a sign-in); everything else is V1's (V1::admit).
    asio::awaitable<http::Admission> admit(http::Request& req);
    asio::awaitable<http::Response> handle(http::Request req);

  private:
    // Whether the request's Host is another than public_url's and a verified tracking host.
    asio::awaitable<bool> on_tracking_host(const http::Request& req);
    asio::awaitable<http::Response> session_endpoint(http::Request req);
    asio::awaitable<http::Response> sign_in(http::Request req);
    asio::awaitable<http::Response> failed_sign_in(std::string client, std::string prefix,
                                                   std::string why);
    asio::awaitable<boost::json::object> session_json(const store::SessionWithKey& s);

    DashboardDeps deps_;
    DashboardOptions options_;
    V1& v1_;
    std::string public_host_;  // of public_url, with its port if it names one
};

// The session the request's session cookie names, usable now (not expired, its key not
// revoked), or the answer to give instead (with no headers of its own): 401 UNAUTHORIZED,
// 503 STORE_UNAVAILABLE when the store is out of reach, 500 for another failure. The
// dashboard's session endpoint and V1's authentication both ask it.
asio::awaitable<std::variant<store::SessionWithKey, http::Response>> session_of(
    store::SessionStore& sessions, const core::Clock& clock, const http::Request& req);

}  // namespace posthorn::api
