#include "api/detail/context.hpp"

#include <boost/json/serialize.hpp>

#include "core/log.hpp"

namespace posthorn::api::detail {

http::Response json(unsigned status, const boost::json::value& v) {
    return http::Response{.status = status, .body = boost::json::serialize(v)};
}

http::Response store_unavailable() {
    auto r = http::error_response(503, "STORE_UNAVAILABLE",
                                  "the store cannot be reached; nothing was accepted");
    r.headers.emplace_back("Retry-After", "5");
    return r;
}

http::Response internal_error(std::string_view what, const error_code& ec) {
    log::error("{}: {}", what, ec.message());
    if (ec == store::errc::unavailable) return store_unavailable();
    if (ec == store::errc::busy) {
        // Rows other transactions held through every try (PostgreSQL's writer: a deadlock
        // met three times): rolled back, so nothing changed, and worth a retry at once.
        auto r = http::error_response(503, "STORE_UNAVAILABLE",
                                      "the store is busy; nothing was changed");
        r.headers.emplace_back("Retry-After", "1");
        return r;
    }
    return http::error_response(500, "INTERNAL_ERROR",
                                std::string("could not ") + std::string(what));
}

std::string param(const Context& ctx, std::string_view name) {
    for (const auto& [k, v] : ctx.params)
        if (k == name) return v;
    return {};
}

http::Response validation_error(std::string_view message) {
    return http::error_response(400, "VALIDATION_ERROR", message);
}

http::Response not_found(std::string_view message) {
    return http::error_response(404, "NOT_FOUND", message);
}

http::Response forbidden(std::string_view message) {
    return http::error_response(403, "FORBIDDEN", message);
}

boost::json::object pagination(const Paging& p, std::int64_t total) {
    const std::int64_t pages = total == 0 ? 0 : (total + p.limit - 1) / p.limit;
    return {{"page", p.page},
            {"limit", p.limit},
            {"total", total},
            {"total_pages", pages},
            {"has_more", p.page * p.limit < total}};
}

}  // namespace posthorn::api::detail
