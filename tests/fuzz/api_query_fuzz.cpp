// libFuzzer target for the request target of every API call (src/http/message.cpp, Boost.URL)
// and the list parameters read from it (src/api/query.cpp, src/core/time.cpp): page and limit
// within their bounds, a start no later than the end, sort_by one of the names allowed, and
// every ISO 8601 time read back as the same instant from its own formatting.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include "api/query.hpp"
#include "core/time.hpp"
#include "http/message.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace posthorn;
    http::Request req;
    if (!req.set_target(std::string(reinterpret_cast<const char*>(data), size))) return 0;
    if (req.path.empty() || req.path.front() != '/') __builtin_trap();
    auto paging = api::parse_paging(req, 10, "sort_order");
    if (const auto* p = std::get_if<api::Paging>(&paging))
        if (p->page < 1 || p->limit < 1 || p->limit > api::kMaxPageSize) __builtin_trap();
    std::optional<UnixMs> start, end;
    if (!api::parse_date_bounds(req, start, end) && start && end && *start > *end) __builtin_trap();
    std::string sort_by = "created_at";
    if (!api::parse_sort_by(req, {"created_at", "to_email"}, sort_by) && sort_by != "created_at" &&
        sort_by != "to_email")
        __builtin_trap();
    for (const auto& [name, value] : req.query) {
        auto t = parse_iso8601(value);
        if (!t) continue;
        auto again = parse_iso8601(format_iso8601(*t));
        if (!again || *again != *t) __builtin_trap();
    }
    return 0;
}
