// api/send_request.hpp — the body of POST /v1/emails, checked field by field (DESIGN §4):
// shapes and types (VALIDATION_ERROR), addresses (INVALID_EMAIL), the recipient count
// (TOO_MANY_RECIPIENTS), the attachment size (PAYLOAD_TOO_LARGE) and the tags and metadata
// (email_labels.hpp; VALIDATION_ERROR). Pure; no I/O.
#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <variant>

#include "api/email_labels.hpp"
#include "http/message.hpp"
#include "mail/message.hpp"

namespace posthorn::api {

struct SendLimits {
    int max_recipients = 10000;
    std::int64_t max_attachment_bytes = 26214400;
};

struct SendRequest {
    mail::MessageSpec message;  // without message_id and date, which come at accept time
    std::vector<mail::Mailbox> bcc;
    std::optional<std::string> idempotency_key;
    std::optional<bool> track_opens;  // unset: the domain's setting decides
    std::optional<bool> track_clicks;
    EmailLabels labels;  // tags and metadata (email_labels.hpp)
    // When to send it (scheduled_at); its window is checked against the clock by the caller
    // (domain::schedule_refusal).
    std::optional<UnixMs> scheduled_at;
};

// The SMTP submission's header that schedules a message (docs/smtp.md); never delivered.
inline constexpr std::string_view kScheduledAtHeader = "X-Posthorn-Scheduled-At";

// A scheduled time (`scheduled_at`, the SMTP header X-Posthorn-Scheduled-At): ISO 8601, a
// date and a time with an offset ("2026-11-28T09:00:00+01:00", "…Z"); or the message that
// names `field` and says what it must be. A time without an offset is refused: it would mean
// the server's zone, which the client does not know.
std::variant<UnixMs, std::string> parse_scheduled_at(std::string_view field, std::string_view text);

// The request, or the error answer to send.
std::variant<SendRequest, http::Response> parse_send_request(const boost::json::value& body,
                                                             const SendLimits& limits);

// Just the idempotency key, checked, so that a replay can be answered before anything else.
std::variant<std::optional<std::string>, http::Response> idempotency_key_of(
    const boost::json::value& body);

}  // namespace posthorn::api
