// The parts of an API send's message that GMime objects make (message.cpp), shared with
// mail/'s tests, which hold the message's header block to the one a GMimeMessage writes,
// and with the HTML edit of a submitted message (parse.cpp). Private to mail/.
#pragma once

#include <span>
#include <string_view>

#include "mail/detail/gmime.hpp"
#include "mail/message.hpp"

namespace posthorn::mail::detail {

// The 7-bit-clean transfer encoding of a text part's content: none (7bit), quoted-printable
// or base64.
GMimeContentEncoding best_encoding(std::string_view text);

// `text` (UTF-8) as the part's content, labelled charset=utf-8, with best_encoding's
// transfer encoding: every text part posthorn writes goes out so.
void set_utf8_text(GMimeTextPart* part, std::string_view text);

// The mailboxes as a GMime address list, their domains taken as given (A-labels).
GObj<InternetAddressList> address_list(std::span<const Mailbox> list);

// The MIME entity under the message's header block: a text part, or the multipart tree of
// text, HTML, inline images and attachments.
GObj<GMimeObject> message_body(const MessageSpec& spec);

}  // namespace posthorn::mail::detail
