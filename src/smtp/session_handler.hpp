// smtp/session_handler.hpp — what a server session asks its owner (CONVENTIONS §1: the
// protocol engine is here, the policy is in api/: submission and inbound). Each answer is
// a reply the session sends verbatim. One handler object per session; never shared.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/asio.hpp"
#include "smtp/reply.hpp"

namespace posthorn::smtp {

struct ReceivedMessage {
    std::string helo;
    bool esmtp = true;                 // the client said EHLO (false: HELO), for Received
    std::string mail_from;             // reverse path without <> ("" for the null sender)
    std::vector<std::string> rcpt_to;  // accepted forward paths
    std::string data;                  // CRLF lines, dot-stuffing undone, without the final "."
    bool tls = false;
    std::string remote_ip;
};

class SessionHandler {
  public:
    virtual ~SessionHandler() = default;
    // AUTH PLAIN and LOGIN end here (RFC 4954). 235 accepts, 535 refuses.
    virtual asio::awaitable<Reply> on_auth(std::string authzid, std::string user,
                                           std::string password) = 0;
    virtual asio::awaitable<Reply> on_mail_from(std::string address, std::size_t declared_size) = 0;
    virtual asio::awaitable<Reply> on_rcpt_to(std::string address) = 0;
    // The final answer to the message; a 250 must mean it is stored durably.
    virtual asio::awaitable<Reply> on_message(ReceivedMessage message) = 0;
    // RSET, a new EHLO, or the end of a transaction.
    virtual void on_reset() = 0;
};

using HandlerFactory = std::function<std::unique_ptr<SessionHandler>(std::string remote_ip)>;

}  // namespace posthorn::smtp
