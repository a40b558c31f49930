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

}  // namespace
}  // namespace posthorn::domain

namespace posthorn::domain {
namespace {

TEST(SendingDomain, ReturnPathLabelsAreOneDnsLabel) {
    EXPECT_FALSE(bad_return_path_label("bounces", "mail.example.com"));
    EXPECT_FALSE(bad_return_path_label("rp-2", ""));
    EXPECT_FALSE(bad_return_path_label(std::string(63, 'a'), "example.com"));
    EXPECT_TRUE(bad_return_path_label("", "example.com"));
    EXPECT_TRUE(bad_return_path_label(std::string(64, 'a'), "example.com"));
    for (const char* bad : {"Bounces", "b.x", "b_x", "-b", "b-", "b x", "bé"})
        EXPECT_TRUE(bad_return_path_label(bad, "example.com")) << bad;
    const std::string long_domain = std::string(63, 'd') + "." + std::string(63, 'd') + "." +
                                    std::string(63, 'd') + "." + std::string(50, 'd') + ".com";
    EXPECT_TRUE(bad_return_path_label("bounces", long_domain));
}

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
