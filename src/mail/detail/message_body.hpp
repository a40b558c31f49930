// The parts of an API send's message that GMime objects make (message.cpp), shared with
// mail/'s tests, which hold the message's header block to the one a GMimeMessage writes.
// Private to mail/.
#pragma once

#include <span>

#include "mail/detail/gmime.hpp"
#include "mail/message.hpp"

namespace posthorn::mail::detail {

// The mailboxes as a GMime address list, their domains taken as given (A-labels).
GObj<InternetAddressList> address_list(std::span<const Mailbox> list);

// The MIME entity under the message's header block: a text part, or the multipart tree of
// text, HTML, inline images and attachments.
GObj<GMimeObject> message_body(const MessageSpec& spec);

}  // namespace posthorn::mail::detail
