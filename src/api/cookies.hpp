// api/cookies.hpp — the dashboard's session cookie (docs/dashboard.md): reading a value out
// of a Cookie header (RFC 6265 §4.2: `name=value` pairs separated by `; `), and writing
// the Set-Cookie value that sets or clears it. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

}  // namespace posthorn::api
