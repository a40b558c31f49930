// The contract of WebhookStore's webhooks and deliveries: webhooks per account; deliveries
// claimed under a lease, attempted, retried, given up or done; a webhook deleted with its
// deliveries; leases lifted by their owner.
#include <algorithm>

#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

using domain::EventKind;

std::vector<std::string> ids(const std::vector<DueWebhookDelivery>& due) {
    std::vector<std::string> out;
    for (const auto& d : due) out.push_back(d.event_id + " " + d.webhook_id);
    std::sort(out.begin(), out.end());
    return out;
}

TEST_P(StoreContract, WebhooksAreKeptPerAccount) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    std::vector<Webhook> hooks;
    for (int i = 0; i < 3; ++i)
        hooks.push_back(make_webhook(a, {EventKind::email_sent}, true, kT0 + 10 * i));
    const auto w =
        make_webhook(a, {EventKind::domain_verified, EventKind::email_bounced}, false, kT0 + 40);
    make_webhook(b, {EventKind::email_sent});

    auto found = run(store().find_webhook(a.id, w.id));
    ASSERT_TRUE(found) << found.error().message();
    EXPECT_EQ(found->account_id, a.id);
    EXPECT_EQ(found->url, w.url);
    EXPECT_EQ(found->events, w.events) << "in their order";
    EXPECT_FALSE(found->active);
    EXPECT_EQ(found->secret, w.secret) << "byte for byte";
    EXPECT_EQ(found->created_at, kT0 + 40);
    EXPECT_EQ(found->updated_at, kT0 + 40);

    auto page = run(store().list_webhooks({.account_id = a.id, .limit = 3}));
    ASSERT_TRUE(page) << page.error().message();
    EXPECT_EQ(page->total, 4);
    ASSERT_EQ(page->items.size(), 3u);
    EXPECT_EQ(page->items[0].id, w.id) << "newest first";
    EXPECT_EQ(page->items[2].id, hooks[1].id);
    auto asc = run(store().list_webhooks(
        {.account_id = a.id, .page = 2, .limit = 3, .order = SortOrder::asc}));
    ASSERT_EQ(asc->items.size(), 1u);
    EXPECT_EQ(asc->items[0].id, w.id);
    EXPECT_EQ(run(store().list_webhooks({.account_id = b.id}))->total, 1);

    auto updated = run(store().update_webhook(
        a.id, w.id, {.url = "https://new.example/", .active = true}, kT0 + 50));
    ASSERT_TRUE(updated) << updated.error().message();
    EXPECT_EQ(updated->url, "https://new.example/");
    EXPECT_TRUE(updated->active);
    EXPECT_EQ(updated->events, w.events) << "unset: kept";
    EXPECT_EQ(updated->updated_at, kT0 + 50);
    EXPECT_EQ(updated->created_at, kT0 + 40);
    WebhookPatch only_events{.events = std::vector<EventKind>{EventKind::inbound_received}};
    ASSERT_TRUE(run(store().update_webhook(a.id, w.id, only_events, kT0 + 60)));
    auto again = run(store().find_webhook(a.id, w.id));
    EXPECT_EQ(again->events, std::vector<EventKind>{EventKind::inbound_received});
    EXPECT_EQ(again->url, "https://new.example/");
    EXPECT_TRUE(again->active);
    EXPECT_EQ(again->secret, w.secret);

    EXPECT_EQ(run(store().find_webhook(b.id, w.id)).error(), errc::not_found);
    EXPECT_EQ(run(store().update_webhook(b.id, w.id, {.active = false}, kT0)).error(),
              errc::not_found);
    EXPECT_EQ(run(store().delete_webhook(b.id, w.id)).error(), errc::not_found);
    EXPECT_EQ(run(store().list_webhook_attempts(b.id, w.id, 1, 10)).error(), errc::not_found);
    EXPECT_TRUE(run(store().find_webhook(a.id, w.id))->active) << "untouched by another";
    ASSERT_TRUE(run(store().delete_webhook(a.id, w.id)));
    EXPECT_EQ(run(store().find_webhook(a.id, w.id)).error(), errc::not_found);
    EXPECT_EQ(run(store().delete_webhook(a.id, w.id)).error(), errc::not_found);
    EXPECT_EQ(run(store().list_webhooks({.account_id = a.id}))->total, 3);
}

