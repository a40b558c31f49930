#include "domain/test_mode.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <algorithm>

namespace posthorn::domain {
namespace {

namespace json = boost::json;

Email test_email(std::vector<std::string> addresses) {
    Email e{.id = "em_1", .account_id = "acc_1", .test = true};
    std::int64_t id = 10;
    for (auto& a : addresses)
        e.recipients.push_back(Recipient{.id = id++, .address = std::move(a), .domain = "x"});
    return e;
}

std::vector<EventKind> kinds(const EmailChange& c) {
    std::vector<EventKind> out;
    for (const auto& e : c.events) out.push_back(e.kind);
    return out;
}

const RecipientChange& of(const EmailChange& c, std::int64_t id) {
    return *std::find_if(c.recipients.begin(), c.recipients.end(),
                         [&](const RecipientChange& r) { return r.id == id; });
}

TEST(TestMode, SpecialAddressesChooseTheOutcomeAnyCase) {
    EXPECT_EQ(test_outcome("delivered@test.posthorn"), TestOutcome::delivered);
    EXPECT_EQ(test_outcome("Bounced@TEST.posthorn"), TestOutcome::bounced);
    EXPECT_EQ(test_outcome("complained@test.posthorn"), TestOutcome::complained);
    EXPECT_EQ(test_outcome("someone@example.com"), TestOutcome::captured);
    EXPECT_EQ(test_outcome("delivered@test.posthorn.example"), TestOutcome::captured);
    EXPECT_TRUE(is_sandbox_sender("sandbox@test.posthorn"));
    EXPECT_TRUE(is_sandbox_sender("SANDBOX@Test.Posthorn"));
    EXPECT_FALSE(is_sandbox_sender("sandbox@example.com"));
    EXPECT_FALSE(is_sandbox_sender("other@test.posthorn"));
    const ApiKey live{.id = "key_1"};
    const ApiKey test{.id = "key_2", .test = true};
    EXPECT_TRUE(sends_from_sandbox(test, "sandbox@test.posthorn"));
    EXPECT_FALSE(sends_from_sandbox(live, "sandbox@test.posthorn"));
    EXPECT_FALSE(sends_from_sandbox(test, "me@example.com"));
}

TEST(TestMode, DeliveredAndCapturedEndDeliveredWithSentAndDelivered) {
    const auto c = settle_test_email(test_email({"delivered@test.posthorn", "a@example.com"}), 500);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, EmailStatus::delivered);
    EXPECT_EQ(c->sent_at, 500);
    EXPECT_EQ(c->delivered_at, 500);
    EXPECT_FALSE(c->failed_at);
    EXPECT_EQ(kinds(*c), (std::vector{EventKind::email_sent, EventKind::email_delivered}));
    ASSERT_EQ(c->recipients.size(), 2U);
    for (const auto& r : c->recipients) {
        EXPECT_EQ(r.status, RecipientStatus::delivered);
        EXPECT_EQ(r.final_at, 500);
        EXPECT_FALSE(r.next_attempt_at);
        EXPECT_EQ(r.last_response, std::string(kTestDeliveredReply));
    }
    EXPECT_TRUE(c->suppressions.empty());
    for (const auto& e : c->events) {
        const auto data = json::parse(e.data_json).as_object();
        EXPECT_TRUE(data.at("test").as_bool()) << e.data_json;
        EXPECT_EQ(e.email_id, "em_1");
    }
}

TEST(TestMode, BouncedIsAHardBounceLikeARealOneAndSuppressesNothing) {
    const auto c = settle_test_email(test_email({"bounced@test.posthorn"}), 700);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, EmailStatus::bounced);
    EXPECT_EQ(c->failed_at, 700);
    EXPECT_FALSE(c->sent_at) << "the message went nowhere";
    const auto& r = of(*c, 10);
    EXPECT_EQ(r.status, RecipientStatus::bounced);
    ASSERT_TRUE(r.bounce);
    EXPECT_EQ(r.bounce->type, BounceType::hard);
    EXPECT_EQ(r.bounce->code, "5.1.1");
    EXPECT_EQ(r.last_response, std::string(kTestBounceReply));
    EXPECT_TRUE(c->suppressions.empty()) << "a test bounce never suppresses";
    EXPECT_EQ(kinds(*c), (std::vector{EventKind::email_bounced}));
    const auto data = json::parse(c->events.at(0).data_json).as_object();
    EXPECT_TRUE(data.at("test").as_bool());
    EXPECT_EQ(data.at("recipients").at(0).at("bounce").at("type").as_string(), "hard");
}

TEST(TestMode, ComplainedIsDeliveredThenComplained) {
    const auto c =
        settle_test_email(test_email({"complained@test.posthorn", "delivered@test.posthorn"}), 9);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, EmailStatus::complained);
    EXPECT_EQ(c->delivered_at, 9);
    EXPECT_EQ(c->sent_at, 9);
    EXPECT_EQ(kinds(*c), (std::vector{EventKind::email_sent, EventKind::email_delivered,
                                      EventKind::email_complained}));
    ASSERT_EQ(c->recipients.size(), 2U);
    EXPECT_EQ(of(*c, 10).status, RecipientStatus::complained);
    EXPECT_EQ(of(*c, 10).sent_at, 9) << "it was delivered first";
    EXPECT_EQ(of(*c, 11).status, RecipientStatus::delivered);
    EXPECT_TRUE(c->suppressions.empty()) << "a test complaint never suppresses";
    const auto last = json::parse(c->events.back().data_json).as_object();
    EXPECT_TRUE(last.at("test").as_bool());
    ASSERT_EQ(last.at("recipients").as_array().size(), 1U);
    EXPECT_EQ(last.at("recipients").at(0).at("email").as_string(), "complained@test.posthorn");
}

TEST(TestMode, MixedBounceMakesTheEmailBouncedAsALiveOneWould) {
    const auto c = settle_test_email(test_email({"a@example.com", "bounced@test.posthorn"}), 1);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, EmailStatus::bounced);
    EXPECT_EQ(kinds(*c), (std::vector{EventKind::email_sent, EventKind::email_bounced}));
    EXPECT_EQ(of(*c, 10).status, RecipientStatus::delivered);
    EXPECT_EQ(of(*c, 11).status, RecipientStatus::bounced);
}

TEST(TestMode, NoRecipientsNoChange) { EXPECT_FALSE(settle_test_email(test_email({}), 1)); }

}  // namespace
}  // namespace posthorn::domain
