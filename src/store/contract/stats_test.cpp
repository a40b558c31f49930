// The contract of the statistics' counters (StatsStore, issue 31): the bumps an email's
// acceptance (NewEmail::stats) and its changes (EmailChange::stats) carry are added in their
// writes, and nothing else; stat_counts sums an account's dimension over [from, to) per
// bucket, in time order; another account's, dimension's or hour's counters stay apart; a
// replay by idempotency key adds nothing.
#include "domain/stats.hpp"
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

using domain::StatKind;
constexpr UnixMs kHour = 3'600'000;
constexpr UnixMs kDay = 24 * kHour;
constexpr UnixMs kBase = kT0 - kT0 % kDay;  // a UTC midnight

StatBump bump(const std::string& account, UnixMs hour, std::string dimension, StatKind kind,
              std::int64_t count = 1) {
    return StatBump{.account_id = account,
                    .hour = hour,
                    .dimension = std::move(dimension),
                    .kind = kind,
                    .count = count};
}

std::vector<StatCount> counts(Store& s, const std::string& account, const std::string& dimension,
                              UnixMs from, UnixMs to, UnixMs width) {
    auto r = StoreContract::run(s.stat_counts(
        {.account_id = account, .dimension = dimension, .from = from, .to = to, .width = width}));
    EXPECT_TRUE(r) << r.error().message();
    return r ? *r : std::vector<StatCount>{};
}

TEST_P(StoreContract, StatCountersAddTheBumpsOfNewEmails) {
    const auto acc = make_account("acme");
    const auto other = make_account("globex");
    const auto d = make_domain(acc);
    const auto od = make_domain(other, "mail.globex.example");
    auto n = new_email(acc, d, 1, kBase + 10 * kMinute);
    n.stats = {bump(acc.id, kBase, "", StatKind::accepted),
               bump(acc.id, kBase, "domain:" + d.id, StatKind::accepted),
               bump(acc.id, kBase, "tag:campaign:spring", StatKind::accepted)};
    n.idempotency_key = "key-1";
    n.idempotency_expires_at = kBase + kDay;
    n.response = {.status = 200, .body = "{}"};
    create(n);
    // A replay of the same key writes nothing: not counted again.
    auto again = new_email(acc, d, 1, kBase + 11 * kMinute);
    again.stats = n.stats;
    again.idempotency_key = "key-1";
    again.idempotency_expires_at = kBase + kDay;
    auto replayed = run(store().create_email(again));
    ASSERT_TRUE(replayed) << replayed.error().message();
    EXPECT_TRUE(replayed->has_value());
    // Three more in the next hour, in a batch whose emails add to the same counter, and a
    // replay in it that is not counted.
    auto second = new_email(acc, d, 1, kBase + kHour + 1);
    second.stats = {bump(acc.id, kBase + kHour, "", StatKind::accepted, 2)};
    auto third = new_email(acc, d, 2, kBase + kHour + 2);
    third.stats = {bump(acc.id, kBase + kHour, "", StatKind::accepted),
                   bump(acc.id, kBase + kHour, "tag:campaign:spring", StatKind::accepted)};
    std::vector<NewEmail> batch{second, third, again};
    auto stored = run(store().create_emails(batch));
    ASSERT_TRUE(stored) << stored.error().message();
    ASSERT_EQ(stored->size(), 3u);
    EXPECT_TRUE((*stored)[2].has_value()) << "the replay";
    // Another account's.
    auto theirs = new_email(other, od, 1, kBase + 5);
    theirs.stats = {bump(other.id, kBase, "", StatKind::accepted, 7)};
    create(theirs);

    EXPECT_EQ(counts(store(), acc.id, "", kBase, kBase + kDay, kHour),
              (std::vector<StatCount>{{kBase, StatKind::accepted, 1},
                                      {kBase + kHour, StatKind::accepted, 3}}));
    // Per day: the hours summed.
    EXPECT_EQ(counts(store(), acc.id, "", kBase, kBase + kDay, kDay),
              (std::vector<StatCount>{{kBase, StatKind::accepted, 4}}));
    EXPECT_EQ(counts(store(), acc.id, "domain:" + d.id, kBase, kBase + kDay, kDay),
              (std::vector<StatCount>{{kBase, StatKind::accepted, 1}}));
    EXPECT_EQ(counts(store(), acc.id, "tag:campaign:spring", kBase, kBase + kDay, kDay),
              (std::vector<StatCount>{{kBase, StatKind::accepted, 2}}));
    EXPECT_TRUE(counts(store(), acc.id, "tag:campaign:autumn", kBase, kBase + kDay, kDay).empty());
    EXPECT_EQ(counts(store(), other.id, "", kBase, kBase + kDay, kDay),
              (std::vector<StatCount>{{kBase, StatKind::accepted, 7}}));
    // [from, to): the hour at `to` is out, the one at `from` in.
    EXPECT_EQ(counts(store(), acc.id, "", kBase + kHour, kBase + 2 * kHour, kHour),
              (std::vector<StatCount>{{kBase + kHour, StatKind::accepted, 3}}));
    EXPECT_EQ(counts(store(), acc.id, "", kBase - kDay, kBase + kHour, kHour),
              (std::vector<StatCount>{{kBase, StatKind::accepted, 1}}));
    EXPECT_TRUE(counts(store(), acc.id, "", kBase + 2 * kHour, kBase + kDay, kHour).empty());
}

