#include "core/address.hpp"

#include <array>
#include <cstdint>
#include <string>

#include "core/text.hpp"

namespace posthorn::core {
namespace {

bool v4_private(std::uint32_t a) noexcept {
    struct Net {
        std::uint32_t base;
        int bits;
    };
    static constexpr std::array<Net, 15> kNets = {{
        {0x00000000, 8},   // 0.0.0.0/8 "this network"
        {0x0A000000, 8},   // 10/8
        {0x64400000, 10},  // 100.64/10 CGNAT
        {0x7F000000, 8},   // 127/8 loopback
        {0xA9FE0000, 16},  // 169.254/16 link-local
        {0xAC100000, 12},  // 172.16/12
        {0xC0000000, 24},  // 192.0.0/24 IETF protocol assignments
        {0xC0000200, 24},  // 192.0.2/24 TEST-NET-1
        {0xC0A80000, 16},  // 192.168/16
        {0xC6120000, 15},  // 198.18/15 benchmarking
        {0xC6336400, 24},  // 198.51.100/24 TEST-NET-2
        {0xCB007100, 24},  // 203.0.113/24 TEST-NET-3
        {0xE0000000, 4},   // 224/4 multicast
        {0xF0000000, 4},   // 240/4 reserved, and the broadcast address
        {0xFFFFFFFF, 32},
    }};
    for (const auto& n : kNets) {
        const std::uint32_t mask = n.bits == 0 ? 0 : ~std::uint32_t{0} << (32 - n.bits);
        if ((a & mask) == n.base) return true;
    }
    return false;
}

}  // namespace

bool is_private_address(const asio::ip::address& a) noexcept {
    if (a.is_v4()) return v4_private(a.to_v4().to_uint());
    const auto v6 = a.to_v6();
    if (v6.is_v4_mapped())
        return v4_private(asio::ip::make_address_v4(asio::ip::v4_mapped, v6).to_uint());
    if (v6.is_loopback() || v6.is_unspecified() || v6.is_link_local() || v6.is_multicast() ||
        v6.is_site_local())
        return true;
    const auto b = v6.to_bytes();
    if ((b[0] & 0xFE) == 0xFC) return true;                                         // fc00::/7 ULA
    if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0D && b[3] == 0xB8) return true;  // doc
    if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B) return true;  // NAT64
    return false;
}

bool is_private_host(std::string_view host) noexcept {
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    std::string h = ascii_lower(host);
    while (!h.empty() && h.back() == '.') h.pop_back();
    if (h == "localhost" || (h.size() > 10 && h.ends_with(".localhost"))) return true;
    boost::system::error_code ec;
    const auto a = asio::ip::make_address(h, ec);
    return !ec && is_private_address(a);
}

}  // namespace posthorn::core