// A claimed delivery is leased; a failed attempt comes back when due, with its count; a
// success ends it, as does giving up; the attempts are listed newest first.
TEST_P(StoreContract, DeliveriesAreLeasedAttemptedAndRecorded) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto w = make_webhook(acc, {EventKind::domain_verified, EventKind::domain_failed});
    const auto ev = raise_domain_event(d, EventKind::domain_verified, kT0 + 10);
    const auto gone = raise_domain_event(d, EventKind::domain_failed, kT0 + 11);
    EXPECT_EQ(run(store().webhook_backlog()).value(), 0)
        << "events not routed yet are no deliveries";
    ASSERT_EQ(route_all().size(), 2u);
    EXPECT_EQ(run(store().webhook_backlog()).value(), 2);

    auto due = run(store().claim_webhook_deliveries(kT0 + 20, 1, "n1", kT0 + 1000));
    ASSERT_TRUE(due) << due.error().message();
    ASSERT_EQ(due->size(), 1u) << "the limit";
    const auto got = due->front();
    EXPECT_EQ(got.event_id, ev.id) << "oldest first";
    EXPECT_EQ(got.webhook_id, w.id);
    EXPECT_EQ(got.url, w.url);
    EXPECT_EQ(got.secret, w.secret);
    EXPECT_EQ(got.event_kind, EventKind::domain_verified);
    EXPECT_FALSE(got.email_id);
    EXPECT_EQ(got.data_json, ev.data_json);
    EXPECT_EQ(got.event_created_at, kT0 + 10);
    EXPECT_EQ(got.attempts, 0);
    auto second = run(store().claim_webhook_deliveries(kT0 + 20, 10, "n1", kT0 + 1000));
    ASSERT_EQ(second->size(), 1u);
    EXPECT_EQ(second->front().event_id, gone.id);
    EXPECT_TRUE(run(store().claim_webhook_deliveries(kT0 + 999, 10, "n2", kT0 + 2000))->empty())
        << "leased";

    ASSERT_TRUE(run(store().record_webhook_attempt({.delivery_id = got.delivery_id,
                                                    .attempt = 1,
                                                    .status_code = 500,
                                                    .duration_ms = 12,
                                                    .at = kT0 + 30,
                                                    .next_attempt_at = kT0 + 40})));
    ASSERT_TRUE(run(store().record_webhook_attempt({.delivery_id = second->front().delivery_id,
                                                    .attempt = 1,
                                                    .error = "connect: refused",
                                                    .duration_ms = 3,
                                                    .at = kT0 + 31})));  // given up
    EXPECT_TRUE(run(store().claim_webhook_deliveries(kT0 + 39, 10, "n1", kT0 + 1000))->empty())
        << "the retry is not due yet, its lease lifted or not";
    EXPECT_EQ(run(store().webhook_backlog()).value(), 1)
        << "the retry waits; the given-up one is out";
    auto again = run(store().claim_webhook_deliveries(kT0 + 40, 10, "n2", kT0 + 2000));
    ASSERT_EQ(again->size(), 1u) << "due again (the lease went with the attempt)";
    EXPECT_EQ(again->front().delivery_id, got.delivery_id);
    EXPECT_EQ(again->front().attempts, 1);
    ASSERT_TRUE(run(store().record_webhook_attempt({.delivery_id = got.delivery_id,
                                                    .attempt = 2,
                                                    .status_code = 204,
                                                    .duration_ms = 5,
                                                    .at = kT0 + 50,
                                                    .delivered = true})));
    EXPECT_EQ(run(store().webhook_backlog()).value(), 0);
    EXPECT_TRUE(
        run(store().claim_webhook_deliveries(kT0 + 100'000'000, 10, "n3", kT0 + 200'000'000))
            ->empty())
        << "done, and given up: never again";

    auto attempts = run(store().list_webhook_attempts(acc.id, w.id, 1, 10));
    ASSERT_TRUE(attempts) << attempts.error().message();
    ASSERT_EQ(attempts->total, 3);
    ASSERT_EQ(attempts->items.size(), 3u);
    const auto& last = attempts->items[0];
    EXPECT_EQ(last.event_id, ev.id) << "newest first";
    EXPECT_EQ(last.event_kind, EventKind::domain_verified);
    EXPECT_EQ(last.attempt, 2);
    EXPECT_EQ(last.status_code, 204);
    EXPECT_FALSE(last.error);
    EXPECT_EQ(last.duration_ms, 5);
    EXPECT_EQ(last.created_at, kT0 + 50);
    EXPECT_EQ(attempts->items[1].event_id, gone.id);
    EXPECT_EQ(attempts->items[1].event_kind, EventKind::domain_failed);
    EXPECT_FALSE(attempts->items[1].status_code);
    EXPECT_EQ(attempts->items[1].error, "connect: refused");
    EXPECT_EQ(attempts->items[2].status_code, 500);
    auto paged = run(store().list_webhook_attempts(acc.id, w.id, 2, 2));
    ASSERT_EQ(paged->items.size(), 1u);
    EXPECT_EQ(paged->items[0].created_at, kT0 + 30);
    EXPECT_EQ(paged->total, 3);
}