TEST_P(StoreContract, StatCountersAddTheBumpsOfChanges) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    auto n = new_email(acc, d, 2, kBase);
    n.email.tags = {{.name = "campaign", .value = "spring"}};
    n.stats = domain::accepted_stats(n.email);
    const auto id = create(n);
    // The rules' own bumps (domain/stats.hpp), written with the change: one recipient
    // delivered, the other hard-bounced an hour later: the email is BOUNCED once.
    auto e = find(acc.id, id);
    ASSERT_EQ(e.recipients.size(), 2u);
    const auto at = kBase + kHour + 5 * kMinute;
    ASSERT_TRUE(run(store().change_email(
        acc.id, id, true,
        apply({.recipients = {delivered(e.recipients[0])}, .at = kBase + 2 * kMinute}))));
    ASSERT_TRUE(run(store().change_email(
        acc.id, id, true, apply({.recipients = {hard_bounced(e.recipients[1])}, .at = at}))));
    // A change with no bump adds nothing; one with bumps of its own adds them as they are,
    // the same counter twice included.
    EmailDecision with = [&](const Email& current) -> std::optional<EmailChange> {
        EmailChange c{.status = current.status,
                      .sent_at = current.sent_at,
                      .delivered_at = current.delivered_at,
                      .failed_at = current.failed_at,
                      .opened_at = current.opened_at,
                      .clicked_at = current.clicked_at,
                      .at = at};
        c.stats = {bump(acc.id, kBase + 2 * kHour, "", StatKind::opened),
                   bump(acc.id, kBase + 2 * kHour, "", StatKind::opened)};
        return c;
    };
    ASSERT_TRUE(run(store().change_email(acc.id, id, false, with)));

    EXPECT_EQ(counts(store(), acc.id, "", kBase, kBase + 3 * kHour, kHour),
              (std::vector<StatCount>{{kBase, StatKind::accepted, 1},
                                      {kBase + kHour, StatKind::bounced_hard, 1},
                                      {kBase + 2 * kHour, StatKind::opened, 2}}));
    for (const auto& dim : {"domain:" + d.id, std::string("tag:campaign:spring")})
        EXPECT_EQ(counts(store(), acc.id, dim, kBase, kBase + kDay, kDay),
                  (std::vector<StatCount>{{kBase, StatKind::accepted, 1},
                                          {kBase, StatKind::bounced_hard, 1}}))
            << dim;
}

}  // namespace
}  // namespace posthorn::store::contract
