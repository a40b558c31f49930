// api/bodies.hpp — the JSON bodies of the small /v1 routes (domains, API keys, webhooks), read into
// what the stores take or refused with the message of a 400 VALIDATION_ERROR. Pure, so that
// they are fuzzed apart from the handlers (tests/fuzz/api_bodies_fuzz.cpp); the send body
// has its own reader (send_request.hpp).
#pragma once

#include <boost/json/fwd.hpp>

#include <optional>
#include <string>
#include <variant>

#include "domain/api_keys.hpp"
#include "store/types.hpp"

namespace posthorn::api {

struct BodyError {
    std::string message;  // "unknown field 'x'", "url must be a string", …
};

// POST /v1/domains {"domain", "tracking"?: {"label"?}, "return_path"?: {"label"}}: the
// canonical name (lower case, no final dot, A-labels) and the labels of its tracking host
// and of its return-path host (lower case), each if given.
struct DomainCreate {
    std::string name;
    std::optional<std::string> tracking_label;
    std::optional<std::string> return_path_label;
};
std::variant<DomainCreate, BodyError> read_domain_create(const boost::json::value& body);

// The "return_path": {"label"} of POST /v1/domains and PATCH /v1/domains/{id}: the label,
// lower-cased, one DNS label (domain::bad_host_label); nullopt when not given.
std::variant<std::optional<std::string>, BodyError> read_return_path(
    const boost::json::value& body);

// PATCH /v1/domains/{id} {"config": {sending, inbound}, "tracking": {open_tracking,
// click_tracking, label}, "return_path": {label}}: the settings given (each optional; a
// label in lower case, a DNS label: its length with the domain's name is the handler's to
// check; records_json left for the handler).
std::variant<store::DomainSettings, BodyError> read_domain_settings(const boost::json::value& body);

// POST /v1/api-keys {name, permission, domain?, test?}: name 1 to 100 characters without
// control characters, permission "full" or "sending", domain a string naming one of the
// account's domains (its dom_ id or its name: the handler finds it) or null, test true for a
// test-mode key (domain/test_mode.hpp; false or absent: a live key).
struct ApiKeyCreate {
    std::string name;
    domain::KeyPermission permission = domain::KeyPermission::full;
    std::optional<std::string> domain;
    bool test = false;
};
std::variant<ApiKeyCreate, BodyError> read_api_key_create(const boost::json::value& body);

// POST and PATCH /v1/webhooks {url, events, status}, each optional here (create requires
// url and events itself). The url passes webhook_url_error(url, allow_private); the events
// are known kinds, each once, in the order given.
std::variant<store::WebhookPatch, BodyError> read_webhook_fields(const boost::json::value& body,
                                                                 bool allow_private);

// POST /v1/webhooks/{id}/replay: exactly one of {"event_id": "evt_…"} (that event's
// delivery) and {"failed_since": ISO 8601} (every delivery given up of the events since).
std::variant<store::WebhookReplay, BodyError> read_webhook_replay(const boost::json::value& body);

}  // namespace posthorn::api