// A rotation makes the new secret the webhook's and keeps the one it replaced, with its
// time, for the deliveries claimed after it; another rotation replaces that one again.
TEST_P(StoreContract, ARotatedSecretKeepsThePreviousOneUntilItsTime) {
    const auto acc = make_account("acme");
    const auto other = make_account("other");
    const auto d = make_domain(acc);
    const auto w = make_webhook(acc, {EventKind::domain_verified});
    const std::string fresh("new\0key", 7);
    EXPECT_EQ(run(store().rotate_webhook_secret(other.id, w.id, fresh, kT0 + 500, kT0 + 5)).error(),
              errc::not_found)
        << "another account's webhook";
    EXPECT_EQ(run(store().find_webhook(acc.id, w.id))->secret, w.secret) << "unchanged";
    EXPECT_TRUE(run(store().find_webhook(acc.id, w.id))->previous_secret.empty());

    auto rotated = run(store().rotate_webhook_secret(acc.id, w.id, fresh, kT0 + 500, kT0 + 5));
    ASSERT_TRUE(rotated) << rotated.error().message();
    EXPECT_EQ(rotated->secret, fresh) << "byte for byte";
    EXPECT_EQ(rotated->previous_secret, w.secret);
    EXPECT_EQ(rotated->previous_secret_until, kT0 + 500);
    EXPECT_EQ(rotated->updated_at, kT0 + 5);
    const auto found = run(store().find_webhook(acc.id, w.id));
    EXPECT_EQ(found->secret, fresh);
    EXPECT_EQ(found->previous_secret, w.secret);

    raise_domain_event(d, EventKind::domain_verified, kT0 + 10);
    ASSERT_EQ(route_all().size(), 1u);
    auto due = run(store().claim_webhook_deliveries(kT0 + 20, 10, "n1", kT0 + 1000));
    ASSERT_EQ(due->size(), 1u);
    EXPECT_EQ(due->front().secret, fresh);
    EXPECT_EQ(due->front().previous_secret, w.secret);
    EXPECT_EQ(due->front().previous_secret_until, kT0 + 500);

    auto twice = run(store().rotate_webhook_secret(acc.id, w.id, "third", kT0 + 900, kT0 + 6));
    ASSERT_TRUE(twice);
    EXPECT_EQ(twice->secret, "third");
    EXPECT_EQ(twice->previous_secret, fresh) << "the first secret is gone";
    EXPECT_EQ(twice->previous_secret_until, kT0 + 900);
}

