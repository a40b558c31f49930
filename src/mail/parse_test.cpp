#include "mail/parse.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <vector>

#include "crypto/keys.hpp"

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

TEST(EditHtmlParts, EditsTheInlineHtmlPartsOnly) {
    init();
    const std::string raw =
        "From: a@example.com\r\nTo: b@example.net\r\nSubject: Hi\r\nMIME-Version: 1.0\r\n"
        "Content-Type: multipart/mixed; boundary=\"m\"\r\n\r\n"
        "--m\r\nContent-Type: multipart/alternative; boundary=\"a\"\r\n\r\n"
        "--a\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\nsee http://x.example/\r\n"
        "--a\r\nContent-Type: text/html; charset=iso-8859-1\r\n"
        "Content-Transfer-Encoding: quoted-printable\r\n\r\n"
        "<p>Gr=FC=DFe <a href=3D\"http://x.example/\">x</a></p>\r\n"
        "--a--\r\n"
        "--m\r\nContent-Type: text/html\r\nContent-Disposition: attachment; filename=\"a.html\"\r\n"
        "\r\n<a href=\"http://attached.example/\">not me</a>\r\n"
        "--m--\r\n";
    std::vector<std::string> seen;
    auto out = edit_html_parts(raw, [&](const std::string& html) {
        seen.push_back(html);
        std::string edited = html;
        edited.replace(edited.find("http://x.example/"), 17, "https://t.example/c/1");
        return edited;
    });
    ASSERT_TRUE(out);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_NE(seen[0].find("Gr\xC3\xBC\xC3\x9F"
                           "e"),
              std::string::npos)
        << "decoded to UTF-8";
    auto parsed = parse_message(*out);
    ASSERT_TRUE(parsed.html);
    EXPECT_NE(parsed.html->find("https://t.example/c/1"), std::string::npos);
    EXPECT_NE(parsed.html->find("Gr\xC3\xBC\xC3\x9F"
                                "e"),
              std::string::npos);
    ASSERT_TRUE(parsed.text);
    EXPECT_NE(parsed.text->find("http://x.example/"), std::string::npos) << "text part untouched";
    ASSERT_EQ(parsed.attachments.size(), 1u);
    EXPECT_NE(parsed.attachments[0].content.find("http://attached.example/"), std::string::npos);
    EXPECT_EQ(parsed.subject, "Hi");
    for (std::size_t i = 0; i < out->size(); ++i) {
        if ((*out)[i] == '\n') {
            ASSERT_TRUE(i > 0 && (*out)[i - 1] == '\r') << "CRLF only";
        }
    }
}

// Every "charset=" of the message's text parts, in order.
std::vector<std::string> text_charsets(const std::string& raw) {
    std::vector<std::string> out;
    const std::regex part(R"(Content-Type: text/[a-z]+;\s*charset="?([A-Za-z0-9_-]+))",
                          std::regex::icase);
    for (std::sregex_iterator it(raw.begin(), raw.end(), part), end; it != end; ++it)
        out.push_back((*it)[1]);
    return out;
}

std::string alternative(std::string_view plain_head, std::string_view plain,
                        std::string_view html_head, std::string_view html) {
    std::string m =
        "From: a@example.com\r\nTo: b@example.net\r\nSubject: Hi\r\nMIME-Version: 1.0\r\n"
        "Content-Type: multipart/alternative; boundary=\"a\"\r\n\r\n--a\r\n";
    m.append(plain_head).append("\r\n").append(plain).append("\r\n--a\r\n");
    m.append(html_head).append("\r\n").append(html).append("\r\n--a--\r\n");
    return m;
}

// Issue 30: a UTF-8 HTML part of Latin-1 letters only, as nodemailer writes it, went out
// labelled iso-8859-1 after the tracking edit (g_mime_text_part_set_text's guess) while its
// <meta charset=utf-8> stayed. Edited parts are UTF-8 and labelled so, whatever the letters.
TEST(EditHtmlParts, AnEditedPartIsUtf8WhateverItsLetters) {
    init();
    for (const std::string text :
         {"caf\xC3\xA9 cr\xC3\xA8me", "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82",
          "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", "plain ASCII"}) {
        const std::string html =
            "<html><head><meta charset=\"utf-8\"></head><body><p>" + text + "</p></body></html>";
        const auto raw = alternative(
            "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n",
            crypto::base64_encode(text),
            "Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n", html);
        auto out = edit_html_parts(raw, [](const std::string& h) {
            return std::string(h).insert(h.find("</body>"), "<img src=\"https://t.example/o\">");
        });
        ASSERT_TRUE(out) << text;
        EXPECT_EQ(text_charsets(*out), (std::vector<std::string>{"utf-8", "utf-8"})) << *out;
        const auto parsed = parse_message(*out);
        ASSERT_TRUE(parsed.html && parsed.text);
        EXPECT_NE(parsed.html->find("<p>" + text + "</p>"), std::string::npos) << *out;
        EXPECT_NE(parsed.html->find("https://t.example/o"), std::string::npos);
        EXPECT_EQ(*parsed.text, text);
        for (unsigned char c : *out) ASSERT_LT(c, 0x80) << "7-bit clean:\n" << *out;
    }
}

