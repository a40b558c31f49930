#include "core/address.hpp"

#include <gtest/gtest.h>

#include <string>

namespace posthorn::core {
namespace {

asio::ip::address ip(const char* s) { return asio::ip::make_address(s); }
bool priv(const char* s) { return is_private_address(ip(s)); }

// Each range of the registries: its first and last address are special, the addresses
// just outside it are not (where they are not in another range).
struct Range {
    const char* first;
    const char* last;
    const char* below;  // nullptr: no public neighbour below
    const char* above;
};

void expect_range(const Range& r) {
    EXPECT_TRUE(priv(r.first)) << r.first;
    EXPECT_TRUE(priv(r.last)) << r.last;
    if (r.below) {
        EXPECT_FALSE(priv(r.below)) << r.below;
    }
    if (r.above) {
        EXPECT_FALSE(priv(r.above)) << r.above;
    }
}

TEST(Address, EveryIpv4SpecialPurposeRangeAndItsNeighbours) {
    const Range kRanges[] = {
        {"0.0.0.0", "0.255.255.255", nullptr, "1.0.0.0"},
        {"10.0.0.0", "10.255.255.255", "9.255.255.255", "11.0.0.0"},
        {"100.64.0.0", "100.127.255.255", "100.63.255.255", "100.128.0.0"},
        {"127.0.0.0", "127.255.255.255", "126.255.255.255", "128.0.0.0"},
        {"169.254.0.0", "169.254.255.255", "169.253.255.255", "169.255.0.0"},
        {"172.16.0.0", "172.31.255.255", "172.15.255.255", "172.32.0.0"},
        {"192.0.0.0", "192.0.0.255", "191.255.255.255", "192.0.1.0"},
        {"192.0.2.0", "192.0.2.255", "192.0.1.255", "192.0.3.0"},
        {"192.88.99.0", "192.88.99.255", "192.88.98.255", "192.88.100.0"},
        {"192.168.0.0", "192.168.255.255", "192.167.255.255", "192.169.0.0"},
        {"198.18.0.0", "198.19.255.255", "198.17.255.255", "198.20.0.0"},
        {"198.51.100.0", "198.51.100.255", "198.51.99.255", "198.51.101.0"},
        {"203.0.113.0", "203.0.113.255", "203.0.112.255", "203.0.114.0"},
        {"224.0.0.0", "239.255.255.255", "223.255.255.255", nullptr},
        {"240.0.0.0", "255.255.255.254", nullptr, nullptr},
        {"255.255.255.255", "255.255.255.255", nullptr, nullptr},
    };
    for (const auto& r : kRanges) expect_range(r);
}

TEST(Address, EveryIpv6SpecialPurposeRangeAndItsNeighbours) {
    const Range kRanges[] = {
        {"::", "::", nullptr, nullptr},
        {"::1", "::1", nullptr, nullptr},
        {"::2", "::ffff:ffff", nullptr, nullptr},                  // IPv4-compatible, deprecated
        {"::ffff:0:0:0", "::ffff:0:ffff:ffff", nullptr, nullptr},  // IPv4-translated
        {"64:ff9b:1::", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", nullptr, nullptr},
        {"100::", "100::ffff:ffff:ffff:ffff", nullptr, nullptr},
        {"2001::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff",
         "2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:200::"},
        {"2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db7:ffff::1", "2001:db9::"},
        {"2002::", "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:ffff::1", "2003::"},
        {"3fff::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "3ffe:ffff::1", "3fff:1000::"},
        {"5f00::", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", nullptr, nullptr},  // not in 2000::/3
        {"fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", nullptr, nullptr},
        {"fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", nullptr, nullptr},
        {"fec0::", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", nullptr, nullptr},
        {"ff00::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", nullptr, nullptr},
        // Outside 2000::/3 (IANA: reserved or unassigned), next to it on both sides.
        {"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "4000::", nullptr, nullptr},
    };
    for (const auto& r : kRanges) expect_range(r);
    // Global unicast that is not special: public, at either end of 2000::/3 too.
    for (const char* a : {"2000::", "2606:4700::1111", "2a00:1450:4001::200e", "2620:4f:8000::1",
                          "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:200::1"})
        EXPECT_FALSE(priv(a)) << a;
}

TEST(Address, PublicIpv4IncludingGloballyReachableServiceBlocks) {
    for (const char* a : {"8.8.8.8", "1.1.1.1", "93.184.216.34", "192.31.196.1", "192.52.193.1",
                          "192.175.48.1", "223.255.255.255"})
        EXPECT_FALSE(priv(a)) << a;
}

TEST(Address, SpecialPurposeNamesTheRange) {
    EXPECT_EQ(special_purpose(ip("127.0.0.1")), "loopback (127.0.0.0/8)");
    EXPECT_EQ(special_purpose(ip("255.255.255.255")), "limited broadcast (255.255.255.255)");
    EXPECT_EQ(special_purpose(ip("::127.0.0.1")), "IPv4-compatible (::/96)");
    EXPECT_EQ(special_purpose(ip("::ffff:10.0.0.1")), "private (10.0.0.0/8)");
    EXPECT_EQ(special_purpose(ip("2001:0:4136:e378:8000:63bf:3fff:fdd2")), "Teredo (2001::/32)");
    EXPECT_EQ(special_purpose(ip("8::1")), "not global unicast (outside 2000::/3)");
    EXPECT_EQ(special_purpose(ip("8.8.8.8")), "");
}

// Each IPv6 form that carries an IPv4 address, with a private and a public one.
struct Embedded {
    const char* v6;
    const char* form;
    const char* v4;
    bool is_private;
};

TEST(Address, EmbeddedIpv4FormsAreReadAndJudged) {
    const Embedded kCases[] = {
        // IPv4-mapped and NAT64's well-known prefix: judged as the IPv4 address.
        {"::ffff:127.0.0.1", "IPv4-mapped", "127.0.0.1", true},
        {"::ffff:8.8.4.4", "IPv4-mapped", "8.8.4.4", false},
        {"64:ff9b::7f00:1", "NAT64", "127.0.0.1", true},
        {"64:ff9b::10.1.2.3", "NAT64", "10.1.2.3", true},
        {"64:ff9b::808:808", "NAT64", "8.8.8.8", false},
        // Every other form: refused whatever it carries (core/address.hpp says why).
        {"::127.0.0.1", "IPv4-compatible", "127.0.0.1", true},  // the SSRF of issue 27
        {"::8.8.8.8", "IPv4-compatible", "8.8.8.8", true},
        {"::ffff:0:127.0.0.1", "IPv4-translated", "127.0.0.1", true},
        {"::ffff:0:8.8.8.8", "IPv4-translated", "8.8.8.8", true},
        {"64:ff9b:1::7f00:1", "NAT64", "127.0.0.1", true},
        {"64:ff9b:1::808:808", "NAT64", "8.8.8.8", true},
        {"2002:7f00:1::1", "6to4", "127.0.0.1", true},
        {"2002:c0a8:101::", "6to4", "192.168.1.1", true},
        {"2002:808:808::1", "6to4", "8.8.8.8", true},
    };
    for (const auto& c : kCases) {
        const auto e = embedded_v4(ip(c.v6).to_v6());
        EXPECT_EQ(e[0].form, c.form) << c.v6;
        EXPECT_EQ(e[0].v4.to_string(), c.v4) << c.v6;
        EXPECT_TRUE(e[1].form.empty()) << c.v6;
        EXPECT_EQ(priv(c.v6), c.is_private) << c.v6;
    }
}

TEST(Address, TeredoCarriesItsServerAndItsInvertedClient) {
    // RFC 4380 §4's example: server 65.54.227.120, client 192.0.2.45 (ports aside).
    auto e = embedded_v4(ip("2001:0:4136:e378:8000:63bf:3fff:fdd2").to_v6());
    EXPECT_EQ(e[0].form, "Teredo server");
    EXPECT_EQ(e[0].v4.to_string(), "65.54.227.120");
    EXPECT_EQ(e[1].form, "Teredo client");
    EXPECT_EQ(e[1].v4.to_string(), "192.0.2.45");
    // A client 127.0.0.1 (inverted: 80ff:fffe), and a public server and client: all refused.
    e = embedded_v4(ip("2001:0:808:808::80ff:fffe").to_v6());
    EXPECT_EQ(e[0].v4.to_string(), "8.8.8.8");
    EXPECT_EQ(e[1].v4.to_string(), "127.0.0.1");
    EXPECT_TRUE(priv("2001:0:808:808::80ff:fffe"));
    EXPECT_TRUE(priv("2001:0:808:808::f7f7:f7f7"));  // client 8.8.8.8
}

TEST(Address, AddressesThatCarryNothing) {
    for (const char* a : {"::", "::1", "2606:4700::1111", "fe80::1", "2001:db8::1"})
        EXPECT_TRUE(embedded_v4(ip(a).to_v6())[0].form.empty()) << a;
}

TEST(Address, Ipv4ShorthandIsReadAsCurlAndGetaddrinfoReadIt) {
    const std::pair<const char*, const char*> kForms[] = {
        {"127.0.0.1", "127.0.0.1"},
        {"2130706433", "127.0.0.1"},
        {"0x7f000001", "127.0.0.1"},
        {"0X7F000001", "127.0.0.1"},
        {"017700000001", "127.0.0.1"},
        {"127.1", "127.0.0.1"},
        {"0x7f.1", "127.0.0.1"},
        {"0177.0.0.1", "127.0.0.1"},
        {"127.0.0.0x1", "127.0.0.1"},
        {"127.0.1", "127.0.0.1"},
        {"10.0x10203", "10.1.2.3"},
        {"0", "0.0.0.0"},
        {"00", "0.0.0.0"},
        {"4294967295", "255.255.255.255"},
        {"8.8.8.8", "8.8.8.8"},
        {"134744072", "8.8.8.8"},
    };
    for (const auto& [in, out] : kForms) {
        const auto a = parse_ipv4_shorthand(in);
        ASSERT_TRUE(a) << in;
        EXPECT_EQ(a->to_string(), out) << in;
    }
    // Names, not addresses: what curl hands to the resolver as a name.
    for (const char* s : {"",
                          ".",
                          "1.",
                          ".1",
                          "1..2",
                          "1.2.3.4.5",
                          "4294967296",
                          "256.1.1.1",
                          "1.256.1.1",
                          "1.2.65536",
                          "1.16777216",
                          "08",
                          "0x",
                          "0xg",
                          "+1",
                          "-1",
                          " 1",
                          "1 ",
                          "1.2.3.4 ",
                          "example.com",
                          "1e3",
                          "0x1.0x1.0x1.0x100",
                          "99999999999999999999"})
        EXPECT_FALSE(parse_ipv4_shorthand(s)) << '"' << s << '"';
}

TEST(Address, IpLiteralsWithBracketsZonesAndTrailingDots) {
    const std::pair<const char*, const char*> kLiterals[] = {
        {"[::1]", "::1"},
        {"::1", "::1"},
        {"[::127.0.0.1]", "::127.0.0.1"},
        {"fe80::1%eth0", "fe80::1"},
        {"[fe80::1%25eth0]", "fe80::1"},
        {"127.1", "127.0.0.1"},
        {"127.0.0.1.", "127.0.0.1"},
        {"[FE80::1]", "fe80::1"},
    };
    for (const auto& [in, out] : kLiterals) {
        const auto a = parse_ip_literal(in);
        ASSERT_TRUE(a) << in;
        EXPECT_EQ(a->to_string(), out) << in;
    }
    for (const char* s : {"example.com", "[example.com]", "[]", "[", ":::", "1.2.3.4.5", "v1.x"})
        EXPECT_FALSE(parse_ip_literal(s)) << s;
}

TEST(Address, HostsNamingThisMachineOrASpecialLiteral) {
    for (const char* h : {"localhost",
                          "LOCALHOST",
                          "localhost.",
                          "api.localhost",
                          "127.0.0.1",
                          "[::1]",
                          "::1",
                          "10.0.0.7",
                          "[fe80::1]",
                          "fe80::1%eth0",
                          "[fe80::1%25eth0]",
                          "[::127.0.0.1]",
                          "[::ffff:127.0.0.1]",
                          "[::ffff:0:127.0.0.1]",
                          "[64:ff9b::7f00:1]",
                          "[2002:7f00:1::]",
                          "[2001:0:808:808::80ff:fffe]",
                          "2130706433",
                          "0x7f.1",
                          "017700000001",
                          "127.1",
                          "0x7f000001",
                          "127.0.0.1.",
                          "0",
                          "0.0.0.0",
                          "192.88.99.1",
                          "[3fff::1]",
                          "[5f00::1]",
                          "[100::1]",
                          "[fec0::1]",
                          "[v1.x]"})
        EXPECT_TRUE(is_private_host(h)) << h;
    for (const char* h :
         {"example.com", "localhost.example.com", "mylocalhost", "8.8.8.8", "134744072",
          "[2606:4700::1111]", "hooks.example.net", "[64:ff9b::808:808]", "1.2.3.4.5", "08.0.0.1"})
        EXPECT_FALSE(is_private_host(h)) << h;
}

}  // namespace
}  // namespace posthorn::core
