#include "domain/email_rules.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "domain/delivery_policy.hpp"

namespace posthorn::domain {
namespace {

namespace json = boost::json;

Recipient recipient(std::int64_t id, std::string address,
                    RecipientStatus status = RecipientStatus::queued) {
    return Recipient{.id = id, .address = std::move(address), .domain = "x.test", .status = status};
}

Email email_with(std::vector<Recipient> recipients) {
    Email e{.id = "em_1", .account_id = "acc_1"};
    e.recipients = std::move(recipients);
    return e;
}

RecipientOutcome delivered(std::int64_t id) {
    return {.recipient_id = id,
            .status = RecipientStatus::delivered,
            .attempts = 1,
            .response = "250 ok",
            .transmitted = true};
}

RecipientOutcome bounced(std::int64_t id, BounceType type = BounceType::hard) {
    return {.recipient_id = id,
            .status = RecipientStatus::bounced,
            .attempts = 1,
            .response = "550 5.1.1 gone",
            .bounce = Bounce{.type = type, .code = "5.1.1", .message = "550 5.1.1 gone"},
            .suppress = type == BounceType::hard ? std::optional(SuppressionReason::hard_bounce)
                                                 : std::nullopt};
}

std::vector<EventKind> kinds(const EmailChange& c) {
    std::vector<EventKind> out;
    for (const auto& e : c.events) out.push_back(e.kind);
    return out;
}

TEST(EmailStatus, IsTheWorstFinalOutcomeOnceAllAreFinal) {
    using R = RecipientStatus;
    using E = EmailStatus;
    auto status = [](std::vector<R> states, bool sent = false, E before = E::queued,
                     bool complaint = false) {
        std::vector<Recipient> rs;
        for (auto s : states) rs.push_back(recipient(static_cast<std::int64_t>(rs.size()), "a", s));
        return email_status(rs, sent, before, complaint);
    };
    EXPECT_EQ(status({R::queued}), E::queued);
    EXPECT_EQ(status({R::queued, R::delivered}, true), E::sent);
    EXPECT_EQ(status({R::queued, R::bounced}), E::queued);  // nothing went anywhere yet
    EXPECT_EQ(status({R::delivered, R::delivered}), E::delivered);
    EXPECT_EQ(status({R::delivered, R::blocked}), E::blocked);
    EXPECT_EQ(status({R::blocked, R::failed}), E::failed);
    EXPECT_EQ(status({R::failed, R::bounced, R::delivered}), E::bounced);
    EXPECT_EQ(status({R::delivered}, true, E::delivered, true), E::complained);
    EXPECT_EQ(status({R::bounced}, true, E::complained), E::complained);  // it stays
    EXPECT_EQ(status({}), E::delivered);
    // A recipient's own sent_at counts as sent.
    std::vector<Recipient> rs{recipient(1, "a"), recipient(2, "b", R::delivered)};
    rs[1].sent_at = 5;
    EXPECT_EQ(email_status(rs, false, E::queued, false), E::sent);
}

TEST(ApplyOutcomes, DeliveryOfEveryRecipientRaisesSentThenDelivered) {
    const auto e = email_with({recipient(1, "a@x.test"), recipient(2, "b@x.test")});
    auto c = apply_outcomes(e, {.recipients = {delivered(1)}, .at = 100});
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, EmailStatus::sent);
    EXPECT_EQ(c->sent_at, 100);
    EXPECT_FALSE(c->delivered_at);
    EXPECT_EQ(kinds(*c), std::vector<EventKind>{EventKind::email_sent});
    ASSERT_EQ(c->recipients.size(), 1u);
    EXPECT_EQ(c->recipients[0].id, 1);
    EXPECT_EQ(c->recipients[0].sent_at, 100);
    EXPECT_EQ(c->recipients[0].final_at, 100);
    EXPECT_EQ(c->events[0].email_id, "em_1");
    EXPECT_EQ(c->events[0].account_id, "acc_1");
    EXPECT_EQ(c->events[0].created_at, 100);

    // The second recipient, with the first already delivered and the email sent.
    auto after = e;
    after.status = EmailStatus::sent;
    after.sent_at = 100;
    after.recipients[0].status = RecipientStatus::delivered;
    after.recipients[0].sent_at = 100;
    c = apply_outcomes(after, {.recipients = {delivered(2)}, .at = 200});
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, EmailStatus::delivered);
    EXPECT_EQ(c->sent_at, 100);  // kept
    EXPECT_EQ(c->delivered_at, 200);
    EXPECT_EQ(kinds(*c), std::vector<EventKind>{EventKind::email_delivered});
    const auto data = json::parse(c->events[0].data_json).as_object();
    EXPECT_EQ(data.at("status").as_string(), "DELIVERED");
    EXPECT_EQ(data.at("recipients").as_array().size(), 1u);  // the one it is about
    EXPECT_EQ(data.at("recipients").as_array()[0].at("email").as_string(), "b@x.test");
    EXPECT_TRUE(data.at("recipients").as_array()[0].at("bounce").is_null());
}

