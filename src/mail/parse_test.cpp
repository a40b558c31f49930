#include "mail/parse.hpp"

#include <gtest/gtest.h>

#include "mail/message.hpp"

namespace posthorn::mail {
namespace {

TEST(ParseMessage, ReadsAddressesBodiesAndAttachments) {
    init();
    MessageSpec s;
    s.from = std::get<Mailbox>(parse_mailbox("Zoë <zoe@example.com>"));
    s.to = {std::get<Mailbox>(parse_mailbox("a@example.net"))};
    s.cc = {std::get<Mailbox>(parse_mailbox("c@example.net"))};
    s.reply_to = {std::get<Mailbox>(parse_mailbox("r@example.com"))};
    s.subject = "Grüße";
    s.text = "plain text";
    s.html = "<p>html</p>";
    s.attachments = {{"a.pdf", std::string("%PDF\0binary", 11), "application/pdf", ""}};
    s.message_id = "m1@example.com";
    s.date = 1795255200000;
    auto p = parse_message(build_message(s));
    ASSERT_EQ(p.from.size(), 1u);
    EXPECT_EQ(p.from[0].name, "Zoë");
    EXPECT_EQ(p.from[0].address, "zoe@example.com");
    EXPECT_EQ(p.to[0].address, "a@example.net");
    EXPECT_EQ(p.cc[0].address, "c@example.net");
    EXPECT_EQ(p.reply_to[0].address, "r@example.com");
    EXPECT_EQ(p.subject, "Grüße");
    EXPECT_EQ(p.message_id, "m1@example.com");
    ASSERT_TRUE(p.text && p.html);
    EXPECT_EQ(p.text->substr(0, 10), "plain text");
    ASSERT_EQ(p.attachments.size(), 1u);
    EXPECT_EQ(p.attachments[0].filename, "a.pdf");
    EXPECT_EQ(p.attachments[0].content, std::string("%PDF\0binary", 11));
}

TEST(ParseMessage, SurvivesGarbage) {
    init();
    for (std::string_view junk : {"", "\r\n\r\n", "no headers at all", "From: <<<\r\n\r\nx",
                                  "Content-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\n"}) {
        auto p = parse_message(junk);
        EXPECT_TRUE(p.to.empty());
    }
}

TEST(EditHeaders, RemovesFieldsWithTheirContinuationsAndKeepsTheRest) {
    const std::string raw =
        "From: a@b.com\r\nX-Track-Opens: true\r\nBcc: x@y.com,\r\n z@y.com\r\nSubject: s\r\n"
        "\r\nbody\r\nBcc: not a header\r\n";
    auto out = edit_headers(raw, {"x-track-opens", "BCC"}, {{"Message-ID", "<m@h>"}});
    EXPECT_EQ(out,
              "Message-ID: <m@h>\r\nFrom: a@b.com\r\nSubject: s\r\n\r\nbody\r\nBcc: not a "
              "header\r\n");
}

}  // namespace
}  // namespace posthorn::mail
