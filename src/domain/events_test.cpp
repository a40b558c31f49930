#include "domain/events.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <set>

namespace posthorn::domain {
namespace {

namespace json = boost::json;

TEST(Vocabulary, EveryValueHasOneNameThatReadsBack) {
    auto check = [](auto all) {
        std::set<std::string_view> seen;
        for (auto v : all) {
            const auto n = name(v);
            EXPECT_FALSE(n.empty());
            EXPECT_TRUE(seen.insert(n).second) << n;
            EXPECT_EQ(from_name<decltype(v)>(n), v) << n;
        }
    };
    check(all_values<EmailStatus>());
    check(all_values<RecipientStatus>());
    check(all_values<DomainStatus>());
    check(all_values<EventKind>());
    check(all_values<BounceType>());
    check(all_values<SuppressionReason>());
    check(all_values<RecipientType>());
    EXPECT_EQ(name(EmailStatus::complained), "COMPLAINED");
    EXPECT_EQ(name(EventKind::inbound_received), "inbound.received");
    EXPECT_EQ(from_name<EmailStatus>("queued"), std::nullopt);  // case-sensitive
    EXPECT_EQ(from_name<EventKind>("email.nope"), std::nullopt);
}

TEST(Events, ASuppressionIsToldAsGetSuppressionShowsIt) {
    const Suppression manual{.account_id = "acc_1",
                             .address = "a\"b@x.test",
                             .reason = SuppressionReason::manual,
                             .created_at = 1'800'000'000'123};
    const auto added = suppression_added(manual);
    EXPECT_EQ(added.entry, manual);
    EXPECT_EQ(added.event.kind, EventKind::suppression_added);
    EXPECT_EQ(added.event.account_id, "acc_1");
    EXPECT_EQ(added.event.email_id, std::nullopt);  // about no email
    EXPECT_EQ(added.event.created_at, manual.created_at);
    EXPECT_EQ(json::parse(added.event.data_json),
              json::parse(R"({"email":"a\"b@x.test","reason":"manual","email_id":null,)"
                          R"("created_at":"2027-01-15T08:00:00.123Z"})"));

