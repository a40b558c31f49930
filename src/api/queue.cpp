#include "api/queue.hpp"

#include <boost/json/array.hpp>

#include <algorithm>

#include "api/queue_summary.hpp"
#include "domain/vocabulary.hpp"
#include "mail/domain_name.hpp"

namespace posthorn::api {

namespace json = boost::json;

json::object queue_summary_json(const std::vector<store::QueueGroup>& groups) {
    json::array data;
    data.reserve(groups.size());
    std::int64_t total = 0;
    std::optional<UnixMs> oldest;
    for (const auto& g : groups) {
        data.push_back(json::object{{"domain", g.domain},
                                    {"state", domain::name(g.state)},
                                    {"recipients", g.recipients},
                                    {"oldest_queued_at", format_iso8601(g.oldest_queued_at)},
                                    {"next_attempt_at", format_iso8601(g.next_attempt_at)}});
        total += g.recipients;
        oldest = std::min(oldest.value_or(g.oldest_queued_at), g.oldest_queued_at);
    }
    return json::object{
        {"data", std::move(data)},
        {"total_recipients", total},
        {"oldest_queued_at", oldest ? json::value(format_iso8601(*oldest)) : json::value(nullptr)}};
}

asio::awaitable<http::Response> get_queue(detail::Context ctx) {
    // The key's account, always: another account's mail never appears.
    store::QueueSelector select{.account_id = ctx.account_id};
    if (auto err = check_params(ctx.req, {"domain", "state"}))
        co_return detail::validation_error(*err);
    if (auto v = ctx.req.param("domain")) {
        auto name = mail::normalize_domain(*v);
        if (auto* bad = std::get_if<mail::BadDomain>(&name))
            co_return detail::validation_error("domain must be a domain name: " + bad->reason);
        select.domain = std::get<std::string>(std::move(name));
    }
    if (auto v = ctx.req.param("state")) {
        auto state = domain::from_name<domain::QueueState>(*v);
        if (!state)
            co_return detail::validation_error(
                "state must be one of ready, deferred, scheduled, in_flight, held");
        select.states.push_back(*state);
    }
    auto groups = co_await ctx.deps.queue.queue_summary(std::move(select), ctx.deps.clock.now_ms());
    if (!groups) co_return detail::internal_error("read the queue", groups.error());
    co_return detail::json(200, queue_summary_json(*groups));
}

}  // namespace posthorn::api
