#include "api/email_content.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include <optional>
#include <variant>

#include "api/emails.hpp"
#include "api/inbound.hpp"
#include "core/text.hpp"

namespace posthorn::api {

namespace json = boost::json;
using detail::Context;

namespace {

// The email the request names, read for the key (email_for_key), or the answer to give.
asio::awaitable<std::variant<store::Email, http::Response>> email_of(const Context& ctx) {
    auto id = detail::param(ctx, "id");
    std::string verb = "read";  // named: GCC 12 and a coroutine's by-value temporaries
    co_return co_await email_for_key(ctx, std::move(id), std::move(verb));
}

// The stored message of `e`: nullopt when none is kept, or the error answer.
asio::awaitable<std::variant<std::optional<std::string>, http::Response>> raw_of(
    const Context& ctx, const store::Email& e) {
    auto account = e.account_id;
    auto id = e.id;
    auto raw = co_await ctx.deps.emails.email_raw(std::move(account), std::move(id));
    if (!raw && raw.error() == store::errc::not_found) co_return std::optional<std::string>();
    if (!raw) co_return detail::internal_error("read the email's message", raw.error());
    co_return std::optional<std::string>(std::move(*raw));
}

// Its HTML and text parts (mail::parse_message: decoded, converted to UTF-8), off the network
// thread; both nullopt when no message is kept.
struct Parts {
    std::optional<std::string> html, text;
};
asio::awaitable<std::variant<Parts, http::Response>> parts_of(const Context& ctx) {
    auto found = co_await email_of(ctx);
    if (auto* res = std::get_if<http::Response>(&found)) co_return std::move(*res);
    auto raw = co_await raw_of(ctx, std::get<store::Email>(found));
    if (auto* res = std::get_if<http::Response>(&raw)) co_return std::move(*res);
    auto& message = std::get<std::optional<std::string>>(raw);
    if (!message) co_return Parts{};
    auto parsed = co_await parse_off_thread(ctx.deps.blocking, std::move(*message));
    co_return Parts{.html = std::move(parsed.html), .text = std::move(parsed.text)};
}

json::value string_or_null(const std::optional<std::string>& s) {
    return s ? json::value(*s) : json::value(nullptr);
}

}  // namespace

std::string preview_html(const std::optional<std::string>& html,
                         const std::optional<std::string>& text) {
    if (html) return *html;
    std::string out = "<!doctype html><meta charset=\"utf-8\"><pre>";
    if (text) out += core::html_escape(*text);
    out += "</pre>";
    return out;
}

asio::awaitable<http::Response> get_email_events(Context ctx) {
    auto found = co_await email_of(ctx);
    if (auto* res = std::get_if<http::Response>(&found)) co_return std::move(*res);
    const auto& e = std::get<store::Email>(found);
    auto account = e.account_id;
    auto id = e.id;
    auto events = co_await ctx.deps.emails.email_events(std::move(account), std::move(id));
    if (!events) co_return detail::internal_error("read the email's events", events.error());
    json::array data;
    data.reserve(events->size());
    for (const auto& ev : *events) {
        boost::system::error_code ec;
        auto payload = json::parse(ev.data_json, ec);
        if (ec) payload = json::object{};  // never written so; shown empty rather than failed
        data.push_back(json::object{{"id", ev.id},
                                    {"type", domain::name(ev.kind)},
                                    {"created_at", format_iso8601(ev.created_at)},
                                    {"data", std::move(payload)}});
    }
    co_return detail::json(200, json::object{{"data", std::move(data)}});
}

asio::awaitable<http::Response> get_email_content(Context ctx) {
    auto parts = co_await parts_of(ctx);
    if (auto* res = std::get_if<http::Response>(&parts)) co_return std::move(*res);
    const auto& p = std::get<Parts>(parts);
    co_return detail::json(
        200, json::object{{"html", string_or_null(p.html)}, {"text", string_or_null(p.text)}});
}

asio::awaitable<http::Response> get_email_raw(Context ctx) {
    auto found = co_await email_of(ctx);
    if (auto* res = std::get_if<http::Response>(&found)) co_return std::move(*res);
    const auto& e = std::get<store::Email>(found);
    auto raw = co_await raw_of(ctx, e);
    if (auto* res = std::get_if<http::Response>(&raw)) co_return std::move(*res);
    auto& message = std::get<std::optional<std::string>>(raw);
    if (!message) co_return detail::not_found("the email's message is not kept");
    http::Response res{
        .status = 200, .body = std::move(*message), .content_type = "message/rfc822"};
    // The id is em_ and 26 letters and digits (core/id.hpp): nothing to quote.
    res.headers.emplace_back("Content-Disposition", "attachment; filename=\"" + e.id + ".eml\"");
    res.headers.emplace_back("X-Content-Type-Options", "nosniff");
    co_return res;
}

asio::awaitable<http::Response> get_email_preview(Context ctx) {
    auto parts = co_await parts_of(ctx);
    if (auto* res = std::get_if<http::Response>(&parts)) co_return std::move(*res);
    const auto& p = std::get<Parts>(parts);
    http::Response res{.status = 200,
                       .body = preview_html(p.html, p.text),
                       .content_type = "text/html; charset=utf-8"};
    res.headers.emplace_back("Content-Security-Policy", std::string(kPreviewPolicy));
    res.headers.emplace_back("X-Content-Type-Options", "nosniff");
    co_return res;
}

}  // namespace posthorn::api
