// The contract of SessionStore: the dashboard's sessions, found by the hash of their id with
// their key as it stands, shared by every node, deleted one by one or once expired.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

TEST_P(StoreContract, DashboardSessionsAreFoundWithTheirKeyAndDeleted) {
    const auto acc = make_account("acme");
    const ApiKey key{.id = id_at("key_", kT0 + 1),
                     .account_id = acc.id,
                     .prefix = "ph_aaaa",
                     .hash = std::string(64, 'a'),
                     .created_at = kT0 + 1,
                     .name = "dash",
                     .permission = domain::KeyPermission::sending};
    ASSERT_TRUE(run(store().create_api_key(key)));
    const DashboardSession s{.id_hash = std::string(64, '1'),
                             .account_id = acc.id,
                             .key_id = key.id,
                             .csrf_token = "csrf-one",
                             .created_at = kT0 + 10,
                             .expires_at = kT0 + 1000};
    auto made = run(store().create_session(s));
    ASSERT_TRUE(made) << made.error().message();
    auto again = run(store().create_session(s));
    ASSERT_FALSE(again) << "one session per id";
    EXPECT_EQ(again.error(), errc::conflict);

    // Another node sees it at once.
    auto found = run(another_node().find_session(s.id_hash));
    ASSERT_TRUE(found) << found.error().message();
    EXPECT_EQ(found->session.id_hash, s.id_hash);
    EXPECT_EQ(found->session.account_id, acc.id);
    EXPECT_EQ(found->session.key_id, key.id);
    EXPECT_EQ(found->session.csrf_token, "csrf-one");
    EXPECT_EQ(found->session.created_at, kT0 + 10);
    EXPECT_EQ(found->session.expires_at, kT0 + 1000);
    EXPECT_EQ(found->key.id, key.id);
    EXPECT_EQ(found->key.name, "dash");
    EXPECT_EQ(found->key.permission, domain::KeyPermission::sending);
    EXPECT_FALSE(found->key.revoked_at);
    EXPECT_EQ(run(store().find_session(std::string(64, '2'))).error(), errc::not_found);

    // The key as it stands: revoked, the session says so (the caller refuses it).
    ASSERT_TRUE(run(store().revoke_api_key(key.id, kT0 + 20)));
    found = run(store().find_session(s.id_hash));
    ASSERT_TRUE(found);
    EXPECT_EQ(found->key.revoked_at, std::optional<UnixMs>(kT0 + 20));

    auto gone = run(store().delete_session(s.id_hash));
    ASSERT_TRUE(gone);
    EXPECT_TRUE(*gone);
    EXPECT_EQ(run(another_node().find_session(s.id_hash)).error(), errc::not_found);
    gone = run(store().delete_session(s.id_hash));
    ASSERT_TRUE(gone);
    EXPECT_FALSE(*gone) << "deleted already";
}

TEST_P(StoreContract, ExpiredDashboardSessionsArePurged) {
    const auto acc = make_account("acme");
    const ApiKey key{.id = id_at("key_", kT0 + 1),
                     .account_id = acc.id,
                     .prefix = "ph_bbbb",
                     .hash = std::string(64, 'b'),
                     .created_at = kT0 + 1};
    ASSERT_TRUE(run(store().create_api_key(key)));
    auto session = [&](char c, UnixMs expires) {
        return DashboardSession{.id_hash = std::string(64, c),
                                .account_id = acc.id,
                                .key_id = key.id,
                                .csrf_token = std::string(1, c),
                                .created_at = kT0,
                                .expires_at = expires};
    };
    for (const auto& s :
         {session('1', kT0 + 100), session('2', kT0 + 200), session('3', kT0 + 300)})
        ASSERT_TRUE(run(store().create_session(s)));
    auto purged = run(store().delete_expired_sessions(kT0 + 200));
    ASSERT_TRUE(purged) << purged.error().message();
    EXPECT_EQ(*purged, 2) << "expired at or before the time";
    EXPECT_EQ(run(store().find_session(std::string(64, '1'))).error(), errc::not_found);
    EXPECT_EQ(run(store().find_session(std::string(64, '2'))).error(), errc::not_found);
    EXPECT_TRUE(run(store().find_session(std::string(64, '3'))));
    purged = run(store().delete_expired_sessions(kT0 + 200));
    ASSERT_TRUE(purged);
    EXPECT_EQ(*purged, 0);
}

}  // namespace
}  // namespace posthorn::store::contract
