#include "api/webhook_url.hpp"

#include <gtest/gtest.h>

#include <string>

namespace posthorn::api {
namespace {

TEST(WebhookUrl, PublicHttpUrlsAreAccepted) {
    for (const char* u : {"https://hooks.example.com/x", "http://93.184.216.34:8080/hook?a=1",
                          "https://[2606:4700::1111]/", "http://[64:ff9b::808:808]/",
                          "HTTPS://Hooks.Example.COM", "http://08.0.0.1/"})
        EXPECT_EQ(webhook_url_error(u, false), std::nullopt) << u;
}

TEST(WebhookUrl, SpecialPurposeHostsAreRefusedInEveryWriting) {
    for (const char* u : {"http://127.0.0.1/",
                          "http://[::127.0.0.1]:8080/x",
                          "http://[::ffff:127.0.0.1]/",
                          "http://[::ffff:0:127.0.0.1]/",
                          "http://[64:ff9b::7f00:1]/",
                          "http://[2002:7f00:1::]/",
                          "http://[2001:0:808:808::80ff:fffe]/",
                          "http://2130706433/",
                          "http://0x7f.1/",
                          "http://017700000001/",
                          "http://127.1/",
                          "http://0x7f000001:9/",
                          "http://0/",
                          "http://127.0.0.1./",
                          "http://%31%32%37.0.0.1/",
                          "http://localhost/",
                          "http://api.LOCALHOST./",
                          "http://[fe80::1]/",
                          "http://192.88.99.1/",
                          "http://[3fff::1]/",
                          "http://[5f00::1]/",
                          "http://[fec0::1]/",
                          "http://[100::1]/"}) {
        const auto msg = webhook_url_error(u, false);
        ASSERT_TRUE(msg) << u;
        EXPECT_NE(msg->find("private"), std::string::npos) << *msg;
        EXPECT_EQ(webhook_url_error(u, true), std::nullopt) << u;
    }
}

TEST(WebhookUrl, MessagesNameTheRange) {
    EXPECT_EQ(webhook_url_error("http://[::127.0.0.1]:8080/x", false),
              "url: private, loopback, link-local and other special-purpose targets are refused "
              "(webhooks.allow_private_targets is false): ::127.0.0.1 is IPv4-compatible (::/96)");
    EXPECT_EQ(webhook_url_error("http://0x7f.1/", false),
              "url: private, loopback, link-local and other special-purpose targets are refused "
              "(webhooks.allow_private_targets is false): 0x7f.1 is loopback (127.0.0.0/8)");
    EXPECT_NE(webhook_url_error("http://localhost/", false)->find("localhost names this machine"),
              std::string::npos);
}

TEST(WebhookUrl, MalformedUrlsAreRefusedWhateverTheSetting) {
    for (const char* u : {"", "hooks.example.com/x", "ftp://example.com/", "file:///etc/passwd",
                          "http:///x", "http://[v1.x]/", "http://a%00b/", "http://a%20b/",
                          "http://[fe80::1%25eth0]/", "gopher://example.com/"})
        EXPECT_TRUE(webhook_url_error(u, true)) << u;
    EXPECT_TRUE(webhook_url_error("https://x.example/" + std::string(2048, 'a'), true));
}

}  // namespace
}  // namespace posthorn::api
