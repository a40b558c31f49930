// The contract of scheduled send (domain/scheduling.hpp) in the store: a scheduled email keeps
// its time, its recipients are not claimed before it, scheduled_due finds it once it has come;
// change_email_locked sees the recipients' leases and writes a cancel or a reschedule so that
// a canceled recipient is never claimed and a leased one is never canceled.
#include <algorithm>
#include <variant>

#include "domain/queue_control.hpp"
#include "domain/scheduling.hpp"
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

constexpr UnixMs kAt = kT0 + 10 * kMinute;  // the scheduled time

// An email of `n` recipients accepted at kT0 and scheduled at `at` (as api/queue_email does).
NewEmail scheduled_email(const Account& acc, const Domain& d, int n, UnixMs at = kAt) {
    auto e = new_email(acc, d, n, kT0);
    e.email.status = domain::EmailStatus::scheduled;
    e.email.scheduled_at = at;
    for (auto& r : e.recipients) r.next_attempt_at = at;
    return e;
}

// A decision of domain/scheduling.hpp; a refusal is kept in `*refused`.
template <class Rule>
EmailDecision scheduling(Rule rule, std::shared_ptr<std::string> refused) {
    return [rule = std::move(rule),
            refused = std::move(refused)](const Email& current) -> std::optional<EmailChange> {
        auto r = rule(current);
        if (auto* too_late = std::get_if<domain::TooLate>(&r)) {
            *refused = too_late->message;
            return std::nullopt;
        }
        return std::get<EmailChange>(std::move(r));
    };
}

std::size_t claimed_recipients(const std::vector<QueuedEmail>& claimed) {
    std::size_t n = 0;
    for (const auto& e : claimed) n += e.recipients.size();
    return n;
}

TEST_P(StoreContract, AScheduledEmailWaitsForItsTimeThenIsFoundDue) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto id = create(scheduled_email(acc, d, 2));
    const auto e = find(acc.id, id);
    EXPECT_EQ(e.status, domain::EmailStatus::scheduled);
    EXPECT_EQ(e.scheduled_at, kAt);
    for (const auto& r : e.recipients) EXPECT_EQ(r.next_attempt_at, kAt);
    const auto plain = create(new_email(acc, d, 1, kT0));
    EXPECT_EQ(find(acc.id, plain).scheduled_at, std::nullopt);

    // Before its time: not claimed, not due. (The plain email is.)
    auto early = run(store().claim_due(kAt - 1, 10, "node-a", kAt + kMinute));
    ASSERT_TRUE(early) << early.error().message();
    ASSERT_EQ(early->size(), 1u);
    EXPECT_EQ(early->front().id, plain);
    auto none = run(store().scheduled_due(kAt - 1, 10));
    ASSERT_TRUE(none) << none.error().message();
    EXPECT_TRUE(none->empty());

    // At its time: found due, and its recipients claimed.
    auto due = run(store().scheduled_due(kAt, 10));
    ASSERT_TRUE(due);
    ASSERT_EQ(due->size(), 1u);
    EXPECT_EQ(due->front().id, id);
    EXPECT_EQ(due->front().account_id, acc.id);
    EXPECT_EQ(due->front().scheduled_at, kAt);
    auto claimed = run(store().claim_due(kAt, 10, "node-a", kAt + kMinute));
    ASSERT_TRUE(claimed);
    EXPECT_EQ(claimed_recipients(*claimed), 2u);

    // Released (the scheduler): QUEUED, its time kept, no longer due.
    auto released = run(store().change_email(
        acc.id, id, false, [](const Email& cur) { return domain::release_scheduled(cur, kAt); }));
    ASSERT_TRUE(released) << released.error().message();
    const auto after = find(acc.id, id);
    EXPECT_EQ(after.status, domain::EmailStatus::queued);
    EXPECT_EQ(after.scheduled_at, kAt);
    EXPECT_TRUE(run(store().scheduled_due(kAt + kMinute, 10))->empty());
}

