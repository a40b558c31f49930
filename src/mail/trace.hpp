// mail/trace.hpp — the fields posthorn puts on a message it accepts: the one Received trace
// field of its acceptance (RFC 5321 §4.4, RFC 5322 §3.6.7), with the "with" protocol names
// of RFC 3848, and the Feedback-ID field of Gmail's feedback loop (a:b:c:SenderId, the
// broadest identifier on the right). What goes into them is the caller's (api/queue_email,
// api/smtp_doors); here they are only written: client-given text made safe, folded, CRLF.
// Pure; thread-safe.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "core/time.hpp"

namespace posthorn::mail {

struct ReceivedFrom {
    std::string helo;         // the client's EHLO/HELO argument; empty: its address literal
    std::string client_ip;    // "192.0.2.7", "2001:db8::7", "::ffff:192.0.2.7"
    std::string by;           // this server's name (smtp.hostname)
    std::string with;         // "ESMTPSA", "HTTPS" (smtp_protocol)
    std::string id;           // the queue id: the email's id
    std::string for_address;  // one recipient (inbound copies); empty: no "for" clause
    UnixMs at = 0;
};

// The whole field, folded as Postfix folds it, ending in CRLF:
//   Received: from client.example (unknown [192.0.2.7])
//   	by mx.example.com (posthorn) with ESMTPSA id em_01…;
//   	Fri, 27 Nov 2026 18:30:54 +0000
// posthorn looks no name up (no PTR query at acceptance): the TCP-info names the host
// "unknown", as Postfix does without a reverse name. The HELO name is the client's text:
// anything but letters, digits and "-._:[]" becomes "_", and it is cut at 255 characters.
std::string received_field(const ReceivedFrom& r);

// RFC 3848's protocol name for a session: SMTP after HELO; ESMTP after EHLO, with "S" for
// TLS (STARTTLS) and "A" for an authenticated client (ESMTPA, ESMTPS, ESMTPSA).
std::string smtp_protocol(bool esmtp, bool tls, bool authenticated);

// "192.0.2.7" → "[192.0.2.7]", "2001:db8::7" → "[IPv6:2001:db8::7]" (RFC 5321 §4.1.3); an
// IPv4-mapped IPv6 address as IPv4.
std::string address_literal(std::string_view ip);

// "Feedback-ID: a:b:c:SenderId\r\n" from the identifiers given, left to right; each loses
// every character but letters, digits and ".-_=+" (no ':' can split one, no space fold it);
// an empty one stays empty (Gmail then reports on the others).
std::string feedback_id_field(std::initializer_list<std::string_view> identifiers);

}  // namespace posthorn::mail
