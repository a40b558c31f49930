// The contract of SuppressionStore: an account's list read in pages with its filters, an
// entry added with its event once (an address suppressed already keeps its entry and raises
// nothing, whether the API or delivery adds it again), removed with its event, and the
// claim that follows either change.
#include <map>

#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

using domain::EventKind;
using domain::SuppressionReason;

Suppression entry(const Account& acc, std::string address, SuppressionReason reason, UnixMs at,
                  std::string email_id = {}) {
    return Suppression{.account_id = acc.id,
                       .address = std::move(address),
                       .reason = reason,
                       .email_id = std::move(email_id),
                       .created_at = at};
}

SuppressionRemoval removed_at(UnixMs at) {
    return [at](const Suppression& s) { return domain::suppression_removed(s, at); };
}

std::vector<std::string> addresses(const Page<Suppression>& page) {
    std::vector<std::string> out;
    for (const auto& s : page.items) out.push_back(s.address);
    return out;
}

TEST_P(StoreContract, ASuppressionIsAddedOnceAndRemovedWithItsEvents) {
    const auto acc = make_account("acme");
    const auto manual = entry(acc, "a@example.net", SuppressionReason::manual, kT0 + 1);
    const auto add = domain::suppression_added(manual);
    auto added = run(store().add_suppression(add));
    ASSERT_TRUE(added) << added.error().message();
    EXPECT_TRUE(added->added);
    EXPECT_EQ(added->entry, manual);
    auto found = run(store().find_suppression(acc.id, "a@example.net"));
    ASSERT_TRUE(found) << found.error().message();
    EXPECT_EQ(*found, manual);
    EXPECT_TRUE(found->email_id.empty()) << "added over the API: no email";

    // Again, with another reason: the entry stays as it was, and nothing is raised.
    auto again = run(store().add_suppression(domain::suppression_added(
        entry(acc, "a@example.net", SuppressionReason::unsubscribe, kT0 + 2))));
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_FALSE(again->added);
    EXPECT_EQ(again->entry, manual);
    EXPECT_EQ(*run(store().find_suppression(acc.id, "a@example.net")), manual);

    auto events = route_all();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].id, add.event.id);
    EXPECT_EQ(events[0].kind, EventKind::suppression_added);
    EXPECT_EQ(events[0].account_id, acc.id);
    EXPECT_EQ(events[0].email_id, std::nullopt);
    EXPECT_EQ(events[0].data_json, add.event.data_json);
    EXPECT_EQ(events[0].created_at, kT0 + 1);

    auto removed = run(store().remove_suppression(acc.id, "a@example.net", removed_at(kT0 + 5)));
    ASSERT_TRUE(removed) << removed.error().message();
    EXPECT_EQ(*removed, manual) << "the entry as it was";
    EXPECT_EQ(run(store().find_suppression(acc.id, "a@example.net")).error(), errc::not_found);
    events = route_all();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, EventKind::suppression_removed);
    EXPECT_EQ(events[0].created_at, kT0 + 5);
    EXPECT_EQ(events[0].data_json, domain::suppression_data(manual));

    // Gone: a second removal finds nothing and raises nothing; the address can be added anew.
    EXPECT_EQ(run(store().remove_suppression(acc.id, "a@example.net", removed_at(kT0 + 6))).error(),
              errc::not_found);
    EXPECT_TRUE(route_all().empty());
    auto anew = run(store().add_suppression(domain::suppression_added(
        entry(acc, "a@example.net", SuppressionReason::complaint, kT0 + 7))));
    ASSERT_TRUE(anew);
    EXPECT_TRUE(anew->added);
    EXPECT_EQ(run(store().find_suppression(acc.id, "a@example.net"))->reason,
              SuppressionReason::complaint);
}

