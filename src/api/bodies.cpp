#include "api/bodies.hpp"

#include <boost/json/value.hpp>

#include <algorithm>

#include "api/webhook_url.hpp"
#include "core/text.hpp"
#include "core/time.hpp"
#include "domain/sending_domain.hpp"
#include "domain/vocabulary.hpp"
#include "mail/domain_name.hpp"

namespace posthorn::api {

namespace json = boost::json;

namespace {

BodyError error(std::string message) { return BodyError{std::move(message)}; }

// The events, deduplicated in their order.
std::variant<std::vector<domain::EventKind>, BodyError> read_events(const json::value& v) {
    if (!v.is_array() || v.as_array().empty())
        return error("events must be a non-empty array of event names");
    std::vector<domain::EventKind> out;
    for (const auto& e : v.as_array()) {
        if (!e.is_string()) return error("events must be a non-empty array of event names");
        const std::string name(e.as_string());
        const auto kind = domain::from_name<domain::EventKind>(name);
        if (!kind) {
            std::string known;
            for (auto k : domain::kEventKindNames)
                known += (known.empty() ? "" : ", ") + std::string(k);
            return error("events: unknown event '" + name + "' (known: " + known + ")");
        }
        if (std::find(out.begin(), out.end(), *kind) == out.end()) out.push_back(*kind);
    }
    return out;
}

}  // namespace

namespace {

// tracking.label: a DNS label (domain::bad_host_label), taken in lower case.
std::variant<std::string, BodyError> read_tracking_label(const json::value& v,
                                                         std::string_view name) {
    if (!v.is_string()) return error("tracking.label must be a string");
    const auto label = core::ascii_lower(std::string(v.as_string()));
    if (auto bad = domain::bad_host_label(label, name)) return error("tracking.label: " + *bad);
    return label;
}

}  // namespace

std::variant<DomainCreate, BodyError> read_domain_create(const json::value& body) {
    if (!body.is_object()) return error("body must be a JSON object");
    const auto& o = body.as_object();
    for (const auto& [k, v] : o)
        if (k != "domain" && k != "tracking" && k != "return_path")
            return error("unknown field '" + std::string(k) + "'");
    const auto* field = o.if_contains("domain");
    if (!field || !field->is_string()) return error("domain is required and must be a string");
    auto name = mail::normalize_domain(std::string(field->as_string()));
    if (auto* bad = std::get_if<mail::BadDomain>(&name)) return error("domain: " + bad->reason);
    DomainCreate out{.name = std::get<std::string>(std::move(name))};
    auto return_path = read_return_path(body);
    if (auto* bad = std::get_if<BodyError>(&return_path)) return *bad;
    out.return_path_label = std::get<std::optional<std::string>>(std::move(return_path));
    if (const auto* tracking = o.if_contains("tracking")) {
        if (!tracking->is_object()) return error("tracking must be an object");
        for (const auto& [k, v] : tracking->as_object()) {
            if (k != "label") return error("unknown field 'tracking." + std::string(k) + "'");
            auto label = read_tracking_label(v, out.name);
            if (auto* bad = std::get_if<BodyError>(&label)) return *bad;
            out.tracking_label = std::get<std::string>(std::move(label));
        }
    }
    return out;
}

std::variant<std::optional<std::string>, BodyError> read_return_path(const json::value& body) {
    const auto* rp = body.is_object() ? body.as_object().if_contains("return_path") : nullptr;
    if (!rp) return std::optional<std::string>{};
    if (!rp->is_object()) return error("return_path must be an object");
    for (const auto& [k, v] : rp->as_object())
        if (k != "label") return error("unknown field 'return_path." + std::string(k) + "'");
    const auto* label = rp->as_object().if_contains("label");
    if (!label) return error("return_path.label is required");
    if (!label->is_string()) return error("return_path.label must be a string");
    auto l = core::ascii_lower(std::string(label->as_string()));
    if (auto why = domain::bad_host_label(l, "")) return error("return_path.label: " + *why);
    return std::optional(std::move(l));
}

std::variant<store::DomainSettings, BodyError> read_domain_settings(const json::value& body) {
    if (!body.is_object()) return error("body must be a JSON object");
    store::DomainSettings st;
    struct Field {
        const char* group;
        const char* name;
        std::optional<bool> store::DomainSettings::*out;
    };
    static constexpr Field kFields[] = {
        {"config", "sending", &store::DomainSettings::sending},
        {"config", "inbound", &store::DomainSettings::inbound},
        {"tracking", "open_tracking", &store::DomainSettings::open_tracking},
        {"tracking", "click_tracking", &store::DomainSettings::click_tracking}};
    auto label = read_return_path(body);
    if (auto* bad = std::get_if<BodyError>(&label)) return *bad;
    st.return_path_label = std::get<std::optional<std::string>>(std::move(label));
    for (const auto& [group, value] : body.as_object()) {
        if (group == "return_path") continue;  // read above
        if (group != "config" && group != "tracking")
            return error("unknown field '" + std::string(group) + "'");
        if (!value.is_object()) return error(std::string(group) + " must be an object");
        for (const auto& [key, v] : value.as_object()) {
            if (group == "tracking" && key == "label") {
                auto label = read_tracking_label(v, "");
                if (auto* bad = std::get_if<BodyError>(&label)) return *bad;
                st.tracking_label = std::get<std::string>(std::move(label));
                continue;
            }
            const Field* f = nullptr;
            for (const auto& cand : kFields)
                if (group == cand.group && key == cand.name) f = &cand;
            if (!f)
                return error("unknown field '" + std::string(group) + "." + std::string(key) + "'");
            if (!v.is_bool())
                return error(std::string(group) + "." + std::string(key) +
                             " must be true or false");
            st.*(f->out) = v.as_bool();
        }
    }
    return st;
}

std::variant<ApiKeyCreate, BodyError> read_api_key_create(const json::value& body) {
    constexpr std::size_t kMaxName = 100;
    if (!body.is_object()) return error("body must be a JSON object");
    ApiKeyCreate out;
    bool named = false, permitted = false;
    for (const auto& [key, value] : body.as_object()) {
        if (key == "name") {
            if (!value.is_string()) return error("name must be a string");
            const std::string_view name = value.as_string();
            // Characters, not bytes: UTF-8 continuation bytes do not count.
            const auto chars = std::count_if(name.begin(), name.end(), [](char c) {
                return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
            });
            if (chars == 0 || static_cast<std::size_t>(chars) > kMaxName)
                return error("name must be 1 to 100 characters");
            if (std::any_of(name.begin(), name.end(), [](char c) {
                    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
                }))
                return error("name must not hold control characters");
            out.name = std::string(name);
            named = true;
        } else if (key == "permission") {
            const auto p =
                value.is_string() ? domain::key_permission(value.as_string()) : std::nullopt;
            if (!p) return error("permission must be full or sending");
            out.permission = *p;
            permitted = true;
        } else if (key == "domain") {
            if (value.is_null()) continue;
            if (!value.is_string() || value.as_string().empty())
                return error("domain must be a domain name or id of this account, or null");
            out.domain = std::string(value.as_string());
        } else if (key == "test") {
            if (!value.is_bool()) return error("test must be true or false");
            out.test = value.as_bool();
        } else {
            return error("unknown field '" + std::string(key) + "'");
        }
    }
    if (!named) return error("name is required");
    if (!permitted) return error("permission is required: full or sending");
    return out;
}

std::variant<store::WebhookPatch, BodyError> read_webhook_fields(const json::value& body,
                                                                 bool allow_private) {
    if (!body.is_object()) return error("body must be a JSON object");
    store::WebhookPatch p;
    for (const auto& [key, value] : body.as_object()) {
        if (key == "url") {
            if (!value.is_string()) return error("url must be a string");
            std::string url(value.as_string());
            if (auto msg = webhook_url_error(url, allow_private)) return error(std::move(*msg));
            p.url = std::move(url);
        } else if (key == "events") {
            auto e = read_events(value);
            if (auto* bad = std::get_if<BodyError>(&e)) return std::move(*bad);
            p.events = std::get<std::vector<domain::EventKind>>(std::move(e));
        } else if (key == "status") {
            if (!value.is_bool()) return error("status must be true or false");
            p.active = value.as_bool();
        } else {
            return error("unknown field '" + std::string(key) + "'");
        }
    }
    return p;
}

std::variant<store::WebhookReplay, BodyError> read_webhook_replay(const json::value& body) {
    constexpr const char* kExactlyOne =
        "give exactly one of event_id (one event's delivery) and failed_since (an ISO 8601 "
        "time: every delivery given up since)";
    if (!body.is_object()) return error(std::string("body must be a JSON object: ") + kExactlyOne);
    store::WebhookReplay out;
    for (const auto& [k, v] : body.as_object()) {
        if (k == "event_id") {
            if (!v.is_string() || v.as_string().empty())
                return error("event_id must be an event id (evt_…)");
            out.event_id = std::string(v.as_string());
        } else if (k == "failed_since") {
            const auto at = v.is_string() ? parse_iso8601(v.as_string()) : std::nullopt;
            if (!at)
                return error("failed_since must be an ISO 8601 time, e.g. 2026-11-27T10:00:00Z");
            out.failed_since = *at;
        } else {
            return error("unknown field '" + std::string(k) + "'");
        }
    }
    if (out.event_id.has_value() == out.failed_since.has_value()) return error(kExactlyOne);
    return out;
}

}  // namespace posthorn::api
