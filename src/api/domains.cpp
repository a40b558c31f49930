#include "api/domains.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

#include "api/bodies.hpp"
#include "core/blocking.hpp"
#include "core/id.hpp"
#include "core/log.hpp"
#include "core/text.hpp"
#include "crypto/keys.hpp"
#include "dns/errors.hpp"
#include "domain/events.hpp"
#include "domain/sending_domain.hpp"
#include "mail/domain_name.hpp"

namespace posthorn::api {

namespace json = boost::json;
using detail::Context;

namespace {

// Two selectors, so that a key can be rotated: ph1 signs, ph2 waits (DESIGN §6).
constexpr std::array<std::string_view, 2> kSelectors = {"ph1", "ph2"};
constexpr int kRsaBits = 2048;
constexpr std::string_view kTokenAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789";

std::string strip_dot(std::string s) {
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

std::string new_token() {
    // 16 characters of [a-z0-9], starting with a letter: a DNS label unique to the domain.
    std::string raw = crypto::random_string(16);
    std::string t;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        const auto b = static_cast<unsigned char>(raw[i]);
        t.push_back(i == 0 ? kTokenAlphabet[b % 26] : kTokenAlphabet[b % kTokenAlphabet.size()]);
    }
    return t;
}

json::object record(std::string_view type, std::string_view host, std::string_view value) {
    return {{"type", type}, {"host", host}, {"value", value}};
}

// The custom tracking host's record: no status until it is verified.
json::object tracking_record(const DomainPolicy& p, const std::string& name,
                             const std::string& label) {
    return record("CNAME", label + "." + name, p.tracking_target);
}

// The return path's record (docs/domains.md#return-path): <label>.<domain> → the operator's
// bounce host. Not one of the records that decide the domain's status.
json::object return_path_record(const DomainPolicy& p, const std::string& name,
                                const std::string& label) {
    return record("CNAME", label + "." + name, p.return_path_target);
}

// The records with a return-path record for the domain's current label: a domain made
// before return paths (or whose label changed meanwhile) is given a fresh, unchecked one.
void ensure_return_path(json::object& records, const DomainPolicy& p, const store::Domain& d) {
    const auto host = d.return_path_label + "." + d.name;
    if (const auto* rp = records.if_contains("return_path"); rp && rp->is_object())
        if (const auto* h = rp->as_object().if_contains("host");
            h && h->is_string() && h->as_string() == host)
            return;
    records["return_path"] = return_path_record(p, d.name, d.return_path_label);
}

json::object initial_records(const DomainPolicy& p, const std::string& name,
                             const std::string& token, const std::string& tracking_label,
                             const std::string& return_path_label) {
    json::array dkim;
    for (auto sel : kSelectors) {
        auto r = record("CNAME", std::string(sel) + "._domainkey." + name,
                        std::string(sel) + "." + token + "." + p.dkim_zone);
        r["selector"] = sel;
        dkim.push_back(std::move(r));
    }
    auto inbound = record("MX", name, p.inbound_mx);
    inbound["priority"] = 10;
    return {{"dkim", std::move(dkim)},
            {"spf", record("TXT", name, "v=spf1 include:" + p.spf_include + " ~all")},
            {"dmarc", record("TXT", "_dmarc." + name, "v=DMARC1; p=none;")},
            {"inbound", std::move(inbound)},
            {"tracking", tracking_record(p, name, tracking_label)},
            {"return_path", return_path_record(p, name, return_path_label)}};
}

// Each DKIM record says what its selector's key does: ACTIVE (signs), PENDING (a rotation's
// new key, waiting for the operator's zone) or INACTIVE. Not stored: it follows the domain.
void mark_dkim_states(json::object& records, const store::Domain& d) {
    auto* dkim = records.if_contains("dkim");
    if (dkim == nullptr || !dkim->is_array()) return;
    for (auto& v : dkim->as_array()) {
        auto* rec = v.if_object();
        if (rec == nullptr || !rec->contains("selector")) continue;
        const auto* sel = (*rec)["selector"].if_string();
        if (sel == nullptr) continue;
        (*rec)["state"] = *sel == d.dkim_selector  ? "ACTIVE"
                          : *sel == d.dkim_pending ? "PENDING"
                                                   : "INACTIVE";
    }
}

json::object dkim_json(const store::Domain& d) {
    json::object o{{"active_selector", d.dkim_selector},
                   {"rotation", d.dkim_pending.empty() ? "NONE" : "PENDING"}};
    o["pending_selector"] =
        d.dkim_pending.empty() ? json::value(nullptr) : json::value(d.dkim_pending);
    o["rotated_at"] = d.dkim_rotated_at ? json::value(format_iso8601(*d.dkim_rotated_at)) : nullptr;
    return o;
}

json::object to_json(const store::Domain& d, const DomainPolicy& p) {
    json::object records = json::parse(d.records_json).as_object();
    mark_dkim_states(records, d);
    ensure_return_path(records, p, d);
    json::object o{{"id", d.id},
                   {"domain", d.name},
                   {"status", domain::name(d.status)},
                   {"config", {{"sending", d.sending}, {"inbound", d.inbound}}},
                   {"tracking",
                    {{"open_tracking", d.open_tracking},
                     {"click_tracking", d.click_tracking},
                     {"label", d.tracking_label}}},
                   {"return_path",
                    {{"label", d.return_path_label},
                     {"host", d.return_path_label + "." + d.name},
                     {"verified", d.return_path_verified}}},
                   {"records", std::move(records)},
                   {"created_at", format_iso8601(d.created_at)}};
    o["last_checked_at"] =
        d.last_checked_at ? json::value(format_iso8601(*d.last_checked_at)) : nullptr;
    o["verified_at"] = d.verified_at ? json::value(format_iso8601(*d.verified_at)) : nullptr;
    o["dkim"] = dkim_json(d);
    return o;
}

// The domain named by the {identifier} placeholder: a dom_ id or a domain name, always
// within the caller's account (another account's domain is not found).
asio::awaitable<Result<store::Domain>> find(const Context& ctx) {
    const auto ident = detail::param(ctx, "identifier");
    if (is_id(ident, "dom_"))
        co_return co_await ctx.deps.domains.find_domain_by_id(ctx.account_id, ident);
    auto name = mail::normalize_domain(ident);
    if (std::holds_alternative<mail::BadDomain>(name)) co_return store::errc::not_found;
    co_return co_await ctx.deps.domains.find_domain_by_name(ctx.account_id,
                                                            std::get<std::string>(name));
}

http::Response not_found_or_error(const error_code& ec) {
    if (ec == store::errc::not_found) return detail::not_found("domain not found");
    return detail::internal_error("read the domain", ec);
}

// ---- verification ----

enum class Check { verified, not_found, mismatch, error };

const char* check_name(Check c) {
    switch (c) {
        case Check::verified:
            return "VERIFIED";
        case Check::not_found:
            return "NOT_FOUND";
        case Check::mismatch:
            return "MISMATCH";
        case Check::error:
            return "ERROR";
    }
    return "ERROR";
}

struct Lookup {
    Check check = Check::error;
    json::array found;  // what DNS answered
    std::string error;  // for Check::error
};

bool starts_with_ci(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() &&
           core::ascii_lower(std::string(s.substr(0, prefix.size()))) == prefix;
}

bool spf_includes(std::string_view spf, const std::string& include) {
    const auto want = "include:" + core::ascii_lower(include);
    std::string text = core::ascii_lower(std::string(spf));
    std::size_t pos = 0;
    while (pos < text.size()) {
        const auto end = text.find_first_of(" \t", pos);
        auto term = text.substr(pos, end - pos);
        if (!term.empty() && (term.front() == '+')) term.erase(0, 1);
        if (term == want || term == want + ".") return true;
        if (end == std::string::npos) break;
        pos = end + 1;
    }
    return false;
}

template <class T>
Lookup failed(const Result<T>& r, std::string_view what) {
    Lookup l;
    if (dns::is_not_found(r.error())) {
        l.check = Check::not_found;
    } else {
        l.check = Check::error;
        l.error = std::string(what) + ": " + r.error().message();
    }
    return l;
}

asio::awaitable<Lookup> check_cname(dns::Resolver& dns, std::string host, std::string want) {
    auto r = co_await dns.cname(host);
    if (!r) co_return failed(r, "CNAME " + host);
    Lookup l{.check = Check::mismatch};
    for (auto& t : *r) {
        l.found.emplace_back(t);
        if (core::ascii_lower(strip_dot(t)) == core::ascii_lower(want)) l.check = Check::verified;
    }
    co_return l;
}

// kind: "spf" or "dmarc"
asio::awaitable<Lookup> check_txt(dns::Resolver& dns, std::string host, std::string kind,
                                  std::string spf_include) {
    auto r = co_await dns.txt(host);
    if (!r) co_return failed(r, "TXT " + host);
    Lookup l{.check = Check::not_found};
    for (auto& t : *r) {
        if (kind == "spf" && starts_with_ci(t, "v=spf1")) {
            l.found.emplace_back(t);
            // RFC 7208 §4.5: two SPF records are a permanent error, whatever they say.
            l.check = l.found.size() > 1             ? Check::mismatch
                      : spf_includes(t, spf_include) ? Check::verified
                                                     : Check::mismatch;
        } else if (kind == "dmarc" && starts_with_ci(t, "v=dmarc1")) {
            l.found.emplace_back(t);
            l.check = Check::verified;
        }
    }
    co_return l;
}

asio::awaitable<Lookup> check_mx(dns::Resolver& dns, std::string host, std::string want) {
    auto r = co_await dns.mx(host);
    if (!r) co_return failed(r, "MX " + host);
    Lookup l{.check = Check::mismatch};
    for (auto& mx : *r) {
        l.found.emplace_back(mx.host);
        if (core::ascii_lower(strip_dot(mx.host)) == core::ascii_lower(want))
            l.check = Check::verified;
    }
    co_return l;
}

void mark(json::object& rec, const Lookup& l) {
    rec["status"] = check_name(l.check);
    rec["found"] = l.found;
    if (l.check == Check::error)
        rec["error"] = l.error;
    else
        rec.erase("error");
}

}  // namespace

asio::awaitable<Result<VerifyResult>> check_domain(Deps deps, store::Domain d, bool background) {
    auto& dns = deps.resolver;
    const auto& policy = deps.domain_policy;
    json::object records = json::parse(d.records_json).as_object();
    ensure_return_path(records, policy, d);

    int required = 0, verified = 0;
    std::vector<std::string> errors;
    auto tally = [&](json::object& rec, const Lookup& l, bool counts) {
        mark(rec, l);
        if (l.check == Check::error) errors.push_back(l.error);
        if (!counts) return;
        ++required;
        if (l.check == Check::verified) ++verified;
    };
    // Arguments of co_await'ed calls are named values (docs/architecture.md, "Coroutines":
    // GCC 12 destroys some temporaries in a co_await expression twice).
    // After a failed lookup the outcome is known (nothing changes), so the rest is skipped:
    // a dead resolver costs one lookup's timeout, not five.
    for (auto& v : records["dkim"].as_array()) {
        if (!errors.empty()) break;
        auto& rec = v.as_object();
        std::string host(rec["host"].as_string()), want(rec["value"].as_string());
        const auto l = co_await check_cname(dns, std::move(host), std::move(want));
        tally(rec, l, true);
    }
    if (errors.empty()) {
        auto& spf = records["spf"].as_object();
        std::string host(spf["host"].as_string()), kind("spf"), include(policy.spf_include);
        const auto l =
            co_await check_txt(dns, std::move(host), std::move(kind), std::move(include));
        tally(spf, l, true);
    }
    if (errors.empty()) {
        auto& dmarc = records["dmarc"].as_object();
        std::string host(dmarc["host"].as_string()), kind("dmarc"), none;
        const auto l = co_await check_txt(dns, std::move(host), std::move(kind), std::move(none));
        tally(dmarc, l, true);
    }
    if (errors.empty()) {
        auto& inbound = records["inbound"].as_object();
        std::string host(inbound["host"].as_string()), want(inbound["value"].as_string());
        const auto l = co_await check_mx(dns, std::move(host), std::move(want));
        tally(inbound, l, false);  // only needed to receive mail: it does not decide the status
    }
    bool return_path_verified = false;
    if (errors.empty()) {
        // The custom tracking host: looked up like the others, not deciding the status either.
        // A domain made before it existed gets its record now.
        if (!records.contains("tracking") || !records["tracking"].is_object())
            records["tracking"] = tracking_record(policy, d.name, d.tracking_label);
        auto& tracking = records["tracking"].as_object();
        std::string host(tracking["host"].as_string()), want(tracking["value"].as_string());
        const auto l = co_await check_cname(dns, std::move(host), std::move(want));
        tally(tracking, l, false);
    }
    if (errors.empty()) {
        auto& rp = records["return_path"].as_object();
        std::string host(rp["host"].as_string()), want(rp["value"].as_string());
        const auto l = co_await check_cname(dns, std::move(host), std::move(want));
        tally(rp, l, false);  // optional: it decides the envelope sender, not the status
        return_path_verified = l.check == Check::verified;
    }

    const auto now = deps.clock.now_ms();
    if (!errors.empty()) {
        // A lookup failed (timeout, SERVFAIL, refused): we know nothing new, so nothing
        // changes; the caller reports the error.
        std::string msg;
        for (const auto& e : errors) msg += (msg.empty() ? "" : "; ") + e;
        if (background) {
            // Try again a re-check interval later rather than on every pass of the job,
            // so that domains whose DNS is broken do not crowd out the others.
            const auto next = now + policy.pending_recheck.count();
            if (auto r = co_await deps.domains.postpone_domain_check(d.account_id, d.id, next); !r)
                co_return r.error();
        }
        d.records_json = json::serialize(records);
        co_return VerifyResult{.domain = std::move(d), .dns_error = std::move(msg)};
    }

    const auto outcome = domain::verify({.verified = verified,
                                         .required = required,
                                         .background = background,
                                         .before = d.status,
                                         .first_verify_at = d.first_verify_at,
                                         .verified_at = d.verified_at,
                                         .now = now,
                                         .pending_recheck_ms = policy.pending_recheck.count(),
                                         .verified_recheck_ms = policy.verified_recheck.count(),
                                         .give_up_after_ms = policy.give_up_after.count()});
    store::DomainCheck check{.account_id = d.account_id,
                             .domain_id = d.id,
                             .status = outcome.status,
                             .records_json = json::serialize(records),
                             .checked_at = now,
                             .next_check_at = outcome.next_check_at,
                             .first_verify_at = outcome.first_verify_at,
                             .verified_at = outcome.verified_at,
                             .return_path_label = d.return_path_label,
                             .return_path_verified = return_path_verified};
    d.status = outcome.status;
    d.return_path_verified = return_path_verified;
    d.records_json = check.records_json;
    d.last_checked_at = now;
    d.first_verify_at = outcome.first_verify_at;
    d.verified_at = outcome.verified_at;
    if (outcome.event) {
        // The domain as GET /domains/{id} shows it, and its id again.
        auto data = to_json(d, policy);
        data["domain_id"] = d.id;
        check.event = domain::make_event(*outcome.event, d.account_id, std::nullopt,
                                         json::serialize(data), now);
    }
    if (auto r = co_await deps.domains.record_domain_check(std::move(check)); !r)
        co_return r.error();
    co_return VerifyResult{.domain = std::move(d), .dns_error = {}};
}

bool tracking_verified(const store::Domain& d) {
    error_code ec;
    const auto records = json::parse(d.records_json, ec);
    if (ec || !records.is_object()) return false;
    const auto* tracking = records.as_object().if_contains("tracking");
    if (tracking == nullptr || !tracking->is_object()) return false;
    const auto* status = tracking->as_object().if_contains("status");
    return status != nullptr && status->is_string() && status->as_string() == "VERIFIED";
}

// ---- DKIM rotation ----

asio::awaitable<Result<store::Domain>> start_dkim_rotation(Deps deps, store::Domain d) {
    if (!d.dkim_pending.empty()) co_return store::errc::conflict;  // cheap check first
    auto make_key = [] { return crypto::generate_rsa(kRsaBits); };
    auto blocking = deps.blocking;
    auto pair = co_await core::run_blocking(std::move(blocking), std::move(make_key));
    if (!pair) co_return pair.error();
    const auto now = deps.clock.now_ms();
    const auto selector = domain::rotation_selector(d.dkim_selector);
    store::DkimKey key{.id = new_id("dk_", now),
                       .domain_id = d.id,
                       .selector = selector,
                       .sealed_private_key = crypto::seal(deps.master_key, pair->private_pem,
                                                          "dkim:" + d.id + ":" + selector),
                       .public_key = pair->public_spki_b64,
                       .active = false,
                       .created_at = now};
    auto account = d.account_id;
    auto id = d.id;
    if (auto r = co_await deps.domains.start_dkim_rotation(std::move(account), std::move(id),
                                                           std::move(key));
        !r)
        co_return r.error();
    d.dkim_pending = selector;
    co_return d;
}

asio::awaitable<Result<bool>> finish_dkim_rotation(Deps deps, store::Domain d) {
    using R = Result<bool>;  // a bool and an error code would be ambiguous
    const auto selector = d.dkim_pending;
    if (selector.empty()) co_return false;
    auto domain_id = d.id;
    auto keys = co_await deps.domains.dkim_keys(std::move(domain_id));
    if (!keys) co_return R(boost::system::in_place_error, keys.error());
    std::string public_key;
    for (const auto& k : *keys)
        if (k.selector == selector) public_key = k.public_key;
    // The two names the key is found at: the operator's zone (the CNAME's target, stored in
    // the records when the domain was made), then the user's name, through the CNAME.
    std::vector<std::string> names;
    const auto records = json::parse(d.records_json);
    if (const auto* dkim = records.is_object() ? records.as_object().if_contains("dkim") : nullptr;
        dkim != nullptr && dkim->is_array()) {
        for (const auto& v : dkim->as_array()) {
            const auto* rec = v.if_object();
            const auto* sel = rec != nullptr ? rec->if_contains("selector") : nullptr;
            if (sel == nullptr || !sel->is_string() || sel->as_string() != selector) continue;
            if (const auto* value = rec->if_contains("value"); value && value->is_string())
                names.emplace_back(strip_dot(std::string(value->as_string())));
        }
    }
    names.push_back(selector + "._domainkey." + d.name);
    for (auto& name : names) {
        auto txt = co_await deps.resolver.txt(name);
        if (!txt) {
            if (dns::is_not_found(txt.error())) continue;
            co_return R(boost::system::in_place_error, txt.error());
        }
        if (!domain::serves_dkim_key(*txt, public_key)) continue;
        auto id = d.id;
        auto sel = selector;
        auto r = co_await deps.domains.finish_dkim_rotation(std::move(id), std::move(sel),
                                                            deps.clock.now_ms());
        if (!r) co_return R(boost::system::in_place_error, r.error());
        co_return true;
    }
    co_return false;
}

// ---- handlers ----

asio::awaitable<http::Response> create_domain(Context ctx) {
    auto made = read_domain_create(ctx.body);
    if (auto* bad = std::get_if<BodyError>(&made)) co_return detail::validation_error(bad->message);
    const auto& create = std::get<DomainCreate>(made);
    const auto& canonical = create.name;
    const std::string rp_label =
        create.return_path_label.value_or(std::string(domain::kDefaultReturnPathLabel));
    if (auto why = domain::bad_host_label(rp_label, canonical))
        co_return detail::validation_error("return_path.label: " + *why);

    // Cheap check first, so that a duplicate does not cost two RSA key generations.
    auto existing = co_await ctx.deps.domains.find_domain_by_name(ctx.account_id, canonical);
    if (existing)
        co_return http::error_response(409, "CONFLICT",
                                       "domain " + canonical + " exists already in this account");

    auto make_keys = [] {
        std::vector<Result<crypto::RsaKeyPair>> out;
        for (std::size_t i = 0; i < kSelectors.size(); ++i)
            out.push_back(crypto::generate_rsa(kRsaBits));
        return out;
    };
    auto blocking = ctx.deps.blocking;
    auto pairs = co_await core::run_blocking(std::move(blocking), std::move(make_keys));
    const auto now = ctx.deps.clock.now_ms();
    store::Domain d{.id = new_id("dom_", now),
                    .account_id = ctx.account_id,
                    .name = canonical,
                    .token = new_token(),
                    .created_at = now,
                    .updated_at = now,
                    .tracking_label = create.tracking_label.value_or("links"),
                    .return_path_label = rp_label};
    d.records_json = json::serialize(initial_records(ctx.deps.domain_policy, d.name, d.token,
                                                     d.tracking_label, d.return_path_label));
    std::vector<store::DkimKey> keys;
    for (std::size_t i = 0; i < kSelectors.size(); ++i) {
        if (!pairs[i]) co_return detail::internal_error("generate DKIM keys", pairs[i].error());
        const std::string selector(kSelectors[i]);
        keys.push_back(
            {.id = new_id("dk_", now),
             .domain_id = d.id,
             .selector = selector,
             .sealed_private_key = crypto::seal(ctx.deps.master_key, pairs[i]->private_pem,
                                                "dkim:" + d.id + ":" + selector),
             .public_key = pairs[i]->public_spki_b64,
             .active = i == 0,
             .created_at = now});
    }
    auto r = co_await ctx.deps.domains.create_domain(d, std::move(keys));
    if (!r) {
        if (r.error() == store::errc::conflict)
            co_return http::error_response(
                409, "CONFLICT", "domain " + canonical + " exists already in this account");
        co_return detail::internal_error("create the domain", r.error());
    }
    co_return detail::json(201, to_json(d, ctx.deps.domain_policy));
}

asio::awaitable<http::Response> list_domains(Context ctx) {
    if (auto err = check_params(ctx.req, {"page", "limit", "sortOrder"}))
        co_return detail::validation_error(*err);
    auto paging = parse_paging(ctx.req, 20, "sortOrder");
    if (auto* msg = std::get_if<std::string>(&paging)) co_return detail::validation_error(*msg);
    const auto& p = std::get<Paging>(paging);
    store::ListQuery query{
        .account_id = ctx.account_id, .page = p.page, .limit = p.limit, .order = p.order};
    auto page = co_await ctx.deps.domains.list_domains(std::move(query));
    if (!page) co_return detail::internal_error("list domains", page.error());
    json::array data;
    for (const auto& d : page->items) data.push_back(to_json(d, ctx.deps.domain_policy));
    co_return detail::json(200, json::object{{"data", std::move(data)},
                                             {"pagination", detail::pagination(p, page->total)}});
}

asio::awaitable<http::Response> get_domain(Context ctx) {
    auto d = co_await find(ctx);
    if (!d) co_return not_found_or_error(d.error());
    co_return detail::json(200, to_json(*d, ctx.deps.domain_policy));
}

asio::awaitable<http::Response> update_domain(Context ctx) {
    auto settings = read_domain_settings(ctx.body);
    if (auto* bad = std::get_if<BodyError>(&settings))
        co_return detail::validation_error(bad->message);
    auto st = std::get<store::DomainSettings>(std::move(settings));
    auto d = co_await find(ctx);
    if (!d) co_return not_found_or_error(d.error());
    if (st.tracking_label) {
        if (auto bad = domain::bad_host_label(*st.tracking_label, d->name))
            co_return detail::validation_error("tracking.label: " + *bad);
        if (*st.tracking_label == d->tracking_label) st.tracking_label.reset();  // unchanged
    }
    if (st.return_path_label) {
        if (auto why = domain::bad_host_label(*st.return_path_label, d->name))
            co_return detail::validation_error("return_path.label: " + *why);
        if (*st.return_path_label == d->return_path_label) st.return_path_label.reset();
    }
    if (st.tracking_label || st.return_path_label) {
        // A new host: its record is new, unverified until the next verification (the mail
        // keeps the server's envelope sender, or public_url, until it finds the CNAME).
        auto records = json::parse(d->records_json).as_object();
        if (st.tracking_label)
            records["tracking"] =
                tracking_record(ctx.deps.domain_policy, d->name, *st.tracking_label);
        if (st.return_path_label)
            records["return_path"] =
                return_path_record(ctx.deps.domain_policy, d->name, *st.return_path_label);
        st.records_json = json::serialize(records);
    }
    auto r = co_await ctx.deps.domains.update_domain_settings(ctx.account_id, d->id, st,
                                                              ctx.deps.clock.now_ms());
    if (!r) co_return not_found_or_error(r.error());
    co_return detail::json(200, json::object{{"id", d->id}});
}

asio::awaitable<http::Response> verify_domain(Context ctx) {
    auto d = co_await find(ctx);
    if (!d) co_return not_found_or_error(d.error());
    auto r = co_await check_domain(ctx.deps, std::move(*d), false);
    if (!r) co_return detail::internal_error("record the verification", r.error());
    auto body = to_json(r->domain, ctx.deps.domain_policy);
    if (!r->dns_error.empty())
        body["dns_error"] = "DNS lookup failed, status unchanged: " + r->dns_error;
    co_return detail::json(200, body);
}

asio::awaitable<http::Response> delete_domain(Context ctx) {
    if (!ctx.body.is_null()) co_return detail::validation_error("DELETE takes no body");
    auto d = co_await find(ctx);
    if (!d) co_return not_found_or_error(d.error());
    auto account = ctx.account_id;
    auto id = d->id;
    auto r = co_await ctx.deps.domains.delete_domain(std::move(account), std::move(id));
    if (!r) co_return not_found_or_error(r.error());
    co_return detail::json(200,
                           json::object{{"id", d->id}, {"domain", d->name}, {"deleted", true}});
}

asio::awaitable<http::Response> rotate_dkim(Context ctx) {
    if (!ctx.body.is_null() && !(ctx.body.is_object() && ctx.body.as_object().empty()))
        co_return detail::validation_error("rotate takes no body (or an empty object)");
    auto d = co_await find(ctx);
    if (!d) co_return not_found_or_error(d.error());
    const auto name = d->name;
    auto r = co_await start_dkim_rotation(ctx.deps, std::move(*d));
    if (!r) {
        if (r.error() == store::errc::conflict)
            co_return http::error_response(
                409, "CONFLICT",
                "a DKIM rotation of " + name +
                    " is pending: its new key is not served by the DKIM zone yet");
        co_return not_found_or_error(r.error());
    }
    log::info("DKIM rotation of {}: new key for {}, waiting for the DKIM zone to serve it", name,
              r->dkim_pending);
    co_return detail::json(200, to_json(*r, ctx.deps.domain_policy));
}

}  // namespace posthorn::api
