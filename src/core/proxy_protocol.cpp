#include "core/proxy_protocol.hpp"

#include <boost/asio/read.hpp>

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/log.hpp"

namespace posthorn::core {
namespace {

using tcp = asio::ip::tcp;
using Status = ProxyHeader::Status;

constexpr std::string_view kV1 = "PROXY ";
constexpr std::size_t kV1Max = 107;  // the longest v1 line, CRLF included
constexpr std::array<unsigned char, 12> kV2 = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D,
                                               0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};

ProxyHeader invalid() { return {.status = Status::invalid}; }
ProxyHeader need(std::size_t n) { return {.status = Status::incomplete, .length = n}; }

bool starts_as(std::string_view bytes, std::string_view sig) {
    const auto n = std::min(bytes.size(), sig.size());
    return bytes.substr(0, n) == sig.substr(0, n);
}

std::optional<std::uint16_t> port_of(std::string_view s) {
    // Decimal, no sign, no leading zero (the specification's form).
    if (s.empty() || s.size() > 5 || (s.size() > 1 && s.front() == '0')) return std::nullopt;
    unsigned v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || v > 65535) return std::nullopt;
    return static_cast<std::uint16_t>(v);
}

// "PROXY TCP4 192.0.2.1 198.51.100.1 56324 443\r\n", or "PROXY UNKNOWN…\r\n".
ProxyHeader parse_v1(std::string_view bytes) {
    const auto crlf = bytes.find("\r\n");
    if (crlf == std::string_view::npos) {
        if (bytes.size() >= kV1Max) return invalid();
        return need(bytes.size() + 1);
    }
    const auto line = bytes.substr(0, crlf);
    ProxyHeader done{.status = Status::complete, .length = crlf + 2};
    std::vector<std::string_view> words;
    std::size_t at = 0;
    while (at <= line.size()) {
        const auto sp = line.find(' ', at);
        words.push_back(
            line.substr(at, sp == std::string_view::npos ? std::string_view::npos : sp - at));
        if (sp == std::string_view::npos) break;
        at = sp + 1;
    }
    if (words.size() >= 2 && words[1] == "UNKNOWN") return done;  // the rest is ignored
    if (words.size() != 6 || (words[1] != "TCP4" && words[1] != "TCP6")) return invalid();
    error_code ec;
    const auto src = asio::ip::make_address(std::string(words[2]), ec);
    if (ec) return invalid();
    const auto dst = asio::ip::make_address(std::string(words[3]), ec);
    if (ec) return invalid();
    const bool v4 = words[1] == "TCP4";
    if (src.is_v4() != v4 || dst.is_v4() != v4) return invalid();
    const auto sport = port_of(words[4]);
    if (!sport || !port_of(words[5])) return invalid();
    auto out = done;
    out.source = tcp::endpoint(src, *sport);
    return out;
}

// 12 bytes of signature, version and command, family and protocol, a 16-bit length, then
// the addresses (and TLVs, which are skipped).
ProxyHeader parse_v2(std::string_view bytes) {
    if (bytes.size() < 16) return need(16);
    const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
    if ((b[12] >> 4) != 2) return invalid();
    const unsigned command = b[12] & 0x0F;
    if (command > 1) return invalid();
    const std::size_t len = (std::size_t{b[14]} << 8) | b[15];
    if (16 + len > kMaxProxyHeader) return invalid();
    if (bytes.size() < 16 + len) return need(16 + len);
    ProxyHeader out{.status = Status::complete, .length = 16 + len};
    if (command == 0) return out;  // LOCAL: the balancer's own connection
    const unsigned family = b[13] >> 4, protocol = b[13] & 0x0F;
    if (protocol != 1) return out;  // not over a stream: the connection speaks for itself
    const auto* a = b + 16;
    if (family == 1) {  // AF_INET: source, destination, source port, destination port
        if (len < 12) return invalid();
        asio::ip::address_v4::bytes_type src{};
        std::memcpy(src.data(), a, 4);
        out.source = tcp::endpoint(asio::ip::address_v4(src),
                                   static_cast<std::uint16_t>((a[8] << 8) | a[9]));
    } else if (family == 2) {  // AF_INET6
        if (len < 36) return invalid();
        asio::ip::address_v6::bytes_type src{};
        std::memcpy(src.data(), a, 16);
        out.source = tcp::endpoint(asio::ip::address_v6(src),
                                   static_cast<std::uint16_t>((a[32] << 8) | a[33]));
    } else if (family != 0 && family != 3) {  // UNSPEC and UNIX: no client address
        return invalid();
    }
    return out;
}

}  // namespace

ProxyHeader parse_proxy_header(std::string_view bytes) {
    if (bytes.empty()) return need(8);
    const std::string_view v2(reinterpret_cast<const char*>(kV2.data()), kV2.size());
    if (starts_as(bytes, v2)) return bytes.size() < v2.size() ? need(16) : parse_v2(bytes);
    if (starts_as(bytes, kV1)) return bytes.size() < kV1.size() ? need(8) : parse_v1(bytes);
    return invalid();
}

asio::awaitable<Result<std::optional<tcp::endpoint>>> read_proxy_header(
    tcp::socket& socket, std::chrono::milliseconds timeout) {
    // Reads exactly what the header needs, never past it: what follows is the client's.
    // A v1 line's end is found a byte at a time (a header's 100 bytes, once a connection).
    // The timer's handler may already be queued when the read completes: it then finds
    // `done` and leaves the socket alone (both run on the connection's one thread).
    struct Deadline {
        bool done = false, late = false;
    };
    auto deadline = std::make_shared<Deadline>();
    asio::steady_timer timer(socket.get_executor(), timeout);
    timer.async_wait([&socket, deadline](error_code ec) {
        if (ec || deadline->done) return;
        deadline->late = true;
        socket.cancel(ec);
    });
    std::string bytes;
    ProxyHeader h = parse_proxy_header(bytes);
    while (h.status == Status::incomplete) {
        const auto had = bytes.size();
        bytes.resize(h.length);
        auto [ec, n] = co_await asio::async_read(
            socket, asio::buffer(bytes.data() + had, h.length - had), use_nothrow_awaitable);
        if (ec) {
            deadline->done = true;
            co_return deadline->late ? asio::error::timed_out : ec;
        }
        h = parse_proxy_header(bytes);
    }
    deadline->done = true;
    if (h.status == Status::invalid) co_return asio::error::invalid_argument;
    co_return h.source;
}

asio::awaitable<std::optional<tcp::endpoint>> client_endpoint(tcp::socket& socket,
                                                              bool proxy_protocol,
                                                              const std::vector<Network>& trusted,
                                                              const char* listener) {
    constexpr std::chrono::seconds kHeaderTimeout{10};
    error_code ec;
    auto peer = socket.remote_endpoint(ec);
    if (ec) co_return std::nullopt;  // gone already
    if (!proxy_protocol || !in_networks(trusted, peer.address())) co_return peer;
    auto source = co_await read_proxy_header(socket, kHeaderTimeout);
    if (!source) {
        log::warn("{}: no valid PROXY header from {}: {}", listener, peer.address().to_string(),
                  source.error().message());
        socket.close(ec);
        co_return std::nullopt;
    }
    co_return source->value_or(peer);
}

}  // namespace posthorn::core
