// api/send_request.hpp — the body of POST /v1/emails, checked field by field (DESIGN §4):
// shapes and types (VALIDATION_ERROR), addresses (INVALID_EMAIL), the recipient count
// (TOO_MANY_RECIPIENTS), the attachment size (PAYLOAD_TOO_LARGE) and the tags and metadata
// (email_labels.hpp; VALIDATION_ERROR). A send may name a stored template and its variables
// instead of subject, html and text (both: VALIDATION_ERROR). Pure; no I/O.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <variant>

#include "api/email_labels.hpp"
#include "http/message.hpp"
#include "mail/message.hpp"

namespace posthorn::api {

// An idempotency key (idempotencyKey, the Idempotency-Key header): 1 to this many bytes.
inline constexpr std::size_t kMaxIdempotencyKeyBytes = 256;

struct SendLimits {
    int max_recipients = 10000;
    std::int64_t max_attachment_bytes = 26214400;
};

// The stored template a send names instead of subject, html and text (docs/templates.md),
// with the send's variables; api/templates.hpp's apply_template fills the message from it.
struct TemplateRef {
    std::string ref;                // the template's tpl_ id or its name
    boost::json::object variables;  // {} when the send gives none
};

struct SendRequest {
    // Without message_id and date, which come at accept time; with a template, without
    // subject, html and text until apply_template fills them.
    mail::MessageSpec message;
    std::optional<TemplateRef> template_ref;
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

// The subject, html and text of `m` checked as parse_send_request checks a send's (and the
// empty bodies dropped): after a template filled them, with `what` ("the rendered ")
// before each field's name in the messages.
std::optional<http::Response> check_content(mail::MessageSpec& m, std::string_view what = "");

// Just the idempotency key, checked, so that a replay can be answered before anything else.
std::variant<std::optional<std::string>, http::Response> idempotency_key_of(
    const boost::json::value& body);

}  // namespace posthorn::api
