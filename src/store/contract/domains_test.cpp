// The contract of DomainStore (and InboundStore::inbound_domains): sending domains with
// their DKIM keys, scoped to their account, their settings and verification outcomes, and
// the background checks that come due.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

using domain::DomainStatus;

Domain domain_of(const Account& a, const std::string& name, UnixMs at, const std::string& token) {
    return Domain{.id = id_at("dom_", at),
                  .account_id = a.id,
                  .name = name,
                  .token = token,
                  .created_at = at,
                  .updated_at = at};
}

DkimKey key_of(const Domain& d, const std::string& selector, bool active, UnixMs at) {
    // The sealed key is bytes (nonce, ciphertext, tag): NULs and high bytes included.
    return DkimKey{.id = id_at("dk_", at),
                   .domain_id = d.id,
                   .selector = selector,
                   .sealed_private_key = std::string("\0\x01\xfe\xff sealed ", 12) + selector,
                   .public_key = "MIIBIjANBg" + selector,
                   .active = active,
                   .created_at = at};
}

TEST_P(StoreContract, DomainsAreCreatedWithTheirKeys) {
    const auto acc = make_account("acme");
    auto d = domain_of(acc, "mail.example.com", kT0 + 1, "tok-a");
    d.status = DomainStatus::pending;
    d.sending = false;
    d.inbound = true;
    d.open_tracking = true;
    d.records_json = R"({"dkim":[]})";
    const auto k2 = key_of(d, "ph2", false, kT0 + 1);
    const auto k1 = key_of(d, "ph1", true, kT0 + 1);
    ASSERT_TRUE(run(store().create_domain(d, {k2, k1})));

    auto found = run(store().find_domain_by_id(acc.id, d.id));
    ASSERT_TRUE(found) << found.error().message();
    EXPECT_EQ(found->id, d.id);
    EXPECT_EQ(found->account_id, acc.id);
    EXPECT_EQ(found->name, "mail.example.com");
    EXPECT_EQ(found->status, DomainStatus::pending);
    EXPECT_EQ(found->token, "tok-a");
    EXPECT_FALSE(found->sending);
    EXPECT_TRUE(found->inbound);
    EXPECT_TRUE(found->open_tracking);
    EXPECT_FALSE(found->click_tracking);
    EXPECT_EQ(found->records_json, R"({"dkim":[]})");
    EXPECT_FALSE(found->first_verify_at);
    EXPECT_FALSE(found->last_checked_at);
    EXPECT_FALSE(found->next_check_at);
    EXPECT_FALSE(found->verified_at);
    EXPECT_EQ(found->created_at, kT0 + 1);
    EXPECT_EQ(found->updated_at, kT0 + 1);

    auto keys = run(store().dkim_keys(d.id));
    ASSERT_TRUE(keys) << keys.error().message();
    ASSERT_EQ(keys->size(), 2u);
    EXPECT_EQ((*keys)[0].selector, "ph1") << "by selector";
    EXPECT_EQ((*keys)[0].id, k1.id);
    EXPECT_EQ((*keys)[0].domain_id, d.id);
    EXPECT_EQ((*keys)[0].sealed_private_key, k1.sealed_private_key) << "byte for byte";
    EXPECT_EQ((*keys)[0].public_key, k1.public_key);
    EXPECT_TRUE((*keys)[0].active);
    EXPECT_EQ((*keys)[0].created_at, kT0 + 1);
    EXPECT_EQ((*keys)[1].selector, "ph2");
    EXPECT_FALSE((*keys)[1].active);
    EXPECT_TRUE(run(store().dkim_keys(id_at("dom_", kT0)))->empty());
}

