// The contract of DKIM rotation (DomainStore::start_dkim_rotation, finish_dkim_rotation,
// domains_rotating, domains_with_keys_before): a new key for the inactive selector waits,
// not signing, until the rotation is finished; one rotation at a time; every node sees the
// new active key once it is switched.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

using domain::DomainStatus;

Domain rotating_domain(const Account& a, const std::string& name, UnixMs at,
                       const std::string& token) {
    return Domain{.id = id_at("dom_", at),
                  .account_id = a.id,
                  .name = name,
                  .status = DomainStatus::verified,
                  .token = token,
                  .created_at = at,
                  .updated_at = at};
}

DkimKey dkim_key(const Domain& d, const std::string& selector, bool active, UnixMs at,
                 const std::string& pub) {
    return DkimKey{.id = id_at("dk_", at),
                   .domain_id = d.id,
                   .selector = selector,
                   .sealed_private_key = std::string("\0\x02 sealed ", 10) + pub,
                   .public_key = pub,
                   .active = active,
                   .created_at = at};
}

const DkimKey* active_key(const std::vector<DkimKey>& keys) {
    for (const auto& k : keys)
        if (k.active) return &k;
    return nullptr;
}

TEST_P(StoreContract, DkimRotationWaitsThenSwitches) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto d = rotating_domain(a, "mail.example.com", kT0, "tok-r");
    ASSERT_TRUE(run(store().create_domain(
        d, {dkim_key(d, "ph1", true, kT0, "old1"), dkim_key(d, "ph2", false, kT0 + 1, "old2")})));
    auto got = run(store().find_domain_by_id(a.id, d.id));
    ASSERT_TRUE(got);
    EXPECT_EQ(got->dkim_selector, "ph1");
    EXPECT_EQ(got->dkim_pending, "");
    EXPECT_FALSE(got->dkim_rotated_at);
    // Another node has the keys in memory, as the delivery engine would.
    auto& node = another_node();
    ASSERT_EQ(active_key(*run(node.dkim_keys(d.id)))->public_key, "old1");

    const auto fresh = dkim_key(d, "ph2", false, kT0 + 100, "new2");
    EXPECT_EQ(run(store().start_dkim_rotation(b.id, d.id, fresh)).error(), errc::not_found)
        << "not another account's";
    ASSERT_TRUE(run(store().start_dkim_rotation(a.id, d.id, fresh)));
    got = run(store().find_domain_by_id(a.id, d.id));
    EXPECT_EQ(got->dkim_selector, "ph1") << "the old key still signs";
    EXPECT_EQ(got->dkim_pending, "ph2");
    auto keys = run(store().dkim_keys(d.id));
    ASSERT_TRUE(keys);
    ASSERT_EQ(keys->size(), 2u);
    EXPECT_EQ((*keys)[1].public_key, "new2") << "the inactive selector's key is replaced";
    EXPECT_EQ((*keys)[1].id, fresh.id);
    EXPECT_EQ((*keys)[1].created_at, kT0 + 100);
    EXPECT_FALSE((*keys)[1].active);
    EXPECT_EQ(active_key(*keys)->public_key, "old1");
    bool zone_has_new = false;
    const auto zone = run(store().dkim_zone());
    ASSERT_TRUE(zone);
    for (const auto& z : *zone)
        if (z.public_key == "new2") zone_has_new = z.selector == "ph2" && z.token == "tok-r";
    EXPECT_TRUE(zone_has_new) << "the zone serves the new key at once";

    EXPECT_EQ(
        run(store().start_dkim_rotation(a.id, d.id, dkim_key(d, "ph2", false, kT0 + 150, "newer")))
            .error(),
        errc::conflict)
        << "one rotation at a time";
    EXPECT_EQ(active_key(*run(store().dkim_keys(d.id)))->public_key, "old1");
    EXPECT_EQ((*run(store().dkim_keys(d.id)))[1].public_key, "new2")
        << "the refused one changed nothing";

    auto rotating = run(store().domains_rotating(10));
    ASSERT_TRUE(rotating);
    ASSERT_EQ(rotating->size(), 1u);
    EXPECT_EQ((*rotating)[0].id, d.id);

    EXPECT_EQ(run(store().finish_dkim_rotation(d.id, "ph1", kT0 + 200)).error(), errc::not_found)
        << "no rotation to ph1 is pending";
    ASSERT_TRUE(run(store().finish_dkim_rotation(d.id, "ph2", kT0 + 200)));
    got = run(store().find_domain_by_id(a.id, d.id));
    EXPECT_EQ(got->dkim_selector, "ph2");
    EXPECT_EQ(got->dkim_pending, "");
    EXPECT_EQ(got->dkim_rotated_at, kT0 + 200);
    EXPECT_EQ(active_key(*run(store().dkim_keys(d.id)))->public_key, "new2") << "this node at once";
    EXPECT_TRUE(soon([&] {
        const auto seen = run(node.dkim_keys(d.id));  // kept: k points into it
        const auto* k = seen ? active_key(*seen) : nullptr;
        return k && k->public_key == "new2";
    })) << "another node within moments";
    int active = 0;
    const auto now_keys = run(store().dkim_keys(d.id));
    ASSERT_TRUE(now_keys);
    for (const auto& k : *now_keys) active += k.active ? 1 : 0;
    EXPECT_EQ(active, 1);
    EXPECT_TRUE(run(store().domains_rotating(10))->empty());
    EXPECT_EQ(run(store().finish_dkim_rotation(d.id, "ph2", kT0 + 300)).error(), errc::not_found)
        << "finished already";

    // The next rotation goes back to ph1, ph2 signing meanwhile.
    ASSERT_TRUE(
        run(store().start_dkim_rotation(a.id, d.id, dkim_key(d, "ph1", false, kT0 + 400, "new1"))));
    EXPECT_EQ(run(store().find_domain_by_id(a.id, d.id))->dkim_pending, "ph1");
    EXPECT_EQ(active_key(*run(store().dkim_keys(d.id)))->public_key, "new2");
    // The active selector's key cannot be replaced.
    ASSERT_TRUE(run(store().finish_dkim_rotation(d.id, "ph1", kT0 + 500)));
    EXPECT_EQ(
        run(store().start_dkim_rotation(a.id, d.id, dkim_key(d, "ph1", false, kT0 + 600, "bad")))
            .error(),
        errc::conflict);
    EXPECT_EQ(active_key(*run(store().dkim_keys(d.id)))->public_key, "new1");
}

