#include "mail/dkim.hpp"

#include <gtest/gtest.h>

#include "crypto/keys.hpp"

namespace posthorn::mail {
namespace {

// RFC 6376 §3.4.5, the worked example.
TEST(DkimRelaxed, HeadersAsInRfc6376Example) {
    EXPECT_EQ(dkim_relaxed_header("A", " X"), "a:X");
    EXPECT_EQ(dkim_relaxed_header("B ", " Y\t\r\n\tZ  "), "b:Y Z");
}

TEST(DkimRelaxed, BodyAsInRfc6376Example) {
    EXPECT_EQ(dkim_relaxed_body(" C \r\nD \t E\r\n\r\n\r\n"), " C\r\nD E\r\n");
    EXPECT_EQ(dkim_relaxed_body(""), "");
    EXPECT_EQ(dkim_relaxed_body("\r\n\r\n"), "");
    EXPECT_EQ(dkim_relaxed_body("no final newline"), "no final newline\r\n");
}

TEST(DkimSign, PrependsASignatureOverThePresentHeaders) {
    auto key = crypto::generate_rsa(2048);
    ASSERT_TRUE(key);
    const std::string msg =
        "From: a@example.com\r\nTo: b@example.net\r\nSubject: hi\r\nX-Other: 1\r\n\r\nbody\r\n";
    auto signed_msg = dkim_sign(msg, {"example.com", "ph1", key->private_pem}, 1795255200000);
    ASSERT_TRUE(signed_msg);
    EXPECT_EQ(signed_msg->rfind(
                  "DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.com; s=ph1;", 0),
              0u)
        << *signed_msg;
    EXPECT_NE(signed_msg->find("h=from:from:to:subject;"), std::string::npos) << *signed_msg;
    EXPECT_EQ(signed_msg->find("x-other"), std::string::npos);
    EXPECT_NE(signed_msg->find("t=1795255200;"), std::string::npos);
    EXPECT_EQ(signed_msg->substr(signed_msg->size() - msg.size()), msg);
    for (std::size_t i = 0, start = 0; i < signed_msg->size(); ++i)
        if ((*signed_msg)[i] == '\n') {
            EXPECT_LE(i - start, 100u) << "folded";
            start = i + 1;
        }
    EXPECT_FALSE(dkim_sign(msg, {"example.com", "ph1", "not a key"}, 0));
}

}  // namespace
}  // namespace posthorn::mail