// A name is unique within an account (the failed create writes none of its keys), not
// across accounts; a domain is found by id or name only in its own account.
TEST_P(StoreContract, DomainNamesAreUniquePerAccount) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto da = domain_of(a, "mail.example.com", kT0 + 1, "tok-a");
    ASSERT_TRUE(run(store().create_domain(da, {key_of(da, "ph1", true, kT0 + 1)})));
    const auto again = domain_of(a, "mail.example.com", kT0 + 2, "tok-a2");
    auto conflict = run(store().create_domain(again, {key_of(again, "ph1", true, kT0 + 2)}));
    ASSERT_FALSE(conflict);
    EXPECT_EQ(conflict.error(), errc::conflict);
    EXPECT_TRUE(run(store().dkim_keys(again.id))->empty()) << "nothing of it is kept";
    EXPECT_EQ(run(store().find_domain_by_id(a.id, again.id)).error(), errc::not_found);
    const auto db = domain_of(b, "mail.example.com", kT0 + 3, "tok-b");
    ASSERT_TRUE(run(store().create_domain(db, {})));

    EXPECT_EQ(run(store().find_domain_by_name(a.id, "mail.example.com"))->id, da.id);
    EXPECT_EQ(run(store().find_domain_by_name(b.id, "mail.example.com"))->id, db.id);
    EXPECT_EQ(run(store().find_domain_by_id(b.id, db.id))->account_id, b.id);
    EXPECT_EQ(run(store().find_domain_by_id(b.id, da.id)).error(), errc::not_found);
    EXPECT_EQ(run(store().find_domain_by_id(a.id, db.id)).error(), errc::not_found);
    EXPECT_EQ(run(store().find_domain_by_name(a.id, "other.example.com")).error(), errc::not_found);
    auto c = make_account("c");
    EXPECT_EQ(run(store().find_domain_by_name(c.id, "mail.example.com")).error(), errc::not_found);
}

TEST_P(StoreContract, DomainsAreListedByPages) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    std::vector<std::string> ids;  // oldest first
    for (int i = 0; i < 5; ++i) {
        auto d = domain_of(a, "d" + std::to_string(i) + ".example.com", kT0 + 10 * i,
                           "tok" + std::to_string(i));
        ids.push_back(d.id);
        ASSERT_TRUE(run(store().create_domain(d, {})));
    }
    ASSERT_TRUE(run(store().create_domain(domain_of(b, "b.example.com", kT0 + 15, "tok-b"), {})));
    auto first = run(store().list_domains({.account_id = a.id, .limit = 2}));
    ASSERT_TRUE(first) << first.error().message();
    EXPECT_EQ(first->total, 5);
    ASSERT_EQ(first->items.size(), 2u);
    EXPECT_EQ(first->items[0].id, ids[4]) << "newest first by default";
    EXPECT_EQ(first->items[1].id, ids[3]);
    auto third = run(store().list_domains({.account_id = a.id, .page = 3, .limit = 2}));
    ASSERT_EQ(third->items.size(), 1u);
    EXPECT_EQ(third->items[0].id, ids[0]);
    auto asc = run(
        store().list_domains({.account_id = a.id, .page = 2, .limit = 2, .order = SortOrder::asc}));
    ASSERT_EQ(asc->items.size(), 2u);
    EXPECT_EQ(asc->items[0].id, ids[2]);
    EXPECT_EQ(asc->items[1].id, ids[3]);
    auto beyond = run(store().list_domains({.account_id = a.id, .page = 4, .limit = 2}));
    EXPECT_TRUE(beyond->items.empty());
    EXPECT_EQ(beyond->total, 5);
    EXPECT_EQ(run(store().list_domains({.account_id = b.id}))->total, 1);
}

