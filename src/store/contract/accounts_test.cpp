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
    EXPECT_EQ(found->name, "") << "a key made without the new fields";
    EXPECT_EQ(found->permission, domain::KeyPermission::full);
    EXPECT_FALSE(found->domain_id);
    EXPECT_FALSE(found->test);
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

// A key's name, permission, domain and test flag read back as written, by hash and listed.
TEST_P(StoreContract, KeysKeepTheirScope) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const ApiKey k{.id = id_at("key_", kT0 + 1),
                   .account_id = acc.id,
                   .prefix = "ph_eeee",
                   .hash = std::string(64, 'e'),
                   .created_at = kT0 + 1,
                   .name = "Grüße from the shop",
                   .permission = domain::KeyPermission::sending,
                   .domain_id = d.id,
                   .test = true};
    ASSERT_TRUE(run(store().create_api_key(k)));
    auto found = run(store().find_api_key(k.hash));
    ASSERT_TRUE(found) << found.error().message();
    EXPECT_EQ(found->name, k.name);
    EXPECT_EQ(found->permission, domain::KeyPermission::sending);
    EXPECT_EQ(found->domain_id, d.id);
    EXPECT_TRUE(found->test);
    auto listed = run(store().list_api_keys(acc.id));
    ASSERT_TRUE(listed);
    ASSERT_EQ(listed->size(), 1u);
    EXPECT_EQ(listed->at(0).name, k.name);
    EXPECT_EQ(listed->at(0).permission, domain::KeyPermission::sending);
    EXPECT_EQ(listed->at(0).domain_id, d.id);
    EXPECT_TRUE(listed->at(0).test);
}

// revoke_api_key_if: the check sees the key and every key of its account, as they stand; a
// refusal is errc::conflict and changes nothing; another account's key is not found.
TEST_P(StoreContract, AKeyIsRevokedOnlyIfTheCheckAllows) {
    const auto acc = make_account("acme");
    const auto other = make_account("other");
    auto key = [](const Account& a, char c, UnixMs at, domain::KeyPermission p) {
        return ApiKey{.id = id_at("key_", at),
                      .account_id = a.id,
                      .prefix = "ph_" + std::string(4, c),
                      .hash = std::string(64, c),
                      .created_at = at,
                      .permission = p};
    };
    const auto full = key(acc, '1', kT0 + 1, domain::KeyPermission::full);
    const auto sending = key(acc, '2', kT0 + 2, domain::KeyPermission::sending);
    const auto theirs = key(other, '3', kT0 + 3, domain::KeyPermission::full);
    for (const auto& k : {full, sending, theirs}) ASSERT_TRUE(run(store().create_api_key(k)));

    std::vector<std::string> seen;  // the ids the check was handed, and the key first
    KeyRevocationCheck refuse = [&seen](const ApiKey& k, const std::vector<ApiKey>& all) {
        seen.clear();
        seen.push_back(k.id);
        for (const auto& a : all) seen.push_back(a.id);
        return false;
    };
    auto refused = run(store().revoke_api_key_if(acc.id, full.id, kT0 + 10, refuse));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error(), errc::conflict);
    EXPECT_EQ(seen, (std::vector<std::string>{full.id, full.id, sending.id}))
        << "the key, then its account's keys only";
    EXPECT_FALSE(run(store().find_api_key(full.hash))->revoked_at) << "nothing changed";

    KeyRevocationCheck allow = [](const ApiKey&, const std::vector<ApiKey>&) { return true; };
    EXPECT_EQ(run(store().revoke_api_key_if(other.id, full.id, kT0 + 10, allow)).error(),
              errc::not_found)
        << "another account's key";
    EXPECT_EQ(run(store().revoke_api_key_if(acc.id, id_at("key_", kT0), kT0 + 10, allow)).error(),
              errc::not_found);
    EXPECT_FALSE(run(store().find_api_key(full.hash))->revoked_at);

    auto revoked = run(store().revoke_api_key_if(acc.id, sending.id, kT0 + 11, allow));
    ASSERT_TRUE(revoked) << revoked.error().message();
    EXPECT_EQ(revoked->id, sending.id);
    EXPECT_EQ(revoked->revoked_at, kT0 + 11);
    EXPECT_EQ(revoked->permission, domain::KeyPermission::sending);
    EXPECT_EQ(run(store().find_api_key(sending.hash))->revoked_at, kT0 + 11);

    seen.clear();
    auto again = run(store().revoke_api_key_if(acc.id, sending.id, kT0 + 12, refuse));
    ASSERT_TRUE(again) << "a revoked key is answered as it is";
    EXPECT_EQ(again->revoked_at, kT0 + 11) << "the first time stands";
    EXPECT_TRUE(seen.empty()) << "the check is not asked";

    // The revoked key is among those the next check sees, revoked.
    std::optional<UnixMs> sending_revoked;
    KeyRevocationCheck look = [&](const ApiKey&, const std::vector<ApiKey>& all) {
        for (const auto& a : all)
            if (a.id == sending.id) sending_revoked = a.revoked_at;
        return false;
    };
    EXPECT_EQ(run(store().revoke_api_key_if(acc.id, full.id, kT0 + 13, look)).error(),
              errc::conflict);
    EXPECT_EQ(sending_revoked, kT0 + 11);
    EXPECT_FALSE(run(store().find_api_key(theirs.hash))->revoked_at);
}

// Two nodes revoking at once each see what the other wrote: of an account's two full keys,
// revoked at the same time on two nodes under the last-full-key rule, one stays.
TEST_P(StoreContract, RevocationsOnTwoNodesSeeEachOther) {
    const auto acc = make_account("acme");
    std::vector<ApiKey> keys;
    for (int i = 0; i < 2; ++i)
        keys.push_back(ApiKey{.id = id_at("key_", kT0 + i),
                              .account_id = acc.id,
                              .prefix = "ph_k" + std::to_string(i),
                              .hash = std::string(63, 'a') + std::to_string(i),
                              .created_at = kT0 + i});
    for (const auto& k : keys) ASSERT_TRUE(run(store().create_api_key(k)));
    auto& node = another_node();
    KeyRevocationCheck rule = [](const ApiKey& k, const std::vector<ApiKey>& all) {
        return !domain::revocation_refusal(k, all);
    };
    std::vector<Result<ApiKey>> results(2, Result<ApiKey>(errc::io));
    std::thread t0(
        [&] { results[0] = run(store().revoke_api_key_if(acc.id, keys[0].id, kT0 + 5, rule)); });
    std::thread t1(
        [&] { results[1] = run(node.revoke_api_key_if(acc.id, keys[1].id, kT0 + 5, rule)); });
    t0.join();
    t1.join();
    const int ok = (results[0] ? 1 : 0) + (results[1] ? 1 : 0);
    EXPECT_EQ(ok, 1) << "one revocation, one refusal";
    for (const auto& r : results) {
        if (!r) {
            EXPECT_EQ(r.error(), errc::conflict);
        }
    }
    auto listed = run(store().list_api_keys(acc.id));
    ASSERT_TRUE(listed);
    int live = 0;
    for (const auto& k : *listed) live += k.revoked_at ? 0 : 1;
    EXPECT_EQ(live, 1) << "one full key stays";
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
