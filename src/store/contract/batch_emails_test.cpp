// The contract of EmailStore::create_emails (POST /v1/emails/batch): several emails in one
// transaction, each stored or replayed by its idempotency key as create_email would, the
// answers in their order; when one cannot be written, none is.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

NewEmail keyed(const Account& account, const Domain& d, const std::string& key, UnixMs at) {
    auto n = new_email(account, d, 2, at);
    n.idempotency_key = key;
    n.idempotency_expires_at = at + 100'000;
    n.response = {.status = 200, .body = R"({"id":")" + n.email.id + R"("})"};
    return n;
}

std::int64_t emails_of(StoreContract& t, const Account& a) {
    auto page = StoreContract::run(t.store().list_emails({.account_id = a.id, .limit = 100}));
    EXPECT_TRUE(page);
    return page ? page->total : -1;
}

TEST_P(StoreContract, CreateEmailsWritesEachInOrderAndReplaysHeldKeys) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto earlier = keyed(acc, d, "k0", kT0);
    ASSERT_FALSE(*run(store().create_email(earlier)));

    std::vector<NewEmail> batch;
    batch.push_back(new_email(acc, d, 3, kT0 + 10));  // no key: written
    batch.push_back(keyed(acc, d, "k0", kT0 + 11));   // held by `earlier`: replayed
    batch.push_back(keyed(acc, d, "k1", kT0 + 12));   // written, takes k1
    batch.push_back(keyed(acc, d, "k1", kT0 + 13));   // k1 taken by the one before
    const auto ids = std::vector<std::string>{batch[0].email.id, batch[1].email.id,
                                              batch[2].email.id, batch[3].email.id};
    const auto third_body = batch[2].response.body;
    auto r = run(store().create_emails(std::move(batch)));
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_EQ(r->size(), 4u);
    EXPECT_FALSE((*r)[0]);
    ASSERT_TRUE((*r)[1]);
    EXPECT_EQ((*r)[1]->body, earlier.response.body);
    EXPECT_FALSE((*r)[2]);
    ASSERT_TRUE((*r)[3]);
    EXPECT_EQ((*r)[3]->body, third_body);

    EXPECT_EQ(emails_of(*this, acc), 3);
    EXPECT_EQ(find(acc.id, ids[0]).recipients.size(), 3u);
    EXPECT_EQ(find(acc.id, ids[2]).recipients.size(), 2u);
    EXPECT_EQ(run(store().find_email(acc.id, ids[1])).error(), errc::not_found);
    EXPECT_EQ(run(store().find_email(acc.id, ids[3])).error(), errc::not_found);
    auto raw = run(store().email_raw(acc.id, ids[2]));
    ASSERT_TRUE(raw);
    EXPECT_NE(raw->find("body of " + ids[2]), std::string::npos);
}

TEST_P(StoreContract, CreateEmailsWritesNoneWhenOneFails) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    std::vector<NewEmail> batch;
    batch.push_back(keyed(acc, d, "a", kT0));
    batch.push_back(new_email(acc, d, 1, kT0 + 1));
    auto clash = new_email(acc, d, 1, kT0 + 2);
    clash.email.id = batch[1].email.id;  // the same primary key: cannot be written
    batch.push_back(std::move(clash));
    const auto first = batch[0].email.id;
    auto r = run(store().create_emails(std::move(batch)));
    EXPECT_FALSE(r);
    EXPECT_EQ(emails_of(*this, acc), 0);
    EXPECT_EQ(run(store().find_email(acc.id, first)).error(), errc::not_found);
    // Its key was not taken either: a later create with it writes.
    auto again = keyed(acc, d, "a", kT0 + 10);
    auto r2 = run(store().create_email(again));
    ASSERT_TRUE(r2) << r2.error().message();
    EXPECT_FALSE(*r2);
    EXPECT_EQ(emails_of(*this, acc), 1);
}

TEST_P(StoreContract, CreateEmailsOfNoneWritesNothing) {
    std::vector<NewEmail> none;
    auto r = run(store().create_emails(std::move(none)));
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_TRUE(r->empty());
}

}  // namespace
}  // namespace posthorn::store::contract
