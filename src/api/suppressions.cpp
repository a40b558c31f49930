#include "api/suppressions.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <variant>

#include "core/text.hpp"
#include "domain/events.hpp"
#include "domain/vocabulary.hpp"
#include "mail/address.hpp"

namespace posthorn::api {

namespace json = boost::json;
using detail::Context;

namespace {

constexpr std::string_view kReasons = "hard_bounce, complaint, manual or unsubscribe";

json::object to_json(const store::Suppression& s) {
    json::object o{{"email", s.address},
                   {"reason", domain::name(s.reason)},
                   {"email_id", nullptr},
                   {"created_at", format_iso8601(s.created_at)}};
    if (!s.email_id.empty()) o["email_id"] = s.email_id;
    return o;
}

// The address `text` names, as the list keeps it (lower-cased whole, as the claim compares
// it), read as the send path reads an address; or the 400 INVALID_EMAIL to answer.
std::variant<std::string, http::Response> address_of(std::string_view text) {
    auto m = mail::parse_mailbox(text);
    if (auto* bad = std::get_if<mail::BadAddress>(&m))
        return http::error_response(400, "INVALID_EMAIL", "email: " + bad->reason);
    return core::ascii_lower(std::get<mail::Mailbox>(m).address());
}

std::optional<domain::SuppressionReason> reason_of(std::string_view text) {
    return domain::from_name<domain::SuppressionReason>(text);
}

http::Response not_suppressed(const std::string& address) {
    return detail::not_found(address + " is not on the suppression list");
}

struct NewEntry {
    std::string address;
    domain::SuppressionReason reason = domain::SuppressionReason::manual;
};

// POST /v1/suppressions {"email", "reason"?}.
std::variant<NewEntry, http::Response> read_new_entry(const json::value& body) {
    if (!body.is_object()) return detail::validation_error("body must be a JSON object");
    NewEntry out;
    const json::value* email = nullptr;
    for (const auto& [key, value] : body.as_object()) {
        if (key == "email") {
            email = &value;
        } else if (key == "reason") {
            if (value.is_null()) continue;
            if (!value.is_string()) return detail::validation_error("reason must be a string");
            auto r = reason_of(value.as_string());
            if (!r) return detail::validation_error("reason must be " + std::string(kReasons));
            out.reason = *r;
        } else {
            return detail::validation_error("unknown field '" + std::string(key) + "'");
        }
    }
    if (!email || email->is_null()) return detail::validation_error("email is required");
    if (!email->is_string()) return detail::validation_error("email must be a string");
    auto address = address_of(email->as_string());
    if (auto* res = std::get_if<http::Response>(&address)) return std::move(*res);
    out.address = std::get<std::string>(std::move(address));
    return out;
}

}  // namespace

asio::awaitable<http::Response> list_suppressions(Context ctx) {
    auto paging = parse_paging(ctx.req, 20, "sort_order");
    if (auto* msg = std::get_if<std::string>(&paging)) co_return detail::validation_error(*msg);
    const auto& p = std::get<Paging>(paging);
    store::SuppressionQuery query{
        .account_id = ctx.account_id, .page = p.page, .limit = p.limit, .order = p.order};
    if (auto v = ctx.req.param("search"); v && !v->empty()) query.search = core::ascii_lower(*v);
    if (auto v = ctx.req.param("reason")) {
        query.reason = reason_of(*v);
        // An unknown reason is refused, never read as "any".
        if (!query.reason)
            co_return detail::validation_error("reason must be " + std::string(kReasons));
    }
    auto page = co_await ctx.deps.suppressions.list_suppressions(std::move(query));
    if (!page) co_return detail::internal_error("list suppressions", page.error());
    json::array data;
    for (const auto& s : page->items) data.push_back(to_json(s));
    co_return detail::json(200, json::object{{"data", std::move(data)},
                                             {"pagination", detail::pagination(p, page->total)}});
}

asio::awaitable<http::Response> get_suppression(Context ctx) {
    auto address = address_of(detail::param(ctx, "email"));
    if (auto* res = std::get_if<http::Response>(&address)) co_return std::move(*res);
    auto email = std::get<std::string>(std::move(address));
    auto account = ctx.account_id;
    auto s = co_await ctx.deps.suppressions.find_suppression(std::move(account), email);
    if (!s) {
        if (s.error() == store::errc::not_found) co_return not_suppressed(email);
        co_return detail::internal_error("read the suppression", s.error());
    }
    co_return detail::json(200, to_json(*s));
}

asio::awaitable<http::Response> add_suppression(Context ctx) {
    auto read = read_new_entry(ctx.body);
    if (auto* res = std::get_if<http::Response>(&read)) co_return std::move(*res);
    auto& n = std::get<NewEntry>(read);
    auto add = domain::suppression_added(store::Suppression{.account_id = ctx.account_id,
                                                            .address = n.address,
                                                            .reason = n.reason,
                                                            .created_at = ctx.deps.clock.now_ms()});
    auto r = co_await ctx.deps.suppressions.add_suppression(std::move(add));
    if (!r) co_return detail::internal_error("add the suppression", r.error());
    // Already there: the entry stays as it was (its reason and its cause are history), and
    // the answer says so with the entry, as a domain that exists already is a conflict.
    if (!r->added)
        co_return http::error_response(409, "CONFLICT",
                                       n.address + " is already on the suppression list (" +
                                           std::string(domain::name(r->entry.reason)) + ")");
    co_return detail::json(200, to_json(r->entry));
}

asio::awaitable<http::Response> remove_suppression(Context ctx) {
    auto address = address_of(detail::param(ctx, "email"));
    if (auto* res = std::get_if<http::Response>(&address)) co_return std::move(*res);
    auto email = std::get<std::string>(std::move(address));
    const auto now = ctx.deps.clock.now_ms();
    store::SuppressionRemoval removal = [now](const store::Suppression& s) {
        return domain::suppression_removed(s, now);
    };
    auto account = ctx.account_id;
    auto r = co_await ctx.deps.suppressions.remove_suppression(std::move(account), email,
                                                               std::move(removal));
    if (!r) {
        if (r.error() == store::errc::not_found) co_return not_suppressed(email);
        co_return detail::internal_error("remove the suppression", r.error());
    }
    co_return detail::json(200, json::object{{"email", email}, {"deleted", true}});
}

}  // namespace posthorn::api
