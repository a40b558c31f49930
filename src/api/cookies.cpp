#include "api/cookies.hpp"

#include <fmt/format.h>

#include "core/text.hpp"

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

}  // namespace posthorn::api