TEST_P(StoreContract, ListsFilterOnScheduledAndCanceled) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto waiting = create(scheduled_email(acc, d, 1));
    const auto gone = create(scheduled_email(acc, d, 1));
    create(new_email(acc, d, 1, kT0));
    auto refused = std::make_shared<std::string>();
    auto canceled = run(store().change_email_locked(
        acc.id, gone,
        scheduling([](const Email& cur) { return domain::cancel(cur, kT0 + kMinute); }, refused)));
    ASSERT_TRUE(canceled) << canceled.error().message();
    ASSERT_TRUE(refused->empty()) << *refused;
    auto list = [&](domain::EmailStatus st) {
        SearchQuery q{.account_id = acc.id, .statuses = {st}};
        auto page = run(store().list_emails(q));
        EXPECT_TRUE(page) << page.error().message();
        std::vector<std::string> ids;
        for (const auto& e : page->items) ids.push_back(e.id);
        EXPECT_EQ(page->total, static_cast<std::int64_t>(ids.size()));
        return ids;
    };
    EXPECT_EQ(list(domain::EmailStatus::scheduled), std::vector<std::string>{waiting});
    EXPECT_EQ(list(domain::EmailStatus::canceled), std::vector<std::string>{gone});
    EXPECT_EQ(list(domain::EmailStatus::queued).size(), 1u);
}

TEST_P(StoreContract, ACanceledRecipientIsNeverClaimedAndTheEventIsWritten) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto id = create(scheduled_email(acc, d, 2));
    auto refused = std::make_shared<std::string>();
    auto r = run(store().change_email_locked(
        acc.id, id,
        scheduling([](const Email& cur) { return domain::cancel(cur, kT0 + kMinute); }, refused)));
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(refused->empty()) << *refused;
    const auto e = find(acc.id, id);
    EXPECT_EQ(e.status, domain::EmailStatus::canceled);
    for (const auto& rc : e.recipients) {
        EXPECT_EQ(rc.status, domain::RecipientStatus::canceled);
        EXPECT_EQ(rc.next_attempt_at, std::nullopt);
        EXPECT_EQ(rc.last_response, "canceled");
    }
    auto claimed = run(store().claim_due(kAt + 60 * kMinute, 10, "node-a", kAt + 61 * kMinute));
    ASSERT_TRUE(claimed);
    EXPECT_TRUE(claimed->empty()) << "a canceled recipient is never claimed";
    EXPECT_TRUE(run(store().scheduled_due(kAt + kMinute, 10))->empty());
    const auto events = route_all();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, domain::EventKind::email_canceled);
    EXPECT_EQ(events[0].email_id, id);

    // Canceled again: refused, nothing written.
    auto again = run(store().change_email_locked(
        acc.id, id,
        scheduling([](const Email& cur) { return domain::cancel(cur, kT0 + 2 * kMinute); },
                   refused)));
    ASSERT_TRUE(again);
    EXPECT_EQ(*refused, "the email is CANCELED already");
    EXPECT_TRUE(route_all().empty());
    // Another account's: not found.
    const auto other = make_account("other");
    auto theirs = run(store().change_email_locked(
        other.id, id,
        scheduling([](const Email& cur) { return domain::cancel(cur, kT0); }, refused)));
    ASSERT_FALSE(theirs);
    EXPECT_EQ(theirs.error(), errc::not_found);
}

