// The contract of the event outbox (WebhookStore::route_events): every event written — by
// change_email, create_inbound or record_domain_check — is handed once, oldest first, with
// its account's webhooks, to the product's router, and gets a pending delivery for each
// webhook the router answers; also when routers race on several nodes.
#include <map>
#include <mutex>
#include <set>

#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

using domain::EventKind;

struct Handed {
    std::string event_id;
    std::set<std::string> webhooks;  // the ids the router was given
};

TEST_P(StoreContract, EventsAreRoutedOnceWithTheirAccountsWebhooks) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto da = make_domain(a);
    const auto db = make_domain(b);
    const auto wanted = make_webhook(a, {EventKind::domain_verified, EventKind::email_sent});
    const auto other_kind = make_webhook(a, {EventKind::email_sent});
    const auto inactive = make_webhook(a, {EventKind::domain_verified}, false);
    const auto of_b = make_webhook(b, {EventKind::domain_verified, EventKind::domain_failed});
    const auto e1 = raise_domain_event(da, EventKind::domain_verified, kT0 + 1);
    const auto e2 = raise_domain_event(db, EventKind::domain_failed, kT0 + 2);
    const auto e3 = raise_domain_event(da, EventKind::domain_failed, kT0 + 3);

    auto handed = std::make_shared<std::vector<Handed>>();
    EventRouter router = [handed](const Event& e, const std::vector<Webhook>& all) {
        Handed h{.event_id = e.id};
        for (const auto& w : all) h.webhooks.insert(w.id);
        handed->push_back(std::move(h));
        return domain::webhooks_for(e, all);
    };
    auto n = run(store().route_events(2, router));
    ASSERT_TRUE(n) << n.error().message();
    EXPECT_EQ(*n, 2) << "the limit";
    EXPECT_EQ(*run(store().route_events(10, router)), 1);
    EXPECT_EQ(*run(store().route_events(10, router)), 0);
    ASSERT_EQ(handed->size(), 3u) << "each event once";
    EXPECT_EQ((*handed)[0].event_id, e1.id) << "oldest first";
    EXPECT_EQ((*handed)[1].event_id, e2.id);
    EXPECT_EQ((*handed)[2].event_id, e3.id);
    const std::set<std::string> of_a{wanted.id, other_kind.id, inactive.id};
    EXPECT_EQ((*handed)[0].webhooks, of_a) << "all of its account's, active or not";
    EXPECT_EQ((*handed)[1].webhooks, std::set<std::string>{of_b.id});
    EXPECT_EQ((*handed)[2].webhooks, of_a);

    auto due = run(store().claim_webhook_deliveries(kT0 + 10, 10, "n", kT0 + 1000));
    ASSERT_TRUE(due) << due.error().message();
    std::set<std::string> got;
    for (const auto& d : *due) got.insert(d.event_id + " " + d.webhook_id);
    EXPECT_EQ(got, (std::set<std::string>{e1.id + " " + wanted.id, e2.id + " " + of_b.id}))
        << "a delivery for each webhook the router answered";
}

// What the router answers is all that is written: an id it answers gets a delivery even
// when the product's rules would not have chosen it, and an event it answers nothing for
// is routed all the same.
TEST_P(StoreContract, TheRoutersAnswerIsWhatIsWritten) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto w1 = make_webhook(acc, {EventKind::email_sent});
    const auto w2 = make_webhook(acc, {EventKind::email_sent});
    const auto e1 = raise_domain_event(d, EventKind::domain_verified, kT0 + 1);
    const auto e2 = raise_domain_event(d, EventKind::domain_verified, kT0 + 2);
    EventRouter only_first = [e1, w2](const Event& e, const std::vector<Webhook>&) {
        return e.id == e1.id ? std::vector<std::string>{w2.id} : std::vector<std::string>{};
    };
    EXPECT_EQ(*run(store().route_events(10, only_first)), 2);
    auto due = run(store().claim_webhook_deliveries(kT0 + 10, 10, "n", kT0 + 1000));
    ASSERT_EQ(due->size(), 1u);
    EXPECT_EQ(due->front().event_id, e1.id);
    EXPECT_EQ(due->front().webhook_id, w2.id);
    EXPECT_TRUE(route_all().empty()) << "e2 was routed (to nobody)";
}