// A part in another charset is decoded with it first, then written as UTF-8; the message's
// other text parts are converted too, so that no label contradicts another.
TEST(EditHtmlParts, OtherCharsetsAreConvertedToUtf8) {
    init();
    const auto raw = alternative(
        "Content-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: "
        "quoted-printable\r\n",
        "Gr=FC=DFe, caf=E9",
        "Content-Type: text/html; charset=windows-1251\r\nContent-Transfer-Encoding: 8bit\r\n",
        "<meta charset=windows-1251><p>\xCF\xF0\xE8\xE2\xE5\xF2</p>");  // "Привет"
    std::string seen;
    auto out = edit_html_parts(raw, [&](const std::string& h) { return seen = h; });
    ASSERT_TRUE(out);
    EXPECT_EQ(seen,
              "<meta charset=windows-1251><p>\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82</p>");
    EXPECT_EQ(text_charsets(*out), (std::vector<std::string>{"utf-8", "utf-8"})) << *out;
    const auto parsed = parse_message(*out);
    ASSERT_TRUE(parsed.text && parsed.html);
    EXPECT_EQ(*parsed.text,
              "Gr\xC3\xBC\xC3\x9F"
              "e, caf\xC3\xA9");
    // Written as UTF-8, the HTML says so of itself too (mail::declare_utf8).
    EXPECT_EQ(*parsed.html,
              "<meta charset=\"utf-8\"><p>\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82</p>");
}

// A charset iconv does not know, or bytes its label belies, never fail the edit: valid
// UTF-8 is read as UTF-8, anything else as windows-1252.
TEST(EditHtmlParts, UnknownOrWrongLabelsAreReadAsUtf8OrWindows1252) {
    init();
    const auto raw =
        alternative("Content-Type: text/plain; charset=x-no-such-charset\r\n", "caf\xC3\xA9",
                    "Content-Type: text/html; charset=us-ascii\r\n", "<p>caf\xE9 \x80</p>");
    std::string seen;
    auto out = edit_html_parts(raw, [&](const std::string& h) { return seen = h; });
    ASSERT_TRUE(out);
    EXPECT_EQ(seen, "<p>caf\xC3\xA9 \xE2\x82\xAC</p>");
    EXPECT_EQ(text_charsets(*out), (std::vector<std::string>{"utf-8", "utf-8"})) << *out;
    const auto parsed = parse_message(*out);
    ASSERT_TRUE(parsed.text);
    EXPECT_EQ(*parsed.text, "caf\xC3\xA9");
}

TEST(EditHtmlParts, LeavesMessagesWithoutHtmlAlone) {
    init();
    int calls = 0;
    auto out = edit_html_parts("From: a@example.com\r\nSubject: x\r\n\r\nplain http://x/\r\n",
                               [&](const std::string& h) {
                                   ++calls;
                                   return h;
                               });
    EXPECT_FALSE(out);
    EXPECT_EQ(calls, 0);
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

TEST(AddFields, FirstInFrontLastAtTheEndOfTheHeaderBlock) {
    EXPECT_EQ(add_fields("From: a@b.com\r\nSubject: s\r\n\r\nbody\r\n\r\nX: not a field\r\n",
                         "Received: r\r\n", "Feedback-ID: f\r\n"),
              "Received: r\r\nFrom: a@b.com\r\nSubject: s\r\nFeedback-ID: f\r\n\r\nbody\r\n"
              "\r\nX: not a field\r\n");
    EXPECT_EQ(add_fields("From: a@b.com\r\n", "R: 1\r\n", "F: 2\r\n"),
              "R: 1\r\nFrom: a@b.com\r\nF: 2\r\n");
    EXPECT_EQ(add_fields("From: a@b.com", "R: 1\r\n", "F: 2\r\n"),
              "R: 1\r\nFrom: a@b.com\r\nF: 2\r\n");
    EXPECT_EQ(add_fields("\r\nbody\r\n", "R: 1\r\n", "F: 2\r\n"), "R: 1\r\nF: 2\r\n\r\nbody\r\n");
}

TEST(HeaderBlock, EndsAtTheFirstEmptyLine) {
    EXPECT_EQ(header_block("From: a@b.com\r\nSubject: s\r\n\r\nbody\r\n\r\nmore\r\n"),
              "From: a@b.com\r\nSubject: s\r\n\r\n");
    EXPECT_EQ(header_block("From: a@b.com\n\nbody\n"), "From: a@b.com\n\n");
    EXPECT_EQ(header_block("From: a@b.com\r\nSubject: s\r\n"), "From: a@b.com\r\nSubject: s\r\n");
    const auto parsed = parse_message(
        header_block("From: Ann <a@b.com>\r\nTo: c@d.com\r\nMessage-ID: <m@h>\r\n\r\nbody\r\n"));
    ASSERT_EQ(parsed.from.size(), 1u);
    EXPECT_EQ(parsed.from[0].address, "a@b.com");
    EXPECT_EQ(parsed.message_id, "m@h");
    EXPECT_FALSE(parsed.text && !parsed.text->empty());
}

}  // namespace
}  // namespace posthorn::mail