    Suppression bounced = manual;
    bounced.reason = SuppressionReason::hard_bounce;
    bounced.email_id = "em_9";
    const auto removed = suppression_removed(bounced, 1'800'000'100'000);
    EXPECT_EQ(removed.kind, EventKind::suppression_removed);
    EXPECT_EQ(removed.email_id, "em_9");
    EXPECT_EQ(removed.created_at, 1'800'000'100'000);  // when it was removed
    const auto data = json::parse(removed.data_json).as_object();
    EXPECT_EQ(data.at("reason").as_string(), "hard_bounce");
    EXPECT_EQ(data.at("email_id").as_string(), "em_9");
    EXPECT_EQ(data.at("created_at").as_string(), "2027-01-15T08:00:00.123Z");  // when added
    EXPECT_EQ(name(EventKind::suppression_removed), "suppression.removed");
}

TEST(Events, FinalStatusesRaiseTheirOwnKind) {
    EXPECT_EQ(event_for(EmailStatus::delivered), EventKind::email_delivered);
    EXPECT_EQ(event_for(EmailStatus::bounced), EventKind::email_bounced);
    EXPECT_EQ(event_for(EmailStatus::failed), EventKind::email_failed);
    EXPECT_EQ(event_for(EmailStatus::complained), EventKind::email_complained);
    EXPECT_EQ(event_for(EmailStatus::blocked), EventKind::email_blocked);
}

TEST(Events, PayloadsAreJsonWithTheirFields) {
    Recipient r{
        .id = 1, .address = "a\"b@x.test", .status = RecipientStatus::failed, .attempts = 6};
    r.last_response = "451 later\r\n";
    r.bounce = Bounce{.type = BounceType::soft, .code = "", .message = "m"};
    Email email{.id = "em_1"};
    const auto data = json::parse(email_event_data(email, EmailStatus::failed, {&r})).as_object();
    EXPECT_EQ(data.at("email_id").as_string(), "em_1");
    EXPECT_EQ(data.at("status").as_string(), "FAILED");
    const auto& rec = data.at("recipients").as_array().at(0).as_object();
    EXPECT_EQ(rec.at("email").as_string(), "a\"b@x.test");
    EXPECT_EQ(rec.at("status").as_string(), "FAILED");
    EXPECT_EQ(rec.at("attempts").as_int64(), 6);
    EXPECT_EQ(rec.at("response").as_string(), "451 later\r\n");
    EXPECT_EQ(rec.at("bounce").at("type").as_string(), "soft");
    EXPECT_TRUE(rec.at("bounce").at("code").is_null());
    // Without tags or metadata: an empty list and null.
    EXPECT_TRUE(data.at("tags").as_array().empty());
    EXPECT_TRUE(data.at("metadata").is_null());
    // A live email says it is no test (test_mode.hpp).
    EXPECT_FALSE(data.at("test").as_bool());

    auto open = json::parse(engagement_data(email, "192.0.2.1", "UA", std::nullopt)).as_object();
    EXPECT_EQ(open.at("ip").as_string(), "192.0.2.1");
    EXPECT_FALSE(open.contains("url"));
    auto click = json::parse(engagement_data(email, "::1", "", std::string("https://x/?a=1")));
    EXPECT_EQ(click.at("url").as_string(), "https://x/?a=1");

    const auto in = json::parse(inbound_event_data({.id = "in_1",
                                                    .from_email = "f@y.test",
                                                    .from_name = "F",
                                                    .to_address = "t@x.test",
                                                    .subject = "S\u00e9",
                                                    .attachments = 2}))
                        .as_object();
    EXPECT_EQ(in.at("id").as_string(), "in_1");
    EXPECT_EQ(in.at("attachments").as_int64(), 2);
    EXPECT_EQ(in.at("subject").as_string(), "S\u00e9");
    EXPECT_TRUE(in.at("authentication").is_null()) << "none given";
    const auto checked =
        json::parse(
            inbound_event_data({.id = "in_2", .authentication = R"({"spf":{"result":"pass"}})"}))
            .as_object();
    EXPECT_EQ(checked.at("authentication").at("spf").at("result").as_string(), "pass");

    // Exactly: the bytes are signed.
    EXPECT_EQ(event_body(EventKind::domain_verified, 1795255200123, R"({"domain":"a.example"})"),
              R"({"type":"domain.verified","timestamp":"2026-11-21T10:00:00.123Z",)"
              R"("created_at":"2026-11-21T10:00:00.123Z",)"
              R"("data":{"domain":"a.example"}})");
    const auto body = json::parse(event_body(EventKind::email_sent, 0, R"({"a":1})")).as_object();
    EXPECT_EQ(body.at("type").as_string(), "email.sent");
    EXPECT_EQ(body.at("created_at").as_string(), "1970-01-01T00:00:00.000Z");
    EXPECT_EQ(body.at("timestamp").as_string(), "1970-01-01T00:00:00.000Z");
    EXPECT_EQ(body.at("data").at("a").as_int64(), 1);
    EXPECT_TRUE(json::parse(event_body(EventKind::email_sent, 0, "")).at("data").is_object());
}

TEST(Events, EveryEmailEventCarriesTheTagsAndMetadata) {
    Email email{
        .id = "em_2",
        .tags = {{.name = "campaign", .value = "spring-24"}, {.name = "tier", .value = "a"}},
        .metadata_json = R"({"order":{"id":42},"note":"x\"y"})"};
    Recipient r{.id = 1, .address = "a@x.test", .status = RecipientStatus::delivered};
    for (const auto& text :
         {email_event_data(email, EmailStatus::delivered, {&r}),
          engagement_data(email, "192.0.2.1", "UA", std::nullopt),
          engagement_data(email, "192.0.2.1", "UA", std::string("https://x.test/"))}) {
        const auto data = json::parse(text).as_object();
        const auto& tags = data.at("tags").as_array();
        ASSERT_EQ(tags.size(), 2u) << text;
        EXPECT_EQ(tags.at(0).at("name").as_string(), "campaign");
        EXPECT_EQ(tags.at(0).at("value").as_string(), "spring-24");
        EXPECT_EQ(tags.at(1).at("name").as_string(), "tier");
        EXPECT_EQ(data.at("metadata").at("order").at("id").as_int64(), 42);
        EXPECT_EQ(data.at("metadata").at("note").as_string(), "x\"y");
    }
}

TEST(Events, GoToTheActiveWebhooksOfTheAccountThatSubscribe) {
    const std::vector<Webhook> hooks = {
        {.id = "wh_all",
         .account_id = "acc_1",
         .events = {EventKind::email_sent, EventKind::email_bounced}},
        {.id = "wh_off", .account_id = "acc_1", .events = {EventKind::email_sent}, .active = false},
        {.id = "wh_other_kind", .account_id = "acc_1", .events = {EventKind::email_opened}},
        {.id = "wh_other_account", .account_id = "acc_2", .events = {EventKind::email_sent}},
    };
    const auto e = make_event(EventKind::email_sent, "acc_1", std::string("em_1"), "{}", 5);
    EXPECT_EQ(webhooks_for(e, hooks), std::vector<std::string>{"wh_all"});
    EXPECT_TRUE(e.id.starts_with("evt_"));
    EXPECT_EQ(e.created_at, 5);
    const auto bounce = make_event(EventKind::email_bounced, "acc_1", std::nullopt, "{}", 5);
    EXPECT_EQ(webhooks_for(bounce, hooks), std::vector<std::string>{"wh_all"});
    const auto in = make_event(EventKind::inbound_received, "acc_1", std::nullopt, "{}", 5);
    EXPECT_TRUE(webhooks_for(in, hooks).empty());
    EXPECT_NE(make_event(EventKind::email_sent, "a", std::nullopt, "", 5).id, e.id);
}

}  // namespace
}  // namespace posthorn::domain
