#include "mail/address.hpp"

#include <gtest/gtest.h>

namespace posthorn::mail {
namespace {

Mailbox ok(std::string_view in) {
    auto r = parse_mailbox(in);
    if (auto* b = std::get_if<BadAddress>(&r)) ADD_FAILURE() << in << ": " << b->reason;
    return std::holds_alternative<Mailbox>(r) ? std::get<Mailbox>(r) : Mailbox{};
}

bool bad(std::string_view in) { return std::holds_alternative<BadAddress>(parse_mailbox(in)); }

TEST(ParseMailbox, PlainAndNamedForms) {
    auto a = ok("user@Example.COM");
    EXPECT_EQ(a.address(), "user@example.com");
    EXPECT_EQ(a.name, "");
    auto b = ok("Jane Doe <jane@example.com>");
    EXPECT_EQ(b.name, "Jane Doe");
    EXPECT_EQ(b.address(), "jane@example.com");
    EXPECT_EQ(b.display(), "\"Jane Doe\" <jane@example.com>");
    auto c = ok("\"Doe, Jane\" <jane@example.com>");
    EXPECT_EQ(c.name, "Doe, Jane");
    auto d = ok("<bare@example.com>");
    EXPECT_EQ(d.name, "");
    auto e = ok("  spaced@example.com  ");
    EXPECT_EQ(e.address(), "spaced@example.com");
    auto f = ok("\"Quote \\\" inside\" <q@example.com>");
    EXPECT_EQ(f.name, "Quote \" inside");
    EXPECT_EQ(f.display(), "\"Quote \\\" inside\" <q@example.com>");
}

TEST(ParseMailbox, LocalParts) {
    EXPECT_EQ(ok("first.last+tag@example.com").local, "first.last+tag");
    EXPECT_EQ(ok("!#$%&'*+-/=?^_`{|}~@example.com").local, "!#$%&'*+-/=?^_`{|}~");
    EXPECT_EQ(ok("\"john doe\"@example.com").local, "\"john doe\"");
    EXPECT_EQ(ok("\"a@b\"@example.com").local, "\"a@b\"");
    EXPECT_EQ(ok("\"esc\\\"aped\"@example.com").local, "\"esc\\\"aped\"");
    EXPECT_EQ(ok("jörg@example.com").local, "jörg");  // RFC 6532
    EXPECT_EQ(ok(std::string(64, 'a') + "@example.com").local.size(), 64u);
}

TEST(ParseMailbox, IdnDomainsBecomePunycode) {
    EXPECT_EQ(ok("info@bücher.example").domain, "xn--bcher-kva.example");
    EXPECT_EQ(ok("Bücherwurm <info@BÜCHER.example>").name, "Bücherwurm");
}

TEST(ParseMailbox, RefusesWhatIsNotOneMailbox) {
    for (const char* in : {"",
                           "   ",
                           "plain",
                           "@example.com",
                           "user@",
                           "user@@example.com",
                           "user@example",
                           "user@ex ample.com",
                           ".user@example.com",
                           "user.@example.com",
                           "us..er@example.com",
                           "us er@example.com",
                           "user@[192.0.2.1]",
                           "user@192.0.2.1",
                           "a@b.com, c@d.com",
                           "a@b.com; c@d.com",
                           "Name <a@b.com",
                           "Name a@b.com>",
                           "Name <a@b.com> trailing",
                           "Na<me <a@b.com>",
                           "\"unterminated <a@b.com>",
                           "user@example.com\r\nBcc: victim@example.org",
                           "Name\n <a@b.com>",
                           "a\x01@b.com",
                           "\"a\"b\"@example.com",
                           "user(comment)@example.com",
                           "Group: a@b.com;"})
        EXPECT_TRUE(bad(in)) << in;
    EXPECT_TRUE(bad(std::string(65, 'a') + "@example.com"));
    EXPECT_TRUE(bad("a@" + std::string(250, 'b') + ".com"));
}

TEST(ParseMailbox, ReasonNamesTheAddress) {
    auto r = parse_mailbox("not-an-address");
    ASSERT_TRUE(std::holds_alternative<BadAddress>(r));
    EXPECT_NE(std::get<BadAddress>(r).reason.find("not-an-address"), std::string::npos);
}

}  // namespace
}  // namespace posthorn::mail