TEST_P(StoreContract, DomainsWithOldKeysAreFound) {
    const auto a = make_account("a");
    auto old = rotating_domain(a, "old.example.com", kT0, "tok-o");
    auto young = rotating_domain(a, "young.example.com", kT0 + 1, "tok-y");
    auto pending = rotating_domain(a, "pending.example.com", kT0 + 2, "tok-p");
    pending.status = DomainStatus::pending;
    auto busy = rotating_domain(a, "busy.example.com", kT0 + 3, "tok-b");
    ASSERT_TRUE(run(store().create_domain(old, {dkim_key(old, "ph1", true, kT0, "o1"),
                                                dkim_key(old, "ph2", false, kT0 + 5000, "o2")})));
    ASSERT_TRUE(run(store().create_domain(young, {dkim_key(young, "ph1", true, kT0 + 5000, "y1"),
                                                  dkim_key(young, "ph2", false, kT0, "y2")})));
    ASSERT_TRUE(run(store().create_domain(pending, {dkim_key(pending, "ph1", true, kT0, "p1")})));
    ASSERT_TRUE(run(store().create_domain(
        busy, {dkim_key(busy, "ph1", true, kT0, "b1"), dkim_key(busy, "ph2", false, kT0, "b2")})));
    ASSERT_TRUE(run(
        store().start_dkim_rotation(a.id, busy.id, dkim_key(busy, "ph2", false, kT0 + 10, "b3"))));
    auto due = run(store().domains_with_keys_before(DomainStatus::verified, kT0 + 1000, 10));
    ASSERT_TRUE(due) << due.error().message();
    ASSERT_EQ(due->size(), 1u) << "only the verified one whose active key is old, not rotating";
    EXPECT_EQ((*due)[0].id, old.id);
    EXPECT_EQ(run(store().domains_with_keys_before(DomainStatus::verified, kT0 + 6000, 10))->size(),
              2u);
    EXPECT_EQ(run(store().domains_with_keys_before(DomainStatus::verified, kT0 + 6000, 1))->size(),
              1u);
}

}  // namespace
}  // namespace posthorn::store::contract
