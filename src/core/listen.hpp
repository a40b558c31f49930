// core/listen.hpp — opening a listening TCP socket, the same way for every server
// (HTTP, SMTP submission, SMTP inbound): SO_REUSEADDR, bind, listen with the system's
// backlog. Answers the bound endpoint (port 0 picks one).
#pragma once

#include <boost/asio/ip/tcp.hpp>

#include "core/asio.hpp"
#include "core/result.hpp"

namespace posthorn::core {

Result<asio::ip::tcp::endpoint> open_listener(asio::ip::tcp::acceptor& acceptor,
                                              const asio::ip::tcp::endpoint& at);

}  // namespace posthorn::core
