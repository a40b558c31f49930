// The contract of EmailStore::email_events (GET /v1/emails/{id}/events, issue 31): every event
// written about an email, oldest first, and only that email's; another account's email has
// none.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

std::vector<domain::EventKind> kinds(const std::vector<Event>& events) {
    std::vector<domain::EventKind> out;
    for (const auto& e : events) out.push_back(e.kind);
    return out;
}

TEST_P(StoreContract, AnEmailsEventsAreReadOldestFirstAndOnlyItsOwn) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto d = make_domain(a);
    const auto id = create(new_email(a, d, 2, kT0));
    const auto other = create(new_email(a, d, 1, kT0 + 1));

    auto none = run(store().email_events(a.id, id));
    ASSERT_TRUE(none) << none.error().message();
    EXPECT_TRUE(none->empty()) << "no event yet";

    // The first recipient delivered, the second waiting for a retry; then it too delivered.
    ASSERT_EQ(run(store().claim_due(kT0 + 10, 10, "n", kT0 + 100))->size(), 2u);
    auto e = find(a.id, id);
    auto made = std::make_shared<std::vector<EmailChange>>();
    domain::Outcomes first{
        .recipients = {delivered(e.recipients[0]), retry_at(e.recipients[1], kT0 + kMinute)},
        .at = kT0 + 20};
    ASSERT_TRUE(run(store().change_email(a.id, id, true, apply(first, made))));
    ASSERT_TRUE(run(store().claim_due(kT0 + kMinute, 10, "n", kT0 + 2 * kMinute)));
    e = find(a.id, id);
    domain::Outcomes second{.recipients = {delivered(e.recipients[1])}, .at = kT0 + kMinute + 5};
    ASSERT_TRUE(run(store().change_email(a.id, id, true, apply(second, made))));
    auto o = find(a.id, other);
    domain::Outcomes third{.recipients = {delivered(o.recipients[0])}, .at = kT0 + kMinute + 6};
    ASSERT_TRUE(run(store().change_email(a.id, other, true, apply(third))));

    std::vector<Event> written;
    for (const auto& c : *made) written.insert(written.end(), c.events.begin(), c.events.end());
    ASSERT_GE(written.size(), 2u);
    auto got = run(store().email_events(a.id, id));
    ASSERT_TRUE(got) << got.error().message();
    EXPECT_EQ(kinds(*got), kinds(written)) << "every one, in the order written";
    ASSERT_EQ(got->size(), written.size());
    for (std::size_t i = 0; i < got->size(); ++i) {
        EXPECT_EQ((*got)[i].id, written[i].id);
        EXPECT_EQ((*got)[i].account_id, a.id);
        EXPECT_EQ((*got)[i].email_id, id);
        EXPECT_EQ((*got)[i].data_json, written[i].data_json);
        EXPECT_EQ((*got)[i].created_at, written[i].created_at);
    }
    EXPECT_LE(got->front().created_at, got->back().created_at);

    // Another account's read of it: nothing. The other email's: its own only.
    auto theirs = run(store().email_events(b.id, id));
    ASSERT_TRUE(theirs);
    EXPECT_TRUE(theirs->empty());
    auto others = run(store().email_events(a.id, other));
    ASSERT_TRUE(others);
    ASSERT_FALSE(others->empty());
    for (const auto& ev : *others) EXPECT_EQ(ev.email_id, other);
    auto missing = run(store().email_events(a.id, id + "x"));
    ASSERT_TRUE(missing);
    EXPECT_TRUE(missing->empty());
}

}  // namespace
}  // namespace posthorn::store::contract
