// api/query.hpp — the query parameters shared by list endpoints (DESIGN §5): limit and
// page as strict positive integers, sort order asc|desc. A bad value is a message naming the
// parameter, which the caller answers with 400 VALIDATION_ERROR.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/time.hpp"

#include "http/message.hpp"
#include "store/types.hpp"

namespace posthorn::api {

inline constexpr std::int64_t kMaxPageSize = 100;

struct Paging {
    std::int64_t page = 1;
    std::int64_t limit = 20;
    store::SortOrder order = store::SortOrder::desc;
};

// A whole decimal number, nothing else ("12"; not "+12", "1.0", "12abc", " 12").
std::optional<std::int64_t> parse_int(std::string_view s) noexcept;

// Reads `page`, `limit` (1..100) and the sort order from `order_param` ("sortOrder" or
// "sort_order"). Answers the error message on a bad value.
std::variant<Paging, std::string> parse_paging(const http::Request& req, std::int64_t default_limit,
                                               std::string_view order_param);

// start_date / end_date: ISO 8601; an end_date that is a date alone means to the end of that
// day. Answers the error message, if any.
std::optional<std::string> parse_date_bounds(const http::Request& req, std::optional<UnixMs>& start,
                                             std::optional<UnixMs>& end);

// Every query parameter of `req` is one of `known`, and given once unless it is one of
// `repeatable`: a list never ignores what it was asked (an unknown filter, a misspelt one, a
// second value). Answers the error message, if any.
std::optional<std::string> check_params(const http::Request& req,
                                        std::initializer_list<std::string_view> known,
                                        std::initializer_list<std::string_view> repeatable = {});

// sort_by, one of `allowed`; `out` keeps its default when the parameter is absent.
std::optional<std::string> parse_sort_by(const http::Request& req,
                                         std::initializer_list<std::string_view> allowed,
                                         std::string& out);

}  // namespace posthorn::api
