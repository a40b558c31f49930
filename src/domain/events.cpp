#include "domain/events.hpp"

#include <algorithm>

#include "core/id.hpp"
#include "core/text.hpp"

namespace posthorn::domain {

using core::append_json_string;

Event make_event(EventKind kind, std::string account_id, std::optional<std::string> email_id,
                 std::string data_json, UnixMs at) {
    return Event{.id = new_id("evt_", at),
                 .account_id = std::move(account_id),
                 .kind = kind,
                 .email_id = std::move(email_id),
                 .data_json = std::move(data_json),
                 .created_at = at};
}

EventKind event_for(EmailStatus s) {
    switch (s) {
        case EmailStatus::delivered:
            return EventKind::email_delivered;
        case EmailStatus::bounced:
            return EventKind::email_bounced;
        case EmailStatus::failed:
            return EventKind::email_failed;
        case EmailStatus::complained:
            return EventKind::email_complained;
        case EmailStatus::blocked:
            return EventKind::email_blocked;
        case EmailStatus::canceled:
            return EventKind::email_canceled;
        case EmailStatus::queued:
        case EmailStatus::sent:
        case EmailStatus::scheduled:
            break;
    }
    return EventKind::email_sent;
}

namespace {

void append_bounce(std::string& out, const std::optional<Bounce>& b) {
    if (!b) {
        out += "null";
        return;
    }
    out += "{\"type\":";
    append_json_string(out, name(b->type));
    out += ",\"code\":";
    if (b->code.empty())
        out += "null";
    else
        append_json_string(out, b->code);
    out += ",\"message\":";
    append_json_string(out, b->message);
    out += '}';
}

// ,"tags":[…],"metadata":…,"test":… of `email`. The metadata was checked and serialized when the
// email was accepted (api/send_request.cpp): it is a JSON object, spliced as it is.
void append_labels(std::string& out, const Email& email) {
    out += ",\"tags\":[";
    bool first = true;
    for (const auto& t : email.tags) {
        if (!first) out += ',';
        first = false;
        out += "{\"name\":";
        append_json_string(out, t.name);
        out += ",\"value\":";
        append_json_string(out, t.value);
        out += '}';
    }
    out += "],\"metadata\":";
    out += email.metadata_json.empty() ? std::string_view("null")
                                       : std::string_view(email.metadata_json);
    out += email.test ? ",\"test\":true" : ",\"test\":false";
}

}  // namespace

std::string email_event_data(const Email& email, EmailStatus status,
                             const std::vector<const Recipient*>& about) {
    std::string out = "{\"email_id\":";
    append_json_string(out, email.id);
    out += ",\"status\":";
    append_json_string(out, name(status));
    out += ",\"recipients\":[";
    bool first = true;
    for (const auto* r : about) {
        if (!first) out += ',';
        first = false;
        out += "{\"email\":";
        append_json_string(out, r->address);
        out += ",\"status\":";
        append_json_string(out, name(r->status));
        out += ",\"attempts\":" + std::to_string(r->attempts);
        out += ",\"response\":";
        if (r->last_response)
            append_json_string(out, *r->last_response);
        else
            out += "null";
        out += ",\"bounce\":";
        append_bounce(out, r->bounce);
        out += '}';
    }
    out += ']';
    append_labels(out, email);
    out += '}';
    return out;
}

std::string engagement_data(const Email& email, std::string_view ip, std::string_view user_agent,
                            const std::optional<std::string>& url) {
    std::string out = "{\"email_id\":";
    append_json_string(out, email.id);
    out += ",\"ip\":";
    append_json_string(out, ip);
    out += ",\"user_agent\":";
    append_json_string(out, user_agent);
    if (url) {
        out += ",\"url\":";
        append_json_string(out, *url);
    }
    append_labels(out, email);
    out += '}';
    return out;
}

std::string inbound_event_data(const InboundSummary& m) {
    std::string out = "{\"id\":";
    append_json_string(out, m.id);
    out += ",\"from_email\":";
    append_json_string(out, m.from_email);
    out += ",\"from_name\":";
    append_json_string(out, m.from_name);
    out += ",\"to_address\":";
    append_json_string(out, m.to_address);
    out += ",\"subject\":";
    append_json_string(out, m.subject);
    out += ",\"attachments\":" + std::to_string(m.attachments);
    out += ",\"authentication\":" + (m.authentication.empty() ? "null" : m.authentication) + "}";
    return out;
}

std::string suppression_data(const Suppression& s) {
    std::string out = "{\"email\":";
    append_json_string(out, s.address);
    out += ",\"reason\":";
    append_json_string(out, name(s.reason));
    out += ",\"email_id\":";
    if (s.email_id.empty())
        out += "null";
    else
        append_json_string(out, s.email_id);
    out += ",\"created_at\":";
    append_json_string(out, format_iso8601(s.created_at));
    out += '}';
    return out;
}

namespace {
std::optional<std::string> cause_of(const Suppression& s) {
    if (s.email_id.empty()) return std::nullopt;
    return s.email_id;
}
}  // namespace

SuppressionAdd suppression_added(Suppression s) {
    auto event = make_event(EventKind::suppression_added, s.account_id, cause_of(s),
                            suppression_data(s), s.created_at);
    return SuppressionAdd{.entry = std::move(s), .event = std::move(event)};
}

Event suppression_removed(const Suppression& s, UnixMs at) {
    return make_event(EventKind::suppression_removed, s.account_id, cause_of(s),
                      suppression_data(s), at);
}

std::string event_body(EventKind kind, UnixMs created_at, std::string_view data_json) {
    std::string body = "{\"type\":";
    append_json_string(body, name(kind));
    // `timestamp` is the Standard Webhooks name; `created_at` is kept for the receivers
    // written before it.
    const auto at = format_iso8601(created_at);
    body += ",\"timestamp\":";
    append_json_string(body, at);
    body += ",\"created_at\":";
    append_json_string(body, at);
    body.append(",\"data\":").append(data_json.empty() ? "{}" : data_json).append("}");
    return body;
}

bool subscribes(const Webhook& webhook, EventKind kind) {
    return webhook.active &&
           std::find(webhook.events.begin(), webhook.events.end(), kind) != webhook.events.end();
}

std::vector<std::string> webhooks_for(const Event& event, const std::vector<Webhook>& webhooks) {
    std::vector<std::string> out;
    for (const auto& w : webhooks)
        if (w.account_id == event.account_id && subscribes(w, event.kind)) out.push_back(w.id);
    return out;
}

}  // namespace posthorn::domain
