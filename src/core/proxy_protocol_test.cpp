#include "core/proxy_protocol.hpp"

#include <gtest/gtest.h>

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <string>

namespace posthorn::core {
namespace {

using Status = ProxyHeader::Status;
using tcp = asio::ip::tcp;

std::string v2(unsigned char command, unsigned char family, const std::string& addresses) {
    std::string h("\r\n\r\n\0\r\nQUIT\n", 12);
    h += static_cast<char>(0x20 | command);
    h += static_cast<char>(family);
    h += static_cast<char>(addresses.size() >> 8);
    h += static_cast<char>(addresses.size() & 0xFF);
    return h + addresses;
}

TEST(ProxyHeader, Version1) {
    const std::string line = "PROXY TCP4 192.0.2.1 198.51.100.1 56324 443\r\n";
    auto h = parse_proxy_header(line + "EHLO x\r\n");
    ASSERT_EQ(h.status, Status::complete);
    EXPECT_EQ(h.length, line.size());
    ASSERT_TRUE(h.source);
    EXPECT_EQ(h.source->address().to_string(), "192.0.2.1");
    EXPECT_EQ(h.source->port(), 56324);
    h = parse_proxy_header("PROXY TCP6 2001:db8::1 2001:db8::2 1 65535\r\n");
    ASSERT_EQ(h.status, Status::complete);
    EXPECT_EQ(h.source->address().to_string(), "2001:db8::1");
    h = parse_proxy_header("PROXY UNKNOWN\r\n");
    ASSERT_EQ(h.status, Status::complete);
    EXPECT_FALSE(h.source);
    // Not yet complete: one more byte at a time, never past the line's end.
    h = parse_proxy_header("PROXY TCP4 192.0.2.1");
    EXPECT_EQ(h.status, Status::incomplete);
    EXPECT_EQ(h.length, 21U);
    EXPECT_EQ(parse_proxy_header("PRO").status, Status::incomplete);
    for (const char* bad :
         {"PROXY TCP4 192.0.2.1 198.51.100.1 56324\r\n",
          "PROXY TCP4 2001:db8::1 198.51.100.1 1 2\r\n",
          "PROXY TCP6 192.0.2.1 198.51.100.1 1 2\r\n",
          "PROXY TCP4 192.0.2.1 198.51.100.1 65536 2\r\n",
          "PROXY TCP4 192.0.2.1 198.51.100.1 01 2\r\n",
          "PROXY TCP4 192.0.2.1 198.51.100.1 +1 2\r\n",
          "PROXY TCP4  192.0.2.1 198.51.100.1 1 2\r\n", "PROXY UDP4 192.0.2.1 198.51.100.1 1 2\r\n",
          "PROXY TCP4 300.0.2.1 198.51.100.1 1 2\r\n", "GET / HTTP/1.1\r\n", "EHLO x\r\n"})
        EXPECT_EQ(parse_proxy_header(bad).status, Status::invalid) << bad;
    EXPECT_EQ(parse_proxy_header("PROXY " + std::string(200, 'A')).status, Status::invalid);
}

TEST(ProxyHeader, Version2) {
    // TCP over IPv4: 192.0.2.1:56324 → 198.51.100.1:443, then a TLV that is skipped.
    std::string a4 = {char(192), 0, 2,          1,    char(198), 51,
                      100,       1, char(0xDC), 0x04, 0x01,      char(0xBB)};
    a4 += std::string("\x04\x00\x01X", 4);
    auto bytes = v2(1, 0x11, a4);
    auto h = parse_proxy_header(bytes + "data");
    ASSERT_EQ(h.status, Status::complete);
    EXPECT_EQ(h.length, bytes.size());
    ASSERT_TRUE(h.source);
    EXPECT_EQ(h.source->address().to_string(), "192.0.2.1");
    EXPECT_EQ(h.source->port(), 56324);
    // TCP over IPv6.
    std::string a6(36, '\0');
    a6[0] = 0x20, a6[1] = 0x01, a6[2] = 0x0d, a6[3] = char(0xb8), a6[15] = 1;
    a6[32] = 0x30, a6[33] = 0x39;
    h = parse_proxy_header(v2(1, 0x21, a6));
    ASSERT_EQ(h.status, Status::complete);
    EXPECT_EQ(h.source->address().to_string(), "2001:db8::1");
    EXPECT_EQ(h.source->port(), 12345);
    // LOCAL (the balancer's health check): complete, no client.
    h = parse_proxy_header(v2(0, 0x00, ""));
    ASSERT_EQ(h.status, Status::complete);
    EXPECT_FALSE(h.source);
    // Incomplete: the fixed part, then the addresses it announces.
    EXPECT_EQ(parse_proxy_header(bytes.substr(0, 10)).length, 16U);
    EXPECT_EQ(parse_proxy_header(bytes.substr(0, 20)).length, bytes.size());
    // Broken: version 1 in the binary form, an unknown command, addresses too short for
    // their family, more than we read.
    auto bad = bytes;
    bad[12] = 0x11;
    EXPECT_EQ(parse_proxy_header(bad).status, Status::invalid);
    bad[12] = 0x22;
    EXPECT_EQ(parse_proxy_header(bad).status, Status::invalid);
    EXPECT_EQ(parse_proxy_header(v2(1, 0x11, std::string(8, 'x'))).status, Status::invalid);
    EXPECT_EQ(parse_proxy_header(v2(1, 0x21, std::string(20, 'x'))).status, Status::invalid);
    EXPECT_EQ(parse_proxy_header(v2(1, 0x11, std::string(3000, 'x'))).status, Status::invalid);
}

// Over a real connection: the header is read, and not one byte of what follows it.
TEST(ProxyHeader, IsReadFromASocketUpToItsEnd) {
    asio::io_context io;
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    tcp::socket client(io);
    client.connect(acceptor.local_endpoint());
    tcp::socket server = acceptor.accept();
    const std::string sent = "PROXY TCP4 203.0.113.9 198.51.100.1 4000 25\r\nEHLO x\r\n";
    asio::write(client, asio::buffer(sent));
    // The header as read_proxy_header reads it, on the test's own context.
    auto read = [&](std::chrono::milliseconds timeout) {
        std::optional<Result<std::optional<tcp::endpoint>>> got;
        io.restart();
        asio::co_spawn(
            io,
            [&]() -> asio::awaitable<void> { got = co_await read_proxy_header(server, timeout); },
            asio::detached);
        io.run();
        return got;
    };
    auto got = read(std::chrono::seconds(5));
    ASSERT_TRUE(got && *got && **got);
    EXPECT_EQ((**got)->address().to_string(), "203.0.113.9");
    std::string rest(8, '\0');
    asio::read(server, asio::buffer(rest));
    EXPECT_EQ(rest, "EHLO x\r\n");

    // Garbage instead of a header, and a header that never comes.
    asio::write(client, asio::buffer(std::string("GARBAGE!")));
    got = read(std::chrono::seconds(5));
    ASSERT_TRUE(got && !*got);
    got = read(std::chrono::milliseconds(50));
    ASSERT_TRUE(got && !*got);
    EXPECT_EQ(got->error(), asio::error::timed_out);
}

}  // namespace
}  // namespace posthorn::core