TEST_P(StoreContract, SettingsChangeOnlyWhatIsSet) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto d = domain_of(a, "mail.example.com", kT0, "tok-a");
    ASSERT_TRUE(run(store().create_domain(d, {})));
    ASSERT_TRUE(run(store().update_domain_settings(
        a.id, d.id, {.inbound = true, .click_tracking = true}, kT0 + 50)));
    auto got = run(store().find_domain_by_id(a.id, d.id));
    ASSERT_TRUE(got);
    EXPECT_TRUE(got->sending) << "unset: kept";
    EXPECT_TRUE(got->inbound);
    EXPECT_FALSE(got->open_tracking);
    EXPECT_TRUE(got->click_tracking);
    EXPECT_EQ(got->updated_at, kT0 + 50);
    EXPECT_EQ(got->created_at, kT0);
    ASSERT_TRUE(run(store().update_domain_settings(a.id, d.id, {.sending = false}, kT0 + 60)));
    got = run(store().find_domain_by_name(a.id, d.name));
    EXPECT_FALSE(got->sending);
    EXPECT_TRUE(got->inbound);
    EXPECT_TRUE(got->click_tracking);
    EXPECT_EQ(run(store().update_domain_settings(b.id, d.id, {.sending = true}, kT0 + 70)).error(),
              errc::not_found);
    EXPECT_FALSE(run(store().find_domain_by_id(a.id, d.id))->sending) << "not another's to change";
    // What one node changes, another finds within moments (a node may keep domains in
    // memory until the change is announced to it); the node that changed it, at once.
    auto& node = another_node();
    ASSERT_TRUE(run(node.find_domain_by_name(a.id, d.name)));
    ASSERT_TRUE(run(store().find_domain_by_name(a.id, d.name)));
    ASSERT_TRUE(run(store().update_domain_settings(a.id, d.id, {.sending = true}, kT0 + 80)));
    EXPECT_TRUE(run(store().find_domain_by_name(a.id, d.name))->sending);
    EXPECT_TRUE(soon([&] { return run(node.find_domain_by_name(a.id, d.name))->sending; }));
}

TEST_P(StoreContract, ChecksAreRecordedAsTheyAre) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto d = domain_of(a, "mail.example.com", kT0, "tok-a");
    ASSERT_TRUE(run(store().create_domain(d, {})));
    DomainCheck pending{.account_id = a.id,
                        .domain_id = d.id,
                        .status = DomainStatus::pending,
                        .records_json = R"({"spf":"missing"})",
                        .checked_at = kT0 + 10,
                        .next_check_at = kT0 + 10 + kMinute,
                        .first_verify_at = kT0 + 10};
    ASSERT_TRUE(run(store().record_domain_check(pending)));
    auto got = run(store().find_domain_by_id(a.id, d.id));
    ASSERT_TRUE(got);
    EXPECT_EQ(got->status, DomainStatus::pending);
    EXPECT_EQ(got->records_json, R"({"spf":"missing"})");
    EXPECT_EQ(got->last_checked_at, kT0 + 10);
    EXPECT_EQ(got->next_check_at, kT0 + 10 + kMinute);
    EXPECT_EQ(got->first_verify_at, kT0 + 10);
    EXPECT_FALSE(got->verified_at);
    EXPECT_EQ(got->updated_at, kT0 + 10);
    EXPECT_TRUE(route_all().empty()) << "a check without an event raises none";

    const auto verified_event = domain::make_event(domain::EventKind::domain_verified, a.id,
                                                   std::nullopt, R"({"domain":"x"})", kT0 + 20);
    DomainCheck verified{.account_id = a.id,
                         .domain_id = d.id,
                         .status = DomainStatus::verified,
                         .records_json = R"({"spf":"ok"})",
                         .checked_at = kT0 + 20,
                         .first_verify_at = kT0 + 10,
                         .verified_at = kT0 + 20,
                         .event = verified_event};
    ASSERT_TRUE(run(store().record_domain_check(verified)));
    got = run(store().find_domain_by_name(a.id, d.name));
    EXPECT_EQ(got->status, DomainStatus::verified);
    EXPECT_EQ(got->records_json, R"({"spf":"ok"})");
    EXPECT_FALSE(got->next_check_at) << "no background re-check: as written";
    EXPECT_EQ(got->verified_at, kT0 + 20);
    auto events = route_all();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].id, verified_event.id);
    EXPECT_EQ(events[0].kind, domain::EventKind::domain_verified);
    EXPECT_FALSE(events[0].email_id);

    auto other = verified;
    other.account_id = b.id;
    other.event.reset();
    EXPECT_EQ(run(store().record_domain_check(other)).error(), errc::not_found);
}

