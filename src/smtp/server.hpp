// smtp/server.hpp — the SMTP server (RFC 5321) on Asio coroutines: ESMTP with PIPELINING
// (RFC 2920), SIZE (RFC 1870), 8BITMIME (RFC 6152), ENHANCEDSTATUSCODES (RFC 2034),
// SMTPUTF8 (RFC 6531), STARTTLS (RFC 3207) and AUTH PLAIN/LOGIN (RFC 4954). One listener,
// sessions spread over the contexts of a core::IoPool. Hostile input is expected: lines
// over 1000 octets, bare CR or LF in a message (refused: SMTP smuggling), DATA over the
// size limit (552), too many bad commands (421 and goodbye), idle clients (421), too many
// recipients (452). What to accept is the SessionHandler's business.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <memory>

#include "core/client_limits.hpp"
#include "core/io_pool.hpp"
#include "core/result.hpp"
#include "smtp/session_handler.hpp"

namespace posthorn::smtp {

struct ServerOptions {
    // The listener's name in log lines and metrics: "submission" or "inbound".
    std::string name = "inbound";
    asio::ip::tcp::endpoint listen;
    std::string hostname = "localhost";
    std::size_t max_message_bytes = 37'000'000;
    std::size_t max_recipients = 10'000;
    bool offer_auth = false;                         // submission: true
    bool auth_requires_tls = true;                   // AUTH only after STARTTLS
    bool require_auth = false;                       // MAIL needs a successful AUTH first
    std::shared_ptr<boost::asio::ssl::context> tls;  // null: no STARTTLS
    std::chrono::seconds idle_timeout{300};          // RFC 5321 §4.5.3.2.7: 5 minutes
    // Once the listener is three quarters full, a session waiting for its client is given
    // this long instead (Postfix's stress-dependent smtpd_timeout).
    std::chrono::seconds busy_idle_timeout{10};
    int max_bad_commands = 10;
    // Sessions at once on the listener, and per client (Postfix's anvil:
    // smtpd_client_connection_count_limit and _rate_limit). A connection beyond a bound is
    // answered 421 4.7.0 and closed, so that idle connections cannot take every socket and
    // memory; at the listener's bound, a newcomer holding fewer sessions than the busiest
    // client has that client's longest-waiting session closed (421) to make room.
    core::ClientLimitOptions limits{.max_connections = 1000, .max_connections_per_client = 50};
    // Connections from limits.trusted must begin with a PROXY protocol header (v1 or v2),
    // whose client address then counts, and is the one the handler sees.
    bool proxy_protocol = false;
};

class Server {
  public:
    Server(core::IoPool& pool, ServerOptions options, HandlerFactory factory);
    ~Server();  // NOLINT(bugprone-exception-escape): see server.cpp
    Result<asio::ip::tcp::endpoint> start();
    // No new connections; a session ends at its next command (421), or, in the middle of a
    // transaction, once the transaction has ended.
    void stop();
    std::size_t connections() const;

  private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace posthorn::smtp
