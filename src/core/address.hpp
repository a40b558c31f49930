// core/address.hpp — which IP addresses are not on the public Internet: the targets a
// webhook may not reach unless the operator allows it (DESIGN §8), so that an API user
// cannot make posthorn call into its own network (SSRF).
//
// The reference is IANA's IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and
// its updates: RFC 7526, 8190, 8215, 9602, 9637…), plus multicast, and for IPv6 everything
// outside 2000::/3, the only block IANA allocates as global unicast. Every address of a
// registry entry counts as special, also where the registry marks a few single addresses
// or small blocks "globally reachable": those are anycast service addresses and
// identifiers (192.0.0.9-10 PCP and TURN anycast, 2001:1::1-3, 2001:3::/32 AMT,
// 2001:4:112::/48 AS112, 2001:20::/28 ORCHIDv2, 2001:30::/28 drone ids), which no webhook
// receiver lives on; refusing their whole /24 or /23 keeps the table short and the rule
// plain. AS112 and AMT blocks outside those (192.31.196/24, 192.52.193/24, 192.175.48/24,
// 2620:4f:8000::/48) are ordinary public addresses here.
//
// IPv6 forms that carry an IPv4 address (embedded_v4()):
//  - IPv4-mapped ::ffff:0:0/96 (RFC 4291 §2.5.5.2) is the IPv4 address itself on a
//    dual-stack socket: judged as the IPv4 address it carries, and nothing else.
//  - NAT64 well-known prefix 64:ff9b::/96 (RFC 6052): the translator reaches exactly the
//    IPv4 address in the last 32 bits, and RFC 6052 §3.1 forbids it for non-global IPv4
//    addresses: judged as that IPv4 address. A public one is allowed, because an IPv6-only
//    host behind DNS64 reaches every IPv4-only receiver through this prefix.
//  - Every other form is refused as a whole, whatever IPv4 address it carries:
//    IPv4-compatible ::/96 (deprecated, RFC 4291 §2.5.5.1; an automatic tunnel, such as
//    Linux's sit0, sends it to the IPv4 address), IPv4-translated ::ffff:0:0:0/96 (RFC 2765), 6to4
//    2002::/16 (RFC 3056, deprecated relays, RFC 7526) and Teredo 2001::/32 (RFC 4380): a relay or
//    tunnel decides where they go, possibly inside the operator's network, and no receiver needs
//    them; the local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215) is the operator's own translator,
//    with an embedding its configuration chooses.
// So for every IPv6 address that embeds an IPv4 address X: private(X) implies private(v6).
//
// Host strings (is_private_host, parse_ip_literal) are read as curl and the system
// resolver read them, so that a literal refused when a URL is checked is the same address
// curl would connect to: IPv4 in every inet_aton form ("127.1", "0x7f.1", "2130706433",
// "017700000001"), IPv6 with or without brackets and with a zone id ("fe80::1%eth0").
// The check on a host string is a first, early refusal; the guard is the check of each
// address a connection is about to be made to (webhooks/http_client.cpp), which also
// covers names that resolve to special addresses.
//
// Pure functions, no I/O; thread-safe.
#pragma once

#include <boost/asio/ip/address.hpp>

#include <array>
#include <optional>
#include <string_view>

#include "core/asio.hpp"

namespace posthorn::core {

// The registry entry `a` falls in, for messages ("loopback (127.0.0.0/8)"), or an empty
// view for an address on the public Internet.
std::string_view special_purpose(const asio::ip::address& a) noexcept;

// !special_purpose(a).empty(): loopback, private, link-local, documentation, multicast,
// reserved and every other special-purpose address, and the embedding forms above.
bool is_private_address(const asio::ip::address& a) noexcept;

// An IPv4 address an IPv6 address carries, and the name of the form ("6to4").
struct EmbeddedV4 {
    std::string_view form;  // empty: no address in this slot
    asio::ip::address_v4 v4;
};
// The IPv4 addresses `a` carries: IPv4-mapped, IPv4-compatible (not :: or ::1),
// IPv4-translated, NAT64 (64:ff9b::/96, and the last 32 bits of 64:ff9b:1::/48), 6to4
// (bits 16-47) and Teredo (the server in bits 32-63, the client in the last 32 bits
// inverted); Teredo fills both slots, the others the first.
std::array<EmbeddedV4, 2> embedded_v4(const asio::ip::address_v6& a) noexcept;

// An IPv4 address written in one of the inet_aton forms curl and getaddrinfo accept: one
// to four parts separated by dots, each decimal, octal (leading 0) or hex (leading 0x),
// the last filling the bytes left ("127.1" is 127.0.0.1, "2130706433" too). No sign, no
// space, no empty part, no part too large; std::nullopt otherwise.
std::optional<asio::ip::address_v4> parse_ipv4_shorthand(std::string_view s) noexcept;

// The address a URL host or a host name stands for when it is a literal: an IPv6 address
// with or without brackets (a zone id after '%' is ignored), or an IPv4 address in an
// inet_aton form, trailing dots ignored; std::nullopt for a name.
std::optional<asio::ip::address> parse_ip_literal(std::string_view host) noexcept;

// True for a host that names this machine or a special-purpose address: "localhost" (and
// names under .localhost, RFC 6761) or a literal (parse_ip_literal) that is_private_address.
bool is_private_host(std::string_view host) noexcept;

}  // namespace posthorn::core