// domains_due answers the domains whose check has come, of every account, oldest first;
// postponing moves the next check and nothing else.
TEST_P(StoreContract, ChecksComeDueOldestFirst) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    std::vector<Domain> ds;
    for (int i = 0; i < 4; ++i) {
        ds.push_back(domain_of(i % 2 ? b : a, "d" + std::to_string(i) + ".example.com", kT0 + i,
                               "tok" + std::to_string(i)));
        ASSERT_TRUE(run(store().create_domain(ds.back(), {})));
    }
    auto check = [&](const Domain& d, UnixMs next) {
        DomainCheck c{.account_id = d.account_id,
                      .domain_id = d.id,
                      .status = DomainStatus::pending,
                      .records_json = "{}",
                      .checked_at = kT0 + 100,
                      .next_check_at = next};
        EXPECT_TRUE(run(store().record_domain_check(c)));
    };
    check(ds[0], kT0 + 300);
    check(ds[1], kT0 + 200);
    check(ds[2], kT0 + 500);  // ds[3]: no check planned
    auto ids = [](const Result<std::vector<Domain>>& r) {
        std::vector<std::string> out;
        for (const auto& d : *r) out.push_back(d.id);
        return out;
    };
    EXPECT_TRUE(run(store().domains_due(kT0 + 199, 10))->empty());
    EXPECT_EQ(ids(run(store().domains_due(kT0 + 300, 10))),
              (std::vector<std::string>{ds[1].id, ds[0].id}))
        << "due at the time itself";
    EXPECT_EQ(ids(run(store().domains_due(kT0 + 1000, 2))),
              (std::vector<std::string>{ds[1].id, ds[0].id}));
    ASSERT_TRUE(run(store().postpone_domain_check(b.id, ds[1].id, kT0 + 400)));
    EXPECT_EQ(ids(run(store().domains_due(kT0 + 1000, 10))),
              (std::vector<std::string>{ds[0].id, ds[1].id, ds[2].id}));
    auto moved = run(store().find_domain_by_id(b.id, ds[1].id));
    EXPECT_EQ(moved->next_check_at, kT0 + 400);
    EXPECT_EQ(moved->last_checked_at, kT0 + 100) << "nothing else changes";
    EXPECT_EQ(moved->status, DomainStatus::pending);
    EXPECT_EQ(moved->updated_at, kT0 + 100);
}

TEST_P(StoreContract, TheZoneHoldsTheKeysOfEveryAccount) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto z = domain_of(a, "z.example.com", kT0 + 1, "tok-z");
    const auto y = domain_of(b, "y.example.com", kT0 + 2, "tok-y");
    const auto bare = domain_of(b, "bare.example.com", kT0 + 3, "tok-bare");
    ASSERT_TRUE(
        run(store().create_domain(z, {key_of(z, "s2", false, kT0), key_of(z, "s1", true, kT0)})));
    ASSERT_TRUE(run(store().create_domain(y, {key_of(y, "s1", true, kT0)})));
    ASSERT_TRUE(run(store().create_domain(bare, {})));
    auto zone = run(store().dkim_zone());
    ASSERT_TRUE(zone) << zone.error().message();
    ASSERT_EQ(zone->size(), 3u);
    EXPECT_EQ((*zone)[0].domain, "y.example.com") << "by domain name, then selector";
    EXPECT_EQ((*zone)[0].token, "tok-y");
    EXPECT_EQ((*zone)[0].selector, "s1");
    EXPECT_EQ((*zone)[0].public_key, "MIIBIjANBgs1");
    EXPECT_EQ((*zone)[1].domain, "z.example.com");
    EXPECT_EQ((*zone)[1].selector, "s1");
    EXPECT_EQ((*zone)[2].selector, "s2");
    EXPECT_EQ((*zone)[2].token, "tok-z");
}