TEST(ApplyOutcomes, AHardBounceSuppressesAndItsClassificationGoesInThePayload) {
    const auto e = email_with({recipient(1, "Gone@X.test")});
    auto c = apply_outcomes(e, {.recipients = {bounced(1)}, .at = 50});
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, EmailStatus::bounced);
    EXPECT_EQ(c->failed_at, 50);
    EXPECT_FALSE(c->sent_at);
    EXPECT_EQ(kinds(*c), std::vector<EventKind>{EventKind::email_bounced});
    ASSERT_EQ(c->suppressions.size(), 1u);
    const auto& s = c->suppressions[0].entry;
    EXPECT_EQ(s.address, "gone@x.test");  // lower-case
    EXPECT_EQ(s.reason, SuppressionReason::hard_bounce);
    EXPECT_EQ(s.email_id, "em_1");
    EXPECT_EQ(s.created_at, 50);
    // Its suppression.added goes with it (written only if the address is new to the list),
    // not among the email's own events.
    const auto& added = c->suppressions[0].event;
    EXPECT_EQ(added.kind, EventKind::suppression_added);
    EXPECT_EQ(added.account_id, e.account_id);
    EXPECT_EQ(added.email_id, "em_1");
    EXPECT_EQ(added.created_at, 50);
    const auto sup = json::parse(added.data_json).as_object();
    EXPECT_EQ(sup.at("email").as_string(), "gone@x.test");
    EXPECT_EQ(sup.at("reason").as_string(), "hard_bounce");
    EXPECT_EQ(sup.at("email_id").as_string(), "em_1");
    ASSERT_TRUE(c->recipients[0].bounce);
    EXPECT_EQ(c->recipients[0].bounce->type, BounceType::hard);
    const auto data = json::parse(c->events[0].data_json).as_object();
    const auto& b = data.at("recipients").as_array()[0].at("bounce").as_object();
    EXPECT_EQ(b.at("type").as_string(), "hard");
    EXPECT_EQ(b.at("code").as_string(), "5.1.1");
    EXPECT_EQ(b.at("message").as_string(), "550 5.1.1 gone");

    // A block does not suppress.
    c = apply_outcomes(e, {.recipients = {bounced(1, BounceType::block)}, .at = 50});
    ASSERT_TRUE(c);
    EXPECT_TRUE(c->suppressions.empty());
}

TEST(ApplyOutcomes, ALateBounceTurnsDeliveredIntoBounced) {
    auto e = email_with({recipient(1, "a@x.test", RecipientStatus::delivered)});
    e.status = EmailStatus::delivered;
    e.sent_at = e.delivered_at = 10;
    e.recipients[0].sent_at = 10;
    const auto report = decide_report("failed", "5.1.1", "smtp; 550 5.1.1 gone");
    ASSERT_TRUE(report);
    auto c = apply_outcomes(e, {.recipients = {outcome_of(1, 1, *report)}, .at = 99});
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, EmailStatus::bounced);
    EXPECT_EQ(c->delivered_at, 10);  // when it was delivered, still
    EXPECT_EQ(c->failed_at, 99);
    EXPECT_EQ(kinds(*c), std::vector<EventKind>{EventKind::email_bounced});
    EXPECT_EQ(c->suppressions.size(), 1u);
}

TEST(ApplyOutcomes, TheFirstDeferralRaisesDeliveryDelayedAndLaterRetriesNothing) {
    auto e = email_with({recipient(1, "a@x.test"), recipient(2, "b@x.test")});
    const auto c = apply_outcomes(e, {.recipients = {{.recipient_id = 1,
                                                      .status = RecipientStatus::queued,
                                                      .attempts = 1,
                                                      .next_attempt_at = 7000,
                                                      .response = "451 later"},
                                                     delivered(2)},
                                      .at = 1000});
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, EmailStatus::sent);
    EXPECT_EQ(kinds(*c),
              (std::vector<EventKind>{EventKind::email_sent, EventKind::email_delivery_delayed}));
    EXPECT_EQ(c->recipients[0].next_attempt_at, 7000);
    EXPECT_EQ(c->recipients[0].last_response, "451 later");
    EXPECT_FALSE(c->recipients[0].final_at);
    // The delay's payload names the deferred recipient only, with the server's reply.
    const auto data = json::parse(c->events[1].data_json).as_object();
    const auto& about = data.at("recipients").as_array();
    ASSERT_EQ(about.size(), 1U);
    EXPECT_EQ(about[0].at("email").as_string(), "a@x.test");
    EXPECT_EQ(about[0].at("status").as_string(), "QUEUED");
    EXPECT_EQ(about[0].at("response").as_string(), "451 later");

    // The second deferral of the same recipient raises nothing.
    e.recipients[0].attempts = 1;
    e.recipients[1].status = RecipientStatus::delivered;
    e.status = EmailStatus::sent;
    e.sent_at = 1000;
    const auto again = apply_outcomes(e, {.recipients = {{.recipient_id = 1,
                                                          .status = RecipientStatus::queued,
                                                          .attempts = 2,
                                                          .next_attempt_at = 9000,
                                                          .response = "451 later"}},
                                          .at = 2000});
    ASSERT_TRUE(again);
    EXPECT_TRUE(again->events.empty());
}

