#include "domain/sending_domain.hpp"

#include <gtest/gtest.h>

namespace posthorn::domain {
namespace {

TEST(SendingDomain, OnlyVerifiedDomainsWithTheSwitchOnSendAndReceive) {
    EXPECT_EQ(may_send_from(DomainStatus::verified, true), SendCheck::ok);
    EXPECT_EQ(may_send_from(DomainStatus::verified, false), SendCheck::sending_disabled);
    for (auto s : {DomainStatus::not_started, DomainStatus::pending, DomainStatus::failed}) {
        EXPECT_EQ(may_send_from(s, true), SendCheck::not_verified);
        EXPECT_FALSE(receives_mail(s, true));
    }
    EXPECT_TRUE(receives_mail(DomainStatus::verified, true));
    EXPECT_FALSE(receives_mail(DomainStatus::verified, false));
}

TEST(SendingDomain, VerificationFollowsTheRecordsFound) {
    Verification v{.verified = 3, .required = 3, .now = 1000};
    auto o = verify(v);
    EXPECT_EQ(o.status, DomainStatus::verified);
    EXPECT_EQ(o.next_check_at, 1000 + v.verified_recheck_ms);
    EXPECT_EQ(o.verified_at, 1000);
    EXPECT_EQ(o.first_verify_at, 1000);
    EXPECT_EQ(o.event, EventKind::domain_verified);

    v.before = DomainStatus::verified;
    v.verified_at = 500;
    o = verify(v);
    EXPECT_EQ(o.verified_at, 500) << "the first time it was verified stays";
    EXPECT_FALSE(o.event) << "no change, no event";

    v = {.verified = 1, .required = 3, .now = 1000};
    o = verify(v);
    EXPECT_EQ(o.status, DomainStatus::pending);
    EXPECT_EQ(o.next_check_at, 1000 + v.pending_recheck_ms);
    EXPECT_FALSE(o.event);

    v.first_verify_at = 1000 - v.give_up_after_ms;  // pending for 72 h
    o = verify(v);
    EXPECT_EQ(o.status, DomainStatus::failed);
    EXPECT_FALSE(o.next_check_at);
    EXPECT_EQ(o.event, EventKind::domain_failed);
    EXPECT_EQ(o.first_verify_at, 1000 - v.give_up_after_ms);

    v = {.verified = 0, .required = 3, .now = 1000};
    EXPECT_EQ(verify(v).status, DomainStatus::failed);

    // A verified domain that loses a record: FAILED in the background re-check, PENDING
    // when its user asks.
    v = {.verified = 2, .required = 3, .before = DomainStatus::verified, .now = 1000};
    EXPECT_EQ(verify(v).status, DomainStatus::pending);
    v.background = true;
    o = verify(v);
    EXPECT_EQ(o.status, DomainStatus::failed);
    EXPECT_EQ(o.event, EventKind::domain_failed);
}

TEST(SendingDomain, RotationGivesTheOtherSelectorANewKey) {
    EXPECT_EQ(rotation_selector("ph1"), "ph2");
    EXPECT_EQ(rotation_selector("ph2"), "ph1");
}

TEST(SendingDomain, TheZoneServesAKeyWhenATxtRecordHasItsP) {
    const std::string key = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAjzvM";
    EXPECT_TRUE(serves_dkim_key({"v=DKIM1; k=rsa; p=" + key}, key));
    EXPECT_TRUE(serves_dkim_key({"v=spf1 -all", "v=DKIM1;k=rsa;p=" + key}, key)) << "any one";
    EXPECT_TRUE(serves_dkim_key({"k=rsa; p=" + key.substr(0, 20) + " " + key.substr(20)}, key))
        << "whitespace inside p= is folding (RFC 6376 §3.2); v= is optional";
    EXPECT_TRUE(serves_dkim_key({"v=DKIM1; k=rsa; p = " + key + " ;"}, key));
    EXPECT_FALSE(serves_dkim_key({"v=DKIM1; k=rsa; p=" + key + "AB"}, key)) << "another key";
    EXPECT_FALSE(serves_dkim_key({"v=DKIM1; k=rsa; p=" + key.substr(1)}, key));
    EXPECT_FALSE(serves_dkim_key({"v=DKIM1; k=rsa; p="}, key)) << "a revoked key";
    EXPECT_FALSE(serves_dkim_key({"v=DKIM2; p=" + key}, key));
    EXPECT_FALSE(serves_dkim_key({}, key));
    EXPECT_FALSE(serves_dkim_key({"v=DKIM1; p="}, "")) << "no key is never served";
}

// The labels of a domain's own hosts: its tracking host and its return path.
TEST(SendingDomain, HostLabelsAreOneDnsLabel) {
    EXPECT_FALSE(bad_host_label("links", "mail.example.com"));
    EXPECT_FALSE(bad_host_label("t-1", "mail.example.com"));
    EXPECT_TRUE(bad_host_label("", "mail.example.com"));
    EXPECT_TRUE(bad_host_label(std::string(64, 'a'), "mail.example.com"));
    EXPECT_FALSE(bad_host_label(std::string(63, 'a'), "mail.example.com"));
    EXPECT_TRUE(bad_host_label("a.b", "mail.example.com"));
    EXPECT_TRUE(bad_host_label("a_b", "mail.example.com"));
    EXPECT_TRUE(bad_host_label("-ab", "mail.example.com"));
    EXPECT_TRUE(bad_host_label("ab-", "mail.example.com"));
    EXPECT_TRUE(bad_host_label("links", std::string(248, 'a'))) << "254 characters in all";
    EXPECT_FALSE(bad_host_label("links", std::string(247, 'a')));
    EXPECT_FALSE(bad_host_label("rp-2", "")) << "the label alone";
    for (const char* bad : {"Bounces", "b x", "b\xc3\xa9"})  // taken in lower case, ASCII
        EXPECT_TRUE(bad_host_label(bad, "example.com")) << bad;
}

TEST(SendingDomain, TrackingUrlsUseTheOwnHostOnceVerified) {
    EXPECT_EQ(tracking_base("https://mail.posthorn.example", "links", "mail.example.com", true),
              "https://links.mail.example.com");
    EXPECT_EQ(tracking_base("http://127.0.0.1:8080/", "go", "mail.example.com", true),
              "http://go.mail.example.com");
    EXPECT_EQ(tracking_base("http://127.0.0.1:8080/", "go", "mail.example.com", false),
              "http://127.0.0.1:8080/");
}

TEST(SendingDomain, TrackingHostsAreALabelAndADomain) {
    using P = std::pair<std::string, std::string>;
    EXPECT_EQ(tracking_host_parts("Links.Mail.Example.com:8080"), P("links", "mail.example.com"));
    EXPECT_EQ(tracking_host_parts("links.example.com."), P("links", "example.com"));
    EXPECT_FALSE(tracking_host_parts("example.com"));
    EXPECT_FALSE(tracking_host_parts("localhost:8080"));
    EXPECT_FALSE(tracking_host_parts("127.0.0.1:8080"));
    EXPECT_FALSE(tracking_host_parts("[::1]:8080"));
    EXPECT_FALSE(tracking_host_parts(""));
    EXPECT_FALSE(tracking_host_parts(".a.b"));
}

TEST(SendingDomain, AutomaticRotationIsOffAtZeroDays) {
    EXPECT_FALSE(rotate_keys_made_before(0, 1'000'000'000'000));
    EXPECT_EQ(rotate_keys_made_before(30, 1'000'000'000'000),
              1'000'000'000'000 - 30 * 86'400'000LL);
}

}  // namespace
}  // namespace posthorn::domain

