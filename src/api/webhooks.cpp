#include "api/webhooks.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <optional>

#include "api/bodies.hpp"
#include "core/id.hpp"
#include "crypto/keys.hpp"
#include "domain/vocabulary.hpp"

namespace posthorn::api {

namespace json = boost::json;
using detail::Context;

namespace {

constexpr std::size_t kSecretBytes = 24;  // Standard Webhooks: 24 to 64 bytes
// After a rotation the replaced secret signs too for this long (a second signature in the
// webhook-signature header), so that receivers can move to the new one without losing a call.
constexpr UnixMs kPreviousSecretMs = 24LL * 3600 * 1000;

std::string shown_secret(const std::string& raw) { return "whsec_" + crypto::base64_encode(raw); }

json::object to_json(const store::Webhook& w) {
    json::array events;
    for (const auto e : w.events) events.emplace_back(domain::name(e));
    return {{"id", w.id},
            {"url", w.url},
            {"status", w.active},
            {"events", std::move(events)},
            {"created_at", format_iso8601(w.created_at)}};
}

// What a rotation answers: the webhook with its new secret, and until when the one it
// replaced still signs.
json::object rotated_json(const store::Webhook& w) {
    auto body = to_json(w);
    body["secret"] = shown_secret(w.secret);
    body["previous_secret_expires_at"] = nullptr;
    if (w.previous_secret_until)
        body["previous_secret_expires_at"] = format_iso8601(*w.previous_secret_until);
    return body;
}

http::Response not_found_or_error(const error_code& ec) {
    if (ec == store::errc::not_found) return detail::not_found("webhook not found");
    return detail::internal_error("read the webhook", ec);
}

}  // namespace

asio::awaitable<http::Response> create_webhook(Context ctx) {
    auto read = read_webhook_fields(ctx.body, ctx.deps.allow_private_webhooks);
    if (auto* bad = std::get_if<BodyError>(&read)) co_return detail::validation_error(bad->message);
    auto& p = std::get<store::WebhookPatch>(read);
    if (!p.url) co_return detail::validation_error("url is required");
    if (!p.events) co_return detail::validation_error("events is required");
    const auto now = ctx.deps.clock.now_ms();
    store::Webhook w{.id = new_id("wh_", now),
                     .account_id = ctx.account_id,
                     .url = std::move(*p.url),
                     .events = std::move(*p.events),
                     .active = p.active.value_or(true),
                     .secret = crypto::random_string(kSecretBytes),
                     .created_at = now,
                     .updated_at = now};
    auto body = to_json(w);
    body["secret"] = shown_secret(w.secret);
    auto r = co_await ctx.deps.webhooks.create_webhook(std::move(w));
    if (!r) co_return detail::internal_error("create the webhook", r.error());
    co_return detail::json(200, body);
}

asio::awaitable<http::Response> list_webhooks(Context ctx) {
    if (auto err = check_params(ctx.req, {"page", "limit", "sort_order"}))
        co_return detail::validation_error(*err);
    auto paging = parse_paging(ctx.req, 20, "sort_order");
    if (auto* msg = std::get_if<std::string>(&paging)) co_return detail::validation_error(*msg);
    const auto& p = std::get<Paging>(paging);
    store::ListQuery query{
        .account_id = ctx.account_id, .page = p.page, .limit = p.limit, .order = p.order};
    auto page = co_await ctx.deps.webhooks.list_webhooks(std::move(query));
    if (!page) co_return detail::internal_error("list webhooks", page.error());
    json::array data;
    for (const auto& w : page->items) data.push_back(to_json(w));
    co_return detail::json(200, json::object{{"data", std::move(data)},
                                             {"pagination", detail::pagination(p, page->total)}});
}

asio::awaitable<http::Response> get_webhook(Context ctx) {
    auto id = detail::param(ctx, "id");
    auto w = co_await ctx.deps.webhooks.find_webhook(ctx.account_id, std::move(id));
    if (!w) co_return not_found_or_error(w.error());
    co_return detail::json(200, to_json(*w));
}

asio::awaitable<http::Response> update_webhook(Context ctx) {
    auto read = read_webhook_fields(ctx.body, ctx.deps.allow_private_webhooks);
    if (auto* bad = std::get_if<BodyError>(&read)) co_return detail::validation_error(bad->message);
    auto& p = std::get<store::WebhookPatch>(read);
    auto id = detail::param(ctx, "id");
    auto w = co_await ctx.deps.webhooks.update_webhook(ctx.account_id, std::move(id), std::move(p),
                                                       ctx.deps.clock.now_ms());
    if (!w) co_return not_found_or_error(w.error());
    co_return detail::json(200, to_json(*w));
}

asio::awaitable<http::Response> delete_webhook(Context ctx) {
    auto id = detail::param(ctx, "id");
    auto account = ctx.account_id;
    auto r = co_await ctx.deps.webhooks.delete_webhook(std::move(account), id);
    if (!r) co_return not_found_or_error(r.error());
    co_return detail::json(200, json::object{{"id", id}, {"deleted", true}});
}

asio::awaitable<http::Response> list_webhook_deliveries(Context ctx) {
    if (auto err = check_params(ctx.req, {"page", "limit", "sort_order"}))
        co_return detail::validation_error(*err);
    auto paging = parse_paging(ctx.req, 20, "sort_order");
    if (auto* msg = std::get_if<std::string>(&paging)) co_return detail::validation_error(*msg);
    const auto& p = std::get<Paging>(paging);
    // The store lists attempts newest first only: asc would be silently the other order.
    if (p.order != store::SortOrder::desc)
        co_return detail::validation_error(
            "sort_order: the deliveries are listed newest first only (desc)");
    auto id = detail::param(ctx, "id");
    auto page = co_await ctx.deps.webhooks.list_webhook_attempts(ctx.account_id, std::move(id),
                                                                 p.page, p.limit);
    if (!page) co_return not_found_or_error(page.error());
    json::array data;
    for (const auto& a : page->items) {
        json::object o{{"event_id", a.event_id},
                       {"event", domain::name(a.event_kind)},
                       {"attempt", a.attempt},
                       {"status_code", nullptr},
                       {"error", nullptr},
                       {"duration_ms", a.duration_ms},
                       {"created_at", format_iso8601(a.created_at)}};
        if (a.status_code) o["status_code"] = *a.status_code;
        if (a.error) o["error"] = *a.error;
        data.push_back(std::move(o));
    }
    co_return detail::json(200, json::object{{"data", std::move(data)},
                                             {"pagination", detail::pagination(p, page->total)}});
}

asio::awaitable<http::Response> rotate_webhook_secret(Context ctx) {
    if (!ctx.body.is_null() && !(ctx.body.is_object() && ctx.body.as_object().empty()))
        co_return detail::validation_error("rotate-secret takes no body");
    const auto now = ctx.deps.clock.now_ms();
    auto id = detail::param(ctx, "id");
    auto account = ctx.account_id;
    auto secret = crypto::random_string(kSecretBytes);
    auto w = co_await ctx.deps.webhooks.rotate_webhook_secret(
        std::move(account), std::move(id), std::move(secret), now + kPreviousSecretMs, now);
    if (!w) co_return not_found_or_error(w.error());
    co_return detail::json(200, rotated_json(*w));
}

asio::awaitable<http::Response> replay_webhook_deliveries(Context ctx) {
    auto read = read_webhook_replay(ctx.body);
    if (auto* bad = std::get_if<BodyError>(&read)) co_return detail::validation_error(bad->message);
    auto what = std::get<store::WebhookReplay>(std::move(read));
    const bool one = what.event_id.has_value();
    auto id = detail::param(ctx, "id");
    auto account = ctx.account_id;
    auto n = co_await ctx.deps.webhooks.replay_webhook_deliveries(
        std::move(account), id, std::move(what), ctx.deps.clock.now_ms());
    if (!n) {
        if (n.error() == store::errc::not_found)
            co_return detail::not_found(one ? "webhook or delivery not found (the webhook has no "
                                              "delivery of that event)"
                                            : "webhook not found");
        co_return detail::internal_error("replay the deliveries", n.error());
    }
    co_return detail::json(200, json::object{{"id", id}, {"replayed", *n}});
}

}  // namespace posthorn::api
