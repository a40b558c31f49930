#include "domain/delivery_policy.hpp"

#include <gtest/gtest.h>

namespace posthorn::domain {
namespace {

// Refusals as the big receivers and the common MTAs send them (their postmaster pages
// and bounces seen in the wild), with the class each must get. Multiline replies keep
// their line structure.
struct Case {
    Stage stage;
    int code;
    const char* text;
    BounceType want;
    const char* want_code;  // the enhanced code read from the reply
};

const Case kReplies[] = {
    // ---- Gmail ----
    {Stage::rcpt, 550,
     "550-5.1.1 The email account that you tried to reach does not exist. Please try\r\n"
     "550-5.1.1 double-checking the recipient's email address for typos or\r\n"
     "550 5.1.1 unnecessary spaces. https://support.google.com/mail/?p=NoSuchUser",
     BounceType::hard, "5.1.1"},
    {Stage::rcpt, 550,
     "550-5.2.1 The email account that you tried to reach is disabled.\r\n"
     "550 5.2.1 https://support.google.com/mail/?p=DisabledUser",
     BounceType::hard, "5.2.1"},
    {Stage::rcpt, 552,
     "552-5.2.2 The email account that you tried to reach is over quota and inactive.\r\n"
     "552 5.2.2 https://support.google.com/mail/?p=OverQuotaPerm",
     BounceType::soft, "5.2.2"},
    {Stage::data, 552,
     "552-5.3.4 Your message exceeded Google's message size limits.\r\n"
     "552 5.3.4 https://support.google.com/mail/?p=MaxSizeError",
     BounceType::soft, "5.3.4"},
    {Stage::data, 550,
     "550-5.7.1 Our system has detected that this message is likely unsolicited\r\n"
     "550-5.7.1 mail. To reduce the amount of spam sent to Gmail, this message has\r\n"
     "550 5.7.1 been blocked. https://support.google.com/mail/?p=UnsolicitedMessageError",
     BounceType::block, "5.7.1"},
    {Stage::data, 550,
     "550-5.7.26 This mail has been blocked because the sender is unauthenticated.\r\n"
     "550 5.7.26 Gmail requires all senders to authenticate with either SPF or DKIM.",
     BounceType::block, "5.7.26"},
    {Stage::data, 550,
     "550-5.7.25 [192.0.2.7] The IP address sending this message does not have a\r\n"
     "550 5.7.25 PTR record setup, or the corresponding forward DNS entry does not point",
     BounceType::block, "5.7.25"},
    {Stage::data, 550,
     "550-5.7.28 [192.0.2.7] Our system has detected an unusual rate of unsolicited\r\n"
     "550 5.7.28 mail originating from your IP Netblock.",
     BounceType::block, "5.7.28"},
    {Stage::data, 552,
     "552-5.7.0 This message was blocked because its content presents a potential\r\n"
     "552 5.7.0 security issue.",
     BounceType::block, "5.7.0"},
    {Stage::rcpt, 550,
     "550-5.7.1 The user or domain that you are sending to (or from) has a policy that\r\n"
     "550 5.7.1 prohibited the mail that you sent.",
     BounceType::block, "5.7.1"},
    // ---- Microsoft (Outlook.com, Exchange Online) ----
    {Stage::rcpt, 550, "550 5.5.0 Requested action not taken: mailbox unavailable (S2017062302)",
     BounceType::hard, "5.5.0"},
    {Stage::rcpt, 550,
     "550 5.4.1 Recipient address rejected: Access denied. AS(201806281) "
     "[DM6NAM12FT045.eop-nam12.prod.protection.outlook.com]",
     BounceType::hard, "5.4.1"},
    {Stage::data, 550,
     "550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup",
     BounceType::hard, "5.1.10"},
    {Stage::connect, 550,
     "550 5.7.1 Unfortunately, messages from [192.0.2.7] weren't sent. Please contact your "
     "Internet service provider since part of their network is on our block list (S3150).",
     BounceType::block, "5.7.1"},
    {Stage::connect, 550, "550 5.7.606 Access denied, banned sending IP [192.0.2.7].",
     BounceType::block, "5.7.606"},
    {Stage::connect, 550,
     "550 5.7.708 Service unavailable. Access denied, traffic not accepted from this IP.",
     BounceType::block, "5.7.708"},
    {Stage::data, 550,
     "550 5.7.509 Access denied, sending domain example.com does not pass DMARC "
     "verification and has a DMARC policy of reject.",
     BounceType::block, "5.7.509"},
    {Stage::data, 554,
     "554 5.2.2 mailbox full; STOREDRV.Deliver.Exception:QuotaExceededException.MapiException"
     "QuotaExceeded",
     BounceType::soft, "5.2.2"},
    {Stage::data, 550,
     "550 5.7.520 Access denied, Your organization does not allow external forwarding.",
     BounceType::block, "5.7.520"},
    // ---- Yahoo and AOL ----
    {Stage::rcpt, 554,
     "554 delivery error: dd This user doesn't have a yahoo.com account (x@yahoo.com) [0] - "
     "mta1234.mail.bf1.yahoo.com",
     BounceType::hard, ""},
    {Stage::rcpt, 554,
     "554 delivery error: dd Sorry your message to x@yahoo.com cannot be delivered. This "
     "mailbox is disabled (554.30). - mta4321.mail.ne1.yahoo.com",
     BounceType::hard, ""},
    {Stage::rcpt, 554,
     "554 delivery error: dd Sorry, your message to x@aol.com cannot be delivered. This "
     "account has been disabled or discontinued [#102]. - mta1.mail.aol.com",
     BounceType::hard, ""},
    {Stage::connect, 553,
     "553 5.7.1 [BL21] Connections will not be accepted from 192.0.2.7, because the ip is in "
     "Spamhaus's list; see https://postmaster.yahooinc.com/error-codes",
     BounceType::block, "5.7.1"},
    {Stage::data, 554,
     "554 5.7.9 Message not accepted for policy reasons.  See "
     "https://postmaster.yahooinc.com/error-codes",
     BounceType::block, "5.7.9"},
    {Stage::data, 550,
     "550 5.7.9 This mail has been blocked because the sender is unauthenticated. Yahoo "
     "requires all senders to authenticate with either SPF or DKIM.",
     BounceType::block, "5.7.9"},
    {Stage::rcpt, 552, "552 1 Requested mail action aborted, mailbox not found", BounceType::hard,
     ""},
    {Stage::data, 554, "554 30 Sorry, your message size exceeds 41943040 bytes", BounceType::soft,
     ""},
    // ---- iCloud ----
    {Stage::rcpt, 550, "550 5.1.1 <x@icloud.com>: user does not exist", BounceType::hard, "5.1.1"},
    {Stage::rcpt, 552, "552 5.2.2 <x@icloud.com>: user is over quota", BounceType::soft, "5.2.2"},
    {Stage::data, 554,
     "554 5.7.1 [CS01] Message rejected due to local policy. Please visit "
     "https://support.apple.com/en-us/HT204137",
     BounceType::block, "5.7.1"},
    {Stage::connect, 550,
     "550 5.7.0 Blocked - see https://support.proofpoint.com/dnsbl-lookup.cgi?ip=192.0.2.7",
     BounceType::block, "5.7.0"},
    // ---- Proton ----
    {Stage::rcpt, 550,
     "550 5.1.1 <x@proton.me>: Recipient address rejected: Address does not exist",
     BounceType::hard, "5.1.1"},
    {Stage::rcpt, 552, "552 5.2.2 <x@proton.me>: Recipient address rejected: Mailbox is full",
     BounceType::soft, "5.2.2"},
    {Stage::data, 554, "554 5.7.1 Message rejected: the message was classified as spam",
     BounceType::block, "5.7.1"},
    // ---- Postfix ----
    {Stage::rcpt, 550,
     "550 5.1.1 <x@example.com>: Recipient address rejected: User unknown in local recipient "
     "table",
     BounceType::hard, "5.1.1"},
    {Stage::rcpt, 550,
     "550 5.1.1 <x@example.com>: Recipient address rejected: User unknown in virtual mailbox "
     "table",
     BounceType::hard, "5.1.1"},
    {Stage::rcpt, 554, "554 5.7.1 <x@example.com>: Relay access denied", BounceType::block,
     "5.7.1"},
    {Stage::rcpt, 554,
     "554 5.7.1 Service unavailable; Client host [192.0.2.7] blocked using zen.spamhaus.org",
     BounceType::block, "5.7.1"},
    {Stage::data, 552, "552 5.3.4 Message size exceeds fixed limit", BounceType::soft, "5.3.4"},
    {Stage::rcpt, 550,
     "550 5.1.2 <x@nowhere.example>: Recipient address rejected: Domain not found",
     BounceType::hard, "5.1.2"},
    {Stage::rcpt, 553,
     "553 5.1.8 <bounces+x@mail.example.org>: Sender address rejected: Domain not found",
     BounceType::undetermined, "5.1.8"},
    {Stage::rcpt, 554, "554 5.7.1 <unknown[192.0.2.7]>: Client host rejected: Access denied",
     BounceType::block, "5.7.1"},
    {Stage::mail, 550,
     "550 5.1.0 <bounces+x@mail.example.org>: Sender address rejected: User unknown in local "
     "recipient table",
     BounceType::undetermined, "5.1.0"},
    // ---- Exim ----
    {Stage::rcpt, 550, "550 Unrouteable address", BounceType::hard, ""},
    {Stage::rcpt, 550, "550 No Such User Here", BounceType::hard, ""},
    {Stage::rcpt, 550, "550 Administrative prohibition", BounceType::block, ""},
    {Stage::connect, 550, "550 rejected because 192.0.2.7 is in a black list at zen.spamhaus.org",
     BounceType::block, ""},
    {Stage::data, 552, "552 Message size exceeds maximum permitted", BounceType::soft, ""},
    {Stage::rcpt, 550, "550 Mailbox quota exceeded", BounceType::soft, ""},
    {Stage::rcpt, 550,
     "550-Mailbox unknown. Either there is no mailbox associated with this\r\n"
     "550-name or you do not have authorization to see it.\r\n"
     "550 5.1.1 User unknown",
     BounceType::hard, "5.1.1"},
    {Stage::rcpt, 550, "550 relay not permitted", BounceType::block, ""},
    // ---- qmail and the rest ----
    {Stage::rcpt, 511, "511 sorry, no mailbox here by that name (#5.1.1)", BounceType::hard,
     "5.1.1"},
    {Stage::rcpt, 553, "553 sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)",
     BounceType::block, "5.7.1"},
    {Stage::data, 554, "554 Transaction failed", BounceType::undetermined, ""},
    {Stage::rcpt, 551, "551 User not local; please try <x@other.example>", BounceType::hard, ""},
    {Stage::rcpt, 550, "550 Rejected", BounceType::undetermined, ""},
};

TEST(DeliveryPolicy, ClassifiesRealRefusals) {
    static_assert(std::size(kReplies) >= 40);
    for (const auto& c : kReplies) {
        const auto code = enhanced_code(c.text);
        EXPECT_EQ(code, c.want_code) << c.text;
        EXPECT_EQ(classify(c.code, code, c.text, c.stage), c.want) << c.text;
        // The decision on such a reply: a bounce of that class, suppressed only when hard.
        const std::vector<int> schedule{60};
        const auto d = decide({.stage = c.stage, .code = c.code, .text = c.text},
                              {.attempts_before = 0, .schedule_s = &schedule, .now = 1000});
        EXPECT_EQ(d.what, Disposition::give_up) << c.text;
        EXPECT_EQ(d.status, RecipientStatus::bounced) << c.text;
        ASSERT_TRUE(d.bounce) << c.text;
        EXPECT_EQ(d.bounce->type, c.want) << c.text;
        EXPECT_EQ(d.bounce->code, c.want_code) << c.text;
        EXPECT_EQ(d.bounce->message, c.text);
        EXPECT_EQ(d.suppress.has_value(), c.want == BounceType::hard) << c.text;
        EXPECT_EQ(d.response, c.text);
    }
}

TEST(DeliveryPolicy, ReadsEnhancedCodes) {
    EXPECT_EQ(enhanced_code("250 2.0.0 Ok: queued as ABC"), "2.0.0");
    EXPECT_EQ(enhanced_code("451 4.7.500 Server busy"), "4.7.500");
    EXPECT_EQ(enhanced_code("550-first\r\n550 5.1.1 last"), "5.1.1");
    EXPECT_EQ(enhanced_code("550 5.1 not a code"), "");
    EXPECT_EQ(enhanced_code("550 3.1.1 not a class"), "");
    EXPECT_EQ(enhanced_code("550 5.1.1234 too long a detail"), "");
    EXPECT_EQ(enhanced_code("550 user (#5.1.1)"), "5.1.1");
    EXPECT_EQ(enhanced_code(""), "");
    EXPECT_EQ(enhanced_code("5"), "");
}

TEST(DeliveryPolicy, TwoHundredsDeliver) {
    const std::vector<int> schedule{60};
    const auto d = decide({.stage = Stage::data, .code = 250, .text = "250 2.0.0 Ok"},
                          {.attempts_before = 3, .schedule_s = &schedule, .now = 0});
    EXPECT_EQ(d.what, Disposition::delivered);
    EXPECT_EQ(d.status, RecipientStatus::delivered);
    EXPECT_FALSE(d.bounce);
    EXPECT_FALSE(d.suppress);
    const auto o = outcome_of(7, 4, d);
    EXPECT_TRUE(o.transmitted);
    EXPECT_EQ(o.attempts, 4);
    EXPECT_EQ(o.recipient_id, 7);
}

TEST(DeliveryPolicy, TransientTroubleIsRetriedOnTheScheduleThenGivenUpSoft) {
    const std::vector<int> schedule{60, 300};
    const AttemptResult greylisted{.stage = Stage::rcpt,
                                   .code = 450,
                                   .text =
                                       "450 4.7.1 <x@example.com>: Recipient address "
                                       "rejected: Greylisted"};
    auto d = decide(greylisted, {.attempts_before = 0, .schedule_s = &schedule, .now = 1000});
    EXPECT_EQ(d.what, Disposition::retry);
    EXPECT_EQ(d.status, RecipientStatus::queued);
    EXPECT_EQ(d.next_attempt_at, 61'000);
    d = decide(greylisted, {.attempts_before = 1, .schedule_s = &schedule, .now = 1000});
    EXPECT_EQ(d.next_attempt_at, 301'000);
    d = decide(greylisted, {.attempts_before = 2, .schedule_s = &schedule, .now = 1000});
    EXPECT_EQ(d.what, Disposition::give_up);
    EXPECT_EQ(d.status, RecipientStatus::failed);
    ASSERT_TRUE(d.bounce);
    EXPECT_EQ(d.bounce->type, BounceType::soft);
    EXPECT_EQ(d.bounce->code, "4.7.1");
    EXPECT_FALSE(d.suppress);
    EXPECT_NE(d.response.find("gave up after 3 attempts"), std::string::npos) << d.response;

    // No reply at all: the same schedule, and 4.4.7 when given up.
    const AttemptResult timeout{
        .stage = Stage::connect, .trouble = Trouble::network, .text = "connect: timed out"};
    d = decide(timeout, {.attempts_before = 0, .schedule_s = &schedule, .now = 0});
    EXPECT_EQ(d.what, Disposition::retry);
    d = decide(timeout, {.attempts_before = 2, .schedule_s = &schedule, .now = 0});
    EXPECT_EQ(d.status, RecipientStatus::failed);
    EXPECT_EQ(d.bounce->code, "4.4.7");
    for (auto t : {Trouble::tls_failed, Trouble::dns_temporary, Trouble::local}) {
        d = decide({.stage = Stage::connect, .trouble = t, .text = "x"},
                   {.attempts_before = 0, .schedule_s = &schedule, .now = 0});
        EXPECT_EQ(d.what, Disposition::retry);
    }
    // A 3xx out of step is retried too.
    d = decide({.stage = Stage::data, .code = 354, .text = "354 go ahead"},
               {.attempts_before = 0, .schedule_s = &schedule, .now = 0});
    EXPECT_EQ(d.what, Disposition::retry);
}

TEST(DeliveryPolicy, TroubleThatNoRetryMendsFailsAtOnce) {
    const std::vector<int> schedule{60, 300};
    struct {
        Trouble trouble;
        BounceType type;
        const char* code;
    } cases[] = {{Trouble::null_mx, BounceType::hard, "5.1.10"},
                 {Trouble::no_such_domain, BounceType::hard, "5.1.2"},
                 {Trouble::no_address, BounceType::hard, "5.1.2"},
                 {Trouble::tls_unavailable, BounceType::undetermined, "5.7.10"},
                 {Trouble::smtputf8_unsupported, BounceType::undetermined, "5.6.7"},
                 {Trouble::sender_domain_gone, BounceType::undetermined, "5.7.0"}};
    for (const auto& c : cases) {
        const auto d = decide({.stage = Stage::route, .trouble = c.trouble, .text = "why"},
                              {.attempts_before = 0, .schedule_s = &schedule, .now = 0});
        EXPECT_EQ(d.what, Disposition::give_up);
        EXPECT_EQ(d.status, RecipientStatus::failed);
        ASSERT_TRUE(d.bounce);
        EXPECT_EQ(d.bounce->type, c.type);
        EXPECT_EQ(d.bounce->code, c.code);
        EXPECT_EQ(d.suppress.has_value(), c.type == BounceType::hard);
    }
}

TEST(DeliveryPolicy, BounceReportsAreClassifiedByTheirStatus) {
    auto d = decide_report("failed", "5.1.1", "smtp; 550 5.1.1 mailbox gone");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->status, RecipientStatus::bounced);
    EXPECT_EQ(d->bounce->type, BounceType::hard);
    EXPECT_EQ(d->bounce->code, "5.1.1");
    EXPECT_TRUE(d->suppress);
    EXPECT_EQ(d->response, "DSN: 5.1.1 smtp; 550 5.1.1 mailbox gone");
    // A full mailbox reported later bounces the recipient without suppressing it.
    d = decide_report("failed", "5.2.2", "smtp; 552 5.2.2 over quota");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->bounce->type, BounceType::soft);
    EXPECT_FALSE(d->suppress);
    d = decide_report("Failed", "5.7.1", "smtp; 550 5.7.1 blocked by policy");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->bounce->type, BounceType::block);
    // No status code: the diagnostic's.
    d = decide_report("failed", "", "smtp; 550 5.1.1 no such user");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->bounce->code, "5.1.1");
    EXPECT_EQ(d->bounce->type, BounceType::hard);
    EXPECT_FALSE(decide_report("delayed", "4.4.7", ""));
    EXPECT_FALSE(decide_report("delivered", "2.0.0", ""));
    EXPECT_FALSE(decide_report("relayed", "2.0.0", ""));
}

}  // namespace
}  // namespace posthorn::domain