TEST_P(StoreContract, EachAccountHasItsOwnSuppressionList) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    ASSERT_TRUE(run(store().add_suppression(
        domain::suppression_added(entry(a, "x@example.net", SuppressionReason::manual, kT0)))));
    EXPECT_EQ(run(store().find_suppression(b.id, "x@example.net")).error(), errc::not_found);
    EXPECT_EQ(run(store().remove_suppression(b.id, "x@example.net", removed_at(kT0 + 1))).error(),
              errc::not_found);
    auto of_b = run(store().list_suppressions(SuppressionQuery{.account_id = b.id}));
    ASSERT_TRUE(of_b);
    EXPECT_EQ(of_b->total, 0);
    EXPECT_TRUE(of_b->items.empty());
    // The same address in b: an entry of its own.
    auto added = run(store().add_suppression(
        domain::suppression_added(entry(b, "x@example.net", SuppressionReason::complaint, kT0))));
    ASSERT_TRUE(added);
    EXPECT_TRUE(added->added);
    EXPECT_EQ(run(store().find_suppression(a.id, "x@example.net"))->reason,
              SuppressionReason::manual);
    ASSERT_TRUE(run(store().remove_suppression(a.id, "x@example.net", removed_at(kT0 + 2))));
    EXPECT_TRUE(run(store().find_suppression(b.id, "x@example.net"))) << "b's stays";
}

TEST_P(StoreContract, SuppressionListsPageAndFilter) {
    const auto acc = make_account("acme");
    const auto other = make_account("other");
    // Five entries, one a millisecond; two share the last time (then by address).
    const std::vector<std::pair<std::string, SuppressionReason>> made = {
        {"ann@shop.example", SuppressionReason::hard_bounce},
        {"bob@mail.example", SuppressionReason::manual},
        {"carl@shop.example", SuppressionReason::complaint},
        {"dora@shop.example", SuppressionReason::hard_bounce},
        {"eve@mail.example", SuppressionReason::unsubscribe}};
    for (std::size_t i = 0; i < made.size(); ++i) {
        const auto at = kT0 + std::min<UnixMs>(static_cast<UnixMs>(i), 3);
        ASSERT_TRUE(run(store().add_suppression(
            domain::suppression_added(entry(acc, made[i].first, made[i].second, at)))));
    }
    ASSERT_TRUE(run(store().add_suppression(domain::suppression_added(
        entry(other, "zed@shop.example", SuppressionReason::manual, kT0)))));

    auto list = [&](SuppressionQuery q) {
        q.account_id = acc.id;
        auto page = run(store().list_suppressions(q));
        EXPECT_TRUE(page) << page.error().message();
        return page ? *page : Page<Suppression>{};
    };
    auto p = list({.page = 1, .limit = 2});
    EXPECT_EQ(p.total, 5);
    EXPECT_EQ(addresses(p), (std::vector<std::string>{"eve@mail.example", "dora@shop.example"}));
    EXPECT_EQ(p.items[0], entry(acc, "eve@mail.example", SuppressionReason::unsubscribe, kT0 + 3));
    p = list({.page = 3, .limit = 2});
    EXPECT_EQ(p.total, 5);
    EXPECT_EQ(addresses(p), std::vector<std::string>{"ann@shop.example"});
    p = list({.page = 4, .limit = 2});
    EXPECT_EQ(p.total, 5);
    EXPECT_TRUE(p.items.empty());
    p = list({.page = 1, .limit = 10, .order = SortOrder::asc});
    EXPECT_EQ(addresses(p),
              (std::vector<std::string>{"ann@shop.example", "bob@mail.example", "carl@shop.example",
                                        "dora@shop.example", "eve@mail.example"}));

    p = list({.limit = 10, .search = "shop.ex"});
    EXPECT_EQ(p.total, 3) << "not another account's";
    EXPECT_EQ(addresses(p), (std::vector<std::string>{"dora@shop.example", "carl@shop.example",
                                                      "ann@shop.example"}));
    p = list({.limit = 10, .search = "%"});
    EXPECT_EQ(p.total, 0) << "a substring, not a pattern";
    p = list({.limit = 10, .search = "_"});
    EXPECT_EQ(p.total, 0);
    p = list({.limit = 10, .reason = SuppressionReason::hard_bounce});
    EXPECT_EQ(addresses(p), (std::vector<std::string>{"dora@shop.example", "ann@shop.example"}));
    p = list({.limit = 1, .search = "a", .reason = SuppressionReason::hard_bounce});
    EXPECT_EQ(p.total, 2);
    EXPECT_EQ(addresses(p), std::vector<std::string>{"dora@shop.example"});
    p = list({.limit = 10, .search = "mail", .reason = SuppressionReason::complaint});
    EXPECT_EQ(p.total, 0);
}

