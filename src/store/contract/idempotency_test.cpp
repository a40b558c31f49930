// The contract of idempotency keys (EmailStore::create_email, find_idempotent): an account's
// key, until it expires, makes one email, and every other create with it answers that
// email's stored response and writes nothing — also when the creates race, on one node or
// several.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

// An email of `account` with idempotency key `key` (expiring at `expires_at`), whose
// response names it.
NewEmail keyed(const Account& account, const Domain& d, const std::string& key, UnixMs at,
               UnixMs expires_at) {
    auto n = new_email(account, d, 1, at);
    n.idempotency_key = key;
    n.idempotency_expires_at = expires_at;
    n.response = {.status = 200, .body = R"({"id":")" + n.email.id + R"("})"};
    return n;
}

std::int64_t emails_of(StoreContract& t, const Account& a) {
    auto page = StoreContract::run(t.store().list_emails({.account_id = a.id, .limit = 100}));
    EXPECT_TRUE(page);
    return page ? page->total : -1;
}

TEST_P(StoreContract, ASecondCreateReplaysTheFirstAndWritesNothing) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto first = keyed(acc, d, "k1", kT0, kT0 + 1000);
    auto r1 = run(store().create_email(first));
    ASSERT_TRUE(r1) << r1.error().message();
    EXPECT_FALSE(*r1) << "written: nothing to replay";

    auto second = keyed(acc, d, "k1", kT0 + 10, kT0 + 2000);
    second.response = {.status = 201, .body = "other"};
    auto r2 = run(store().create_email(second));
    ASSERT_TRUE(r2) << r2.error().message();
    ASSERT_TRUE(*r2) << "replayed";
    EXPECT_EQ((*r2)->status, 200);
    EXPECT_EQ((*r2)->body, first.response.body);
    EXPECT_EQ(run(store().find_email(acc.id, second.email.id)).error(), errc::not_found);
    EXPECT_EQ(run(store().email_raw(acc.id, second.email.id)).error(), errc::not_found);
    EXPECT_EQ(emails_of(*this, acc), 1);

    // Without a key, no replay.
    auto plain = new_email(acc, d, 1, kT0 + 20);
    EXPECT_FALSE(*run(store().create_email(plain)));
    EXPECT_EQ(emails_of(*this, acc), 2);
}

// Ten creates with one key at once, on two nodes: one email, nine replays of its response.
TEST_P(StoreContract, ConcurrentCreatesWithOneKeyMakeOneEmail) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    auto& node = another_node();
    std::vector<NewEmail> tries;
    std::vector<asio::awaitable<Result<std::optional<StoredResponse>>>> creates;
    for (int i = 0; i < 10; ++i) {
        tries.push_back(keyed(acc, d, "race", kT0 + i, kT0 + 100'000));
        creates.push_back((i % 2 ? node : store()).create_email(tries.back()));
    }
    auto results = run_all(std::move(creates));
    int written = -1, replays = 0;
    for (int i = 0; i < 10; ++i) {
        ASSERT_TRUE(results[i]) << results[i].error().message();
        if (*results[i]) {
            ++replays;
        } else {
            EXPECT_EQ(written, -1) << "one create writes";
            written = i;
        }
    }
    ASSERT_NE(written, -1);
    EXPECT_EQ(replays, 9);
    for (const auto& r : results) {
        if (*r) {
            EXPECT_EQ((*r)->body, tries[written].response.body) << "the one written's";
        }
    }
    auto page = run(store().list_emails({.account_id = acc.id, .limit = 100}));
    ASSERT_EQ(page->total, 1);
    EXPECT_EQ(page->items.at(0).id, tries[written].email.id);
}

// A key is kept until its expiry: a create at or after it (by the new email's created_at)
// writes a new email, whose response the key answers from then on.
TEST_P(StoreContract, AnExpiredKeyLetsANewEmailThrough) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto first = keyed(acc, d, "k", kT0, kT0 + 100);
    ASSERT_FALSE(*run(store().create_email(first)));
    auto just_before = run(store().create_email(keyed(acc, d, "k", kT0 + 99, kT0 + 500)));
    ASSERT_TRUE(just_before && *just_before);
    EXPECT_EQ((*just_before)->body, first.response.body);

    const auto later = keyed(acc, d, "k", kT0 + 100, kT0 + 500);
    auto r = run(store().create_email(later));
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(*r) << "the key had expired";
    EXPECT_TRUE(run(store().find_email(acc.id, later.email.id)));
    EXPECT_EQ(emails_of(*this, acc), 2);
    auto now_answers = run(store().find_idempotent(acc.id, "k", kT0 + 200));
    ASSERT_TRUE(now_answers && *now_answers);
    EXPECT_EQ((*now_answers)->body, later.response.body);
    auto replay = run(store().create_email(keyed(acc, d, "k", kT0 + 300, kT0 + 900)));
    ASSERT_TRUE(replay && *replay);
    EXPECT_EQ((*replay)->body, later.response.body);
}

TEST_P(StoreContract, FindIdempotentAnswersUntilTheKeyExpires) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto n = keyed(acc, d, "k", kT0, kT0 + 100);
    ASSERT_FALSE(*run(store().create_email(n)));
    auto found = run(store().find_idempotent(acc.id, "k", kT0 + 99));
    ASSERT_TRUE(found) << found.error().message();
    ASSERT_TRUE(*found);
    EXPECT_EQ((*found)->status, 200);
    EXPECT_EQ((*found)->body, n.response.body);
    EXPECT_FALSE(*run(store().find_idempotent(acc.id, "k", kT0 + 100))) << "expired";
    EXPECT_FALSE(*run(store().find_idempotent(acc.id, "K", kT0))) << "keys are as given";
    EXPECT_FALSE(*run(store().find_idempotent(acc.id, "other", kT0)));
}

TEST_P(StoreContract, IdempotencyKeysArePerAccount) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto na = keyed(a, make_domain(a), "shared", kT0, kT0 + 1000);
    const auto nb = keyed(b, make_domain(b), "shared", kT0 + 1, kT0 + 1000);
    ASSERT_FALSE(*run(store().create_email(na)));
    auto rb = run(store().create_email(nb));
    ASSERT_TRUE(rb) << rb.error().message();
    EXPECT_FALSE(*rb) << "another account's key is not this one's";
    EXPECT_EQ(emails_of(*this, b), 1);
    EXPECT_EQ(run(store().find_idempotent(a.id, "shared", kT0 + 5))->value().body,
              na.response.body);
    EXPECT_EQ(run(store().find_idempotent(b.id, "shared", kT0 + 5))->value().body,
              nb.response.body);
}

}  // namespace
}  // namespace posthorn::store::contract
