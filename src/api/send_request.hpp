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
};

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
