#include "delivery/tls_policy.hpp"

#include <gtest/gtest.h>

namespace posthorn::delivery {
namespace {

const StsPolicy kEnforce{.mode = StsMode::enforce, .mx = {"*.example.net"}, .max_age_s = 60};
const StsPolicy kTesting{.mode = StsMode::testing, .mx = {"*.example.net"}, .max_age_s = 60};
const StsPolicy kNone{.mode = StsMode::none, .max_age_s = 60};

Dane secure(std::vector<dns::TlsaRecord> records) {
    return {.state = Dane::State::secure, .records = std::move(records)};
}
const dns::TlsaRecord kEe{.usage = 3, .selector = 1, .matching_type = 1, .data = {1, 2}};
const dns::TlsaRecord kTa{.usage = 2, .selector = 0, .matching_type = 1, .data = {3, 4}};
const dns::TlsaRecord kPkix{.usage = 1, .selector = 0, .matching_type = 1, .data = {5}};

TEST(TlsPolicy, TheSettingAloneWithoutPolicies) {
    struct Row {
        TlsSetting setting;
        TlsPolicy policy;
        smtp::TlsMode mode;
        bool checked, required, fallback;
    };
    for (const auto& row : std::vector<Row>{
             {TlsSetting::off, TlsPolicy::none, smtp::TlsMode::off, false, false, false},
             {TlsSetting::opportunistic, TlsPolicy::opportunistic, smtp::TlsMode::opportunistic,
              false, false, true},
             {TlsSetting::required, TlsPolicy::required, smtp::TlsMode::required, false, false,
              false},
             {TlsSetting::verify, TlsPolicy::verify, smtp::TlsMode::required, true, true, false},
         }) {
        const auto t = host_tls(row.setting, std::nullopt, {}, "mx.example.net");
        EXPECT_EQ(t.policy, row.policy) << to_string(row.policy);
        EXPECT_EQ(t.mode, row.mode) << to_string(row.policy);
        EXPECT_EQ(t.check.has_value(), row.checked) << to_string(row.policy);
        EXPECT_EQ(t.require_verified, row.required) << to_string(row.policy);
        EXPECT_EQ(t.plain_fallback, row.fallback) << to_string(row.policy);
        EXPECT_TRUE(t.refuse.empty());
    }
    const auto v = host_tls(TlsSetting::verify, std::nullopt, {}, "mx.example.net");
    EXPECT_EQ(v.check->names, std::vector<std::string>{"mx.example.net"});
}

TEST(TlsPolicy, EnforceVerifiesListedHostsAndRefusesOthers) {
    const auto ok = host_tls(TlsSetting::opportunistic, kEnforce, {}, "mx1.example.net");
    EXPECT_EQ(ok.policy, TlsPolicy::mta_sts);
    EXPECT_EQ(ok.mode, smtp::TlsMode::required);
    ASSERT_TRUE(ok.check);
    EXPECT_EQ(ok.check->names, std::vector<std::string>{"mx1.example.net"});
    EXPECT_TRUE(ok.require_verified);
    EXPECT_FALSE(ok.plain_fallback);
    EXPECT_TRUE(ok.refuse.empty());

    const auto no = host_tls(TlsSetting::opportunistic, kEnforce, {}, "mx.evil.example");
    EXPECT_EQ(no.policy, TlsPolicy::mta_sts);
    EXPECT_NE(no.refuse.find("not an MX host"), std::string::npos);
}

TEST(TlsPolicy, TestingDeliversAsBeforeAndOnlyReports) {
    const auto t = host_tls(TlsSetting::opportunistic, kTesting, {}, "mx.evil.example");
    EXPECT_EQ(t.policy, TlsPolicy::mta_sts);
    EXPECT_EQ(t.mode, smtp::TlsMode::opportunistic);
    EXPECT_TRUE(t.check);  // checked, to report
    EXPECT_FALSE(t.require_verified);
    EXPECT_TRUE(t.plain_fallback);
    EXPECT_TRUE(t.refuse.empty());
    EXPECT_FALSE(t.report.empty());
    EXPECT_TRUE(host_tls(TlsSetting::opportunistic, kTesting, {}, "a.example.net").report.empty());
    // The operator's stricter setting still holds.
    EXPECT_TRUE(host_tls(TlsSetting::verify, kTesting, {}, "a.example.net").require_verified);
}

TEST(TlsPolicy, ModeNoneIsNoPolicy) {
    EXPECT_EQ(host_tls(TlsSetting::opportunistic, kNone, {}, "x.example.net").policy,
              TlsPolicy::opportunistic);
}

TEST(TlsPolicy, DaneComesBeforeMtaSts) {
    const auto t = host_tls(TlsSetting::opportunistic, kEnforce, secure({kEe, kTa, kPkix}),
                            "mx.elsewhere.example");
    EXPECT_EQ(t.policy, TlsPolicy::dane);
    EXPECT_EQ(t.mode, smtp::TlsMode::required);
    EXPECT_TRUE(t.refuse.empty());  // the MTA-STS mx list is not asked
    ASSERT_TRUE(t.check);
    EXPECT_EQ(t.check->tlsa.size(), 2u);  // PKIX-EE is unusable (RFC 7672 §3.1.3)
    EXPECT_EQ(t.check->dane_name, "mx.elsewhere.example");
    EXPECT_TRUE(t.require_verified);
}

TEST(TlsPolicy, DaneWithOnlyUnusableRecordsStillRequiresTls) {
    const auto t = host_tls(TlsSetting::opportunistic, std::nullopt, secure({kPkix}), "mx.a");
    EXPECT_EQ(t.policy, TlsPolicy::dane);
    EXPECT_EQ(t.mode, smtp::TlsMode::required);
    EXPECT_FALSE(t.check);
    EXPECT_FALSE(t.require_verified);
}

TEST(TlsPolicy, AFailedTlsaLookupRefusesTheHost) {
    const auto t = host_tls(TlsSetting::opportunistic, std::nullopt,
                            {.state = Dane::State::failed, .error = "servfail"}, "mx.a");
    EXPECT_EQ(t.policy, TlsPolicy::dane);
    EXPECT_NE(t.refuse.find("servfail"), std::string::npos);
}

TEST(TlsPolicy, TlsOffIgnoresEveryPolicy) {
    const auto t = host_tls(TlsSetting::off, kEnforce, secure({kEe}), "mx.evil.example");
    EXPECT_EQ(t.policy, TlsPolicy::none);
    EXPECT_EQ(t.mode, smtp::TlsMode::off);
    EXPECT_TRUE(t.refuse.empty());
}

TEST(DaneOf, OnlyAuthenticatedRecordsCount) {
    EXPECT_EQ(dane_of(dns::TlsaAnswer{.records = {kEe}, .authenticated = true}).state,
              Dane::State::secure);
    EXPECT_EQ(dane_of(dns::TlsaAnswer{.records = {kEe}, .authenticated = false}).state,
              Dane::State::none);
    EXPECT_EQ(dane_of(make_error_code(dns::errc::nxdomain)).state, Dane::State::none);
    EXPECT_EQ(dane_of(make_error_code(dns::errc::no_data)).state, Dane::State::none);
    EXPECT_EQ(dane_of(make_error_code(dns::errc::refused)).state, Dane::State::none);
    EXPECT_EQ(dane_of(make_error_code(dns::errc::servfail)).state, Dane::State::failed);
    EXPECT_EQ(dane_of(make_error_code(dns::errc::timeout)).state, Dane::State::failed);
}

}  // namespace
}  // namespace posthorn::delivery
