#include "mail/trace.hpp"

#include <gtest/gtest.h>

namespace posthorn::mail {
namespace {

constexpr UnixMs kAt = 1795255200000;  // Fri, 21 Nov 2026 10:00:00 +0000

TEST(ReceivedField, WritesPostfixsFormFolded) {
    const auto f = received_field({.helo = "client.example",
                                   .client_ip = "192.0.2.7",
                                   .by = "mx.example.com",
                                   .with = "ESMTPSA",
                                   .id = "em_01abc",
                                   .at = kAt});
    EXPECT_EQ(f,
              "Received: from client.example (unknown [192.0.2.7])\r\n"
              "\tby mx.example.com (posthorn) with ESMTPSA id em_01abc;\r\n"
              "\tSat, 21 Nov 2026 10:00:00 +0000\r\n");
}

TEST(ReceivedField, ForClauseAddressLiteralsAndNoHelo) {
    const auto f = received_field({.client_ip = "2001:db8::7",
                                   .by = "mx.example.com",
                                   .with = "HTTPS",
                                   .id = "em_1",
                                   .for_address = "ann@example.net",
                                   .at = kAt});
    EXPECT_EQ(f,
              "Received: from [IPv6:2001:db8::7] (unknown [IPv6:2001:db8::7])\r\n"
              "\tby mx.example.com (posthorn) with HTTPS id em_1\r\n"
              "\tfor <ann@example.net>;\r\n"
              "\tSat, 21 Nov 2026 10:00:00 +0000\r\n");
    EXPECT_EQ(address_literal("::ffff:192.0.2.7"), "[192.0.2.7]");
    EXPECT_EQ(received_field({.by = "h", .with = "HTTP", .id = "em_1", .at = kAt}).substr(0, 39),
              "Received: from unknown (unknown)\r\n\tby h");
    EXPECT_EQ(address_literal("127.0.0.1"), "[127.0.0.1]");
}

// The HELO name is the client's: nothing of it may end the field's tokens, open a comment,
// fold the line or put 8-bit bytes in the header.
TEST(ReceivedField, TheClientsNameIsMadeSafe) {
    const auto f = received_field({.helo = "evil (x); by\tfake\xC3\xA9" + std::string(300, 'a'),
                                   .client_ip = "192.0.2.7",
                                   .by = "mx.example.com",
                                   .with = "ESMTP",
                                   .id = "em_1",
                                   .at = kAt});
    const auto first = f.substr(0, f.find("\r\n"));
    EXPECT_EQ(first.substr(0, 40), "Received: from evil__x___by_fake__aaaaaa");
    EXPECT_EQ(first.find_first_of("();\t", 15), first.find(" (unknown") + 1);
    EXPECT_EQ(first.size(), std::string("Received: from ").size() + 255 +
                                std::string(" (unknown [192.0.2.7])").size());
    for (unsigned char c : f) ASSERT_LT(c, 0x80);
}

TEST(SmtpProtocol, NamesOfRfc3848) {
    EXPECT_EQ(smtp_protocol(false, false, false), "SMTP");
    EXPECT_EQ(smtp_protocol(true, false, false), "ESMTP");
    EXPECT_EQ(smtp_protocol(true, true, false), "ESMTPS");
    EXPECT_EQ(smtp_protocol(true, false, true), "ESMTPA");
    EXPECT_EQ(smtp_protocol(true, true, true), "ESMTPSA");
}

TEST(FeedbackId, FourFieldsWithoutColonsOrSpaces) {
    EXPECT_EQ(feedback_id_field({"category=welcome", "example.com", "acc_01", "posthorn"}),
              "Feedback-ID: category=welcome:example.com:acc_01:posthorn\r\n");
    EXPECT_EQ(feedback_id_field({"", "example.com", "acc_01", "posthorn"}),
              "Feedback-ID: :example.com:acc_01:posthorn\r\n");
    EXPECT_EQ(feedback_id_field({"a:b c\r\nX: y", "d", "e", "posthorn"}),
              "Feedback-ID: abcXy:d:e:posthorn\r\n");
}

}  // namespace
}  // namespace posthorn::mail