// A replay makes one delivery pending again whatever became of it, or every delivery given
// up since a time; the attempts made before stay listed.
TEST_P(StoreContract, ReplayedDeliveriesArePendingAgain) {
    const auto acc = make_account("acme");
    const auto other = make_account("other");
    const auto d = make_domain(acc);
    const auto w = make_webhook(acc, {EventKind::domain_verified, EventKind::domain_failed});
    const auto w2 = make_webhook(acc, {EventKind::domain_failed});
    const auto ok = raise_domain_event(d, EventKind::domain_verified, kT0 + 10);
    const auto old_fail = raise_domain_event(d, EventKind::domain_failed, kT0 + 11);
    const auto new_fail = raise_domain_event(d, EventKind::domain_failed, kT0 + 20);
    ASSERT_EQ(route_all().size(), 3u);
    // Every delivery attempted once: the first done, the others (both webhooks') given up.
    auto due = run(store().claim_webhook_deliveries(kT0 + 30, 10, "n1", kT0 + 1000));
    ASSERT_EQ(due->size(), 5u);
    for (const auto& x : *due)
        ASSERT_TRUE(
            run(store().record_webhook_attempt({.delivery_id = x.delivery_id,
                                                .attempt = 1,
                                                .status_code = x.event_id == ok.id ? 200 : 500,
                                                .at = kT0 + 31,
                                                .delivered = x.event_id == ok.id})));
    EXPECT_EQ(run(store().webhook_backlog()).value(), 0);

    WebhookReplay since{.failed_since = kT0 + 15};
    EXPECT_EQ(run(store().replay_webhook_deliveries(other.id, w.id, since, kT0 + 40)).error(),
              errc::not_found)
        << "another account's webhook";
    WebhookReplay unknown{.event_id = "evt_nope"};
    EXPECT_EQ(run(store().replay_webhook_deliveries(acc.id, w.id, unknown, kT0 + 40)).error(),
              errc::not_found);

    auto n = run(store().replay_webhook_deliveries(acc.id, w.id, since, kT0 + 40));
    ASSERT_TRUE(n) << n.error().message();
    EXPECT_EQ(*n, 1) << "the failed delivery of w since then, not the older one nor w2's";
    auto again = run(store().claim_webhook_deliveries(kT0 + 40, 10, "n2", kT0 + 2000));
    ASSERT_EQ(again->size(), 1u);
    EXPECT_EQ(again->front().event_id, new_fail.id);
    EXPECT_EQ(again->front().webhook_id, w.id);
    EXPECT_EQ(again->front().attempts, 0) << "tried afresh, on the retry schedule";

    WebhookReplay one{.event_id = ok.id};
    n = run(store().replay_webhook_deliveries(acc.id, w.id, one, kT0 + 50));
    ASSERT_TRUE(n) << n.error().message();
    EXPECT_EQ(*n, 1) << "a delivery that was done";
    auto replayed = run(store().claim_webhook_deliveries(kT0 + 50, 10, "n2", kT0 + 2000));
    ASSERT_EQ(replayed->size(), 1u);
    EXPECT_EQ(replayed->front().event_id, ok.id);
    EXPECT_EQ(run(store().list_webhook_attempts(acc.id, w.id, 1, 10))->total, 3)
        << "the attempts made before stay";
    EXPECT_TRUE(run(store().claim_webhook_deliveries(kT0 + 1500, 10, "n3", kT0 + 3000))->empty())
        << "the older failure (" << old_fail.id << ") and w2's stay given up";
    EXPECT_EQ(run(store().list_webhook_attempts(acc.id, w2.id, 1, 10))->total, 2);
}

