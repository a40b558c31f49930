#include "api/cookies.hpp"

#include <fmt/format.h>

#include "core/text.hpp"
#include "crypto/hash.hpp"

namespace posthorn::api {

std::optional<std::string_view> cookie_value(std::string_view header,
                                             std::string_view name) noexcept {
    while (!header.empty()) {
        const auto end = header.find(';');
        auto pair = core::trim_blanks(header.substr(0, end));
        header = end == std::string_view::npos ? std::string_view{} : header.substr(end + 1);
        const auto eq = pair.find('=');
        if (eq == std::string_view::npos || core::trim_blanks(pair.substr(0, eq)) != name) continue;
        auto value = core::trim_blanks(pair.substr(eq + 1));
        if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
            value = value.substr(1, value.size() - 2);
        if (value.empty()) return std::nullopt;
        return value;
    }
    return std::nullopt;
}

std::string session_set_cookie(std::string_view id, std::int64_t max_age_s, bool secure) {
    return fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}", kSessionCookie, id,
                       max_age_s, secure ? "; Secure" : "");
}

std::optional<http::Response> csrf_refusal(const http::Request& req,
                                           const store::DashboardSession& session) {
    if (req.method == "GET" || req.method == "HEAD" || req.method == "OPTIONS") return std::nullopt;
    const auto token = req.header("x-csrf-token");
    if (token && crypto::equal_ct(*token, session.csrf_token)) return std::nullopt;
    return http::error_response(403, "CSRF_TOKEN_INVALID",
                                token ? "the X-CSRF-Token header is not this session's"
                                      : "a change made with a dashboard session needs the "
                                        "X-CSRF-Token header");
}

}  // namespace posthorn::api