// Delivery's hard bounces and complaints join the list through change_email, each with its
// suppression.added once; an address suppressed already keeps its first entry.
TEST_P(StoreContract, DeliverySuppressesOnceWithItsEvent) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    auto n = new_email(acc, d, 1, kT0);
    n.recipients[0].address = "Gone@example.net";
    const auto first = create(std::move(n));
    auto made = std::make_shared<std::vector<EmailChange>>();
    domain::Outcomes o{.recipients = {hard_bounced(find(acc.id, first).recipients[0])},
                       .at = kT0 + 10};
    ASSERT_TRUE(run(store().change_email(acc.id, first, true, apply(o, made))));
    ASSERT_EQ(made->size(), 1u);
    ASSERT_EQ(made->front().suppressions.size(), 1u);
    const auto& add = made->front().suppressions[0];

    auto found = run(store().find_suppression(acc.id, "gone@example.net"));
    ASSERT_TRUE(found) << found.error().message();
    EXPECT_EQ(found->reason, SuppressionReason::hard_bounce);
    EXPECT_EQ(found->email_id, first);
    EXPECT_EQ(found->created_at, kT0 + 10);
    auto events = route_all();
    std::map<EventKind, Event> by_kind;
    for (const auto& e : events) by_kind[e.kind] = e;
    ASSERT_EQ(events.size(), 2u);
    ASSERT_TRUE(by_kind.contains(EventKind::email_bounced));
    ASSERT_TRUE(by_kind.contains(EventKind::suppression_added));
    EXPECT_EQ(by_kind[EventKind::suppression_added].id, add.event.id);
    EXPECT_EQ(by_kind[EventKind::suppression_added].email_id, first);
    EXPECT_EQ(by_kind[EventKind::suppression_added].data_json, add.event.data_json);

    // A second email to it bounces too (it was on its way before): no second entry, no
    // second suppression.added.
    auto m = new_email(acc, d, 1, kT0 + 20);
    m.recipients[0].address = "gone@example.net";
    const auto second = create(std::move(m));
    domain::Outcomes o2{.recipients = {hard_bounced(find(acc.id, second).recipients[0])},
                        .at = kT0 + 30};
    ASSERT_TRUE(run(store().change_email(acc.id, second, true, apply(o2))));
    EXPECT_EQ(run(store().find_suppression(acc.id, "gone@example.net"))->email_id, first);
    events = route_all();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, EventKind::email_bounced);
}

// What claims see follows the list: an added address is marked, a removed one is not.
TEST_P(StoreContract, ClaimsFollowTheSuppressionList) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    ASSERT_TRUE(run(store().add_suppression(
        domain::suppression_added(entry(acc, "r0@example.net", SuppressionReason::manual, kT0)))));
    create(new_email(acc, d, 2, kT0 + 1));
    auto claimed = run(store().claim_due(kT0 + 100, 10, "n", kT0 + 10'000));
    ASSERT_TRUE(claimed) << claimed.error().message();
    ASSERT_EQ(claimed->size(), 1u);
    std::map<std::string, bool> suppressed;
    for (const auto& r : claimed->front().recipients) suppressed[r.address] = r.suppressed;
    EXPECT_TRUE(suppressed.at("r0@example.net"));
    EXPECT_FALSE(suppressed.at("r1@example.net"));

    ASSERT_TRUE(run(store().remove_suppression(acc.id, "r0@example.net", removed_at(kT0 + 200))));
    create(new_email(acc, d, 1, kT0 + 201));
    claimed = run(store().claim_due(kT0 + 300, 10, "n", kT0 + 10'000));
    ASSERT_TRUE(claimed) << claimed.error().message();
    ASSERT_EQ(claimed->size(), 1u);
    ASSERT_EQ(claimed->front().recipients.size(), 1u);
    EXPECT_FALSE(claimed->front().recipients[0].suppressed) << "removed: sent to again";
}

}  // namespace
}  // namespace posthorn::store::contract
