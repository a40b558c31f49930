// core/address.hpp — which IP addresses are not on the public Internet: the targets a
// webhook may not reach unless the operator allows it (DESIGN §8), so that an API user
// cannot make posthorn call into its own network (SSRF).
#pragma once

#include <boost/asio/ip/address.hpp>

#include <string_view>

#include "core/asio.hpp"

namespace posthorn::core {

// Loopback, private (RFC 1918, RFC 4193), link-local, CGNAT (RFC 6598), unspecified,
// multicast, broadcast and the other special-purpose ranges (RFC 6890); IPv4-mapped IPv6
// addresses are judged as the IPv4 address they carry.
bool is_private_address(const asio::ip::address& a) noexcept;

// True for a host that names this machine or a private address: "localhost" (and names
// under .localhost, RFC 6761) or a private IP literal (IPv6 with or without brackets).
bool is_private_host(std::string_view host) noexcept;

}  // namespace posthorn::core
