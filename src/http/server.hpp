// http/server.hpp — the HTTP/1.1 server (Boost.Beast, C++20 coroutines).
//
// One acceptor hands connections round-robin to the contexts of a core::IoPool; a
// connection stays on its context for life. Keep-alive, a header limit (16 KiB, 431), a
// body limit (413, decided before the body is read when Content-Length says so, and
// `Expect: 100-continue` honoured), read/idle deadlines, and the JSON error body for every
// malformed request. Each request's head passes the admission check (Options::admit:
// authentication, a body limit of the route's) before its body is read. The handler gets
// every admitted well-formed request; routing is its business.
//
// At most `limits.max_connections` connections are open at once (see Options).
//
// stop(): no new connections, idle keep-alive connections close, requests in flight are
// answered (with `Connection: close`). Not in scope: TLS (put a proxy in front), HTTP/2.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include <boost/asio/ip/tcp.hpp>

#include "core/client_limits.hpp"
#include "core/io_pool.hpp"
#include "core/result.hpp"
#include "http/message.hpp"

namespace posthorn::http {

class Server {
  public:
    struct Options {
        asio::ip::tcp::endpoint listen;
        std::size_t body_limit = 1 << 20;  // the largest of any request
        // Asked once a request's head is read (see Admission); none: every request is
        // admitted with `body_limit`. A refusal ends the connection when a body was due.
        Admit admit;
        std::chrono::seconds idle_timeout{60};     // between requests on a keep-alive connection
        std::chrono::seconds request_timeout{30};  // to read a request and write its answer
        // Between requests once the listener is three quarters full.
        std::chrono::seconds busy_idle_timeout{5};
        // Open at once (limits.max_connections): at the cap the server closes the connection
        // that has waited longest for its next request — one of the busiest client's when it
        // has one waiting — or, when every one is in the middle of a request, accepts no more
        // until one ends (the kernel's listen queue holds the newcomers meanwhile). Per
        // client (core/client_limits.hpp), a connection over a bound is answered 429
        // RATE_LIMITED and closed.
        core::ClientLimitOptions limits{.max_connections = 10000,
                                        .max_connections_per_client = 256};
        // Connections from limits.trusted must begin with a PROXY protocol header (v1 or
        // v2), whose client address then counts and becomes Request::remote_ip.
        bool proxy_protocol = false;
    };

    Server(core::IoPool& pool, Options options, Handler handler);
    ~Server();  // NOLINT(bugprone-exception-escape): see server.cpp
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Binds and starts accepting; answers the bound endpoint (port 0 picks one).
    Result<asio::ip::tcp::endpoint> start();
    void stop();
    // Connections still open (each is idle, reading or being answered).
    std::size_t connections() const;

  private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace posthorn::http
