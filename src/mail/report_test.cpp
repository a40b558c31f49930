#include "mail/report.hpp"

#include <gtest/gtest.h>

#include "mail/message.hpp"

namespace posthorn::mail {
namespace {

constexpr const char* kDsn =
    "From: MAILER-DAEMON@mx.example.net\r\nTo: bounces+tok@posthorn.test\r\n"
    "Subject: Undelivered Mail\r\nMIME-Version: 1.0\r\n"
    "Content-Type: multipart/report; report-type=delivery-status; boundary=\"b\"\r\n\r\n"
    "--b\r\nContent-Type: text/plain\r\n\r\nSorry.\r\n"
    "--b\r\nContent-Type: message/delivery-status\r\n\r\n"
    "Reporting-MTA: dns; mx.example.net\r\n\r\n"
    "Final-Recipient: rfc822; Gone@Example.NET\r\nAction: failed\r\nStatus: 5.1.1\r\n"
    "Diagnostic-Code: smtp; 550 5.1.1 no such\r\n user\r\n\r\n"
    "Final-Recipient: rfc822; <slow@example.net>\r\nAction: delayed\r\nStatus: 4.4.1\r\n"
    "--b--\r\n";

constexpr const char* kArf =
    "From: fbl@isp.example\r\nTo: bounces+tok@posthorn.test\r\nSubject: FW: spam\r\n"
    "MIME-Version: 1.0\r\n"
    "Content-Type: multipart/report; report-type=feedback-report; boundary=\"b\"\r\n\r\n"
    "--b\r\nContent-Type: text/plain\r\n\r\nA complaint.\r\n"
    "--b\r\nContent-Type: message/feedback-report\r\n\r\n"
    "Feedback-Type: abuse\r\nUser-Agent: isp/1.0\r\nVersion: 1\r\n"
    "Original-Rcpt-To: <angry@example.net>\r\n"
    "--b\r\nContent-Type: text/rfc822-headers\r\n\r\nMessage-ID: <em_1@posthorn.test>\r\n"
    "--b--\r\n";

TEST(ParseReport, ReadsADeliveryStatusNotification) {
    init();
    auto r = parse_report(kDsn);
    ASSERT_EQ(r.kind, Report::Kind::dsn);
    ASSERT_EQ(r.recipients.size(), 2u);
    EXPECT_EQ(r.recipients[0].address, "gone@example.net");
    EXPECT_EQ(r.recipients[0].action, "failed");
    EXPECT_EQ(r.recipients[0].status, "5.1.1");
    EXPECT_EQ(r.recipients[0].diagnostic, "smtp; 550 5.1.1 no such user");
    EXPECT_EQ(r.recipients[1].action, "delayed");
}

TEST(ParseReport, ReadsAnAbuseReport) {
    init();
    auto r = parse_report(kArf);
    ASSERT_EQ(r.kind, Report::Kind::arf);
    EXPECT_EQ(r.feedback_type, "abuse");
    ASSERT_EQ(r.recipients.size(), 1u);
    EXPECT_EQ(r.recipients[0].address, "angry@example.net");
}

TEST(ParseReport, AnOrdinaryMessageIsNoReport) {
    init();
    EXPECT_EQ(parse_report("Subject: hi\r\n\r\nbody\r\n").kind, Report::Kind::none);
    EXPECT_EQ(parse_report("garbage").kind, Report::Kind::none);
}

// Anyone can send a report to a bounce address: a lone CR or another control character in a
// field is no line end and stays out of every value, and a Status that is not a status code
// (RFC 3464 §2.3.4) is left empty. Found by tests/fuzz/dsn_parse_fuzz.cpp.
TEST(ParseReport, ControlCharactersAndFalseStatusCodesStayOut) {
    init();
    std::string dsn = kDsn;
    const auto edit = [&dsn](std::string_view from, std::string_view to) {
        dsn.replace(dsn.find(from), from.size(), to);
    };
    edit("Status: 5.1.1\r\n", "Status: 5.1.1 (gone)\r user\r\n");
    edit("Status: 4.4.1\r\n", "Status: 4.4.1.7\x01\r\n");
    edit("no such\r\n user", "no\rsuch\x7f\r\n user");
    auto r = parse_report(dsn);
    ASSERT_EQ(r.recipients.size(), 2u);
    EXPECT_EQ(r.recipients[0].status, "5.1.1");
    EXPECT_EQ(r.recipients[0].diagnostic, "smtp; 550 5.1.1 no such user");
    EXPECT_EQ(r.recipients[1].status, "") << "four numbers are no status code";
    for (const auto& rr : r.recipients)
        for (const auto& v : {rr.address, rr.action, rr.status, rr.diagnostic})
            for (unsigned char c : v) EXPECT_TRUE(c >= 0x20 && c != 0x7f) << v;
}

TEST(ParseReport, StatusCodes) {
    init();
    auto status_of = [](std::string_view v) {
        std::string dsn = kDsn;
        dsn.replace(dsn.find("5.1.1\r\n"), 5, v);
        auto r = parse_report(dsn);
        return r.recipients.empty() ? std::string("?") : r.recipients[0].status;
    };
    EXPECT_EQ(status_of("2.0.0"), "2.0.0");
    EXPECT_EQ(status_of("4.7.100"), "4.7.100");
    EXPECT_EQ(status_of("5.1.1 (user unknown)"), "5.1.1");
    EXPECT_EQ(status_of("3.1.1"), "") << "no class 3";
    EXPECT_EQ(status_of("5.1"), "");
    EXPECT_EQ(status_of("5.1.1000"), "");
    EXPECT_EQ(status_of("5..1"), "");
    EXPECT_EQ(status_of("55.1.1"), "");
    EXPECT_EQ(status_of("smtp; 550"), "");
}

}  // namespace
}  // namespace posthorn::mail
