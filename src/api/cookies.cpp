#include "api/cookies.hpp"

#include <fmt/format.h>

namespace posthorn::api {

namespace {

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace

std::optional<std::string_view> cookie_value(std::string_view header,
                                             std::string_view name) noexcept {
    while (!header.empty()) {
        const auto end = header.find(';');
        auto pair = trim(header.substr(0, end));
        header = end == std::string_view::npos ? std::string_view{} : header.substr(end + 1);
        const auto eq = pair.find('=');
        if (eq == std::string_view::npos || trim(pair.substr(0, eq)) != name) continue;
        auto value = trim(pair.substr(eq + 1));
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

}  // namespace posthorn::api
