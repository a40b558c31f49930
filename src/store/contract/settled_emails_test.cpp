// The contract of an email settled at acceptance (NewEmail::settle; test mode, domain/
// test_mode.hpp): the email is handed to the decision as stored — its recipients with their
// ids, its `test` flag — in the transaction that writes it, and what the decision answers is
// written there too: the statuses and times, each recipient's final state, the events (in
// the outbox, routed as any other). Its final recipients are never claimed, whatever the
// suppression list holds; the `test` flag reads back wherever the email is read; an
// idempotent replay settles nothing a second time; an email without a domain (the sandbox
// sender) is kept without one.
#include "domain/test_mode.hpp"
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

using domain::EmailStatus;
using domain::EventKind;
using domain::RecipientStatus;

NewEmail test_email(const Account& acc, const Domain& d, std::vector<std::string> to, UnixMs at) {
    auto n = new_email(acc, d, 0, at);
    n.email.test = true;
    for (auto& a : to) {
        const auto at_sign = a.find('@');
        n.recipients.push_back(Recipient{.address = a, .domain = a.substr(at_sign + 1)});
    }
    n.total_recipients = static_cast<int>(n.recipients.size());
    return n;
}

// domain::settle_test_email at `at`, keeping what it was handed in `*seen`.
EmailDecision settle_at(UnixMs at, std::shared_ptr<std::vector<Email>> seen) {
    return [at, seen](const Email& current) {
        seen->push_back(current);
        return domain::settle_test_email(current, at);
    };
}

TEST_P(StoreContract, SettledEmailIsWrittenWithItsOutcomesAndNeverClaimed) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    const auto wh = make_webhook(
        acc, {EventKind::email_sent, EventKind::email_bounced, EventKind::suppression_added});
    // Suppressed already: a test email's recipient is not blocked by it.
    ASSERT_TRUE(run(store().add_suppression(domain::suppression_added(
        {.account_id = acc.id, .address = "kept@example.net", .created_at = kT0}))));
    route_all();

    auto n = test_email(
        acc, d, {"delivered@test.posthorn", "bounced@test.posthorn", "kept@example.net"}, kT0 + 10);
    auto seen = std::make_shared<std::vector<Email>>();
    n.settle = settle_at(kT0 + 10, seen);
    const auto id = create(std::move(n));

    // Handed the email as stored, in its write.
    ASSERT_EQ(seen->size(), 1u);
    EXPECT_EQ(seen->at(0).id, id);
    EXPECT_TRUE(seen->at(0).test);
    ASSERT_EQ(seen->at(0).recipients.size(), 3u);
    for (const auto& r : seen->at(0).recipients) {
        EXPECT_GT(r.id, 0) << r.address;
        EXPECT_EQ(r.status, RecipientStatus::queued) << r.address;
    }

    const auto e = find(acc.id, id);
    EXPECT_TRUE(e.test);
    EXPECT_EQ(e.status, EmailStatus::bounced);
    EXPECT_EQ(e.sent_at, kT0 + 10);
    EXPECT_EQ(e.failed_at, kT0 + 10);
    ASSERT_EQ(e.recipients.size(), 3u);
    EXPECT_EQ(e.recipients[0].status, RecipientStatus::delivered);
    EXPECT_EQ(e.recipients[1].status, RecipientStatus::bounced);
    ASSERT_TRUE(e.recipients[1].bounce);
    EXPECT_EQ(e.recipients[1].bounce->type, domain::BounceType::hard);
    EXPECT_EQ(e.recipients[1].bounce->code, "5.1.1");
    EXPECT_EQ(e.recipients[1].last_response, std::string(domain::kTestBounceReply));
    EXPECT_EQ(e.recipients[2].status, RecipientStatus::delivered);
    for (const auto& r : e.recipients) {
        EXPECT_FALSE(r.next_attempt_at) << r.address;
        EXPECT_EQ(r.attempts, 1) << r.address;
    }

    // Never claimed; a live email after it is.
    EXPECT_TRUE(run(store().claim_due(kT0 + kMinute, 10, "node-a", kT0 + 2 * kMinute))->empty());
    const auto live = create(new_email(acc, d, 1, kT0 + 20));
    auto claimed = run(store().claim_due(kT0 + kMinute, 10, "node-a", kT0 + 2 * kMinute));
    ASSERT_TRUE(claimed) << claimed.error().message();
    ASSERT_EQ(claimed->size(), 1u);
    EXPECT_EQ(claimed->at(0).id, live);
    EXPECT_FALSE(find(acc.id, live).test);

    // Its events are in the outbox, in order, and go to the webhook; no suppression was added.
    const auto routed = route_all();
    ASSERT_EQ(routed.size(), 2u);
    EXPECT_EQ(routed[0].kind, EventKind::email_sent);
    EXPECT_EQ(routed[1].kind, EventKind::email_bounced);
    for (const auto& ev : routed) {
        EXPECT_EQ(ev.email_id, id);
        EXPECT_NE(ev.data_json.find("\"test\":true"), std::string::npos) << ev.data_json;
    }
    auto due =
        run(store().claim_webhook_deliveries(kT0 + kMinute, 10, "node-a", kT0 + kMinute * 2));
    ASSERT_TRUE(due) << due.error().message();
    ASSERT_EQ(due->size(), 3u);  // the manual entry's suppression.added, then the two
    for (const auto& dl : *due) EXPECT_EQ(dl.webhook_id, wh.id);
    EXPECT_EQ(due->at(0).event_kind, EventKind::suppression_added);
    EXPECT_EQ(due->at(1).event_id, routed[0].id);
    EXPECT_EQ(due->at(2).event_id, routed[1].id);
    auto list = run(store().list_suppressions({.account_id = acc.id}));
    ASSERT_TRUE(list);
    ASSERT_EQ(list->total, 1) << "a test bounce suppresses nothing";
    EXPECT_EQ(list->items.at(0).address, "kept@example.net");

    // The list reads the flag too.
    auto page = run(store().list_emails({.account_id = acc.id}));
    ASSERT_TRUE(page);
    ASSERT_EQ(page->items.size(), 2u);
    EXPECT_FALSE(page->items[0].test);  // newest first: the live one
    EXPECT_TRUE(page->items[1].test);
    EXPECT_EQ(page->items[1].status, EmailStatus::bounced);
}