TEST(ApplyOutcomes, AnOutcomeThatMadeNoAttemptIsNoDelay) {
    // A recipient given back untried (attempts unchanged) was not deferred by a server.
    const auto e = email_with({recipient(1, "a@x.test")});
    const auto c = apply_outcomes(e, {.recipients = {{.recipient_id = 1,
                                                      .status = RecipientStatus::queued,
                                                      .attempts = 0,
                                                      .next_attempt_at = 7000}},
                                      .at = 1000});
    ASSERT_TRUE(c);
    EXPECT_TRUE(c->events.empty());
}

TEST(ApplyOutcomes, TheAttemptsTlsIsKeptUntilAnotherAttemptSaysOtherwise) {
    const TlsOutcome tls{.policy = "mta-sts", .version = "TLSv1.3", .verified = true};
    auto e = email_with({recipient(1, "a@x.test")});
    auto retry = RecipientOutcome{.recipient_id = 1,
                                  .status = RecipientStatus::queued,
                                  .attempts = 1,
                                  .next_attempt_at = 7000,
                                  .response = "451 later",
                                  .tls = tls};
    auto c = apply_outcomes(e, {.recipients = {retry}, .at = 1000});
    ASSERT_TRUE(c);
    EXPECT_EQ(c->recipients[0].tls, tls);
    // An outcome without TLS (a DNS failure, say) leaves the last one as it was.
    e.recipients[0].tls = tls;
    retry.tls.reset();
    c = apply_outcomes(e, {.recipients = {retry}, .at = 2000});
    ASSERT_TRUE(c);
    EXPECT_EQ(c->recipients[0].tls, tls);
}

TEST(ApplyOutcomes, OutcomesForNoRecipientOfTheEmailChangeNothing) {
    const auto e = email_with({recipient(1, "a@x.test")});
    EXPECT_FALSE(apply_outcomes(e, {.recipients = {delivered(99)}, .at = 1}));
    EXPECT_FALSE(apply_outcomes(e, {.at = 1}));
}

TEST(ApplyOutcomes, BlockedRecipientsMakeABlockedEmail) {
    const auto e = email_with({recipient(1, "a@x.test")});
    const auto c = apply_outcomes(
        e, {.recipients = {{.recipient_id = 1, .status = RecipientStatus::blocked}}, .at = 5});
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, EmailStatus::blocked);
    EXPECT_EQ(c->failed_at, 5);
    EXPECT_FALSE(c->sent_at);
    EXPECT_EQ(kinds(*c), std::vector<EventKind>{EventKind::email_blocked});
}

TEST(Complaints, NamedRecipientsOrTheToRecipientsComplain) {
    auto e = email_with({recipient(1, "a@x.test", RecipientStatus::delivered),
                         recipient(2, "b@x.test", RecipientStatus::delivered)});
    e.recipients[1].type = RecipientType::cc;
    e.status = EmailStatus::delivered;
    auto o = complaint_outcomes(e, {"B@X.test"}, "abuse", 10);
    EXPECT_TRUE(o.complaint);
    ASSERT_EQ(o.recipients.size(), 1u);
    EXPECT_EQ(o.recipients[0].recipient_id, 2);
    o = complaint_outcomes(e, {}, "abuse", 10);
    ASSERT_EQ(o.recipients.size(), 1u);
    EXPECT_EQ(o.recipients[0].recipient_id, 1);  // the To recipient
    const auto c = apply_outcomes(e, o);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, EmailStatus::complained);
    EXPECT_EQ(kinds(*c), std::vector<EventKind>{EventKind::email_complained});
    EXPECT_EQ(c->suppressions.at(0).entry.reason, SuppressionReason::complaint);
    EXPECT_EQ(c->suppressions.at(0).event.kind, EventKind::suppression_added);
    // not-spam is no complaint.
    o = complaint_outcomes(e, {}, "not-spam", 10);
    EXPECT_FALSE(o.complaint);
    EXPECT_TRUE(o.recipients.empty());
}

TEST(Engage, TheFirstOpenStampsEveryOneRaises) {
    auto e = email_with({});
    e.status = EmailStatus::delivered;
    auto c = engage(e, Engagement::open, R"({"email_id":"em_1"})", 30);
    EXPECT_EQ(c.opened_at, 30);
    EXPECT_FALSE(c.clicked_at);
    EXPECT_EQ(c.status, EmailStatus::delivered);
    EXPECT_EQ(kinds(c), std::vector<EventKind>{EventKind::email_opened});
    e.opened_at = 30;
    c = engage(e, Engagement::open, "{}", 40);
    EXPECT_EQ(c.opened_at, 30);
    EXPECT_EQ(c.events.size(), 1u);
    c = engage(e, Engagement::click, "{}", 50);
    EXPECT_EQ(c.clicked_at, 50);
    EXPECT_EQ(kinds(c), std::vector<EventKind>{EventKind::email_clicked});
}

}  // namespace
}  // namespace posthorn::domain