// Deleting a webhook deletes its deliveries (an attempt recorded for one afterwards is not
// an error); another webhook's stay.
TEST_P(StoreContract, DeletingAWebhookDeletesItsDeliveries) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto doomed = make_webhook(acc, {EventKind::domain_verified});
    const auto kept = make_webhook(acc, {EventKind::domain_verified});
    const auto ev = raise_domain_event(d, EventKind::domain_verified, kT0 + 10);
    route_all();
    auto due = run(store().claim_webhook_deliveries(kT0 + 20, 10, "n1", kT0 + 1000));
    ASSERT_EQ(ids(*due),
              (std::vector<std::string>{ev.id + " " + doomed.id, ev.id + " " + kept.id}));
    const auto of_doomed =
        due->at(0).webhook_id == doomed.id ? due->at(0).delivery_id : due->at(1).delivery_id;
    ASSERT_TRUE(run(store().release_webhook_leases("n1")));
    ASSERT_TRUE(run(store().delete_webhook(acc.id, doomed.id)));
    EXPECT_TRUE(run(store().record_webhook_attempt({.delivery_id = of_doomed,
                                                    .attempt = 1,
                                                    .status_code = 200,
                                                    .at = kT0 + 30,
                                                    .delivered = true})));
    auto left = run(store().claim_webhook_deliveries(kT0 + 40, 10, "n2", kT0 + 1000));
    ASSERT_TRUE(left);
    EXPECT_EQ(ids(*left), std::vector<std::string>{ev.id + " " + kept.id});
    EXPECT_EQ(run(store().list_webhook_attempts(acc.id, doomed.id, 1, 10)).error(),
              errc::not_found);
    EXPECT_EQ(run(store().list_webhook_attempts(acc.id, kept.id, 1, 10))->total, 0);
}

// release_webhook_leases(owner) lifts that owner's leases only: another node's stay.
TEST_P(StoreContract, ReleasingLiftsOnlyTheOwnersWebhookLeases) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    make_webhook(acc, {EventKind::domain_verified, EventKind::domain_failed});
    for (int i = 0; i < 5; ++i)
        raise_domain_event(d, i % 2 ? EventKind::domain_failed : EventKind::domain_verified,
                           kT0 + i);
    route_all();
    auto mine = run(store().claim_webhook_deliveries(kT0 + 10, 2, "n1", kT0 + 100'000));
    ASSERT_EQ(mine->size(), 2u);
    auto& node = another_node();
    auto theirs = run(node.claim_webhook_deliveries(kT0 + 10, 10, "n2", kT0 + 100'000));
    ASSERT_TRUE(theirs) << theirs.error().message();
    ASSERT_EQ(theirs->size(), 3u) << "every claimed delivery is leased, not only the first";
    auto lifted = run(store().release_webhook_leases("n1"));
    ASSERT_TRUE(lifted);
    EXPECT_EQ(*lifted, 2);
    auto again = run(node.claim_webhook_deliveries(kT0 + 20, 10, "n3", kT0 + 100'000));
    EXPECT_EQ(ids(*again), ids(*mine));
    EXPECT_EQ(*run(store().release_webhook_leases("n1")), 0);
    EXPECT_EQ(*run(node.release_webhook_leases("n2")), 3);
}

// The deliveries of an inactive webhook wait; they go once it is active again.
TEST_P(StoreContract, DeliveriesOfAnInactiveWebhookWait) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto w = make_webhook(acc, {EventKind::domain_verified});
    raise_domain_event(d, EventKind::domain_verified, kT0 + 1);
    route_all();
    ASSERT_TRUE(run(store().update_webhook(acc.id, w.id, {.active = false}, kT0 + 2)));
    EXPECT_TRUE(run(store().claim_webhook_deliveries(kT0 + 10, 10, "n", kT0 + 1000))->empty());
    ASSERT_TRUE(run(store().update_webhook(acc.id, w.id, {.active = true}, kT0 + 3)));
    EXPECT_EQ(run(store().claim_webhook_deliveries(kT0 + 10, 10, "n", kT0 + 1000))->size(), 1u);
}

}  // namespace
}  // namespace posthorn::store::contract
