#include "mail/domain_name.hpp"

#include <gtest/gtest.h>

namespace posthorn::mail {
namespace {

std::string ok(std::string_view in) {
    auto r = normalize_domain(in);
    if (auto* bad = std::get_if<BadDomain>(&r)) return "BAD: " + bad->reason;
    return std::get<std::string>(r);
}

bool bad(std::string_view in) { return std::holds_alternative<BadDomain>(normalize_domain(in)); }

TEST(NormalizeDomain, CanonicalForms) {
    EXPECT_EQ(ok("Mail.Example.COM"), "mail.example.com");
    EXPECT_EQ(ok("bücher.example"), "xn--bcher-kva.example");
    EXPECT_EQ(ok("BÜCHER.example"), "xn--bcher-kva.example");
    EXPECT_EQ(ok("xn--bcher-kva.example"), "xn--bcher-kva.example");
    EXPECT_EQ(ok("a-b.c1.example"), "a-b.c1.example");
    EXPECT_EQ(ok(std::string(63, 'a') + ".example"), std::string(63, 'a') + ".example");
}

TEST(NormalizeDomain, RefusesWhatIsNotAHostName) {
    const std::string label63(63, 'a');
    std::string name253 = label63 + "." + label63 + "." + label63 + "." + std::string(61, 'b');
    ASSERT_EQ(name253.size(), 253u);
    EXPECT_FALSE(bad(name253));
    for (const std::string& in : {std::string(""),
                                  std::string("example"),
                                  std::string("exa mple.com"),
                                  std::string(" example.com"),
                                  std::string("_dmarc.example.com"),
                                  std::string("ex_ample.com"),
                                  std::string("example.com."),
                                  std::string(".example.com"),
                                  std::string("example..com"),
                                  std::string("-ex.com"),
                                  std::string("ex-.com"),
                                  std::string(64, 'a') + ".com",
                                  name253 + "c",
                                  std::string("192.168.1.1"),
                                  std::string("[::1]"),
                                  std::string("::1"),
                                  std::string("1.2.3.4"),
                                  std::string("exa\tmple.com"),
                                  std::string("ex\x01.com"),
                                  std::string("💌.example"),
                                  std::string("exam\xff"
                                              "ple.com"),
                                  std::string("a@b.com"),
                                  std::string("example.com/x")})
        EXPECT_TRUE(bad(in)) << in;
}

}  // namespace
}  // namespace posthorn::mail