TEST_P(StoreContract, ALeasedRecipientIsNotCanceledAndKeepsItsOutcome) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto id = create(new_email(acc, d, 2, kT0));
    // One of its two recipients is claimed by a node: its attempt is under way.
    auto claimed = run(store().claim_due(kT0 + 100, 1, "node-a", kT0 + kMinute));
    ASSERT_TRUE(claimed);
    ASSERT_EQ(claimed_recipients(*claimed), 1u);
    const auto leased = claimed->front().recipients.front().id;
    const auto before = find(acc.id, id);
    for (const auto& rc : before.recipients)
        EXPECT_EQ(rc.lease_until.has_value(), rc.id == leased) << "the lease is read";

    auto refused = std::make_shared<std::string>();
    auto r = run(store().change_email_locked(
        acc.id, id,
        scheduling([](const Email& cur) { return domain::cancel(cur, kT0 + 200); }, refused)));
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(refused->empty()) << *refused;
    auto e = find(acc.id, id);
    EXPECT_EQ(e.status, domain::EmailStatus::canceled);
    for (const auto& rc : e.recipients)
        EXPECT_EQ(rc.status, rc.id == leased ? domain::RecipientStatus::queued
                                             : domain::RecipientStatus::canceled);
    // Once its lease runs out (its node died) the leased one is claimed again, being QUEUED
    // still; the canceled one never is.
    auto later = run(store().claim_due(kT0 + 2 * kMinute, 10, "node-b", kT0 + 3 * kMinute));
    ASSERT_TRUE(later);
    ASSERT_EQ(claimed_recipients(*later), 1u);
    EXPECT_EQ(later->front().recipients.front().id, leased);

    // Its attempt ends delivered: the recipient says so, the email stays CANCELED.
    auto it = std::find_if(e.recipients.begin(), e.recipients.end(),
                           [&](const Recipient& x) { return x.id == leased; });
    ASSERT_NE(it, e.recipients.end());
    auto w = run(store().change_email(
        acc.id, id, true,
        apply(domain::Outcomes{.recipients = {delivered(*it)}, .at = kT0 + 2 * kMinute})));
    ASSERT_TRUE(w) << w.error().message();
    e = find(acc.id, id);
    EXPECT_EQ(e.status, domain::EmailStatus::canceled);
    for (const auto& rc : e.recipients) {
        if (rc.id == leased) {
            EXPECT_EQ(rc.status, domain::RecipientStatus::delivered);
        }
    }

    // Every recipient started or done: a cancel is refused.
    const auto busy = create(new_email(acc, d, 1, kT0 + 1));
    auto all = run(store().claim_due(kT0 + 3 * kMinute, 10, "node-a", kT0 + 4 * kMinute));
    ASSERT_TRUE(all);
    ASSERT_EQ(claimed_recipients(*all), 1u);
    refused->clear();
    auto late = run(store().change_email_locked(
        acc.id, busy,
        scheduling([](const Email& cur) { return domain::cancel(cur, kT0 + 3 * kMinute + 1); },
                   refused)));
    ASSERT_TRUE(late);
    EXPECT_NE(refused->find("too late"), std::string::npos) << *refused;
    EXPECT_EQ(find(acc.id, busy).status, domain::EmailStatus::queued);
}

TEST_P(StoreContract, ARescheduleMovesTheTimeTheQueueWaitsFor) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto id = create(scheduled_email(acc, d, 2));
    const auto later = kAt + 30 * kMinute;
    auto refused = std::make_shared<std::string>();
    auto r = run(store().change_email_locked(
        acc.id, id,
        scheduling(
            [later](const Email& cur) { return domain::reschedule(cur, later, kT0 + kMinute); },
            refused)));
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(refused->empty()) << *refused;
    const auto e = find(acc.id, id);
    EXPECT_EQ(e.status, domain::EmailStatus::scheduled);
    EXPECT_EQ(e.scheduled_at, later);
    for (const auto& rc : e.recipients) EXPECT_EQ(rc.next_attempt_at, later);
    EXPECT_TRUE(run(store().claim_due(kAt, 10, "node-a", kAt + kMinute))->empty());
    EXPECT_TRUE(run(store().scheduled_due(kAt, 10))->empty());
    EXPECT_EQ(run(store().scheduled_due(later, 10))->size(), 1u);
    auto claimed = run(store().claim_due(later, 10, "node-a", later + kMinute));
    ASSERT_TRUE(claimed);
    EXPECT_EQ(claimed_recipients(*claimed), 2u);

    // Its time came and its recipients are under way: too late.
    auto late = run(store().change_email_locked(
        acc.id, id,
        scheduling([later](const Email& cur) { return domain::reschedule(cur, later + 1, later); },
                   refused)));
    ASSERT_TRUE(late);
    EXPECT_FALSE(refused->empty());
}