namespace posthorn::domain {
namespace {

TEST(SendingDomain, TheEnvelopeDomainIsTheReturnPathOnceVerified) {
    EXPECT_EQ(envelope_domain("mail.example.com", "bounces", true), "bounces.mail.example.com");
    EXPECT_EQ(envelope_domain("mail.example.com", "rp", true), "rp.mail.example.com");
    EXPECT_EQ(envelope_domain("mail.example.com", "bounces", false), "");
}

TEST(SendingDomain, BouncesAreTakenOnlyAtTheServerOrTheEmailsReturnPath) {
    EXPECT_TRUE(bounce_host_matches("mx.posthorn.test", "", "MX.posthorn.test"));
    EXPECT_TRUE(bounce_host_matches("mx.posthorn.test", "bounces.example.com", "mx.posthorn.test"));
    EXPECT_TRUE(
        bounce_host_matches("Bounces.Example.com", "bounces.example.com", "mx.posthorn.test"));
    EXPECT_FALSE(bounce_host_matches("bounces.example.com", "", "mx.posthorn.test"));
    EXPECT_FALSE(bounce_host_matches("rp.example.com", "bounces.example.com", "mx.posthorn.test"));
    EXPECT_FALSE(
        bounce_host_matches("bounces.other.com", "bounces.example.com", "mx.posthorn.test"));
}

}  // namespace
}  // namespace posthorn::domain
