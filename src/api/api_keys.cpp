#include "api/api_keys.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <map>
#include <memory>

#include "api/bodies.hpp"
#include "api/keys.hpp"
#include "core/id.hpp"
#include "mail/domain_name.hpp"

namespace posthorn::api {

namespace json = boost::json;
using detail::Context;

namespace {

// A key as the API shows it: never the key itself, nor its hash.
json::object to_json(const store::ApiKey& k, const std::string& domain_name) {
    return {{"id", k.id},
            {"name", k.name},
            {"prefix", k.prefix},
            {"permission", domain::name(k.permission)},
            {"domain_id", k.domain_id ? json::value(*k.domain_id) : nullptr},
            {"domain", domain_name.empty() ? json::value(nullptr) : json::value(domain_name)},
            {"test", k.test},
            {"created_at", format_iso8601(k.created_at)},
            {"revoked_at", k.revoked_at ? json::value(format_iso8601(*k.revoked_at)) : nullptr}};
}

// The account's domain a key names: its dom_ id or its name.
asio::awaitable<Result<store::Domain>> find_domain(store::DomainStore& domains,
                                                   std::string account_id, std::string ident) {
    if (is_id(ident, "dom_"))
        co_return co_await domains.find_domain_by_id(std::move(account_id), std::move(ident));
    auto name = mail::normalize_domain(ident);
    if (std::holds_alternative<mail::BadDomain>(name)) co_return store::errc::not_found;
    co_return co_await domains.find_domain_by_name(std::move(account_id),
                                                   std::get<std::string>(std::move(name)));
}

// The names of the domains `keys` are tied to, by id (a domain not found: no name).
asio::awaitable<Result<std::map<std::string, std::string>>> domain_names(
    store::DomainStore& domains, std::string account_id, std::vector<store::ApiKey> keys) {
    std::map<std::string, std::string> names;
    for (const auto& k : keys) {
        if (!k.domain_id || names.contains(*k.domain_id)) continue;
        auto account = account_id;
        auto id = *k.domain_id;
        auto d = co_await domains.find_domain_by_id(std::move(account), std::move(id));
        if (!d && d.error() != store::errc::not_found) co_return d.error();
        names[*k.domain_id] = d ? d->name : std::string();
    }
    co_return names;
}

}  // namespace

asio::awaitable<http::Response> create_api_key(Context ctx) {
    auto read = read_api_key_create(ctx.body);
    if (auto* bad = std::get_if<BodyError>(&read)) co_return detail::validation_error(bad->message);
    auto& req = std::get<ApiKeyCreate>(read);
    std::string domain_name;
    std::optional<std::string> domain_id;
    if (req.domain) {
        auto account = ctx.account_id;
        auto ident = *req.domain;
        auto d = co_await find_domain(ctx.deps.domains, std::move(account), std::move(ident));
        if (!d) {
            if (d.error() == store::errc::not_found)
                co_return detail::not_found("domain " + *req.domain + " not found");
            co_return detail::internal_error("read the domain", d.error());
        }
        domain_id = d->id;
        domain_name = d->name;
    }
    const auto now = ctx.deps.clock.now_ms();
    auto made = generate_api_key();
    store::ApiKey k{.id = new_id("key_", now),
                    .account_id = ctx.account_id,
                    .prefix = made.prefix,
                    .hash = made.hash,
                    .created_at = now,
                    .name = std::move(req.name),
                    .permission = req.permission,
                    .domain_id = std::move(domain_id),
                    .test = req.test};
    auto body = to_json(k, domain_name);
    body["key"] = made.key;  // shown here, once: only its hash is kept
    auto r = co_await ctx.deps.accounts.create_api_key(std::move(k));
    if (!r) co_return detail::internal_error("create the API key", r.error());
    co_return detail::json(201, body);
}

asio::awaitable<http::Response> list_api_keys(Context ctx) {
    auto paging = parse_paging(ctx.req, 20, "sort_order");
    if (auto* msg = std::get_if<std::string>(&paging)) co_return detail::validation_error(*msg);
    const auto& p = std::get<Paging>(paging);
    // An account's keys are few: read whole, in the order of their ids, and paged here.
    auto account = ctx.account_id;
    auto all = co_await ctx.deps.accounts.list_api_keys(std::move(account));
    if (!all) co_return detail::internal_error("list API keys", all.error());
    if (p.order == store::SortOrder::desc) std::reverse(all->begin(), all->end());
    const auto total = static_cast<std::int64_t>(all->size());
    const auto first = std::min(total, (p.page - 1) * p.limit);
    const auto last = std::min(total, first + p.limit);
    std::vector<store::ApiKey> page(all->begin() + first, all->begin() + last);
    auto account2 = ctx.account_id;
    auto keys = page;
    auto names = co_await domain_names(ctx.deps.domains, std::move(account2), std::move(keys));
    if (!names) co_return detail::internal_error("read the keys' domains", names.error());
    json::array data;
    for (const auto& k : page)
        data.push_back(to_json(k, k.domain_id ? (*names)[*k.domain_id] : std::string()));
    co_return detail::json(
        200, json::object{{"data", std::move(data)}, {"pagination", detail::pagination(p, total)}});
}

asio::awaitable<http::Response> revoke_api_key(Context ctx) {
    auto id = detail::param(ctx, "id");
    if (!is_id(id, "key_")) co_return detail::not_found("API key not found");
    // The rule runs inside the store's write, on the account's keys as they stand; its
    // message is kept for the answer (the write is over before it is read).
    auto refusal = std::make_shared<std::optional<std::string>>();
    store::KeyRevocationCheck may_revoke = [refusal](const store::ApiKey& key,
                                                     const std::vector<store::ApiKey>& all) {
        *refusal = domain::revocation_refusal(key, all);
        return !refusal->has_value();
    };
    auto account = ctx.account_id;
    auto r = co_await ctx.deps.accounts.revoke_api_key_if(
        std::move(account), std::move(id), ctx.deps.clock.now_ms(), std::move(may_revoke));
    if (!r) {
        if (r.error() == store::errc::not_found) co_return detail::not_found("API key not found");
        if (r.error() == store::errc::conflict)
            co_return http::error_response(409, "CONFLICT", refusal->value_or("conflict"));
        co_return detail::internal_error("revoke the API key", r.error());
    }
    std::string domain_name;
    if (r->domain_id) {
        auto account2 = ctx.account_id;
        std::vector<store::ApiKey> one{*r};
        auto names = co_await domain_names(ctx.deps.domains, std::move(account2), std::move(one));
        if (names) domain_name = (*names)[*r->domain_id];
    }
    co_return detail::json(200, to_json(*r, domain_name));
}

}  // namespace posthorn::api
