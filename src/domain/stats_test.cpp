#include "domain/stats.hpp"

#include <gtest/gtest.h>

#include "domain/email_rules.hpp"
#include "domain/test_mode.hpp"

namespace posthorn::domain {
namespace {

constexpr UnixMs kDay0 = 1'800'000'000'000 - 1'800'000'000'000 % kStatDayMs;

Email email_of(int recipients) {
    Email e{.id = "em_1", .account_id = "acc_1", .domain_id = "dom_1"};
    e.tags = {{.name = "campaign", .value = "spring"}, {.name = "kind", .value = "welcome"}};
    e.created_at = kDay0 + 90 * 60'000;  // 01:30
    for (int i = 1; i <= recipients; ++i)
        e.recipients.push_back(
            Recipient{.id = i, .address = "r" + std::to_string(i) + "@x.test", .domain = "x.test"});
    return e;
}

RecipientOutcome outcome(std::int64_t id, RecipientStatus status,
                         std::optional<BounceType> type = std::nullopt) {
    RecipientOutcome o{.recipient_id = id,
                       .status = status,
                       .attempts = 1,
                       .transmitted = status == RecipientStatus::delivered};
    if (type) o.bounce = Bounce{.type = *type, .code = "5.0.0", .message = "no"};
    return o;
}

std::vector<StatKind> kinds_of(const EmailChange& c) {
    std::vector<StatKind> out;
    for (const auto& b : c.stats)
        if (b.dimension.empty()) out.push_back(b.kind);
    return out;
}

void apply(Email& e, const EmailChange& c) {
    e.status = c.status;
    e.opened_at = c.opened_at;
    e.clicked_at = c.clicked_at;
    for (const auto& rc : c.recipients)
        for (auto& r : e.recipients)
            if (r.id == rc.id) {
                r.status = rc.status;
                r.bounce = rc.bounce;
            }
}

TEST(Stats, AcceptedCountsOncePerDimensionInItsHour) {
    const auto e = email_of(3);
    const auto b = accepted_stats(e);
    ASSERT_EQ(b.size(), 4u);  // the account, its domain, each of its two tags
    EXPECT_EQ(b[0], (StatBump{.account_id = "acc_1",
                              .hour = kDay0 + kStatHourMs,
                              .dimension = "",
                              .kind = StatKind::accepted}));
    EXPECT_EQ(b[1].dimension, "domain:dom_1");
    EXPECT_EQ(b[2].dimension, "tag:campaign:spring");
    EXPECT_EQ(b[3].dimension, "tag:kind:welcome");
    for (const auto& x : b) EXPECT_EQ(x.count, 1);
    Email bare = e;
    bare.domain_id.clear();
    bare.tags.clear();
    EXPECT_EQ(accepted_stats(bare).size(), 1u);
}

TEST(Stats, AnEmailBouncesOnceWithTheClassOfItsFirstBouncedRecipient) {
    auto e = email_of(3);
    const UnixMs at = kDay0 + 5 * kStatHourMs + 1;
    // First a block (the email stays SENT while others are open), then two hard bounces.
    auto c1 = apply_outcomes(
        e, {.recipients = {outcome(2, RecipientStatus::bounced, BounceType::block)}, .at = at});
    ASSERT_TRUE(c1);
    EXPECT_TRUE(c1->stats.empty());
    apply(e, *c1);
    auto c2 =
        apply_outcomes(e, {.recipients = {outcome(1, RecipientStatus::bounced, BounceType::hard),
                                          outcome(3, RecipientStatus::bounced, BounceType::hard)},
                           .at = at});
    ASSERT_TRUE(c2);
    EXPECT_EQ(c2->status, EmailStatus::bounced);
    EXPECT_EQ(kinds_of(*c2), std::vector<StatKind>{StatKind::bounced_hard});  // r1 comes first
    EXPECT_EQ(c2->stats.size(), 4u);
    EXPECT_EQ(c2->stats[0].hour, kDay0 + 5 * kStatHourMs);
    apply(e, *c2);
    // A second report about a bounced email counts nothing more.
    auto c3 = apply_outcomes(
        e, {.recipients = {outcome(3, RecipientStatus::bounced, BounceType::soft)}, .at = at});
    ASSERT_TRUE(c3);
    EXPECT_TRUE(c3->stats.empty());
}

TEST(Stats, DeliveredThenALateBounceCountsBoth) {
    auto e = email_of(1);
    auto c1 =
        apply_outcomes(e, {.recipients = {outcome(1, RecipientStatus::delivered)}, .at = kDay0});
    ASSERT_TRUE(c1);
    EXPECT_EQ(kinds_of(*c1), std::vector<StatKind>{StatKind::delivered});
    apply(e, *c1);
    auto c2 =
        apply_outcomes(e, {.recipients = {outcome(1, RecipientStatus::bounced)}, .at = kDay0 + 1});
    ASSERT_TRUE(c2);
    EXPECT_EQ(kinds_of(*c2), std::vector<StatKind>{StatKind::bounced_undetermined});
}

TEST(Stats, FailedBlockedAndComplained) {
    auto e = email_of(1);
    auto f = apply_outcomes(e, {.recipients = {outcome(1, RecipientStatus::failed)}, .at = 1});
    EXPECT_EQ(kinds_of(*f), std::vector<StatKind>{StatKind::failed});
    auto b = apply_outcomes(e, {.recipients = {outcome(1, RecipientStatus::blocked)}, .at = 1});
    EXPECT_EQ(kinds_of(*b), std::vector<StatKind>{StatKind::blocked});
    auto d = apply_outcomes(e, {.recipients = {outcome(1, RecipientStatus::delivered)}, .at = 1});
    apply(e, *d);
    auto c = apply_outcomes(e, complaint_outcomes(e, {}, "abuse", 2));
    ASSERT_TRUE(c);
    EXPECT_EQ(kinds_of(*c), std::vector<StatKind>{StatKind::complained});
}

TEST(Stats, OpensAndClicksCountTheFirstOnly) {
    auto e = email_of(1);
    auto o1 = engage(e, Engagement::open, "{}", kDay0 + 10);
    EXPECT_EQ(kinds_of(o1), std::vector<StatKind>{StatKind::opened});
    apply(e, o1);
    auto o2 = engage(e, Engagement::open, "{}", kDay0 + 20);
    EXPECT_TRUE(o2.stats.empty());
    auto k1 = engage(e, Engagement::click, "{}", kDay0 + 30);
    EXPECT_EQ(kinds_of(k1), std::vector<StatKind>{StatKind::clicked});
}

TEST(Stats, ATestEmailCountsNowhere) {
    auto e = email_of(0);
    e.test = true;
    e.recipients.push_back(Recipient{.id = 1, .address = std::string(kTestComplained)});
    EXPECT_TRUE(accepted_stats(e).empty());
    auto c = settle_test_email(e, kDay0);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, EmailStatus::complained) << "settled as it would be";
    EXPECT_TRUE(c->stats.empty());
    // The same email live counts its acceptance, delivery and complaint.
    e.test = false;
    EXPECT_FALSE(accepted_stats(e).empty());
    auto live = settle_test_email(e, kDay0);
    ASSERT_TRUE(live);
    EXPECT_EQ(kinds_of(*live), (std::vector<StatKind>{StatKind::delivered, StatKind::complained}));
}

TEST(Stats, WindowsAreAlignedAndBounded) {
    const UnixMs now = kDay0 + 13 * kStatHourMs + 5;
    auto d = std::get<StatWindow>(stat_window(StatInterval::day, std::nullopt, std::nullopt, now));
    EXPECT_EQ(d.to, kDay0 + kStatDayMs);
    EXPECT_EQ(d.from, d.to - 30 * kStatDayMs);
    EXPECT_EQ(d.buckets(), 30);
    auto h = std::get<StatWindow>(stat_window(StatInterval::hour, std::nullopt, std::nullopt, now));
    EXPECT_EQ(h.to, kDay0 + 14 * kStatHourMs);
    EXPECT_EQ(h.buckets(), 24);
    // Rounded out to whole buckets.
    auto r = std::get<StatWindow>(
        stat_window(StatInterval::hour, kDay0 + 5, kDay0 + kStatHourMs + 1, now));
    EXPECT_EQ(r.from, kDay0);
    EXPECT_EQ(r.to, kDay0 + 2 * kStatHourMs);
    // from before to; at most 1,000 buckets.
    auto bad = stat_window(StatInterval::day, kDay0, kDay0, now);
    ASSERT_TRUE(std::holds_alternative<StatWindowError>(bad));
    EXPECT_EQ(std::get<StatWindowError>(bad).field, "from");
    EXPECT_TRUE(std::holds_alternative<StatWindow>(
        stat_window(StatInterval::hour, kDay0, kDay0 + 1000 * kStatHourMs, now)));
    auto big = stat_window(StatInterval::hour, kDay0, kDay0 + 1001 * kStatHourMs, now);
    ASSERT_TRUE(std::holds_alternative<StatWindowError>(big));
    EXPECT_EQ(std::get<StatWindowError>(big).field, "to");
}

}  // namespace
}  // namespace posthorn::domain
