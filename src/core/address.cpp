#include "core/address.hpp"

#include <cstdint>
#include <string>

#include "core/text.hpp"

namespace posthorn::core {
namespace {

struct V4Net {
    std::uint32_t base;
    int bits;
    std::string_view name;
};

// IANA IPv4 Special-Purpose Address Registry, plus multicast (RFC 5771).
constexpr std::array<V4Net, 17> kV4Nets = {{
    {0x00000000, 8, "this network (0.0.0.0/8)"},
    {0x0A000000, 8, "private (10.0.0.0/8)"},
    {0x64400000, 10, "shared address space (100.64.0.0/10)"},
    {0x7F000000, 8, "loopback (127.0.0.0/8)"},
    {0xA9FE0000, 16, "link-local (169.254.0.0/16)"},
    {0xAC100000, 12, "private (172.16.0.0/12)"},
    {0xC0000000, 24, "IETF protocol assignments (192.0.0.0/24)"},
    {0xC0000200, 24, "documentation (192.0.2.0/24)"},
    {0xC0586300, 24, "6to4 relay anycast (192.88.99.0/24)"},
    {0xC0A80000, 16, "private (192.168.0.0/16)"},
    {0xC6120000, 15, "benchmarking (198.18.0.0/15)"},
    {0xC6336400, 24, "documentation (198.51.100.0/24)"},
    {0xCB007100, 24, "documentation (203.0.113.0/24)"},
    {0xE0000000, 4, "multicast (224.0.0.0/4)"},
    {0xFFFFFFFF, 32, "limited broadcast (255.255.255.255)"},
    {0xF0000000, 4, "reserved (240.0.0.0/4)"},
    {0x00000000, 0, ""},  // the rest: public
}};

std::string_view v4_special(std::uint32_t a) noexcept {
    for (const auto& n : kV4Nets) {
        const std::uint32_t mask = n.bits == 0 ? 0 : ~std::uint32_t{0} << (32 - n.bits);
        if ((a & mask) == n.base) return n.name;
    }
    return {};
}

using Bytes16 = asio::ip::address_v6::bytes_type;

struct V6Net {
    Bytes16 base;
    int bits;
    std::string_view name;
};

// An IPv6 prefix from its first 16-bit groups (the rest zero).
constexpr Bytes16 groups(std::initializer_list<std::uint16_t> g) {
    Bytes16 b{};
    std::size_t i = 0;
    for (const auto v : g) {
        b[i++] = static_cast<unsigned char>(v >> 8);
        b[i++] = static_cast<unsigned char>(v & 0xFF);
    }
    return b;
}

// IANA IPv6 Special-Purpose Address Registry and the blocks outside 2000::/3 that a name
// helps to explain; more specific entries first. ::ffff:0:0/96 and 64:ff9b::/96 are judged
// by the IPv4 address they carry, before this table.
const std::array<V6Net, 17> kV6Nets = {{
    {groups({}), 128, "unspecified (::)"},
    {groups({0, 0, 0, 0, 0, 0, 0, 1}), 128, "loopback (::1)"},
    {groups({0, 0, 0, 0, 0xffff}), 96, "IPv4-translated (::ffff:0:0:0/96)"},
    {groups({}), 96, "IPv4-compatible (::/96)"},
    {groups({0x64, 0xff9b, 1}), 48, "local-use NAT64 (64:ff9b:1::/48)"},
    {groups({0x100}), 64, "discard-only (100::/64)"},
    {groups({0x2001}), 32, "Teredo (2001::/32)"},
    {groups({0x2001}), 23, "IETF protocol assignments (2001::/23)"},
    {groups({0x2001, 0xdb8}), 32, "documentation (2001:db8::/32)"},
    {groups({0x2002}), 16, "6to4 (2002::/16)"},
    {groups({0x3fff}), 20, "documentation (3fff::/20)"},
    {groups({0x5f00}), 16, "SRv6 SIDs (5f00::/16)"},
    {groups({0xfc00}), 7, "unique local (fc00::/7)"},
    {groups({0xfe80}), 10, "link-local (fe80::/10)"},
    {groups({0xfec0}), 10, "site-local (fec0::/10)"},
    {groups({0xff00}), 8, "multicast (ff00::/8)"},
    {groups({0x2000}), 3, ""},  // global unicast and none of the above: public
}};

bool in_prefix(const Bytes16& a, const Bytes16& base, int bits) noexcept {
    for (std::size_t i = 0; bits > 0; ++i, bits -= 8) {
        const unsigned mask = bits >= 8 ? 0xFFu : (0xFFu << (8 - bits)) & 0xFFu;
        if ((a[i] & mask) != (base[i] & mask)) return false;
    }
    return true;
}

std::uint32_t v4_at(const Bytes16& b, std::size_t at) noexcept {
    return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) |
           (std::uint32_t{b[at + 2]} << 8) | std::uint32_t{b[at + 3]};
}

const Bytes16 kMapped = groups({0, 0, 0, 0, 0, 0xffff});
const Bytes16 kNat64 = groups({0x64, 0xff9b});

std::string_view v6_special(const asio::ip::address_v6& a) noexcept {
    const auto b = a.to_bytes();
    if (in_prefix(b, kMapped, 96) || in_prefix(b, kNat64, 96)) return v4_special(v4_at(b, 12));
    for (const auto& n : kV6Nets)
        if (in_prefix(b, n.base, n.bits)) return n.name;
    return "not global unicast (outside 2000::/3)";
}

// One inet_aton part: decimal, octal after a 0, hex after 0x; at least one digit, no sign.
std::optional<std::uint64_t> aton_part(std::string_view p) noexcept {
    unsigned base = 10;
    if (p.size() > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p.remove_prefix(2);
    } else if (p.size() > 1 && p[0] == '0') {
        base = 8;
        p.remove_prefix(1);
    }
    if (p.empty()) return std::nullopt;
    std::uint64_t v = 0;
    for (const char c : p) {
        unsigned d = 0;
        if (c >= '0' && c <= '9') {
            d = static_cast<unsigned>(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            d = static_cast<unsigned>(c - 'a' + 10);
        } else if (c >= 'A' && c <= 'F') {
            d = static_cast<unsigned>(c - 'A' + 10);
        } else {
            return std::nullopt;
        }
        if (d >= base) return std::nullopt;
        v = v * base + d;
        if (v > 0xFFFFFFFFu) return std::nullopt;
    }
    return v;
}

}  // namespace

std::string_view special_purpose(const asio::ip::address& a) noexcept {
    if (a.is_v4()) return v4_special(a.to_v4().to_uint());
    return v6_special(a.to_v6());
}

bool is_private_address(const asio::ip::address& a) noexcept { return !special_purpose(a).empty(); }

std::array<EmbeddedV4, 2> embedded_v4(const asio::ip::address_v6& a) noexcept {
    std::array<EmbeddedV4, 2> out{};
    const auto b = a.to_bytes();
    auto at = [&b](std::size_t i) { return asio::ip::address_v4(v4_at(b, i)); };
    if (in_prefix(b, kMapped, 96)) {
        out[0] = {"IPv4-mapped", at(12)};
    } else if (in_prefix(b, groups({0, 0, 0, 0, 0xffff}), 96)) {
        out[0] = {"IPv4-translated", at(12)};
    } else if (in_prefix(b, groups({}), 96)) {
        if (v4_at(b, 12) > 1) out[0] = {"IPv4-compatible", at(12)};  // not :: or ::1
    } else if (in_prefix(b, kNat64, 96) || in_prefix(b, groups({0x64, 0xff9b, 1}), 48)) {
        out[0] = {"NAT64", at(12)};
    } else if (in_prefix(b, groups({0x2002}), 16)) {
        out[0] = {"6to4", at(2)};
    } else if (in_prefix(b, groups({0x2001}), 32)) {
        out[0] = {"Teredo server", at(4)};
        out[1] = {"Teredo client", asio::ip::address_v4(~v4_at(b, 12))};
    }
    return out;
}

std::optional<asio::ip::address_v4> parse_ipv4_shorthand(std::string_view s) noexcept {
    std::array<std::uint64_t, 4> parts{};
    std::size_t n = 0;
    while (true) {
        const auto dot = s.find('.');
        auto v = aton_part(s.substr(0, dot));
        if (!v || n == parts.size()) return std::nullopt;
        parts[n++] = *v;
        if (dot == std::string_view::npos) break;
        s.remove_prefix(dot + 1);
    }
    // Every part but the last is one byte; the last fills the 4 - (n - 1) bytes left.
    const int last_bits = 8 * static_cast<int>(5 - n);
    for (std::size_t i = 0; i + 1 < n; ++i)
        if (parts[i] > 0xFF) return std::nullopt;
    if (last_bits < 32 && parts[n - 1] >= (std::uint64_t{1} << last_bits)) return std::nullopt;
    std::uint32_t v = 0;
    for (std::size_t i = 0; i + 1 < n; ++i)
        v |= static_cast<std::uint32_t>(parts[i]) << (24 - 8 * i);
    v |= static_cast<std::uint32_t>(parts[n - 1]);
    return asio::ip::address_v4(v);
}

std::optional<asio::ip::address> parse_ip_literal(std::string_view host) noexcept {
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    while (!host.empty() && host.back() == '.') host.remove_suffix(1);
    if (host.find(':') != std::string_view::npos) {
        host = host.substr(0, host.find('%'));  // a zone id names an interface, not an address
        boost::system::error_code ec;
        const auto a = asio::ip::make_address_v6(std::string(host), ec);
        if (ec) return std::nullopt;
        return asio::ip::address(a);
    }
    if (auto v4 = parse_ipv4_shorthand(host)) return asio::ip::address(*v4);
    return std::nullopt;
}

bool is_private_host(std::string_view host) noexcept {
    if (auto a = parse_ip_literal(host)) return is_private_address(*a);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') return true;  // not IP
    std::string h = ascii_lower(host);
    while (!h.empty() && h.back() == '.') h.pop_back();
    return h == "localhost" || h.ends_with(".localhost");
}

}  // namespace posthorn::core
