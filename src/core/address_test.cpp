#include "core/address.hpp"

#include <gtest/gtest.h>

namespace posthorn::core {
namespace {

bool priv(const char* s) { return is_private_address(asio::ip::make_address(s)); }

TEST(Address, PrivateRangesAreRecognised) {
    for (const char* a : {"127.0.0.1",
                          "127.255.0.9",
                          "10.1.2.3",
                          "172.16.0.1",
                          "172.31.255.255",
                          "192.168.1.1",
                          "169.254.169.254",
                          "100.64.0.1",
                          "0.0.0.0",
                          "224.0.0.1",
                          "255.255.255.255",
                          "::1",
                          "::",
                          "fe80::1",
                          "fd00::1",
                          "fc12::3",
                          "ff02::1",
                          "::ffff:127.0.0.1",
                          "::ffff:10.0.0.1",
                          "2001:db8::1"})
        EXPECT_TRUE(priv(a)) << a;
}

TEST(Address, PublicAddressesAreNot) {
    for (const char* a :
         {"8.8.8.8", "1.1.1.1", "172.32.0.1", "172.15.255.255", "192.169.0.1", "100.128.0.1",
          "2606:4700::1111", "::ffff:8.8.4.4", "9.255.255.255", "11.0.0.0"})
        EXPECT_FALSE(priv(a)) << a;
}

TEST(Address, HostsNamingThisMachineOrAPrivateLiteral) {
    for (const char* h : {"localhost", "LOCALHOST", "localhost.", "api.localhost", "127.0.0.1",
                          "[::1]", "::1", "10.0.0.7", "[fe80::1]"})
        EXPECT_TRUE(is_private_host(h)) << h;
    for (const char* h : {"example.com", "localhost.example.com", "mylocalhost", "8.8.8.8",
                          "[2606:4700::1111]", "hooks.example.net"})
        EXPECT_FALSE(is_private_host(h)) << h;
}

}  // namespace
}  // namespace posthorn::core