// A deleted domain goes with its keys, for its account only; its emails stay, tied to no
// domain; its name can be added again.
TEST_P(StoreContract, ADeletedDomainGoesWithItsKeysAndLeavesItsEmails) {
    const auto acc = make_account("acme");
    const auto other = make_account("other");
    const auto d = domain_of(acc, "gone.example.com", kT0 + 1, "tok-gone");
    const auto kept = domain_of(acc, "kept.example.com", kT0 + 2, "tok-kept");
    ASSERT_TRUE(run(store().create_domain(d, {key_of(d, "ph1", true, kT0 + 1)})));
    ASSERT_TRUE(run(store().create_domain(kept, {key_of(kept, "ph1", true, kT0 + 2)})));
    auto n = new_email(acc, d, 1, kT0 + 3);
    const auto email_id = n.email.id;
    ASSERT_TRUE(run(store().create_email(std::move(n))));
    // Found by name first (a back end may keep it in memory: the delete must reach that too).
    ASSERT_TRUE(run(store().find_domain_by_name(acc.id, "gone.example.com")));

    EXPECT_EQ(run(store().delete_domain(other.id, d.id)).error(), errc::not_found)
        << "another account's domain";
    ASSERT_TRUE(run(store().find_domain_by_id(acc.id, d.id)));

    auto gone = run(store().delete_domain(acc.id, d.id));
    ASSERT_TRUE(gone) << gone.error().message();
    EXPECT_EQ(run(store().find_domain_by_id(acc.id, d.id)).error(), errc::not_found);
    EXPECT_EQ(run(store().find_domain_by_name(acc.id, "gone.example.com")).error(),
              errc::not_found);
    EXPECT_TRUE(run(store().dkim_keys(d.id))->empty()) << "its keys are erased";
    auto zone = run(store().dkim_zone());
    ASSERT_EQ(zone->size(), 1u);
    EXPECT_EQ(zone->front().domain, "kept.example.com");
    EXPECT_EQ(run(store().list_domains({.account_id = acc.id}))->total, 1);
    auto email = run(store().find_email(acc.id, email_id));
    ASSERT_TRUE(email) << "its emails are kept";
    EXPECT_EQ(email->domain_id, "");
    EXPECT_EQ(email->from_email, "sender@gone.example.com");
    EXPECT_EQ(run(store().delete_domain(acc.id, d.id)).error(), errc::not_found) << "twice";

    const auto again = domain_of(acc, "gone.example.com", kT0 + 9, "tok-again");
    ASSERT_TRUE(run(store().create_domain(again, {key_of(again, "ph1", true, kT0 + 9)})))
        << "the name is free again";
    EXPECT_EQ(run(store().find_domain_by_name(acc.id, "gone.example.com"))->id, again.id);
}

// The domains of a name, in every account, oldest first, with what the inbound door needs.
TEST_P(StoreContract, InboundDomainsAreFoundInEveryAccount) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    auto later = domain_of(a, "in.example.com", kT0 + 20, "tok-a");
    later.inbound = true;
    later.status = DomainStatus::verified;
    auto older = domain_of(b, "in.example.com", kT0 + 10, "tok-b");
    older.status = DomainStatus::failed;
    ASSERT_TRUE(run(store().create_domain(later, {})));
    ASSERT_TRUE(run(store().create_domain(older, {})));
    ASSERT_TRUE(run(store().create_domain(domain_of(a, "out.example.com", kT0, "tok-c"), {})));
    auto found = run(store().inbound_domains("in.example.com"));
    ASSERT_TRUE(found) << found.error().message();
    ASSERT_EQ(found->size(), 2u);
    EXPECT_EQ((*found)[0].id, older.id);
    EXPECT_EQ((*found)[0].account_id, b.id);
    EXPECT_EQ((*found)[0].name, "in.example.com");
    EXPECT_EQ((*found)[0].status, DomainStatus::failed);
    EXPECT_FALSE((*found)[0].inbound);
    EXPECT_EQ((*found)[1].id, later.id);
    EXPECT_EQ((*found)[1].account_id, a.id);
    EXPECT_EQ((*found)[1].status, DomainStatus::verified);
    EXPECT_TRUE((*found)[1].inbound);
    EXPECT_TRUE(run(store().inbound_domains("nowhere.example.com"))->empty());
}

}  // namespace
}  // namespace posthorn::store::contract
