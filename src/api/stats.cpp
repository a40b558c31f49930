#include "api/stats.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "api/email_labels.hpp"
#include "domain/api_keys.hpp"
#include "domain/stats.hpp"
#include "mail/domain_name.hpp"

namespace posthorn::api {

namespace json = boost::json;
using domain::StatCounts;
using domain::StatKind;

namespace {

// A bucket's bound: always a whole hour, written to the second ("2026-11-01T00:00:00Z").
std::string stat_time(UnixMs t) {
    auto s = format_iso8601(t);
    if (s.size() > 5 && s.ends_with(".000Z")) s.replace(s.size() - 5, 5, "Z");
    return s;
}

json::object counts_json(const StatCounts& c) {
    return json::object{
        {"accepted", c[StatKind::accepted]},
        {"delivered", c[StatKind::delivered]},
        {"bounced", c.bounced()},
        {"bounced_by_type", json::object{{"hard", c[StatKind::bounced_hard]},
                                         {"soft", c[StatKind::bounced_soft]},
                                         {"block", c[StatKind::bounced_block]},
                                         {"undetermined", c[StatKind::bounced_undetermined]}}},
        {"complained", c[StatKind::complained]},
        {"failed", c[StatKind::failed]},
        {"blocked", c[StatKind::blocked]},
        {"opened", c[StatKind::opened]},
        {"clicked", c[StatKind::clicked]}};
}

std::optional<UnixMs> time_param(const http::Request& req, std::string_view name,
                                 std::optional<std::string>& error) {
    auto v = req.param(name);
    if (!v) return std::nullopt;
    auto t = parse_iso8601(*v);
    if (!t)
        error = std::string(name) +
                " must be an ISO 8601 time with its offset, e.g. 2026-11-01T00:00:00Z";
    return t;
}

}  // namespace

asio::awaitable<http::Response> get_stats(detail::Context ctx) {
    if (auto err = check_params(ctx.req, {"interval", "from", "to", "domain", "tag"}))
        co_return detail::validation_error(*err);

    auto interval = domain::StatInterval::day;
    if (auto v = ctx.req.param("interval")) {
        if (*v == "hour")
            interval = domain::StatInterval::hour;
        else if (*v != "day")
            co_return detail::validation_error("interval must be hour or day");
    }
    std::optional<std::string> bad;
    const auto from = time_param(ctx.req, "from", bad);
    if (bad) co_return detail::validation_error(*bad);
    const auto to = time_param(ctx.req, "to", bad);
    if (bad) co_return detail::validation_error(*bad);
    auto window = domain::stat_window(interval, from, to, ctx.deps.clock.now_ms());
    if (auto* e = std::get_if<domain::StatWindowError>(&window))
        co_return detail::validation_error(e->field + ": " + e->message);
    const auto w = std::get<domain::StatWindow>(window);

    // Which counters: the account's, one domain's or one tag's.
    std::string dimension;
    const auto own_domain = domain::stats_domain_of(ctx.key);
    // One dimension a question: the counters of a domain and a tag are apart (domain/stats.hpp).
    const auto tag_param = ctx.req.param("tag");
    if (tag_param && (ctx.req.param("domain") || own_domain))
        co_return detail::validation_error(
            own_domain ? "tag: a key tied to a domain reads that domain's statistics, not a tag's"
                       : "tag: give domain or tag, not both");
    if (tag_param) {
        const std::string_view v = *tag_param;
        const auto colon = v.find(':');
        if (colon == std::string_view::npos)
            co_return detail::validation_error("tag must be name:value, e.g. tag=campaign:spring");
        domain::Tag t{.name = std::string(v.substr(0, colon)),
                      .value = std::string(v.substr(colon + 1))};
        if (auto e = tag_part_error("tag: the name", t.name))
            co_return detail::validation_error(*e);
        if (auto e = tag_part_error("tag: the value", t.value))
            co_return detail::validation_error(*e);
        dimension = domain::tag_dimension(t);
    }
    if (auto v = ctx.req.param("domain")) {
        auto name = mail::normalize_domain(*v);
        if (auto* b = std::get_if<mail::BadDomain>(&name))
            co_return detail::validation_error("domain must be a domain name: " + b->reason);
        auto canonical = std::get<std::string>(std::move(name));
        auto account = ctx.account_id;
        auto found =
            co_await ctx.deps.domains.find_domain_by_name(std::move(account), std::move(canonical));
        if (!found) {
            if (found.error() == store::errc::not_found)
                co_return detail::not_found("domain not found");
            co_return detail::internal_error("read the domain", found.error());
        }
        if (own_domain && *own_domain != found->id)
            co_return detail::forbidden(
                "this key is tied to one domain and reads only that domain's statistics");
        dimension = domain::domain_dimension(found->id);
    } else if (own_domain) {
        dimension = domain::domain_dimension(*own_domain);
    }
    store::StatQuery query{.account_id = ctx.account_id,
                           .dimension = std::move(dimension),
                           .from = w.from,
                           .to = w.to,
                           .width = w.width};
    auto counts = co_await ctx.deps.stats.stat_counts(std::move(query));
    if (!counts) co_return detail::internal_error("read the statistics", counts.error());

    std::vector<StatCounts> buckets(static_cast<std::size_t>(w.buckets()));
    StatCounts totals;
    for (const auto& c : *counts) {
        const auto i = (c.bucket - w.from) / w.width;
        if (i < 0 || i >= w.buckets()) continue;
        const auto k = static_cast<std::size_t>(c.kind);
        buckets[static_cast<std::size_t>(i)].by_kind[k] += c.count;
        totals.by_kind[k] += c.count;
    }
    json::array out;
    out.reserve(buckets.size());
    for (std::size_t i = 0; i < buckets.size(); ++i) {
        auto o = counts_json(buckets[i]);
        o.emplace("start", stat_time(w.from + static_cast<UnixMs>(i) * w.width));
        out.push_back(std::move(o));
    }
    co_return detail::json(
        200, json::object{{"interval", interval == domain::StatInterval::hour ? "hour" : "day"},
                          {"from", stat_time(w.from)},
                          {"to", stat_time(w.to)},
                          {"totals", counts_json(totals)},
                          {"buckets", std::move(out)}});
}

}  // namespace posthorn::api
