// core/proxy_protocol.hpp — the PROXY protocol of HAProxy, versions 1 (text) and 2 (binary)
// (haproxy.org/download/2.9/doc/proxy-protocol.txt): a load balancer in front of a listener
// starts each connection with a header naming the client it stands for, so that the
// per-client limits (core/client_limits.hpp) and the logs see the client, not the balancer.
// A listener takes it only from its trusted networks, and then requires it.
#pragma once

#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "core/asio.hpp"
#include "core/client_limits.hpp"
#include "core/result.hpp"

namespace posthorn::core {

struct ProxyHeader {
    enum class Status { incomplete, invalid, complete };
    Status status = Status::incomplete;
    // incomplete: the bytes the header needs at least (more than were given);
    // complete: its length, which the connection's data follows.
    std::size_t length = 0;
    // The client: none for v2's LOCAL command, v1's UNKNOWN, and families other than TCP
    // over IPv4 or IPv6 (health checks of the balancer: the connection is its own).
    std::optional<asio::ip::tcp::endpoint> source;
};

// The longest header read: v1's 107 bytes, or v2's 16 and address block (TLVs included).
inline constexpr std::size_t kMaxProxyHeader = 16 + 2048;

// Reads a header from the start of `bytes` (everything the connection has sent so far).
ProxyHeader parse_proxy_header(std::string_view bytes);

// Reads one header from `socket` and nothing after it, within `timeout`; answers its
// source (none: the connection speaks for itself), or an error when it is missing, broken,
// late or the connection ended.
asio::awaitable<Result<std::optional<asio::ip::tcp::endpoint>>> read_proxy_header(
    asio::ip::tcp::socket& socket, std::chrono::milliseconds timeout);

// The client a new connection stands for: its peer, or, when `proxy_protocol` is on and the
// peer is in `trusted`, the client its PROXY header names (the peer itself for a LOCAL
// header). nullopt when the peer is gone, or a required header is missing, broken or late:
// the socket is then closed and a warning naming `listener` logged.
asio::awaitable<std::optional<asio::ip::tcp::endpoint>> client_endpoint(
    asio::ip::tcp::socket& socket, bool proxy_protocol, const std::vector<Network>& trusted,
    const char* listener);

}  // namespace posthorn::core
