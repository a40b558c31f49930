// smtp/client.hpp — an SMTP client session; one object = one TCP connection to one server
// (RFC 5321, STARTTLS RFC 3207, PIPELINING RFC 2920, SIZE RFC 1870, 8BITMIME RFC 6152,
// SMTPUTF8 RFC 6531). It speaks the protocol and reports what the server said; it does not
// decide what a 4xx means: delivery/ does. Several transactions may follow one another on
// one session (connection reuse). Not thread-safe: use from one coroutine at a time.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/asio.hpp"
#include "core/result.hpp"
#include "crypto/tls.hpp"
#include "smtp/reply.hpp"

namespace posthorn::smtp {

enum class TlsMode { off, opportunistic, required };

struct ClientOptions {
    std::string helo_name = "localhost";
    std::chrono::seconds connect_timeout{30};
    std::chrono::seconds command_timeout{300};  // RFC 5321 §4.5.3.2 (one figure for all)
    TlsMode tls = TlsMode::opportunistic;
    std::shared_ptr<boost::asio::ssl::context> tls_context;  // needed unless tls == off
    std::string server_name;                                 // SNI and logs
    // What the server's certificate is checked against (the names, or DANE TLSA records).
    // Unset: not checked (opportunistic encryption).
    std::optional<crypto::PeerCheck> peer_check;
    // A certificate that fails peer_check ends open() with errc::tls_not_verified, before
    // anything more is said on the connection. Unset: the result is only reported.
    bool require_verified = false;
};

struct Envelope {
    std::string mail_from;             // reverse path, without <>
    std::vector<std::string> rcpt_to;  // forward paths, without <>
    std::string data;                  // the message, CRLF lines, not dot-stuffed
};

struct Transaction {
    Reply mail;
    std::vector<std::optional<Reply>> rcpt;  // one per rcpt_to; nullopt if never asked
    std::optional<Reply> data;               // the DATA refusal, or the reply to the final "."
    // Accepted recipients got `data` as their outcome; the others their own RCPT reply.
};

class Client {
  public:
    explicit Client(asio::any_io_executor ex, ClientOptions options);
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // Connects, reads the greeting, EHLO (HELO if refused), STARTTLS per the options and EHLO
    // again. The answer is the last reply: a 2xx when the session is ready, otherwise the
    // refusal verbatim. Network and protocol failures come back as errors.
    asio::awaitable<Result<Reply>> open(asio::ip::tcp::endpoint peer);
    // One transaction; with PIPELINING, MAIL, every RCPT and DATA go in one write.
    asio::awaitable<Result<Transaction>> send(Envelope envelope);
    // QUIT and close; errors are ignored (the mail has been handed over already).
    asio::awaitable<void> quit();

    bool tls_active() const;
    // After a handshake (open() succeeded with TLS, or failed with tls_not_verified): the
    // TLS version, and whether the certificate passed peer_check (false when unchecked).
    const std::optional<crypto::PeerResult>& peer() const;
    bool has_extension(std::string_view keyword) const;  // upper-case keyword, "PIPELINING"
    std::optional<std::size_t> size_limit() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace posthorn::smtp
