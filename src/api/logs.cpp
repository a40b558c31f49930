#include "api/logs.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <array>

namespace posthorn::api {

asio::awaitable<http::Response> list_logs(detail::Context ctx) {
    if (auto err = check_params(ctx.req, {"page", "limit", "sortOrder", "status", "method"}))
        co_return detail::validation_error(*err);
    auto paging = parse_paging(ctx.req, 20, "sortOrder");
    if (auto* msg = std::get_if<std::string>(&paging)) co_return detail::validation_error(*msg);
    const auto& p = std::get<Paging>(paging);

    store::LogQuery q{
        .account_id = ctx.account_id, .page = p.page, .limit = p.limit, .order = p.order};
    if (auto v = ctx.req.param("status")) {
        auto n = parse_int(*v);
        if (!n || *n < 100 || *n > 599)
            co_return detail::validation_error("status must be an HTTP status code (100-599)");
        q.status = static_cast<int>(*n);
    }
    if (auto v = ctx.req.param("method")) {
        std::string m(*v);
        std::transform(m.begin(), m.end(), m.begin(),
                       [](unsigned char c) { return std::toupper(c); });
        static constexpr std::array<std::string_view, 5> kMethods = {"GET", "POST", "PUT", "PATCH",
                                                                     "DELETE"};
        if (std::find(kMethods.begin(), kMethods.end(), m) == kMethods.end())
            co_return detail::validation_error(
                "method must be one of GET, POST, PUT, PATCH, DELETE");
        q.method = std::move(m);
    }

    auto page = co_await ctx.deps.logs.list_logs(std::move(q));
    if (!page) co_return detail::internal_error("read the request log", page.error());
    boost::json::array data;
    data.reserve(page->items.size());
    for (const auto& e : page->items) {
        data.push_back(boost::json::object{{"id", e.id},
                                           {"created_at", format_iso8601(e.created_at)},
                                           {"method", e.method},
                                           {"url", e.url},
                                           {"status", e.status},
                                           {"duration_ms", e.duration_ms},
                                           {"ip", e.ip},
                                           {"user_agent", e.user_agent},
                                           {"source", e.session ? "dashboard" : "api"}});
    }
    co_return detail::json(200,
                           boost::json::object{{"data", std::move(data)},
                                               {"pagination", detail::pagination(p, page->total)}});
}

}  // namespace posthorn::api
