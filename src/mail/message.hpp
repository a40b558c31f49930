// mail/message.hpp — builds the RFC 5322 message of an API send with GMime 3:
// text/plain, text/html, or multipart/alternative of both; multipart/related around the
// HTML when inline images (a content id) come with it; multipart/mixed for attachments.
// Non-ASCII headers are RFC 2047 encoded; each text part is labelled charset=utf-8 (ASCII
// or not) and gets the lightest transfer encoding that keeps it 7-bit clean (7bit,
// quoted-printable or base64); attachments are base64. Date, MIME-Version and Message-ID are set
// here; there is never a Bcc header. Lines end in CRLF. Not thread-hostile: separate calls may run
// on separate threads once mail::init() has run.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "core/time.hpp"
#include "mail/address.hpp"

namespace posthorn::mail {

// g_mime_init(); call once at start, before any thread builds a message.
void init();

struct Attachment {
    std::string filename;
    std::string content;       // decoded bytes
    std::string content_type;  // "application/pdf"; empty: application/octet-stream
    std::string content_id;    // set: an inline part (cid:), in multipart/related
};

struct MessageSpec {
    Mailbox from;
    std::vector<Mailbox> to;
    std::vector<Mailbox> cc;
    std::vector<Mailbox> reply_to;
    std::string subject;
    std::optional<std::string> text;
    std::optional<std::string> html;
    std::vector<Attachment> attachments;
    std::vector<std::pair<std::string, std::string>> headers;  // already checked by the caller
    // Whole fields, folded and ending in CRLF, written as they are: `trace` above every other
    // field (the Received field, RFC 5322 §3.6.7), `service_fields` after the caller's
    // headers (Feedback-ID).
    std::string trace;
    std::string service_fields;
    std::string message_id;  // without the angle brackets
    UnixMs date = 0;
};

// The message, CRLF line endings.
std::string build_message(const MessageSpec& spec);

}  // namespace posthorn::mail
