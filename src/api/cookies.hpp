// api/cookies.hpp — the dashboard's session cookie (docs/dashboard.md): reading a value out
// of a Cookie header (RFC 6265 §4.2: `name=value` pairs separated by `; `), writing the
// Set-Cookie value that sets or clears it, and the CSRF token rule of a change made with a
// session (the dashboard's sign-out, and /v1). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "http/message.hpp"
#include "store/types.hpp"

namespace posthorn::api {

inline constexpr std::string_view kSessionCookie = "posthorn_session";

// The value of the first cookie named `name` (compared exactly) in a Cookie header value,
// with surrounding spaces and double quotes removed; nullopt when there is none or it is
// empty. A view into `header`.
std::optional<std::string_view> cookie_value(std::string_view header,
                                             std::string_view name) noexcept;

// `posthorn_session=<id>; Path=/; HttpOnly; SameSite=Strict; Max-Age=<max_age_s>` and
// `; Secure` when `secure`. An empty id and a Max-Age of 0 clear the cookie.
std::string session_set_cookie(std::string_view id, std::int64_t max_age_s, bool secure);

// For a request that changes something (any method but GET, HEAD and OPTIONS): 403
// CSRF_TOKEN_INVALID unless its X-CSRF-Token is the session's (compared in constant time).
std::optional<http::Response> csrf_refusal(const http::Request& req,
                                           const store::DashboardSession& session);

}  // namespace posthorn::api
