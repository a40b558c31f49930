// The contract of QueueStore: due recipients are claimed under a lease that keeps every other
// claimer (another coroutine, another node) off them until it runs out; the lease is
// renewed, lifted by the owner, and by the outcome written through change_email.
#include <algorithm>
#include <map>

#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

// The ids of the recipients a claim answered.
std::vector<std::int64_t> ids_of(const std::vector<QueuedEmail>& claimed) {
    std::vector<std::int64_t> out;
    for (const auto& e : claimed)
        for (const auto& r : e.recipients) out.push_back(r.id);
    std::sort(out.begin(), out.end());
    return out;
}
std::vector<std::int64_t> ids_of(const Email& e) {
    std::vector<std::int64_t> out;
    for (const auto& r : e.recipients) out.push_back(r.id);
    std::sort(out.begin(), out.end());
    return out;
}

TEST_P(StoreContract, ClaimsLeaseDueRecipientsWithTheirEmails) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc, "mail.example.com");
    const auto id = create(new_email(acc, d, 3, kT0));
    const auto e = find(acc.id, id);
    auto first = run(store().claim_due(kT0 + 100, 2, "node-a", kT0 + 10'000));
    ASSERT_TRUE(first) << first.error().message();
    ASSERT_EQ(first->size(), 1u);
    const auto& q = first->front();
    EXPECT_EQ(q.id, id);
    EXPECT_EQ(q.account_id, acc.id);
    EXPECT_EQ(q.domain_id, d.id);
    EXPECT_EQ(q.from_domain, "mail.example.com");
    EXPECT_EQ(q.return_token, e.return_token);
    EXPECT_EQ(q.message_id, e.message_id);
    ASSERT_EQ(q.recipients.size(), 2u) << "the limit counts recipients";
    for (const auto& r : q.recipients) {
        auto it = std::find_if(e.recipients.begin(), e.recipients.end(),
                               [&](const Recipient& x) { return x.id == r.id; });
        ASSERT_NE(it, e.recipients.end());
        EXPECT_EQ(r.address, it->address);
        EXPECT_EQ(r.domain, "example.net");
        EXPECT_EQ(r.type, it->type);
        EXPECT_EQ(r.attempts, 0);
        EXPECT_FALSE(r.suppressed);
    }
    auto rest = run(store().claim_due(kT0 + 100, 10, "node-a", kT0 + 10'000));
    ASSERT_TRUE(rest);
    ASSERT_EQ(ids_of(*rest).size(), 1u);
    auto all = ids_of(*first);
    all.push_back(ids_of(*rest)[0]);
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all, ids_of(e)) << "each recipient once";
    EXPECT_TRUE(run(store().claim_due(kT0 + 200, 10, "node-b", kT0 + 10'000))->empty()) << "leased";
    // A recipient whose first attempt is planned later is not due before then.
    auto later = new_email(acc, d, 1, kT0 + 1);
    later.recipients[0].next_attempt_at = kT0 + 5000;
    create(std::move(later));
    EXPECT_TRUE(run(store().claim_due(kT0 + 4999, 10, "node-a", kT0 + 10'000))->empty());
    EXPECT_EQ(run(store().claim_due(kT0 + 5000, 10, "node-a", kT0 + 10'000))->size(), 1u);
}

// A renewed lease keeps claimed mail from being claimed again; a lease that ran out (its
// node died) is taken over by another owner, and is that owner's from then on.
TEST_P(StoreContract, LeasesKeepClaimedMailAndRenewalsExtendThem) {
    const auto acc = make_account("acme");
    create(new_email(acc, make_domain(acc), 1, kT0));
    auto first = run(store().claim_due(kT0 + 100, 10, "node-a", kT0 + 1000));
    ASSERT_TRUE(first) << first.error().message();
    ASSERT_EQ(first->size(), 1u);
    EXPECT_TRUE(run(store().claim_due(kT0 + 999, 10, "node-b", kT0 + 1500))->empty());
    auto renewed = run(store().renew_leases("node-a", kT0 + 5000));
    ASSERT_TRUE(renewed);
    EXPECT_EQ(*renewed, 1);
    EXPECT_EQ(*run(store().renew_leases("node-b", kT0 + 9000)), 0) << "only the owner's";
    EXPECT_TRUE(run(store().claim_due(kT0 + 4999, 10, "node-b", kT0 + 6000))->empty());
    auto taken = run(store().claim_due(kT0 + 5000, 10, "node-b", kT0 + 7000));
    ASSERT_EQ(taken->size(), 1u) << "ran out";
    EXPECT_EQ(ids_of(*taken), ids_of(*first));
    EXPECT_EQ(*run(store().renew_leases("node-a", kT0 + 9000)), 0) << "node-b's now";
    EXPECT_EQ(*run(store().renew_leases("node-b", kT0 + 9000)), 1);
    EXPECT_TRUE(run(store().claim_due(kT0 + 8000, 10, "node-a", kT0 + 9500))->empty());
}

// release_leases(owner) lifts that owner's leases (a node at start, of its last run) and
// leaves another node's.
TEST_P(StoreContract, ReleasingLiftsOnlyTheOwnersLeases) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto a_id = create(new_email(acc, d, 2, kT0));
    auto mine = run(store().claim_due(kT0 + 10, 10, "node-a", kT0 + 100'000));
    ASSERT_EQ(ids_of(*mine).size(), 2u);
    const auto b_id = create(new_email(acc, d, 3, kT0 + 1));
    auto& node_b = another_node();
    auto theirs = run(node_b.claim_due(kT0 + 10, 10, "node-b", kT0 + 100'000));
    ASSERT_TRUE(theirs) << theirs.error().message();
    ASSERT_EQ(ids_of(*theirs).size(), 3u);
    EXPECT_EQ(theirs->at(0).id, b_id);

    auto released = run(store().release_leases("node-a"));
    ASSERT_TRUE(released);
    EXPECT_EQ(*released, 2);
    auto again = run(store().claim_due(kT0 + 20, 10, "node-c", kT0 + 100'000));
    ASSERT_TRUE(again);
    EXPECT_EQ(ids_of(*again), ids_of(*mine)) << "node-a's, not node-b's";
    EXPECT_EQ(again->at(0).id, a_id);
    EXPECT_EQ(*run(store().release_leases("node-a")), 0);
}

// An outcome written lifts the lease: a retry is due at its time (not before), with its
// attempts; a recipient in a final state is never claimed again.
TEST_P(StoreContract, RetriesComeDueAndFinalRecipientsNever) {
    const auto acc = make_account("acme");
    const auto id = create(new_email(acc, make_domain(acc), 3, kT0));
    auto claimed = run(store().claim_due(kT0 + 10, 10, "node-a", kT0 + 1'000'000));
    ASSERT_EQ(ids_of(*claimed).size(), 3u);
    const auto e = find(acc.id, id);
    const UnixMs retry = kT0 + 5000;
    domain::Outcomes o{.recipients = {retry_at(e.recipients[0], retry), delivered(e.recipients[1]),
                                      hard_bounced(e.recipients[2])},
                       .at = kT0 + 20};
    ASSERT_TRUE(run(store().change_email(acc.id, id, true, apply(o))));
    EXPECT_TRUE(run(store().claim_due(retry - 1, 10, "node-b", kT0 + 1'000'000))->empty());
    auto due = run(store().claim_due(retry, 10, "node-b", kT0 + 1'000'000));
    ASSERT_TRUE(due);
    ASSERT_EQ(ids_of(*due), std::vector<std::int64_t>{e.recipients[0].id})
        << "the lease went with the outcome; the final ones stay";
    EXPECT_EQ(due->at(0).recipients.at(0).attempts, 1);

    const auto now = find(acc.id, id);
    domain::Outcomes last{.recipients = {delivered(now.recipients[0])}, .at = retry + 10};
    ASSERT_TRUE(run(store().change_email(acc.id, id, true, apply(last))));
    EXPECT_EQ(find(acc.id, id).status, domain::EmailStatus::bounced);
    EXPECT_TRUE(run(store().release_leases("node-a")));
    EXPECT_TRUE(run(store().release_leases("node-b")));
    EXPECT_TRUE(
        run(store().claim_due(kT0 + 100'000'000, 10, "node-c", kT0 + 200'000'000))->empty());
}

struct Claimed {
    std::vector<std::pair<std::int64_t, std::string>> recipients;  // with their emails
    std::string error;
};

// Claims, `limit` at a time, until nothing is left to claim (or, if claimed mail were
// claimed again, until it is clear that it never runs out).
asio::awaitable<Claimed> claim_all(Store* s, std::string owner, int limit) {
    Claimed out;
    for (int i = 0; i < 500; ++i) {
        auto batch = co_await s->claim_due(kT0 + 1000, limit, owner, kT0 + 1'000'000);
        if (!batch) {
            out.error = batch.error().message();
            co_return out;
        }
        if (batch->empty()) co_return out;
        for (const auto& e : *batch)
            for (const auto& r : e.recipients) out.recipients.emplace_back(r.id, e.id);
    }
    out.error = "claims never ran out";
    co_return out;
}

// Claims racing on two nodes, three claimers each, over 200 recipients (half never tried,
// half due for a retry): each recipient is claimed exactly once, with its own email.
TEST_P(StoreContract, ConcurrentClaimersNeverShareARecipient) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    std::map<std::int64_t, std::string> email_of;  // recipient id → email id
    for (int i = 0; i < 40; ++i) {
        auto n = new_email(acc, d, 5, kT0 + i);
        if (i % 2)
            for (auto& r : n.recipients) r.next_attempt_at = kT0 + i;  // due, as a retry is
        const auto id = create(std::move(n));
        for (const auto& r : find(acc.id, id).recipients) email_of[r.id] = id;
    }
    ASSERT_EQ(email_of.size(), 200u);

    auto& node = another_node();
    std::vector<asio::awaitable<Claimed>> claimers;
    for (int i = 0; i < 6; ++i)
        claimers.push_back(claim_all(i % 2 ? &node : &store(), "node-" + std::to_string(i % 2), 7));
    std::map<std::int64_t, int> times;
    for (const auto& c : run_all(std::move(claimers))) {
        EXPECT_EQ(c.error, "");
        for (const auto& [rid, eid] : c.recipients) {
            ++times[rid];
            EXPECT_EQ(eid, email_of[rid]) << rid;
        }
    }
    EXPECT_EQ(times.size(), 200u) << "every recipient claimed";
    for (const auto& [rid, n] : times) EXPECT_EQ(n, 1) << "recipient " << rid;
}

// A claim marks the recipients whose address (compared in lower case) the account
// suppresses, and only the account's own.
TEST_P(StoreContract, ClaimsMarkSuppressedAddresses) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto da = make_domain(a);
    auto n = new_email(a, da, 1, kT0);
    n.recipients[0].address = "Gone@example.net";
    const auto first = create(std::move(n));
    const auto e = find(a.id, first);
    domain::Outcomes o{.recipients = {hard_bounced(e.recipients[0])}, .at = kT0 + 10};
    ASSERT_TRUE(run(store().change_email(a.id, first, true, apply(o))));

    auto next = new_email(a, da, 2, kT0 + 20);
    next.recipients[0].address = "GONE@example.net";
    create(std::move(next));
    auto of_b = new_email(b, make_domain(b), 1, kT0 + 21);
    of_b.recipients[0].address = "gone@example.net";
    create(std::move(of_b));
    auto claimed = run(store().claim_due(kT0 + 100, 10, "n", kT0 + 10'000));
    ASSERT_TRUE(claimed) << claimed.error().message();
    std::map<std::string, bool> suppressed;  // account + address → flag
    for (const auto& q : *claimed)
        for (const auto& r : q.recipients)
            suppressed[q.account_id + " " + r.address] = r.suppressed;
    ASSERT_EQ(suppressed.size(), 3u);
    EXPECT_TRUE(suppressed[a.id + " GONE@example.net"]);
    EXPECT_FALSE(suppressed[a.id + " r1@example.net"]);
    EXPECT_FALSE(suppressed[b.id + " gone@example.net"]) << "another account's list";
}

TEST_P(StoreContract, TheQueueListenerHearsOfNewMail) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    auto heard = std::make_shared<std::atomic<int>>(0);
    store().set_queue_listener([heard] { ++*heard; });
    create(new_email(acc, d, 1, kT0));
    EXPECT_TRUE(eventually([&] { return *heard >= 1; }));
    const int before = *heard;
    create(new_email(acc, d, 1, kT0 + 1));
    EXPECT_TRUE(eventually([&] { return *heard > before; })) << "each time";
}

}  // namespace
}  // namespace posthorn::store::contract
