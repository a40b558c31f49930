// The contract of QueueViewStore and QueueAdminStore: the queued recipients counted by
// destination domain and state, and the operator's hold, release, retry and purge (the
// states each takes and what a purge does are domain/queue_control.hpp's, handed in).
#include <algorithm>
#include <set>

#include "domain/queue_control.hpp"
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

using domain::QueueState;
using S = QueueState;

// An email of `account` queued at `at`, to one address at each of `domains`
// (r0@<first>, r1@<second>…).
NewEmail email_to(const Account& account, const Domain& d, const std::vector<std::string>& domains,
                  UnixMs at) {
    auto n = new_email(account, d, static_cast<int>(domains.size()), at);
    for (std::size_t i = 0; i < domains.size(); ++i) {
        n.recipients[i].address = "r" + std::to_string(i) + "@" + domains[i];
        n.recipients[i].domain = domains[i];
    }
    n.email.to_display = n.recipients[0].address;
    return n;
}

QueueSelector by_domain(std::string name, std::vector<S> states = {}) {
    return QueueSelector{.domain = std::move(name), .states = std::move(states)};
}
QueueSelector by_email(std::string id, std::vector<S> states = {}) {
    return QueueSelector{.email_id = std::move(id), .states = std::move(states)};
}

// A summary's groups as "domain state recipients", in its order.
std::vector<std::string> groups_of(const std::vector<QueueGroup>& groups) {
    std::vector<std::string> out;
    for (const auto& g : groups)
        out.push_back(g.domain + " " + std::string(domain::name(g.state)) + " " +
                      std::to_string(g.recipients));
    return out;
}

// The recipient of `e` at `address`.
const Recipient& at(const Email& e, const std::string& address) {
    auto it = std::find_if(e.recipients.begin(), e.recipients.end(),
                           [&](const Recipient& r) { return r.address == address; });
    if (it == e.recipients.end()) throw std::runtime_error("no recipient " + address);
    return *it;
}

std::vector<std::int64_t> claimed_ids(const Result<std::vector<QueuedEmail>>& claimed) {
    std::vector<std::int64_t> out;
    EXPECT_TRUE(claimed) << claimed.error().message();
    if (!claimed) return out;
    for (const auto& e : *claimed)
        for (const auto& r : e.recipients) out.push_back(r.id);
    std::sort(out.begin(), out.end());
    return out;
}

