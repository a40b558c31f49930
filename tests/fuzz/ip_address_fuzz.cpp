// libFuzzer target for the special-address check (src/core/address.cpp) that guards webhook
// targets against SSRF. On the first 16 bytes read as an IPv6 address: the name of the range
// and the verdict agree; every IPv4 address it carries that is special makes it special
// (private(X) implies private(v6)); the IPv4-mapped and NAT64 well-known forms are exactly
// as special as what they carry; nothing outside 2000::/3 is public. On the first 4 bytes
// as an IPv4 address X: every form carrying X is special when X is. On the input as a host
// string: a literal is judged as its address; the inet_aton forms are read as glibc's
// inet_aton reads them (curl's reading is the same but for glibc's trailing white space)
// and read back from their dotted form.
#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/address.hpp"

namespace {

namespace ip = boost::asio::ip;
using posthorn::core::is_private_address;

ip::address_v6 v6_from(const std::uint8_t* p) {
    ip::address_v6::bytes_type b{};
    std::copy(p, p + 16, b.begin());
    return ip::address_v6(b);
}

// An IPv6 address: the first `prefix` bytes, then the IPv4 address at byte `at`.
ip::address_v6 carrying(std::initializer_list<std::uint8_t> prefix, std::size_t at,
                        ip::address_v4 x) {
    ip::address_v6::bytes_type b{};
    std::copy(prefix.begin(), prefix.end(), b.begin());
    const auto v4 = x.to_bytes();
    std::copy(v4.begin(), v4.end(), b.begin() + static_cast<std::ptrdiff_t>(at));
    return ip::address_v6(b);
}

void check_v6(const ip::address_v6& a) {
    const bool special = is_private_address(ip::address(a));
    if (special == posthorn::core::special_purpose(ip::address(a)).empty()) __builtin_trap();
    const auto b = a.to_bytes();
    const bool mapped = std::all_of(b.begin(), b.begin() + 10, [](auto c) { return c == 0; }) &&
                        b[10] == 0xff && b[11] == 0xff;
    const bool nat64 = b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b &&
                       std::all_of(b.begin() + 4, b.begin() + 12, [](auto c) { return c == 0; });
    if (!mapped && !nat64 && (b[0] & 0xe0) != 0x20 && !special) __builtin_trap();
    for (const auto& e : posthorn::core::embedded_v4(a)) {
        if (e.form.empty()) continue;
        const bool carried = is_private_address(ip::address(e.v4));
        if (carried && !special) __builtin_trap();
        if ((mapped || nat64) && carried != special) __builtin_trap();
    }
}

void check_v4(ip::address_v4 x) {
    const bool p = is_private_address(ip::address(x));
    const ip::address_v6 forms[] = {
        carrying({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 12, x),     // IPv4-mapped
        carrying({0, 0x64, 0xff, 0x9b}, 12, x),                          // NAT64
        carrying({}, 12, x),                                             // IPv4-compatible
        carrying({0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 12, x),           // IPv4-translated
        carrying({0, 0x64, 0xff, 0x9b, 0, 1}, 12, x),                    // local-use NAT64
        carrying({0x20, 0x02}, 2, x),                                    // 6to4
        carrying({0x20, 0x01, 0, 0}, 4, x),                              // Teredo server
        carrying({0x20, 0x01, 0, 0}, 12, ip::address_v4(~x.to_uint())),  // Teredo client
    };
    for (const auto& f : forms) {
        check_v6(f);
        if (p && !is_private_address(ip::address(f))) __builtin_trap();
    }
    if (is_private_address(ip::address(forms[0])) != p) __builtin_trap();
    if (is_private_address(ip::address(forms[1])) != p) __builtin_trap();
}

void check_host(std::string_view s) {
    using namespace posthorn::core;
    if (const auto a = parse_ip_literal(s); a && is_private_host(s) != is_private_address(*a))
        __builtin_trap();
    const auto x = parse_ipv4_shorthand(s);
    if (x) {
        const auto again = parse_ipv4_shorthand(x->to_string());
        if (!again || *again != *x) __builtin_trap();
        if (parse_ip_literal(s) != ip::address(*x)) __builtin_trap();
    }
    // glibc's inet_aton reads a C string and allows trailing white space; compare elsewhere.
    if (s.find('\0') != std::string_view::npos ||
        std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c) != 0; }))
        return;
    const std::string z(s);
    in_addr in{};
    const bool glibc = ::inet_aton(z.c_str(), &in) != 0;
    if (glibc != x.has_value()) __builtin_trap();
    if (x && ntohl(in.s_addr) != x->to_uint()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size >= 16) check_v6(v6_from(data));
    if (size >= 4) {
        std::uint32_t v = 0;
        for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | data[i];
        check_v4(ip::address_v4(v));
    }
    check_host(std::string_view(reinterpret_cast<const char*>(data), size));
    return 0;
}
