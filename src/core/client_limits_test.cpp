#include "core/client_limits.hpp"

#include <gtest/gtest.h>

namespace posthorn::core {
namespace {

using namespace std::chrono_literals;
using Clock = ClientLimits::Clock;

asio::ip::address ip(const char* s) { return asio::ip::make_address(s); }

TEST(Network, ParsesBlocksAndSingleAddresses) {
    auto n = parse_network("10.0.0.0/8");
    ASSERT_TRUE(n);
    EXPECT_TRUE(n->contains(ip("10.255.1.2")));
    EXPECT_FALSE(n->contains(ip("11.0.0.1")));
    EXPECT_TRUE(n->contains(ip("::ffff:10.1.2.3")));  // the mapped form is the IPv4 address
    auto one = parse_network("::1");
    ASSERT_TRUE(one);
    EXPECT_EQ(one->prefix, 128);
    EXPECT_TRUE(one->contains(ip("::1")));
    EXPECT_FALSE(one->contains(ip("::2")));
    auto v6 = parse_network("2001:db8:abcd::/45");
    ASSERT_TRUE(v6);
    EXPECT_TRUE(v6->contains(ip("2001:db8:abcf:ffff::1")));
    EXPECT_FALSE(v6->contains(ip("2001:db8:abd0::1")));
    EXPECT_FALSE(v6->contains(ip("10.0.0.1")));
    EXPECT_TRUE(parse_network("0.0.0.0/0")->contains(ip("8.8.8.8")));
    for (const char* bad : {"", "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/-1", "x/8",
                            "10.0.0.0/8 ", "10.0.0.0/08x"})
        EXPECT_FALSE(parse_network(bad)) << bad;
}

TEST(ClientOf, IsTheIpv4AddressOrTheIpv6Slash64) {
    EXPECT_EQ(client_of(ip("192.0.2.7")), "192.0.2.7");
    EXPECT_EQ(client_of(ip("::ffff:192.0.2.7")), "192.0.2.7");
    EXPECT_EQ(client_of(ip("2001:db8:1:2:aaaa::1")), "2001:db8:1:2::/64");
    EXPECT_EQ(client_of(ip("2001:db8:1:2:bbbb::9")), client_of(ip("2001:db8:1:2::1")));
    EXPECT_NE(client_of(ip("2001:db8:1:3::1")), client_of(ip("2001:db8:1:2::1")));
}

TEST(ClientLimits, BoundsEachClientAndGivesPlacesBack) {
    ClientLimits limits({.max_connections = 10,
                         .max_connections_per_client = 2,
                         .trusted = {*parse_network("127.0.0.0/8")}});
    const auto now = Clock::now();
    auto a1 = limits.take(ip("192.0.2.1"), now);
    auto a2 = limits.take(ip("192.0.2.1"), now);
    EXPECT_TRUE(a1.taken() && a2.taken());
    auto a3 = limits.take(ip("192.0.2.1"), now);
    EXPECT_FALSE(a3.taken());
    EXPECT_STREQ(a3.refusal, "too many connections from your address");
    EXPECT_FALSE(a3.full);
    // The same /64 is one client; another address is another.
    auto v6a = limits.take(ip("2001:db8::1"), now);
    auto v6b = limits.take(ip("2001:db8::2"), now);
    EXPECT_FALSE(limits.take(ip("2001:db8::3"), now).taken());
    EXPECT_TRUE(limits.take(ip("192.0.2.2"), now).taken());
    EXPECT_EQ(limits.held_by("192.0.2.1"), 2U);
    { auto gone = std::move(a1); }
    EXPECT_EQ(limits.held_by("192.0.2.1"), 1U);
    EXPECT_TRUE(limits.take(ip("192.0.2.1"), now).taken());
    // A trusted client is not bounded per client (only by the listener).
    std::vector<ClientLimits::Place> local;
    for (int i = 0; i < 5; ++i) local.push_back(limits.take(ip("127.0.0.1"), now));
    for (const auto& p : local) EXPECT_TRUE(p.taken());
    EXPECT_EQ(limits.held_by("127.0.0.1"), 0U);
    EXPECT_EQ(limits.open(), 8U);  // a2, v6a, v6b and five local ones
}

TEST(ClientLimits, AFullListenerSaysSoAndMayGoOneOver) {
    ClientLimits limits({.max_connections = 4, .max_connections_per_client = 0});
    const auto now = Clock::now();
    std::vector<ClientLimits::Place> held;
    for (int i = 0; i < 4; ++i) held.push_back(limits.take(ip("192.0.2.1"), now));
    EXPECT_TRUE(limits.near_full());
    auto p = limits.take(ip("198.51.100.1"), now);
    EXPECT_FALSE(p.taken());
    EXPECT_TRUE(p.full);
    EXPECT_STREQ(p.refusal, "too many connections");
    // The busiest client holds 4, the newcomer none: room is made from it.
    EXPECT_EQ(limits.room_from(limits.held_by(p.client)), "192.0.2.1");
    EXPECT_EQ(limits.room_from(3), std::nullopt);  // 4 is not two more than 3
    auto over = limits.take(ip("198.51.100.1"), now, true);
    EXPECT_TRUE(over.taken());
    EXPECT_EQ(limits.open(), 5U);
}

TEST(ClientLimits, BoundsTheConnectionRateOverTheLastMinute) {
    ClientLimits limits(
        {.max_connections = 100, .max_connections_per_client = 0, .connection_rate_per_client = 3});
    const auto t0 = Clock::now();
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(limits.take(ip("192.0.2.1"), t0).taken());
    auto p = limits.take(ip("192.0.2.1"), t0 + 1s);
    EXPECT_FALSE(p.taken());
    EXPECT_STREQ(p.refusal, "too many connections from your address in the last minute");
    EXPECT_TRUE(limits.take(ip("192.0.2.2"), t0 + 1s).taken());  // another client
    // 70 s on, most of the first minute has slid out: 4 attempts × 5/6 still count.
    EXPECT_FALSE(limits.take(ip("192.0.2.1"), t0 + 70s).taken());
    // Two quiet minutes later it starts again.
    EXPECT_TRUE(limits.take(ip("192.0.2.1"), t0 + 200s).taken());
}

}  // namespace
}  // namespace posthorn::core
