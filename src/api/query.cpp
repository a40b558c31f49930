#include "api/query.hpp"

#include <charconv>

namespace posthorn::api {

std::optional<std::int64_t> parse_int(std::string_view s) noexcept {
    if (s.empty() || s.size() > 18) return std::nullopt;
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
    return v;
}

std::variant<Paging, std::string> parse_paging(const http::Request& req, std::int64_t default_limit,
                                               std::string_view order_param) {
    Paging p;
    p.limit = default_limit;
    if (auto v = req.param("limit")) {
        auto n = parse_int(*v);
        if (!n || *n < 1 || *n > kMaxPageSize)
            return std::string("limit must be a whole number from 1 to 100");
        p.limit = *n;
    }
    if (auto v = req.param("page")) {
        auto n = parse_int(*v);
        if (!n || *n < 1) return std::string("page must be a whole number of at least 1");
        p.page = *n;
    }
    if (auto v = req.param(order_param)) {
        if (*v == "asc") {
            p.order = store::SortOrder::asc;
        } else if (*v == "desc") {
            p.order = store::SortOrder::desc;
        } else {
            return std::string(order_param) + " must be asc or desc";
        }
    }
    return p;
}

}  // namespace posthorn::api
