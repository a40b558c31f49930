// The contract of AccountStore: accounts by their unique names, API keys by their hash.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

TEST_P(StoreContract, AccountNamesAreUnique) {
    const auto acme = make_account("acme");
    auto again = run(store().create_account({.id = id_at("acc_", kT0 + 1), .name = "acme"}));
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error(), errc::conflict);
    auto found = run(store().find_account_by_name("acme"));
    ASSERT_TRUE(found) << found.error().message();
    EXPECT_EQ(found->id, acme.id) << "the first one stays";
    EXPECT_EQ(found->name, "acme");
    EXPECT_EQ(found->created_at, kT0);
    EXPECT_EQ(run(store().find_account_by_name("nope")).error(), errc::not_found);
    EXPECT_EQ(run(store().find_account_by_name("ACME")).error(), errc::not_found)
        << "names are compared as they are";
    const auto other = make_account("acme2", kT0 + 5);
    EXPECT_EQ(run(store().find_account_by_name("acme2"))->id, other.id);
}

TEST_P(StoreContract, KeysAreFoundByHashAndRevokedOnce) {
    const auto acc = make_account("acme");
    const auto other = make_account("other");
    auto key = [](const Account& a, std::string hash, UnixMs at) {
        return ApiKey{.id = id_at("key_", at),
                      .account_id = a.id,
                      .prefix = "ph_" + hash.substr(0, 4),
                      .hash = std::move(hash),
                      .created_at = at};
    };
    const auto k1 = key(acc, std::string(64, 'a'), kT0 + 1);
    const auto k2 = key(acc, std::string(64, 'b'), kT0 + 2);
    const auto k3 = key(other, std::string(64, 'c'), kT0 + 3);
    for (const auto& k : {k2, k1, k3}) ASSERT_TRUE(run(store().create_api_key(k)));

    auto found = run(store().find_api_key(k1.hash));
    ASSERT_TRUE(found) << found.error().message();
    EXPECT_EQ(found->id, k1.id);
    EXPECT_EQ(found->account_id, acc.id);
    EXPECT_EQ(found->prefix, k1.prefix);
    EXPECT_EQ(found->hash, k1.hash);
    EXPECT_EQ(found->created_at, k1.created_at);
    EXPECT_FALSE(found->revoked_at);
    EXPECT_EQ(run(store().find_api_key(std::string(64, 'f'))).error(), errc::not_found);

    auto listed = run(store().list_api_keys(acc.id));
    ASSERT_TRUE(listed);
    ASSERT_EQ(listed->size(), 2u) << "the account's own keys only";
    EXPECT_EQ((*listed)[0].id, k1.id) << "in the order of their ids";
    EXPECT_EQ((*listed)[1].id, k2.id);
    EXPECT_TRUE(run(store().list_api_keys(id_at("acc_", kT0)))->empty());

    auto revoked = run(store().revoke_api_key(k1.id, kT0 + 77));
    ASSERT_TRUE(revoked) << revoked.error().message();
    EXPECT_EQ(revoked->id, k1.id);
    EXPECT_EQ(revoked->revoked_at, kT0 + 77);
    auto twice = run(store().revoke_api_key(k1.id, kT0 + 99));
    ASSERT_TRUE(twice);
    EXPECT_EQ(twice->revoked_at, kT0 + 77) << "the first revocation stands";
    EXPECT_EQ(run(store().revoke_api_key(id_at("key_", kT0), kT0)).error(), errc::not_found);
    auto after = run(store().find_api_key(k1.hash));
    ASSERT_TRUE(after) << "a revoked key is still found";
    EXPECT_EQ(after->revoked_at, kT0 + 77);
    EXPECT_FALSE(run(store().find_api_key(k2.hash))->revoked_at) << "the others stay";
    EXPECT_EQ(run(store().list_api_keys(acc.id))->at(0).revoked_at, kT0 + 77);
}

// A key revoked by one node is revoked for every node at once (whatever a node keeps in
// memory of the keys it has looked up).
TEST_P(StoreContract, ARevocationOnOneNodeHoldsOnEvery) {
    const auto acc = make_account("acme");
    const ApiKey k{.id = id_at("key_", kT0 + 1),
                   .account_id = acc.id,
                   .prefix = "ph_dddd",
                   .hash = std::string(64, 'd'),
                   .created_at = kT0 + 1};
    ASSERT_TRUE(run(store().create_api_key(k)));
    ASSERT_FALSE(run(store().find_api_key(k.hash))->revoked_at);
    auto& node = another_node();
    ASSERT_FALSE(run(node.find_api_key(k.hash))->revoked_at);
    ASSERT_TRUE(run(node.revoke_api_key(k.id, kT0 + 5)));
    EXPECT_EQ(run(node.find_api_key(k.hash))->revoked_at, kT0 + 5) << "the node that revoked";
    EXPECT_TRUE(soon([&] { return run(store().find_api_key(k.hash))->revoked_at == kT0 + 5; }))
        << "the other node, within moments";
}

}  // namespace
}  // namespace posthorn::store::contract
