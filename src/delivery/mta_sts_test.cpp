#include "delivery/mta_sts.hpp"

#include <gtest/gtest.h>

namespace posthorn::delivery {
namespace {

TEST(StsRecord, ReadsTheId) {
    EXPECT_EQ(parse_sts_record("v=STSv1; id=20160831085700Z;"), "20160831085700Z");
    EXPECT_EQ(parse_sts_record("v=STSv1;id=abc"), "abc");
    EXPECT_EQ(parse_sts_record("v=STSv1; id=abc; ext=1"), "abc");
    EXPECT_EQ(parse_sts_record("v=STSv1 ;\tid=abc ; "), "abc");
}

TEST(StsRecord, RefusesWhatIsNotOne) {
    for (const char* bad : {"", "v=STSv1", "v=STSv1;", "v=STSv2; id=abc", "id=abc; v=STSv1",
                            "v=STSv1; id=", "v=STSv1; id=a-b", "v=STSv1; id=abc; id=def",
                            "v=STSv1; id=123456789012345678901234567890123", "v=STSv1x; id=abc",
                            "v=STSv1; ; id=abc", "v=STSv1; ext=; id=a", "v=STSv1; =x; id=a"})
        EXPECT_FALSE(parse_sts_record(bad)) << bad;
}

TEST(StsRecord, ExactlyOneStsRecordAmongTheTxts) {
    EXPECT_EQ(sts_record_id({"something else", "v=STSv1; id=1;"}), "1");
    EXPECT_FALSE(sts_record_id({"v=STSv1; id=1;", "v=STSv1; id=2;"}));
    EXPECT_FALSE(sts_record_id({"v=spf1 -all"}));
    EXPECT_FALSE(sts_record_id({}));
    EXPECT_FALSE(sts_record_id({"v=STSv1; nonsense"}));
}

TEST(StsPolicy, ReadsThePolicyOfTheRfc) {
    const auto r = parse_sts_policy(
        "version: STSv1\r\nmode: enforce\r\nmx: mail.example.com\r\nmx: *.example.net\r\n"
        "mx: backupmx.example.com\r\nmax_age: 604800\r\n");
    ASSERT_TRUE(r.policy) << r.error;
    EXPECT_EQ(r.policy->mode, StsMode::enforce);
    EXPECT_EQ(r.policy->max_age_s, 604800);
    EXPECT_EQ(r.policy->mx, (std::vector<std::string>{"mail.example.com", "*.example.net",
                                                      "backupmx.example.com"}));
}

TEST(StsPolicy, LfLinesSpacesUnknownKeysAndCase) {
    const auto r = parse_sts_policy(
        "version:STSv1\nmode:   Testing  \nfuture: thing\nMX: MX.Example.NET.\nmax_age: 0\n");
    ASSERT_TRUE(r.policy) << r.error;
    EXPECT_EQ(r.policy->mode, StsMode::testing);
    EXPECT_EQ(r.policy->max_age_s, 0);
    EXPECT_EQ(r.policy->mx, std::vector<std::string>{"mx.example.net"});
}

TEST(StsPolicy, ModeNoneNeedsNoMx) {
    const auto r = parse_sts_policy("version: STSv1\nmode: none\nmax_age: 86400\n");
    ASSERT_TRUE(r.policy) << r.error;
    EXPECT_EQ(r.policy->mode, StsMode::none);
}

TEST(StsPolicy, TheFirstOfARepeatedKeyCounts) {
    const auto r = parse_sts_policy(
        "version: STSv1\nmode: testing\nmode: enforce\nmx: a.example\nmax_age: 5\nmax_age: 9\n");
    ASSERT_TRUE(r.policy) << r.error;
    EXPECT_EQ(r.policy->mode, StsMode::testing);
    EXPECT_EQ(r.policy->max_age_s, 5);
}

TEST(StsPolicy, RefusesBrokenPolicies) {
    for (const std::string& bad : std::vector<std::string>{
             std::string("mode: enforce\nmx: a.example\nmax_age: 1\n"),  // no version
             std::string("version: STSv2\nmode: enforce\nmx: a.example\nmax_age: 1\n"),
             std::string("version: STSv1\nmx: a.example\nmax_age: 1\n"),  // no mode
             std::string("version: STSv1\nmode: strict\nmx: a.example\nmax_age: 1\n"),
             std::string("version: STSv1\nmode: enforce\nmx: a.example\n"),  // no max_age
             std::string("version: STSv1\nmode: enforce\nmx: a.example\nmax_age: -1\n"),
             std::string("version: STSv1\nmode: enforce\nmx: a.example\nmax_age: 31557601\n"),
             std::string("version: STSv1\nmode: enforce\nmx: a.example\nmax_age: 12345678901\n"),
             std::string("version: STSv1\nmode: enforce\nmx: a.example\nmax_age: 1d\n"),
             std::string("version: STSv1\nmode: enforce\nmax_age: 1\n"),  // no mx
             std::string("version: STSv1\nmode: enforce\nmx: a..example\nmax_age: 1\n"),
             std::string("version: STSv1\nmode: enforce\nmx: *.*.example\nmax_age: 1\n"),
             std::string("version: STSv1\nmode: enforce\nmx: a example\nmax_age: 1\n"),
             std::string("version: STSv1\nmode enforce\nmx: a.example\nmax_age: 1\n"),
             std::string(kStsMaxPolicyBytes + 1, 'x'),
         }) {
        const auto r = parse_sts_policy(bad);
        EXPECT_FALSE(r.policy) << bad;
        EXPECT_FALSE(r.error.empty()) << bad;
    }
}

TEST(MxPattern, ExactNamesMatchInAnyCase) {
    EXPECT_TRUE(mx_matches("mx.example.net", "MX.example.NET."));
    EXPECT_TRUE(mx_matches("mx.example.net.", "mx.example.net"));
    EXPECT_FALSE(mx_matches("mx.example.net", "mx2.example.net"));
    EXPECT_FALSE(mx_matches("mx.example.net", "a.mx.example.net"));
    EXPECT_FALSE(mx_matches("", ""));
}

TEST(MxPattern, AWildcardStandsForExactlyOneLabel) {
    EXPECT_TRUE(mx_matches("*.example.net", "mx1.example.net"));
    EXPECT_TRUE(mx_matches("*.example.net", "MX1.EXAMPLE.NET."));
    EXPECT_FALSE(mx_matches("*.example.net", "example.net"));
    EXPECT_FALSE(mx_matches("*.example.net", "a.b.example.net"));
    EXPECT_FALSE(mx_matches("*.example.net", ".example.net"));
    EXPECT_FALSE(mx_matches("*.example.net", "mxexample.net"));
    EXPECT_FALSE(mx_matches("*.example.net", "mx.example.network"));
}

TEST(MxPattern, AnyPatternOfThePolicy) {
    StsPolicy p{.mode = StsMode::enforce, .mx = {"mail.example.com", "*.example.net"}};
    EXPECT_TRUE(mx_allowed(p, "mail.example.com"));
    EXPECT_TRUE(mx_allowed(p, "x.example.net"));
    EXPECT_FALSE(mx_allowed(p, "evil.example.org"));
}

}  // namespace
}  // namespace posthorn::delivery
