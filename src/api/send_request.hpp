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

// An idempotency key (idempotencyKey, the Idempotency-Key header): 1 to this many bytes.
inline constexpr std::size_t kMaxIdempotencyKeyBytes = 256;

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
};

// The request, or the error answer to send.
std::variant<SendRequest, http::Response> parse_send_request(const boost::json::value& body,
                                                             const SendLimits& limits);

// Just the idempotency key, checked, so that a replay can be answered before anything else.
std::variant<std::optional<std::string>, http::Response> idempotency_key_of(
    const boost::json::value& body);

}  // namespace posthorn::api
