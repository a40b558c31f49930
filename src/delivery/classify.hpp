// delivery/classify.hpp — the one place that turns what a remote server said (or did not
// say) into a disposition: delivered, transient (retry on the schedule), bounced (the
// remote refused it for good: 5xx) or failed (we could not send it at all: null MX, TLS
// required and not offered). Postfix's smtp_trouble.c, in small. Pure.
#pragma once

#include <string>

#include "core/result.hpp"
#include "smtp/reply.hpp"

namespace posthorn::delivery {

enum class Disposition { delivered, transient, bounced, failed };

struct Outcome {
    Disposition disposition = Disposition::transient;
    std::string response;  // the server's reply verbatim, or our words for what happened
    // The refusal concerned this recipient (a 5xx to its RCPT, or a 5.1.x mailbox code),
    // so a bounce puts the address on the suppression list. A 5xx to MAIL or to the
    // message as a whole (policy, content) says nothing about the address.
    bool about_recipient = false;
};

Outcome classify_reply(const smtp::Reply& reply);
// A failure with no reply: network errors and timeouts are transient; TLS that is
// required but unavailable fails the message (DESIGN §3).
Outcome classify_error(const error_code& ec, const std::string& where);

}  // namespace posthorn::delivery
