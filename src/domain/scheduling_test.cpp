#include "domain/scheduling.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "domain/email_rules.hpp"
#include "domain/events.hpp"

namespace posthorn::domain {
namespace {

namespace json = boost::json;

constexpr UnixMs kNow = 1'800'000'000'000;
constexpr UnixMs kAt = kNow + 60'000;  // scheduled a minute ahead

Recipient fresh(std::int64_t id) {
    return Recipient{.id = id,
                     .address = "r" + std::to_string(id) + "@x.test",
                     .domain = "x.test",
                     .next_attempt_at = kAt};
}

Email scheduled(std::vector<Recipient> recipients) {
    Email e{.id = "em_1", .account_id = "acc_1", .status = EmailStatus::scheduled};
    e.scheduled_at = kAt;
    e.recipients = std::move(recipients);
    return e;
}

TEST(Scheduling, ATimeIsTakenUpTo30DaysAheadAndWithinTheGraceBehind) {
    EXPECT_EQ(schedule_refusal("scheduled_at", kNow, kNow), std::nullopt);
    EXPECT_EQ(schedule_refusal("scheduled_at", kNow - kScheduleGraceMs, kNow), std::nullopt);
    EXPECT_EQ(schedule_refusal("scheduled_at", kNow + kMaxScheduleAheadMs, kNow), std::nullopt);
    const auto past = schedule_refusal("scheduled_at", kNow - kScheduleGraceMs - 1, kNow);
    ASSERT_TRUE(past);
    EXPECT_NE(past->find("scheduled_at is in the past"), std::string::npos) << *past;
    const auto far =
        schedule_refusal("X-Posthorn-Scheduled-At", kNow + kMaxScheduleAheadMs + 1, kNow);
    ASSERT_TRUE(far);
    EXPECT_NE(far->find("X-Posthorn-Scheduled-At is more than 30 days ahead"), std::string::npos);
    EXPECT_TRUE(waits(kNow + 1, kNow));
    EXPECT_FALSE(waits(kNow, kNow));
}

TEST(Scheduling, AScheduledEmailIsReleasedOnlyOnceItsTimeHasCome) {
    const auto e = scheduled({fresh(1)});
    EXPECT_EQ(release_scheduled(e, kAt - 1), std::nullopt);
    const auto c = release_scheduled(e, kAt);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, EmailStatus::queued);
    EXPECT_TRUE(c->recipients.empty());
    EXPECT_TRUE(c->events.empty());
    auto queued = e;
    queued.status = EmailStatus::queued;  // released already, or sent at once
    EXPECT_EQ(release_scheduled(queued, kAt), std::nullopt);
    auto canceled = e;
    canceled.status = EmailStatus::canceled;
    EXPECT_EQ(release_scheduled(canceled, kAt + 1), std::nullopt);
}

TEST(Scheduling, RescheduleMovesTheTimeAndEveryRecipientsNextAttempt) {
    auto e = scheduled({fresh(1), fresh(2)});
    e.recipients[1].held_at = kNow - 5;  // held by the operator: stays held
    const auto later = kAt + 3'600'000;
    auto r = reschedule(e, later, kNow);
    ASSERT_TRUE(std::holds_alternative<EmailChange>(r));
    const auto& c = std::get<EmailChange>(r);
    EXPECT_EQ(c.status, EmailStatus::scheduled);
    EXPECT_EQ(c.scheduled_at, later);
    ASSERT_EQ(c.recipients.size(), 2u);
    for (const auto& rc : c.recipients) {
        EXPECT_EQ(rc.next_attempt_at, later);
        EXPECT_EQ(rc.status, RecipientStatus::queued);
    }
    EXPECT_EQ(c.recipients[1].held_at, kNow - 5);
    EXPECT_TRUE(c.events.empty());

    // To now (or within the grace behind it): QUEUED, due at once.
    auto now = reschedule(e, kNow, kNow);
    ASSERT_TRUE(std::holds_alternative<EmailChange>(now));
    EXPECT_EQ(std::get<EmailChange>(now).status, EmailStatus::queued);
}

TEST(Scheduling, RescheduleIsRefusedOnceTheEmailIsNoLongerWaiting) {
    auto queued = scheduled({fresh(1)});
    queued.status = EmailStatus::queued;
    EXPECT_TRUE(std::holds_alternative<TooLate>(reschedule(queued, kAt, kNow)));
    auto canceled = queued;
    canceled.status = EmailStatus::canceled;
    EXPECT_TRUE(std::holds_alternative<TooLate>(reschedule(canceled, kAt, kNow)));
    // Its time came, and the scheduler has not released it yet: being sent.
    EXPECT_TRUE(std::holds_alternative<TooLate>(reschedule(scheduled({fresh(1)}), kAt, kAt)));
    // A recipient claimed (the operator's retry made it due): being sent.
    auto claimed = scheduled({fresh(1), fresh(2)});
    claimed.recipients[0].lease_until = kNow + 30'000;
    const auto r = reschedule(claimed, kAt + 1, kNow);
    ASSERT_TRUE(std::holds_alternative<TooLate>(r));
    EXPECT_NE(std::get<TooLate>(r).message.find("being sent"), std::string::npos);
}

TEST(Scheduling, CancelOfAScheduledEmailCancelsEveryRecipientAndRaisesEmailCanceled) {
    Email e = scheduled({fresh(1), fresh(2)});
    e.tags = {{"campaign", "spring"}};
    e.recipients[1].held_at = kNow - 5;
    auto r = cancel(e, kNow);
    ASSERT_TRUE(std::holds_alternative<EmailChange>(r));
    const auto& c = std::get<EmailChange>(r);
    EXPECT_EQ(c.status, EmailStatus::canceled);
    ASSERT_EQ(c.recipients.size(), 2u);
    for (const auto& rc : c.recipients) {
        EXPECT_EQ(rc.status, RecipientStatus::canceled);
        EXPECT_EQ(rc.next_attempt_at, std::nullopt);  // no claim takes it
        EXPECT_EQ(rc.final_at, kNow);
        EXPECT_EQ(rc.held_at, std::nullopt);
        EXPECT_EQ(rc.attempts, 0);
        EXPECT_EQ(rc.last_response, "canceled");
    }
    ASSERT_EQ(c.events.size(), 1u);
    EXPECT_EQ(c.events[0].kind, EventKind::email_canceled);
    EXPECT_EQ(c.events[0].email_id, "em_1");
    EXPECT_EQ(c.events[0].created_at, kNow);
    const auto data = json::parse(c.events[0].data_json).as_object();
    EXPECT_EQ(data.at("status").as_string(), "CANCELED");
    EXPECT_EQ(data.at("recipients").as_array().size(), 2u);
    EXPECT_EQ(data.at("recipients").as_array()[0].as_object().at("status").as_string(), "CANCELED");
    EXPECT_EQ(data.at("tags").as_array().size(), 1u);
    EXPECT_EQ(name(EventKind::email_canceled), "email.canceled");
}

TEST(Scheduling, CancelOfAQueuedEmailLeavesAttemptedAndInFlightRecipientsTheirCourse) {
    Email e{.id = "em_1", .account_id = "acc_1", .status = EmailStatus::sent, .sent_at = kNow};
    Recipient delivered = fresh(1);
    delivered.status = RecipientStatus::delivered;
    delivered.attempts = 1;
    delivered.sent_at = kNow - 10;
    Recipient deferred = fresh(2);  // attempted, waiting for a retry
    deferred.attempts = 1;
    Recipient flying = fresh(3);  // claimed, its attempt under way
    flying.lease_until = kNow + 30'000;
    Recipient stale = fresh(4);  // claimed by a node that died: the lease ran out
    stale.lease_until = kNow - 1;
    Recipient waiting = fresh(5);
    e.recipients = {delivered, deferred, flying, stale, waiting};
    auto r = cancel(e, kNow);
    ASSERT_TRUE(std::holds_alternative<EmailChange>(r));
    const auto& c = std::get<EmailChange>(r);
    EXPECT_EQ(c.status, EmailStatus::canceled);
    EXPECT_EQ(c.sent_at, kNow);  // its times stay
    ASSERT_EQ(c.recipients.size(), 2u);
    EXPECT_EQ(c.recipients[0].id, 4);
    EXPECT_EQ(c.recipients[1].id, 5);

    // The attempt under way ends later: the email stays CANCELED, the recipient shows it.
    Email after = e;
    after.status = EmailStatus::canceled;
    after.recipients[3].status = after.recipients[4].status = RecipientStatus::canceled;
    const auto outcome =
        apply_outcomes(after, Outcomes{.recipients = {{.recipient_id = 3,
                                                       .status = RecipientStatus::delivered,
                                                       .attempts = 1,
                                                       .transmitted = true}},
                                       .at = kNow + 5});
    ASSERT_TRUE(outcome);
    EXPECT_EQ(outcome->status, EmailStatus::canceled);
    EXPECT_TRUE(outcome->events.empty());
}

TEST(Scheduling, CancelIsRefusedWhenNothingIsLeftToCancel) {
    Email e{.id = "em_1", .account_id = "acc_1", .status = EmailStatus::queued};
    Recipient flying = fresh(1);
    flying.lease_until = kNow + 1;
    Recipient deferred = fresh(2);
    deferred.attempts = 2;
    e.recipients = {flying, deferred};
    const auto r = cancel(e, kNow);
    ASSERT_TRUE(std::holds_alternative<TooLate>(r));
    EXPECT_NE(std::get<TooLate>(r).message.find("too late"), std::string::npos);

    auto canceled = scheduled({fresh(1)});
    canceled.status = EmailStatus::canceled;
    EXPECT_EQ(std::get<TooLate>(cancel(canceled, kNow)).message, "the email is CANCELED already");
    auto delivered = canceled;
    delivered.status = EmailStatus::delivered;
    EXPECT_TRUE(std::holds_alternative<TooLate>(cancel(delivered, kNow)));
}

TEST(Scheduling, ScheduledAndCanceledAreNamedAndOnlyScheduledIsOpen) {
    EXPECT_EQ(name(EmailStatus::scheduled), "SCHEDULED");
    EXPECT_EQ(name(EmailStatus::canceled), "CANCELED");
    EXPECT_EQ(name(RecipientStatus::canceled), "CANCELED");
    EXPECT_FALSE(is_final(EmailStatus::scheduled));
    EXPECT_TRUE(is_final(EmailStatus::canceled));
    EXPECT_TRUE(is_final(RecipientStatus::canceled));
    EXPECT_EQ(event_for(EmailStatus::canceled), EventKind::email_canceled);
}

}  // namespace
}  // namespace posthorn::domain
