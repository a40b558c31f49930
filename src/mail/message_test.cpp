#include "mail/message.hpp"

#include <gtest/gtest.h>

#include <regex>

#include "mail/detail/message_body.hpp"
#include "mail/parse.hpp"

namespace posthorn::mail {
namespace {

Mailbox mb(std::string_view s) { return std::get<Mailbox>(parse_mailbox(s)); }

MessageSpec base() {
    init();
    MessageSpec s;
    s.from = mb("Sender <s@example.com>");
    s.to = {mb("a@example.net"), mb("Bé <b@example.net>")};
    s.subject = "Hello";
    s.message_id = "em_1@mx.example.com";
    s.date = 1795255200000;
    return s;
}

TEST(BuildMessage, TextOnlyIsOnePart) {
    auto s = base();
    s.text = "plain body";
    const auto m = build_message(s);
    EXPECT_NE(m.find("Content-Type: text/plain"), std::string::npos) << m;
    EXPECT_EQ(m.find("multipart"), std::string::npos);
    EXPECT_NE(m.find("Message-Id: <em_1@mx.example.com>"), std::string::npos) << m;
    EXPECT_NE(m.find("MIME-Version: 1.0"), std::string::npos);
    EXPECT_NE(m.find("Date: "), std::string::npos);
    // Every line ends in CRLF.
    for (std::size_t i = m.find('\n'); i != std::string::npos; i = m.find('\n', i + 1))
        ASSERT_EQ(m[i - 1], '\r') << "bare LF at " << i;
}

// The message headers come in the conventional order (the trace and origin fields, then
// the destination fields, then the identification), the caller's own headers after them.
TEST(BuildMessage, HeadersComeInTheConventionalOrder) {
    auto s = base();
    s.to = {mb("a@example.net")};
    s.cc = {mb("c@example.net")};
    s.reply_to = {mb("r@example.com")};
    s.headers = {{"X-Campaign", "autumn"}, {"List-Unsubscribe", "<mailto:u@example.com>"}};
    s.text = "x";
    const auto m = build_message(s);
    std::vector<std::string> names;
    for (std::size_t pos = 0; pos < m.find("\r\n\r\n");) {
        const auto eol = m.find("\r\n", pos);
        if (m[pos] != ' ' && m[pos] != '\t') names.push_back(m.substr(pos, m.find(':', pos) - pos));
        pos = eol + 2;
    }
    const std::vector<std::string> expected{
        "Date",       "From",       "Reply-To",         "Subject",      "To",          "Cc",
        "Message-Id", "X-Campaign", "List-Unsubscribe", "MIME-Version", "Content-Type"};
    EXPECT_EQ(names, expected) << m;
}

// The trace field (Received) comes above every other, the service's own fields
// (Feedback-ID) after the caller's headers, each as given.
TEST(BuildMessage, TraceFirstAndServiceFieldsAfterTheCallers) {
    auto s = base();
    s.to = {mb("a@example.net")};
    s.headers = {{"X-Campaign", "autumn"}};
    s.trace =
        "Received: from [192.0.2.7] (unknown [192.0.2.7])\r\n\tby h (posthorn) with "
        "HTTPS id em_1;\r\n\tSat, 21 Nov 2026 10:00:00 +0000\r\n";
    s.service_fields = "Feedback-ID: :example.com:acc_1:posthorn\r\n";
    s.text = "x";
    const auto m = build_message(s);
    EXPECT_EQ(m.rfind(s.trace, 0), 0u) << m;
    EXPECT_NE(m.find("X-Campaign: autumn\r\n" + s.service_fields + "MIME-Version: 1.0\r\n"),
              std::string::npos)
        << m;
}

// Addresses go out with their domains in IDNA form (as parsed: canonical A-labels) and
// their display names RFC 2047-encoded; the same as GMime's own IDN lookup would give.
TEST(BuildMessage, AddressesKeepTheirIdnaDomainsAndEncodedNames) {
    auto s = base();
    s.to = {mb("Zoë <zoe@münchen.example>"), mb("b@EXAMPLE.net")};
    s.cc = {mb("c@bücher.example")};
    s.text = "x";
    const auto m = build_message(s);
    EXPECT_NE(m.find("zoe@xn--mnchen-3ya.example"), std::string::npos) << m;
    EXPECT_NE(m.find("b@example.net"), std::string::npos) << m;
    EXPECT_NE(m.find("Cc: c@xn--bcher-kva.example"), std::string::npos) << m;
    EXPECT_NE(m.find("To: =?iso-8859-1?b?Wm/r?= <zoe@"), std::string::npos) << m;
    EXPECT_EQ(m.find("münchen"), std::string::npos) << m;
    for (unsigned char c : m.substr(0, m.find("\r\n\r\n")))
        ASSERT_LT(c, 0x80) << "an 8-bit byte in the header: " << m;
}

// The transfer encoding of a text part and its charset, as GMime's own choice would be:
// none for short ASCII lines; quoted-printable for a long line, a "From " line or a few
// 8-bit bytes; base64 for many 8-bit bytes or a NUL.
TEST(BuildMessage, TextPartsGetTheEncodingThatFits) {
    auto encoding_of = [](std::string text) {
        auto s = base();
        s.text = std::move(text);
        const auto m = build_message(s);
        const auto at = m.find("Content-Transfer-Encoding: ");
        if (at == std::string::npos) return std::string("none");
        return m.substr(at + 27, m.find("\r\n", at) - at - 27);
    };
    auto charset_of = [](std::string text) {
        auto s = base();
        s.text = std::move(text);
        const auto m = build_message(s);
        const auto at = m.find("charset=");
        return at == std::string::npos ? std::string() : m.substr(at + 8, 8);
    };
    EXPECT_EQ(encoding_of("short lines\nof ASCII\n"), "none");
    EXPECT_EQ(charset_of("short lines\nof ASCII\n").substr(0, 5), "utf-8");
    EXPECT_EQ(encoding_of(std::string(998, 'a') + "\nok\n"), "none");
    EXPECT_EQ(encoding_of(std::string(999, 'a') + "\nlong\n"), "quoted-printable");
    EXPECT_EQ(encoding_of("hello\nFrom here on\n"), "quoted-printable");
    EXPECT_EQ(encoding_of("From the start\n"), "quoted-printable");
    EXPECT_EQ(encoding_of("caf\xC3\xA9 and a lot of plain ASCII text around it\n"),
              "quoted-printable");
    EXPECT_EQ(charset_of("caf\xC3\xA9").substr(0, 5), "utf-8");
    EXPECT_EQ(encoding_of("\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82"), "base64");
    EXPECT_EQ(encoding_of(std::string("nul\0byte", 8)), "base64");
    EXPECT_EQ(encoding_of("crlf\r\nline ends\r\n"), "none");
    EXPECT_EQ(encoding_of("a bare\rcarriage return\n"), "quoted-printable");
    EXPECT_EQ(encoding_of("two\r\r\n"), "quoted-printable");
    EXPECT_EQ(encoding_of("ends in one\r"), "quoted-printable");
}

// A carriage return that ends no line never reaches the wire as it is (RFC 2045 §2.7; a
// bare CR is what SMTP smuggling is made of): quoted-printable writes it =0D, in text and
// HTML parts alike. Found by tests/fuzz/api_json_fuzz.cpp (an HTML body with "\r" in it
// was sent 7bit with the CR in it).
TEST(BuildMessage, ABareCarriageReturnIsEncoded) {
    auto s = base();
    s.text = "one\rtwo\r\nthree\r";
    s.html = "<b>\reply</b>";
    const auto m = build_message(s);
    for (std::size_t i = m.find('\r'); i != std::string::npos; i = m.find('\r', i + 1))
        ASSERT_EQ(m[i + 1], '\n') << "bare CR at " << i << " in\n" << m;
    EXPECT_NE(m.find("one=0Dtwo"), std::string::npos) << m;
    EXPECT_NE(m.find("<b>=0Deply</b>"), std::string::npos) << m;
}

TEST(BuildMessage, StructureForTextHtmlInlineAndFiles) {
    auto s = base();
    s.text = "plain";
    s.html = "<p>hi <img src=\"cid:logo\"></p>";
    s.attachments = {{"logo.png", "\x89PNG", "image/png", "logo"},
                     {"report.pdf", "%PDF-1.4", "application/pdf", ""}};
    const auto m = build_message(s);
    const auto mixed = m.find("multipart/mixed");
    const auto alt = m.find("multipart/alternative");
    const auto rel = m.find("multipart/related");
    ASSERT_NE(mixed, std::string::npos) << m;
    ASSERT_NE(alt, std::string::npos);
    ASSERT_NE(rel, std::string::npos);
    EXPECT_LT(mixed, alt);
    EXPECT_LT(alt, rel);
    EXPECT_NE(m.find("Content-Id: <logo>"), std::string::npos) << m;
    EXPECT_NE(m.find("filename=report.pdf"), std::string::npos);
}

TEST(BuildMessage, EncodesNonAsciiAndNeverWritesBcc) {
    auto s = base();
    s.subject = "Grüße aus Köln";
    s.text = "Ünïcödé body that is long enough to need some encoding, with non-ASCII letters";
    s.headers = {{"X-Campaign", "spring"}};
    const auto m = build_message(s);
    EXPECT_EQ(m.find("Grüße"), std::string::npos) << "subject must be RFC 2047 encoded";
    EXPECT_NE(m.find("Subject: =?"), std::string::npos) << m;
    EXPECT_EQ(m.find("Bcc"), std::string::npos);
    EXPECT_NE(m.find("X-Campaign: spring"), std::string::npos);
    EXPECT_NE(m.find("quoted-printable"), std::string::npos) << m;
    for (unsigned char c : m) ASSERT_LT(c, 0x80) << "the message is 7-bit clean";
}

// Issue 30: every text part goes out labelled charset=utf-8 (none us-ascii, none
// iso-8859-1), ASCII, Latin-1 letters only or not, in every body shape, and decodes to the
// text given.
TEST(BuildMessage, EveryTextPartIsLabelledUtf8) {
    const std::regex charset(R"(Content-Type: text/[a-z]+; charset=([A-Za-z0-9_-]+))");
    for (const std::string text :
         {"plain ASCII", "caf\xC3\xA9", "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82",
          "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E"}) {
        for (int shape = 0; shape < 4; ++shape) {  // text, HTML, both, both with files
            auto s = base();
            const std::string html = "<html><head><meta charset=\"utf-8\"></head><body><p>" + text +
                                     "</p></body></html>";
            if (shape != 1) s.text = text;
            if (shape >= 1) s.html = html;
            if (shape == 3) s.attachments = {{"report.pdf", "%PDF-1.4", "application/pdf", ""}};
            const auto m = build_message(s);
            std::size_t parts = 0;
            for (std::sregex_iterator it(m.begin(), m.end(), charset), end; it != end; ++it) {
                EXPECT_EQ((*it)[1], "utf-8") << m;
                ++parts;
            }
            EXPECT_EQ(parts, shape >= 2 ? 2u : 1u) << m;
            // The line break before a boundary, or at the message's end, is the message's.
            auto chomp = [](std::string t) {
                return t.ends_with("\r\n") ? t.erase(t.size() - 2) : t;
            };
            const auto parsed = parse_message(m);
            if (s.text) {
                EXPECT_EQ(chomp(parsed.text.value_or("")), text) << m;
            }
            if (s.html) {
                EXPECT_EQ(chomp(parsed.html.value_or("")), html) << m;
            }
        }
    }
}

// The message as a GMimeMessage writes it, with the same MIME entity: the reference the
// header block written field by field (message.cpp) must match byte for byte.
std::string written_by_gmime_message(const MessageSpec& spec) {
    detail::GObj<GMimeMessage> msg(g_mime_message_new(FALSE));
    GDateTime* date = g_date_time_new_from_unix_utc(spec.date / 1000);
    g_mime_message_set_date(msg.get(), date);
    g_date_time_unref(date);
    auto add = [&](GMimeAddressType type, std::span<const Mailbox> list) {
        if (list.empty()) return;  // appending nothing would still write an empty field
        internet_address_list_append(g_mime_message_get_addresses(msg.get(), type),
                                     detail::address_list(list).get());
    };
    add(GMIME_ADDRESS_TYPE_FROM, {&spec.from, 1});
    add(GMIME_ADDRESS_TYPE_REPLY_TO, spec.reply_to);
    g_mime_message_set_subject(msg.get(), spec.subject.c_str(), "utf-8");
    add(GMIME_ADDRESS_TYPE_TO, spec.to);
    add(GMIME_ADDRESS_TYPE_CC, spec.cc);
    g_mime_message_set_message_id(msg.get(), spec.message_id.c_str());
    for (const auto& [name, value] : spec.headers)
        g_mime_object_append_header(GMIME_OBJECT(msg.get()), name.c_str(), value.c_str(), "utf-8");
    g_mime_message_set_mime_part(msg.get(), detail::message_body(spec).get());
    return detail::write_to_string(GMIME_OBJECT(msg.get()), detail::crlf_options().get());
}

// Over names that need quoting or RFC 2047 words, long folded lists and subjects, non-ASCII
// headers of the caller's, and every body shape; multipart boundaries are random, so each is
// replaced by one token before comparing.
TEST(BuildMessage, SameBytesAsAGMimeMessage) {
    const std::vector<std::string> names = {"",
                                            "Bench",
                                            "Zoë Müller",
                                            "\"quoted\" name",
                                            "Smith, John",
                                            "a(b)c",
                                            "O'Brien",
                                            "José Ñandú Ærøskøbing Ünïcödé Naïve Façade",
                                            std::string(90, 'n'),
                                            "中文名字",
                                            "Ünïcödé " + std::string(70, 'q'),
                                            "semi;colon",
                                            "tab\tname",
                                            "Acme Shop",
                                            "Orders 2026",
                                            "A  double space",
                                            " leading",
                                            "trailing ",
                                            "Jo",
                                            "Customer Service Team of a Company With a Long Name"};
    const std::vector<std::string> addresses = {
        "a@example.net",
        "very.long.local.part.that.goes.on@sub.domain.example.com",
        "\"quoted local\"@example.org",
        "zoe@münchen.example",
        "b+tag@example.net",
        "x@example.com",
        "first.last@a-long-subdomain.of.an.example.com",
        "o'brien@example.ie",
        "{weird}~!#$%&*=?^_`|@example.com"};
    const std::vector<std::string> subjects = {
        "hi",
        "Grüße aus München",
        std::string(300, 's'),
        "a subject line with many words that needs folding because it is longer than a line",
        "Ünïcödé subject, rather long, with non-ASCII letters all over the place: ä ö ü ß é è",
        "=?utf-8?q?looks_encoded?=",
        "  leading and trailing  ",
        "中文主题中文主题中文主题中文主题中文主题",
        "word " + std::string(100, 'w') + " end"};
    const std::vector<std::string> values = {
        "spring", "Ünïcödé value", std::string(200, 'v'), "a, b, c; d=e",
        "a value with many words that will certainly be folded when it is written out"};
    const std::vector<std::string> texts = {
        "hello\n",
        "x",
        "",
        "Grüße\n",
        std::string(1024, 'x'),
        "line\r\nline2\r\n",
        "From me\n",
        std::string(1200, 'y') + "\nshort\n",      // a line over 998: quoted-printable
        "ends without a newline\nbare\rcr\r\n\n",  // bare CR, CRLF, empty lines
        "äöüß€ äöüß€ äöüß€\n",                     // mostly 8-bit: base64
        std::string("nul\0in it\n", 11),           // a NUL: base64
        "tab\tand trailing space \nand = sign\n"};
    const std::regex boundary("=-[A-Za-z0-9+/]{20}");
    std::uint32_t seed = 1;
    auto next = [&seed](std::size_t n) {
        seed = seed * 1664525u + 1013904223u;
        return static_cast<std::size_t>(seed >> 8) % n;
    };
    auto mailbox = [&] {
        auto m = mb(addresses[next(addresses.size())]);
        m.name = names[next(names.size())];
        return m;
    };
    for (int i = 0; i < 400; ++i) {
        auto s = base();
        s.from = mailbox();
        s.to.clear();
        for (std::size_t k = 0, n = 1 + next(i % 4 == 0 ? 12 : 2); k < n; ++k)
            s.to.push_back(mailbox());
        for (std::size_t k = 0, n = next(3); k < n; ++k) s.cc.push_back(mailbox());
        for (std::size_t k = 0, n = next(2); k < n; ++k) s.reply_to.push_back(mailbox());
        s.subject = subjects[next(subjects.size())];
        const auto shape = next(4);  // text, HTML, both, both with files
        if (shape != 1) s.text = texts[next(texts.size())];
        if (shape >= 1)
            s.html = next(2) == 0 ? "<p>Grüße <img src=\"cid:logo\"></p>\n"
                                  : "<p>" + texts[next(texts.size())] + "</p>";
        if (shape == 3)
            s.attachments = {{"logo.png", "\x89PNG", "image/png", "logo"},
                             {"report.pdf", "%PDF-1.4", "application/pdf", ""}};
        for (std::size_t k = 0, n = next(3); k < n; ++k)
            s.headers.emplace_back(k == 0 ? "X-Campaign" : "X-A-Rather-Long-Header-Name",
                                   values[next(values.size())]);
        s.date += static_cast<UnixMs>(next(100000)) * 86'400'000 / 97;
        if (next(2) == 0)  // a long smtp.hostname
            s.message_id = "em_01m80hp39tw9em1yff8m10jzcr@" + std::string(70, 'h') + ".example";
        const auto ours = std::regex_replace(build_message(s), boundary, "=-BOUNDARY");
        const auto reference =
            std::regex_replace(written_by_gmime_message(s), boundary, "=-BOUNDARY");
        ASSERT_EQ(ours, reference) << "spec " << i;
    }
}

// Around the length where GMime starts folding an address line: plain mailboxes are written
// without its objects up to 76 characters, and must come out the same at every length.
TEST(BuildMessage, PlainAddressLinesOfEveryLengthAreGMimes) {
    const std::regex boundary("=-[A-Za-z0-9+/]{20}");
    for (std::size_t n = 1; n <= 72; ++n) {
        for (int shape = 0; shape < 3; ++shape) {
            auto s = base();
            std::string name(n, 'a');
            if (n > 4) name[n / 2] = ' ';
            s.from = mb("from@example.com");
            s.from.name = shape == 0 ? name : "";
            s.to = {mb("to@example.net")};
            s.to[0].name = shape == 1 ? name : "";
            if (shape == 2) {
                const std::size_t local = std::min<std::size_t>(n, 60);  // at most 64
                s.to.push_back(mb(std::string(local, 'b') + "@example" +
                                  std::string(n - local, 'x') + ".org"));
                s.to.push_back(mb("c@example.org"));
            }
            ASSERT_EQ(std::regex_replace(build_message(s), boundary, "="),
                      std::regex_replace(written_by_gmime_message(s), boundary, "="))
                << "name length " << n << ", shape " << shape;
        }
    }
}

// Around the length where GMime starts folding a subject or a header of the caller's: plain
// values are written without its encoder and folder up to 76 characters a line, and must
// come out the same at every length, with every printable ASCII character in them.
TEST(BuildMessage, PlainUnstructuredLinesOfEveryLengthAreGMimes) {
    const std::regex boundary("=-[A-Za-z0-9+/]{20}");
    std::string printable;
    for (char c = 0x21; c <= 0x7e; ++c) printable += c;
    const std::vector<std::string> odd = {"=?utf-8?q?x?=",
                                          "a=?b",
                                          "two  spaces",
                                          " lead",
                                          "trail ",
                                          "tab\there",
                                          "ümlaut",
                                          "x\x7f"
                                          "del"};
    std::uint32_t seed = 3;
    auto next = [&seed](std::size_t n) {
        seed = seed * 1664525u + 1013904223u;
        return static_cast<std::size_t>(seed >> 8) % n;
    };
    for (std::size_t n = 1; n <= 90; ++n) {
        for (int shape = 0; shape < 4; ++shape) {
            std::string value;
            while (value.size() < n) {
                if (!value.empty() && value.back() != ' ' && next(5) == 0)
                    value += ' ';
                else
                    value += shape == 0 ? 'w' : printable[next(printable.size())];
            }
            if (value.back() == ' ') value.back() = 'z';
            if (shape == 3) value.replace(next(value.size()), 0, odd[next(odd.size())]);
            auto s = base();
            s.subject = value;
            s.headers = {{"X-Campaign", value}, {"X-A-Rather-Long-Header-Name", value}};
            ASSERT_EQ(std::regex_replace(build_message(s), boundary, "="),
                      std::regex_replace(written_by_gmime_message(s), boundary, "="))
                << "value \"" << value << "\" (" << n << ", shape " << shape << ")";
        }
    }
}

}  // namespace
}  // namespace posthorn::mail
