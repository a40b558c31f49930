#include "domain/queue_control.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "domain/email_rules.hpp"

namespace posthorn::domain {
namespace {

namespace json = boost::json;
using S = QueueState;

Recipient recipient(std::int64_t id, RecipientStatus status = RecipientStatus::queued) {
    return Recipient{.id = id,
                     .address = "r" + std::to_string(id) + "@x.test",
                     .domain = "x.test",
                     .status = status,
                     .attempts = 2,
                     .next_attempt_at = 5000,
                     .last_response = "451 4.7.1 later"};
}

Email email_with(std::vector<Recipient> recipients) {
    Email e{.id = "em_1", .account_id = "acc_1"};
    e.recipients = std::move(recipients);
    return e;
}

std::vector<EventKind> kinds(const EmailChange& c) {
    std::vector<EventKind> out;
    for (const auto& e : c.events) out.push_back(e.kind);
    return out;
}

TEST(QueueControl, EachCommandTakesItsStates) {
    EXPECT_EQ(queue_states_for(QueueAction::hold),
              (std::vector<S>{S::ready, S::deferred, S::scheduled, S::in_flight}));
    EXPECT_EQ(queue_states_for(QueueAction::release), (std::vector<S>{S::held, S::in_flight}));
    // Never a scheduled one: a retry would send it before its time (issue 30).
    EXPECT_EQ(queue_states_for(QueueAction::retry), (std::vector<S>{S::deferred}));
    // Never what is in flight: its attempt's outcome would come after the purge.
    EXPECT_EQ(queue_states_for(QueueAction::purge),
              (std::vector<S>{S::ready, S::deferred, S::scheduled, S::held}));
    EXPECT_EQ(name(S::in_flight), "in_flight");
    EXPECT_EQ(from_name<S>("deferred"), S::deferred);
    EXPECT_EQ(from_name<S>("scheduled"), S::scheduled);
}

TEST(QueueControl, AQueuedRecipientsStateFollowsLeaseHoldScheduleAndRetry) {
    const UnixMs now = 10'000;
    auto r = recipient(1);
    r.attempts = 0;
    r.next_attempt_at = now + 5000;
    EXPECT_EQ(queue_state(r, EmailStatus::scheduled, now), S::scheduled);
    EXPECT_EQ(queue_state(r, EmailStatus::queued, now), S::deferred) << "a retry's wait";
    EXPECT_EQ(queue_state(r, EmailStatus::scheduled, now + 5000), S::ready)
        << "its time has come, released or not";
    r.held_at = now - 1;
    EXPECT_EQ(queue_state(r, EmailStatus::scheduled, now), S::held) << "held keeps precedence";
    r.lease_until = now + 1;
    EXPECT_EQ(queue_state(r, EmailStatus::scheduled, now), S::in_flight);
    auto fresh = recipient(2);
    fresh.next_attempt_at = std::nullopt;
    EXPECT_EQ(queue_state(fresh, EmailStatus::queued, now), S::ready) << "never tried: due";
}

TEST(QueueControl, PurgingTheOnlyRecipientFailsTheEmailAndRaisesEmailFailed) {
    auto e = email_with({recipient(1)});
    e.recipients[0].held_at = 4000;
    const auto c = purge(e, {1}, 9000);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, EmailStatus::failed);
    EXPECT_EQ(c->failed_at, 9000);
    EXPECT_FALSE(c->sent_at);
    ASSERT_EQ(c->recipients.size(), 1u);
    const auto& r = c->recipients[0];
    EXPECT_EQ(r.status, RecipientStatus::failed);
    EXPECT_EQ(r.attempts, 2) << "a purge is no attempt";
    EXPECT_EQ(r.last_response, "purged");
    EXPECT_FALSE(r.next_attempt_at);
    EXPECT_EQ(r.final_at, 9000);
    EXPECT_FALSE(r.held_at) << "a final recipient is in no queue, held or not";
    ASSERT_TRUE(r.bounce);
    EXPECT_EQ(r.bounce->type, BounceType::undetermined);
    EXPECT_EQ(r.bounce->code, "");
    EXPECT_EQ(r.bounce->message, "purged");
    EXPECT_TRUE(c->suppressions.empty()) << "the address did nothing wrong";
    EXPECT_EQ(kinds(*c), std::vector<EventKind>{EventKind::email_failed});
    const auto data = json::parse(c->events[0].data_json).as_object();
    EXPECT_EQ(data.at("status").as_string(), "FAILED");
    const auto& about = data.at("recipients").as_array();
    ASSERT_EQ(about.size(), 1u);
    EXPECT_EQ(about[0].at("response").as_string(), "purged");
    EXPECT_EQ(about[0].at("bounce").at("type").as_string(), "undetermined");
    EXPECT_TRUE(about[0].at("bounce").at("code").is_null());
}

TEST(QueueControl, PurgeTakesOnlyTheNamedRecipientsThatAreStillQueued) {
    auto e = email_with({recipient(1), recipient(2), recipient(3, RecipientStatus::delivered)});
    e.sent_at = 100;
    e.recipients[2].sent_at = 100;
    // Recipient 2 stays open: the email is SENT, and no event says so.
    auto c = purge(e, {1, 3}, 9000);
    ASSERT_TRUE(c);
    ASSERT_EQ(c->recipients.size(), 1u) << "3 was delivered: not purged";
    EXPECT_EQ(c->recipients[0].id, 1);
    EXPECT_EQ(c->status, EmailStatus::sent);
    EXPECT_TRUE(c->events.empty());
    // Nothing of it queued: no change.
    EXPECT_FALSE(purge(e, {3}, 9000));
    EXPECT_FALSE(purge(e, {42}, 9000));
    // Every open one purged: the worst final outcome, FAILED over DELIVERED.
    c = purge(e, {1, 2}, 9000);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, EmailStatus::failed);
    EXPECT_EQ(c->sent_at, 100);
    EXPECT_EQ(kinds(*c), std::vector<EventKind>{EventKind::email_failed});
}

TEST(QueueControl, AnOutcomeKeepsTheHoldOfARecipientThatStaysOpen) {
    // Held while its attempt was under way: the retry the attempt ends in waits for the
    // release; a final outcome ends the hold.
    auto e = email_with({recipient(1), recipient(2)});
    e.recipients[0].held_at = e.recipients[1].held_at = 4000;
    const auto c = apply_outcomes(e, {.recipients = {{.recipient_id = 1,
                                                      .status = RecipientStatus::queued,
                                                      .attempts = 3,
                                                      .next_attempt_at = 7000,
                                                      .response = "451 later"},
                                                     {.recipient_id = 2,
                                                      .status = RecipientStatus::delivered,
                                                      .attempts = 3,
                                                      .response = "250 ok",
                                                      .transmitted = true}},
                                      .at = 6000});
    ASSERT_TRUE(c);
    ASSERT_EQ(c->recipients.size(), 2u);
    EXPECT_EQ(c->recipients[0].held_at, 4000);
    EXPECT_FALSE(c->recipients[1].held_at);
}

}  // namespace
}  // namespace posthorn::domain
