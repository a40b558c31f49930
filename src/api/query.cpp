#include "api/query.hpp"

#include <algorithm>
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

std::optional<std::string> parse_date_bounds(const http::Request& req, std::optional<UnixMs>& start,
                                             std::optional<UnixMs>& end) {
    for (const char* name : {"start_date", "end_date"}) {
        auto v = req.param(name);
        if (!v) continue;
        auto t = parse_iso8601(*v);
        if (!t) return std::string(name) + " must be an ISO 8601 date or time";
        const bool is_end = std::string_view(name) == "end_date";
        if (is_end && v->size() == 10) *t += 86'400'000 - 1;
        (is_end ? end : start) = *t;
    }
    if (start && end && *start > *end) return std::string("start_date is after end_date");
    return std::nullopt;
}

std::optional<std::string> check_params(const http::Request& req,
                                        std::initializer_list<std::string_view> known,
                                        std::initializer_list<std::string_view> repeatable) {
    auto in = [](std::initializer_list<std::string_view> list, std::string_view name) {
        return std::find(list.begin(), list.end(), name) != list.end();
    };
    for (std::size_t i = 0; i < req.query.size(); ++i) {
        const auto& name = req.query[i].first;
        if (!in(known, name)) {
            std::string names;
            for (auto k : known) names += (names.empty() ? "" : ", ") + std::string(k);
            return "unknown query parameter '" + name + "' (this list takes " + names + ")";
        }
        if (in(repeatable, name)) continue;
        for (std::size_t j = 0; j < i; ++j)
            if (req.query[j].first == name) return name + " is given more than once";
    }
    return std::nullopt;
}

std::optional<std::string> parse_sort_by(const http::Request& req,
                                         std::initializer_list<std::string_view> allowed,
                                         std::string& out) {
    auto v = req.param("sort_by");
    if (!v) return std::nullopt;
    for (auto a : allowed)
        if (*v == a) {
            out = std::string(a);
            return std::nullopt;
        }
    std::string names;
    for (auto a : allowed) names += (names.empty() ? "" : " or ") + std::string(a);
    return "sort_by must be " + names;
}

}  // namespace posthorn::api