// A scheduled email's recipients are in a queue state of their own (domain::queue_state):
// counted as `scheduled`, not `deferred`; the operator's retry (the states domain::
// queue_states_for gives it) does not make them due; a hold takes them and its release
// gives them back their time; at their time they are ready like any due recipient.
TEST_P(StoreContract, AScheduledEmailsRecipientsAreScheduledInTheQueueAndRetryLeavesThem) {
    using S = domain::QueueState;
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto sched = create(scheduled_email(acc, d, 2));
    // Another email whose recipient waits for a retry (deferred).
    const auto plain = create(new_email(acc, d, 1, kT0));
    auto claimed = run(store().claim_due(kT0 + 10, 10, "n", kT0 + 100));
    ASSERT_TRUE(claimed) << claimed.error().message();
    ASSERT_EQ(claimed_recipients(*claimed), 1u) << "the scheduled one is not claimed";
    const auto p = find(acc.id, plain);
    domain::Outcomes o{.recipients = {retry_at(p.recipients[0], kAt + kMinute)}, .at = kT0 + 20};
    ASSERT_TRUE(run(store().change_email(acc.id, plain, true, apply(o))));

    const UnixMs now = kT0 + kMinute;
    auto count = [&](UnixMs at, S state, const std::string& email = {}) {
        QueueSelector sel{.account_id = acc.id};
        if (!email.empty()) sel.email_id = email;
        auto groups = run(store().queue_summary(std::move(sel), at));
        EXPECT_TRUE(groups) << groups.error().message();
        std::int64_t n = 0;
        if (!groups) return n;
        for (const auto& g : *groups)
            if (g.state == state) n += g.recipients;
        return n;
    };
    EXPECT_EQ(count(now, S::scheduled), 2);
    EXPECT_EQ(count(now, S::deferred), 1) << "only the retry";
    // The store counts as the rule decides.
    for (const auto& r : find(acc.id, sched).recipients)
        EXPECT_EQ(domain::queue_state(r, domain::EmailStatus::scheduled, now), S::scheduled);
    auto only = run(store().queue_summary({.states = {S::scheduled}}, now));
    ASSERT_TRUE(only);
    ASSERT_EQ(only->size(), 1u);
    EXPECT_EQ(only->front().recipients, 2);
    EXPECT_EQ(only->front().next_attempt_at, kAt);

    // The operator's retry: the deferred recipient only.
    const auto retry = domain::queue_states_for(domain::QueueAction::retry);
    auto n = run(store().make_due({.account_id = acc.id, .states = retry}, now));
    ASSERT_TRUE(n) << n.error().message();
    EXPECT_EQ(*n, 1);
    for (const auto& r : find(acc.id, sched).recipients) EXPECT_EQ(r.next_attempt_at, kAt);
    EXPECT_EQ(find(acc.id, plain).recipients[0].next_attempt_at, now);
    auto early = run(store().claim_due(now, 10, "n", now + 100));
    ASSERT_TRUE(early);
    ASSERT_EQ(claimed_recipients(*early), 1u);
    EXPECT_EQ(early->front().id, plain);
    // Retried by the email's id: nothing.
    EXPECT_EQ(*run(store().make_due({.email_id = sched, .states = retry}, now)), 0);

    // Hold takes them; release gives them back their time (still scheduled).
    const auto hold = domain::queue_states_for(domain::QueueAction::hold);
    EXPECT_EQ(*run(store().hold_queued({.email_id = sched, .states = hold}, now)), 2);
    EXPECT_EQ(count(now, S::held), 2);
    EXPECT_EQ(count(now, S::scheduled), 0);
    const auto release = domain::queue_states_for(domain::QueueAction::release);
    EXPECT_EQ(*run(store().release_queued({.email_id = sched, .states = release}, now)), 2);
    EXPECT_EQ(count(now, S::scheduled), 2);
    for (const auto& r : find(acc.id, sched).recipients) EXPECT_EQ(r.next_attempt_at, kAt);

    // At its time: ready (released by the scheduler or not), then claimed (with the plain
    // email's recipient, whose lease has run out).
    EXPECT_EQ(count(kAt, S::scheduled), 0);
    EXPECT_EQ(count(kAt, S::ready, sched), 2);
    auto due = run(store().claim_due(kAt, 10, "n", kAt + 100));
    ASSERT_TRUE(due);
    EXPECT_EQ(claimed_recipients(*due), 3u);
}

}  // namespace

}  // namespace posthorn::store::contract
