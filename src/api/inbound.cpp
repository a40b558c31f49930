#include "api/inbound.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include <variant>

#include "core/blocking.hpp"
#include "mail/parse.hpp"

namespace posthorn::api {

namespace json = boost::json;
using detail::Context;

namespace {

json::value or_null(const std::string& s) {
    return s.empty() ? json::value(nullptr) : json::value(s);
}

json::object summary(const store::InboundEmail& e) {
    json::array attachments;
    for (const auto& a : e.attachments)
        attachments.push_back(json::object{{"index", a.index},
                                           {"filename", or_null(a.filename)},
                                           {"content_type", a.content_type},
                                           {"size", a.size},
                                           {"content_id", or_null(a.content_id)}});
    return {{"id", e.id},
            {"from_email", e.from_email},
            {"from_name", or_null(e.from_name)},
            {"to_address", e.to_address},
            {"subject", e.subject},
            {"reply_to", or_null(e.reply_to)},
            {"cc", json::parse(e.cc_json)},
            {"bcc", json::parse(e.bcc_json)},
            {"authentication", json::parse(e.authentication_json)},
            {"received_at", format_iso8601(e.received_at)},
            {"attachments", std::move(attachments)}};
}

}  // namespace

asio::awaitable<http::Response> list_inbound(Context ctx) {
    if (auto err = check_params(ctx.req, {"page", "limit", "sort_by", "sort_order", "search",
                                          "start_date", "end_date"}))
        co_return detail::validation_error(*err);
    auto paging = parse_paging(ctx.req, 20, "sort_order");
    if (auto* msg = std::get_if<std::string>(&paging)) co_return detail::validation_error(*msg);
    const auto& p = std::get<Paging>(paging);
    store::SearchQuery q{.account_id = ctx.account_id,
                         .page = p.page,
                         .limit = p.limit,
                         .sort_by = "received_at",
                         .order = p.order};
    if (auto err = parse_sort_by(ctx.req, {"received_at", "subject", "from_email"}, q.sort_by))
        co_return detail::validation_error(*err);
    if (auto err = parse_date_bounds(ctx.req, q.start, q.end))
        co_return detail::validation_error(*err);
    if (auto s = ctx.req.param("search"); s && !s->empty()) q.search = std::string(*s);
    auto page = co_await ctx.deps.inbound.list_inbound(std::move(q));
    if (!page) co_return detail::internal_error("list inbound email", page.error());
    json::array data;
    for (const auto& e : page->items) data.push_back(summary(e));
    co_return detail::json(200, json::object{{"data", std::move(data)},
                                             {"pagination", detail::pagination(p, page->total)}});
}

asio::awaitable<mail::ParsedMessage> parse_off_thread(asio::any_io_executor pool, std::string raw) {
    auto work = [raw = std::move(raw)] { return mail::parse_message(raw); };
    co_return co_await core::run_blocking(std::move(pool), std::move(work));
}

namespace {

// One inbound email with its raw message parsed (the text, HTML, headers and attachment
// contents are not stored apart from it), or the error response.
struct Parsed {
    store::InboundEmail email;
    mail::ParsedMessage message;
};

asio::awaitable<std::variant<Parsed, http::Response>> read_parsed(const Context& ctx) {
    auto account = ctx.account_id;
    auto id = detail::param(ctx, "id");
    auto e = co_await ctx.deps.inbound.find_inbound(std::move(account), std::move(id));
    if (!e) {
        if (e.error() == store::errc::not_found)
            co_return detail::not_found("inbound email not found");
        co_return detail::internal_error("read the inbound email", e.error());
    }
    auto pool = ctx.deps.blocking;
    auto message = co_await parse_off_thread(std::move(pool), std::move(e->raw));
    co_return Parsed{std::move(*e), std::move(message)};
}

}  // namespace

asio::awaitable<http::Response> get_inbound(Context ctx) {
    auto read = co_await read_parsed(ctx);
    if (auto* res = std::get_if<http::Response>(&read)) co_return std::move(*res);
    auto& [email, message] = std::get<Parsed>(read);
    auto o = summary(email);
    o["text"] = message.text ? json::value(*message.text) : json::value(nullptr);
    o["html"] = message.html ? json::value(*message.html) : json::value(nullptr);
    json::array headers;
    for (const auto& [name, value] : message.headers)
        headers.push_back(json::object{{"name", name}, {"value", value}});
    o["headers"] = std::move(headers);
    co_return detail::json(200, o);
}

asio::awaitable<http::Response> get_inbound_attachment(Context ctx) {
    auto index = parse_int(detail::param(ctx, "index"));
    if (!index || *index < 0 || *index > 100000)
        co_return detail::not_found("attachment not found");
    auto read = co_await read_parsed(ctx);
    if (auto* res = std::get_if<http::Response>(&read)) co_return std::move(*res);
    auto& [email, message] = std::get<Parsed>(read);
    const auto i = static_cast<std::size_t>(*index);
    if (i >= message.attachments.size()) co_return detail::not_found("attachment not found");
    auto& a = message.attachments[i];
    http::Response res{.status = 200, .body = std::move(a.content), .content_type = a.content_type};
    std::string safe;  // a filename fit for a quoted-string
    for (char c : a.filename)
        if (c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20) safe.push_back(c);
    res.headers.emplace_back(
        "Content-Disposition",
        "attachment" + (safe.empty() ? std::string() : "; filename=\"" + safe + "\""));
    res.headers.emplace_back("X-Content-Type-Options", "nosniff");
    co_return res;
}

}  // namespace posthorn::api
