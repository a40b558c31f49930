// libFuzzer target for the JSON bodies of the small /v1 routes (src/api/bodies.cpp):
// POST /v1/domains, PATCH /v1/domains/{id}, POST and PATCH /v1/webhooks, POST /v1/api-keys.
// The first byte picks the route (and whether private webhook targets are allowed); the rest
// is the body, bounded and parsed as the API does. What a reader accepts is what the store
// may keep: a domain name in canonical form that reads back as itself; settings, webhook and
// key fields that read back the same from their own JSON, a url that passes the webhook URL
// check, events each once, a key's name of 1 to 100 characters without control characters.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "api/bodies.hpp"
#include "api/detail/json_body.hpp"
#include "api/webhook_url.hpp"
#include "domain/vocabulary.hpp"

namespace {

namespace json = boost::json;
using namespace posthorn;

json::value settings_json(const store::DomainSettings& s) {
    json::object config, tracking, out;
    if (s.sending) config["sending"] = *s.sending;
    if (s.inbound) config["inbound"] = *s.inbound;
    if (s.open_tracking) tracking["open_tracking"] = *s.open_tracking;
    if (s.click_tracking) tracking["click_tracking"] = *s.click_tracking;
    if (s.tracking_label) tracking["label"] = *s.tracking_label;
    if (!config.empty()) out["config"] = std::move(config);
    if (!tracking.empty()) out["tracking"] = std::move(tracking);
    return out;
}

json::value webhook_json(const store::WebhookPatch& p) {
    json::object out;
    if (p.url) out["url"] = *p.url;
    if (p.events) {
        json::array events;
        for (auto e : *p.events) events.emplace_back(domain::name(e));
        out["events"] = std::move(events);
    }
    if (p.active) out["status"] = *p.active;
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const int route = (data[0] & 0x40) != 0 ? 3 : data[0] % 3;
    const bool allow_private = (data[0] & 0x80) != 0;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    if (api::detail::exceeds_json_limits(text, {})) return 0;
    json::value body;
    error_code ec;
    api::detail::parse_json_body(text, body, ec);
    if (ec) return 0;
    if (route == 0) {
        auto r = api::read_domain_create(body);
        const auto* made = std::get_if<api::DomainCreate>(&r);
        if (!made) return 0;
        const auto* name = &made->name;
        if (made->tracking_label &&
            (made->tracking_label->empty() || made->tracking_label->size() > 63 ||
             made->tracking_label->find('.') != std::string::npos))
            __builtin_trap();
        if (name->empty() || name->size() > 253 || name->back() == '.') __builtin_trap();
        if (std::any_of(name->begin(), name->end(), [](char c) { return c >= 'A' && c <= 'Z'; }))
            __builtin_trap();
        auto again = api::read_domain_create(json::object{{"domain", *name}});
        const auto* same = std::get_if<api::DomainCreate>(&again);
        if (!same || same->name != *name) __builtin_trap();
    } else if (route == 1) {
        auto r = api::read_domain_settings(body);
        const auto* st = std::get_if<store::DomainSettings>(&r);
        if (!st) return 0;
        auto again = api::read_domain_settings(settings_json(*st));
        const auto* same = std::get_if<store::DomainSettings>(&again);
        if (!same || same->sending != st->sending || same->inbound != st->inbound ||
            same->open_tracking != st->open_tracking ||
            same->click_tracking != st->click_tracking ||
            same->tracking_label != st->tracking_label)
            __builtin_trap();
    } else if (route == 3) {
        auto r = api::read_api_key_create(body);
        const auto* k = std::get_if<api::ApiKeyCreate>(&r);
        if (!k) return 0;
        if (k->name.empty() || k->name.size() > 400) __builtin_trap();
        if (std::any_of(k->name.begin(), k->name.end(),
                        [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
            __builtin_trap();
        if (k->domain && k->domain->empty()) __builtin_trap();
        json::object again{{"name", k->name}, {"permission", domain::name(k->permission)}};
        if (k->domain) again["domain"] = *k->domain;
        if (k->test) again["test"] = true;
        auto r2 = api::read_api_key_create(again);
        const auto* same = std::get_if<api::ApiKeyCreate>(&r2);
        if (!same || same->name != k->name || same->permission != k->permission ||
            same->domain != k->domain || same->test != k->test)
            __builtin_trap();
    } else {
        auto r = api::read_webhook_fields(body, allow_private);
        const auto* p = std::get_if<store::WebhookPatch>(&r);
        if (!p) return 0;
        if (p->url && api::webhook_url_error(*p->url, allow_private)) __builtin_trap();
        if (p->events) {
            auto events = *p->events;
            if (events.empty()) __builtin_trap();
            std::sort(events.begin(), events.end());
            if (std::adjacent_find(events.begin(), events.end()) != events.end()) __builtin_trap();
        }
        auto again = api::read_webhook_fields(webhook_json(*p), allow_private);
        const auto* same = std::get_if<store::WebhookPatch>(&again);
        if (!same || same->url != p->url || same->events != p->events || same->active != p->active)
            __builtin_trap();
    }
    return 0;
}