// The purge of the product's rules (domain::purge); the ids each call was handed are kept
// in `*seen`, when given.
QueuedDecision purge_decision(std::shared_ptr<std::vector<std::int64_t>> seen = nullptr) {
    return [seen](const Email& e, const std::vector<std::int64_t>& ids) {
        if (seen) seen->insert(seen->end(), ids.begin(), ids.end());
        return domain::purge(e, ids, kT0 + 50'000);
    };
}

TEST_P(StoreContract, TheSummaryCountsQueuedRecipientsByDomainAndState) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto da = make_domain(a);
    const auto db = make_domain(b, "mail.example.org");
    // e1: one recipient to retry later (deferred), one due again (ready), one delivered.
    const auto e1 = create(email_to(a, da, {"one.test", "two.test", "one.test"}, kT0));
    ASSERT_EQ(claimed_ids(run(store().claim_due(kT0 + 10, 10, "n", kT0 + 100))).size(), 3u);
    const auto got1 = find(a.id, e1);
    domain::Outcomes o{
        .recipients = {retry_at(got1.recipients[0], kT0 + 60'000),
                       retry_at(got1.recipients[1], kT0 + 5000), delivered(got1.recipients[2])},
        .at = kT0 + 20};
    ASSERT_TRUE(run(store().change_email(a.id, e1, true, apply(o))));
    // e3, of b: claimed under a long lease (in flight).
    const auto e3 = create(email_to(b, db, {"one.test"}, kT0 + 2000));
    ASSERT_EQ(claimed_ids(run(store().claim_due(kT0 + 2010, 10, "n", kT0 + 1'000'000))).size(), 1u);
    // e2: never tried (ready since it was queued); e4: held.
    const auto e2 = create(email_to(a, da, {"one.test"}, kT0 + 1000));
    const auto e4 = create(email_to(a, da, {"three.test"}, kT0 + 3000));
    ASSERT_EQ(*run(store().hold_queued(by_domain("three.test"), kT0 + 3000)), 1);

    const UnixMs now = kT0 + 10'000;
    auto all = run(store().queue_summary({}, now));
    ASSERT_TRUE(all) << all.error().message();
    EXPECT_EQ(groups_of(*all), (std::vector<std::string>{"one.test ready 1", "one.test deferred 1",
                                                         "one.test in_flight 1",
                                                         "three.test held 1", "two.test ready 1"}))
        << "by domain, then state; the delivered recipient is in no queue";
    auto group = [&](const std::string& d, S s) {
        for (const auto& g : *all)
            if (g.domain == d && g.state == s) return g;
        throw std::runtime_error("no group " + d);
    };
    EXPECT_EQ(group("one.test", S::ready).oldest_queued_at, kT0 + 1000);
    EXPECT_EQ(group("one.test", S::ready).next_attempt_at, kT0 + 1000) << "due since queued";
    EXPECT_EQ(group("one.test", S::deferred).oldest_queued_at, kT0);
    EXPECT_EQ(group("one.test", S::deferred).next_attempt_at, kT0 + 60'000);
    EXPECT_EQ(group("one.test", S::in_flight).oldest_queued_at, kT0 + 2000);
    EXPECT_EQ(group("two.test", S::ready).next_attempt_at, kT0 + 5000);
    EXPECT_EQ(group("three.test", S::held).oldest_queued_at, kT0 + 3000);

    // Every filter narrows.
    EXPECT_EQ(groups_of(*run(store().queue_summary({.account_id = b.id}, now))),
              std::vector<std::string>{"one.test in_flight 1"});
    EXPECT_EQ(
        groups_of(*run(store().queue_summary({.account_id = a.id, .domain = "one.test"}, now))),
        (std::vector<std::string>{"one.test ready 1", "one.test deferred 1"}));
    EXPECT_EQ(groups_of(*run(store().queue_summary(by_email(e1), now))),
              (std::vector<std::string>{"one.test deferred 1", "two.test ready 1"}));
    EXPECT_EQ(
        groups_of(*run(store().queue_summary({.states = {S::ready, S::held}}, now))),
        (std::vector<std::string>{"one.test ready 1", "three.test held 1", "two.test ready 1"}));
    EXPECT_TRUE(run(store().queue_summary(by_email(e2 + "x"), now))->empty());
    // The states are those of the time asked about: later, the retry is due, the lease
    // has run out.
    EXPECT_EQ(
        groups_of(*run(store().queue_summary({}, kT0 + 2'000'000))),
        (std::vector<std::string>{"one.test ready 3", "three.test held 1", "two.test ready 1"}));
    (void)e4;
}

// A held recipient is not claimed, however late, until it is released; then it is due as
// it was. Also one never tried, while the claims of others go past it.
TEST_P(StoreContract, HeldRecipientsAreNotClaimedUntilReleased) {
    const auto a = make_account("a");
    const auto d = make_domain(a);
    const auto held = create(email_to(a, d, {"held.test"}, kT0));
    const auto open = create(email_to(a, d, {"open.test"}, kT0 + 1));
    auto h = run(store().hold_queued(by_domain("held.test"), kT0 + 10));
    ASSERT_TRUE(h) << h.error().message();
    EXPECT_EQ(*h, 1);
    EXPECT_EQ(*run(store().hold_queued(by_domain("held.test"), kT0 + 11)), 0) << "held already";
    EXPECT_EQ(*run(store().hold_queued({.account_id = a.id + "x"}, kT0 + 11)), 0);
    EXPECT_EQ(find(a.id, held).recipients[0].held_at, kT0 + 10);
    EXPECT_FALSE(find(a.id, open).recipients[0].held_at);

    EXPECT_EQ(claimed_ids(run(store().claim_due(kT0 + 20, 10, "n", kT0 + 1'000'000'000))),
              std::vector<std::int64_t>{find(a.id, open).recipients[0].id});
    EXPECT_TRUE(run(store().claim_due(kT0 + 100'000'000, 10, "n", kT0 + 100'000'010))->empty())
        << "held, whatever the time";
    EXPECT_EQ(groups_of(*run(store().queue_summary(by_domain("held.test"), kT0 + 40))),
              std::vector<std::string>{"held.test held 1"});

    auto r = run(store().release_queued(by_domain("held.test"), kT0 + 50));
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(*r, 1);
    EXPECT_EQ(*run(store().release_queued(by_domain("held.test"), kT0 + 51)), 0);
    const auto released = find(a.id, held).recipients[0];
    EXPECT_FALSE(released.held_at);
    EXPECT_EQ(released.next_attempt_at, kT0) << "due as it was: since it was queued";
    auto claimed = run(store().claim_due(kT0 + 60, 10, "n", kT0 + 70));
    EXPECT_EQ(claimed_ids(claimed), std::vector<std::int64_t>{released.id});
    EXPECT_EQ(claimed->at(0).recipients.at(0).attempts, 0);
}

// A hold lets an attempt under way finish; the retry it ends in waits for the release, and
// a final outcome ends the hold.
TEST_P(StoreContract, AHoldDuringAnAttemptKeepsItsRetryWaiting) {
    const auto a = make_account("a");
    const auto id = create(email_to(a, make_domain(a), {"x.test", "x.test"}, kT0));
    ASSERT_EQ(claimed_ids(run(store().claim_due(kT0 + 10, 10, "n", kT0 + 100'000))).size(), 2u);
    EXPECT_EQ(
        *run(store().hold_queued(
            by_domain("x.test", domain::queue_states_for(domain::QueueAction::hold)), kT0 + 20)),
        2);
    EXPECT_EQ(groups_of(*run(store().queue_summary({}, kT0 + 30))),
              std::vector<std::string>{"x.test in_flight 2"});
    const auto e = find(a.id, id);
    domain::Outcomes o{
        .recipients = {retry_at(e.recipients[0], kT0 + 1000), delivered(e.recipients[1])},
        .at = kT0 + 40};
    ASSERT_TRUE(run(store().change_email(a.id, id, true, apply(o))));
    const auto after = find(a.id, id);
    EXPECT_EQ(after.recipients[0].status, domain::RecipientStatus::queued);
    EXPECT_EQ(after.recipients[0].held_at, kT0 + 20) << "still held";
    EXPECT_FALSE(after.recipients[1].held_at) << "final: in no queue";
    EXPECT_EQ(groups_of(*run(store().queue_summary({}, kT0 + 2000))),
              std::vector<std::string>{"x.test held 1"});
    EXPECT_TRUE(run(store().claim_due(kT0 + 2000, 10, "n", kT0 + 3000))->empty());
    EXPECT_EQ(*run(store().release_queued(
                  by_domain("x.test", domain::queue_states_for(domain::QueueAction::release)),
                  kT0 + 2000)),
              1);
    EXPECT_EQ(claimed_ids(run(store().claim_due(kT0 + 2000, 10, "n", kT0 + 3000))),
              std::vector<std::int64_t>{e.recipients[0].id});
}

TEST_P(StoreContract, MakingDueBringsDeferredRecipientsForward) {
    const auto a = make_account("a");
    const auto d = make_domain(a);
    const auto first = create(email_to(a, d, {"x.test"}, kT0));
    const auto second = create(email_to(a, d, {"x.test"}, kT0 + 1));
    ASSERT_EQ(claimed_ids(run(store().claim_due(kT0 + 10, 10, "n", kT0 + 100))).size(), 2u);
    for (const auto& id : {first, second}) {
        const auto e = find(a.id, id);
        domain::Outcomes o{.recipients = {retry_at(e.recipients[0], kT0 + 1'000'000)},
                           .at = kT0 + 20};
        ASSERT_TRUE(run(store().change_email(a.id, id, true, apply(o))));
    }
    ASSERT_EQ(*run(store().hold_queued(by_email(second), kT0 + 30)), 1);
    EXPECT_TRUE(run(store().claim_due(kT0 + 500, 10, "n", kT0 + 600))->empty());
    const auto retry = domain::queue_states_for(domain::QueueAction::retry);
    auto n = run(store().make_due(by_domain("x.test", retry), kT0 + 500));
    ASSERT_TRUE(n) << n.error().message();
    EXPECT_EQ(*n, 1) << "the held one is not deferred";
    EXPECT_EQ(find(a.id, first).recipients[0].next_attempt_at, kT0 + 500);
    EXPECT_EQ(find(a.id, second).recipients[0].next_attempt_at, kT0 + 1'000'000);
    EXPECT_EQ(claimed_ids(run(store().claim_due(kT0 + 500, 10, "n", kT0 + 600))),
              std::vector<std::int64_t>{find(a.id, first).recipients[0].id});
    EXPECT_EQ(*run(store().make_due(by_domain("x.test", retry), kT0 + 510)), 0)
        << "in flight now, the other held";
}

// change_queued hands each email with the selected ids to the decision and writes what it
// answers, as change_email does: a purge fails them, the email's status and events follow.
// A recipient in flight, another account's, another domain's are not selected.
TEST_P(StoreContract, APurgeFailsTheSelectedRecipientsThroughTheDecision) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto da = make_domain(a);
    const auto busy = create(email_to(a, da, {"x.test"}, kT0));
    ASSERT_EQ(claimed_ids(run(store().claim_due(kT0 + 10, 10, "n", kT0 + 1'000'000))).size(), 1u);
    const auto id = create(email_to(a, da, {"x.test", "y.test"}, kT0 + 1));
    const auto other = create(email_to(b, make_domain(b, "mail.example.org"), {"x.test"}, kT0 + 2));
    ASSERT_EQ(*run(store().hold_queued(by_domain("y.test"), kT0 + 20)), 1);
    route_all();  // nothing yet; the events below are the purge's

    const auto purge = domain::queue_states_for(domain::QueueAction::purge);
    auto seen = std::make_shared<std::vector<std::int64_t>>();
    QueueSelector sel{.account_id = a.id, .domain = "x.test", .states = purge};
    auto n = run(store().change_queued(sel, kT0 + 30, purge_decision(seen)));
    ASSERT_TRUE(n) << n.error().message();
    EXPECT_EQ(*n, 1);
    const auto e = find(a.id, id);
    EXPECT_EQ(*seen, std::vector<std::int64_t>{at(e, "r0@x.test").id}) << "only the selected";
    EXPECT_EQ(at(e, "r0@x.test").status, domain::RecipientStatus::failed);
    EXPECT_EQ(at(e, "r0@x.test").last_response, "purged");
    ASSERT_TRUE(at(e, "r0@x.test").bounce);
    EXPECT_EQ(at(e, "r0@x.test").bounce->message, "purged");
    EXPECT_EQ(at(e, "r1@y.test").status, domain::RecipientStatus::queued);
    EXPECT_EQ(e.status, domain::EmailStatus::queued) << "a recipient is still open";
    EXPECT_EQ(find(a.id, busy).recipients[0].status, domain::RecipientStatus::queued)
        << "in flight: its attempt's outcome is to come";
    EXPECT_EQ(find(b.id, other).recipients[0].status, domain::RecipientStatus::queued);
    EXPECT_TRUE(route_all().empty()) << "no final status, no event";

    // The held one: the email fails, and says so.
    n = run(
        store().change_queued({.account_id = a.id, .states = purge}, kT0 + 40, purge_decision()));
    ASSERT_TRUE(n) << n.error().message();
    EXPECT_EQ(*n, 1) << "the one in flight is not selected";
    const auto failed = find(a.id, id);
    EXPECT_EQ(failed.status, domain::EmailStatus::failed);
    EXPECT_FALSE(at(failed, "r1@y.test").held_at);
    const auto events = route_all();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, domain::EventKind::email_failed);
    EXPECT_EQ(events[0].email_id, id);
    EXPECT_EQ(groups_of(*run(store().queue_summary({}, kT0 + 50))),
              (std::vector<std::string>{"x.test ready 1", "x.test in_flight 1"}))
        << "b's, and the one in flight";
}

// A large selection goes in several transactions: each recipient is handed to the decision
// once, and the email comes out as one purge of all of them would leave it.
TEST_P(StoreContract, ALargePurgeDecidesEachRecipientOnce) {
    const auto a = make_account("a");
    const auto id = create(new_email(a, make_domain(a), 1201, kT0));
    auto seen = std::make_shared<std::vector<std::int64_t>>();
    auto n = run(store().change_queued(by_email(id), kT0 + 10, purge_decision(seen)));
    ASSERT_TRUE(n) << n.error().message();
    EXPECT_EQ(*n, 1201);
    EXPECT_EQ(seen->size(), 1201u);
    EXPECT_EQ(std::set<std::int64_t>(seen->begin(), seen->end()).size(), 1201u);
    const auto e = find(a.id, id);
    EXPECT_EQ(e.status, domain::EmailStatus::failed);
    EXPECT_TRUE(std::all_of(e.recipients.begin(), e.recipients.end(), [](const Recipient& r) {
        return r.status == domain::RecipientStatus::failed;
    }));
    const auto events = route_all();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, domain::EventKind::email_failed);
    EXPECT_TRUE(run(store().queue_summary({}, kT0 + 20))->empty());
}

TEST_P(StoreContract, ReleasingAndMakingDueWakeDelivery) {
    const auto a = make_account("a");
    const auto d = make_domain(a);
    create(email_to(a, d, {"x.test"}, kT0));
    ASSERT_EQ(*run(store().hold_queued({}, kT0 + 10)), 1);
    auto heard = std::make_shared<std::atomic<int>>(0);
    store().set_queue_listener([heard] { ++*heard; });
    ASSERT_EQ(*run(store().release_queued({}, kT0 + 20)), 1);
    EXPECT_TRUE(eventually([&] { return *heard >= 1; }));
    const int before = *heard;
    ASSERT_EQ(*run(store().make_due({}, kT0 + 30)), 1);
    EXPECT_TRUE(eventually([&] { return *heard > before; }));
}

}  // namespace
}  // namespace posthorn::store::contract