TEST_P(StoreContract, SettledEmailReplaysItsKeyWithoutSettlingAgain) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    auto seen = std::make_shared<std::vector<Email>>();
    auto first = test_email(acc, d, {"delivered@test.posthorn"}, kT0);
    first.idempotency_key = "k1";
    first.response = {.status = 200, .body = R"({"id":"first"})"};
    first.idempotency_expires_at = kT0 + kMinute;
    first.settle = settle_at(kT0, seen);
    const auto id = create(first);

    auto second = test_email(acc, d, {"delivered@test.posthorn"}, kT0 + 1);
    second.idempotency_key = "k1";
    second.idempotency_expires_at = kT0 + kMinute;
    second.settle = settle_at(kT0 + 1, seen);
    auto r = run(store().create_email(std::move(second)));
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(*r) << "replayed";
    EXPECT_EQ((*r)->body, R"({"id":"first"})");
    EXPECT_EQ(seen->size(), 1u) << "settled once";
    EXPECT_EQ(find(acc.id, id).status, EmailStatus::delivered);
    auto page = run(store().list_emails({.account_id = acc.id}));
    ASSERT_TRUE(page);
    EXPECT_EQ(page->total, 1);
    EXPECT_EQ(route_all().size(), 2u) << "email.sent and email.delivered, once";
}

TEST_P(StoreContract, SandboxEmailIsKeptWithoutADomain) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    auto n = test_email(acc, d, {"delivered@test.posthorn", "complained@test.posthorn"}, kT0);
    n.email.domain_id = "";
    n.email.from_email = std::string(domain::kSandboxSender);
    auto seen = std::make_shared<std::vector<Email>>();
    n.settle = settle_at(kT0, seen);
    const auto id = create(std::move(n));
    const auto e = find(acc.id, id);
    EXPECT_EQ(e.domain_id, "");
    EXPECT_EQ(e.from_email, domain::kSandboxSender);
    EXPECT_EQ(e.status, EmailStatus::complained);
    EXPECT_EQ(e.delivered_at, kT0);
    ASSERT_EQ(e.recipients.size(), 2u);
    EXPECT_EQ(e.recipients[0].status, RecipientStatus::delivered);
    EXPECT_EQ(e.recipients[1].status, RecipientStatus::complained);
    const auto routed = route_all();
    ASSERT_EQ(routed.size(), 3u);
    EXPECT_EQ(routed[2].kind, EventKind::email_complained);
    auto list = run(store().list_suppressions({.account_id = acc.id}));
    ASSERT_TRUE(list);
    EXPECT_EQ(list->total, 0) << "a test complaint suppresses nothing";
}

}  // namespace
}  // namespace posthorn::store::contract