// Every writer of events writes them to the outbox, whole.
TEST_P(StoreContract, EventsOfEveryWriterAreRouted) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto id = create(new_email(acc, d, 1, kT0));
    const auto e = find(acc.id, id);
    auto made = std::make_shared<std::vector<EmailChange>>();
    domain::Outcomes o{.recipients = {delivered(e.recipients[0])}, .at = kT0 + 10};
    ASSERT_TRUE(run(store().change_email(acc.id, id, true, apply(o, made))));
    ASSERT_EQ(made->size(), 1u);
    ASSERT_EQ(made->front().events.size(), 2u);  // email.sent, email.delivered

    const auto received = domain::make_event(
        EventKind::inbound_received, acc.id, std::nullopt,
        domain::inbound_event_data({.id = "in_x", .from_email = "x@example.org"}), kT0 + 20);
    ASSERT_TRUE(run(store().create_inbound({}, {received})));
    const auto verified = raise_domain_event(d, EventKind::domain_verified, kT0 + 30);

    auto routed = route_all();
    ASSERT_EQ(routed.size(), 4u);
    std::vector<Event> want = made->front().events;
    want.push_back(received);
    want.push_back(verified);
    for (std::size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(routed[i].id, want[i].id);
        EXPECT_EQ(routed[i].account_id, acc.id);
        EXPECT_EQ(routed[i].kind, want[i].kind);
        EXPECT_EQ(routed[i].email_id, want[i].email_id);
        EXPECT_EQ(routed[i].data_json, want[i].data_json);
        EXPECT_EQ(routed[i].created_at, want[i].created_at);
    }
    EXPECT_EQ(routed[0].email_id, id);
}

// Routers racing on two nodes, four at a time on each, over 60 events (written on both):
// each event is routed once, and its delivery is written once.
TEST_P(StoreContract, ConcurrentRoutersRouteEachEventOnce) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto w = make_webhook(acc, {EventKind::domain_verified});
    auto& node = another_node();
    std::set<std::string> events;
    for (int i = 0; i < 60; ++i)
        events.insert(
            raise_domain_event(d, EventKind::domain_verified, kT0 + i, i % 2 ? &node : nullptr).id);

    auto mutex = std::make_shared<std::mutex>();
    auto seen = std::make_shared<std::map<std::string, int>>();
    EventRouter router = [mutex, seen](const Event& e, const std::vector<Webhook>& all) {
        std::lock_guard lock(*mutex);
        ++(*seen)[e.id];
        return domain::webhooks_for(e, all);
    };
    // Rounds of eight routers at once, four on each node, until a round routes nothing.
    int routed = 0;
    for (int last = -1, rounds = 0; last != 0 && rounds < 50; ++rounds) {
        std::vector<asio::awaitable<Result<int>>> round;
        for (int i = 0; i < 8; ++i)
            round.push_back((i % 2 ? node : store()).route_events(4, router));
        last = 0;
        for (const auto& n : run_all(std::move(round))) {
            ASSERT_TRUE(n) << n.error().message();
            last += *n;
        }
        routed += last;
    }
    EXPECT_EQ(routed, 60) << "each event counted once";
    std::set<std::string> handed;
    for (const auto& [id, n] : *seen) handed.insert(id);
    EXPECT_EQ(handed, events) << "every event was handed to a router";
    // (A router may run more than once for an event, as a decision may: what counts is what
    // was written.)

    auto due = run(store().claim_webhook_deliveries(kT0 + 100, 1000, "n", kT0 + 1000));
    ASSERT_TRUE(due);
    std::map<std::string, int> deliveries;
    for (const auto& dd : *due) {
        EXPECT_EQ(dd.webhook_id, w.id);
        ++deliveries[dd.event_id];
    }
    std::set<std::string> delivered;
    for (const auto& [id, n] : deliveries) {
        EXPECT_EQ(n, 1) << id;
        delivered.insert(id);
    }
    EXPECT_EQ(delivered, events);
}

TEST_P(StoreContract, TheEventListenerHearsOfNewEvents) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto id = create(new_email(acc, d, 1, kT0));
    auto heard = std::make_shared<std::atomic<int>>(0);
    store().set_event_listener([heard] { ++*heard; });
    auto open = [](const Email& e) {
        return std::optional(domain::engage(e, domain::Engagement::open, "{}", kT0 + 5));
    };
    ASSERT_TRUE(run(store().change_email(acc.id, id, false, open)));
    EXPECT_TRUE(eventually([&] { return *heard >= 1; })) << "change_email";
    int before = *heard;
    const auto ev =
        domain::make_event(EventKind::inbound_received, acc.id, std::nullopt, "{}", kT0 + 6);
    ASSERT_TRUE(run(store().create_inbound({}, {ev})));
    EXPECT_TRUE(eventually([&] { return *heard > before; })) << "create_inbound";
    before = *heard;
    raise_domain_event(d, EventKind::domain_verified, kT0 + 7);
    EXPECT_TRUE(eventually([&] { return *heard > before; })) << "record_domain_check";
}

}  // namespace
}  // namespace posthorn::store::contract
