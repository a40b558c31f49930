// The contract of EmailStore::change_email: the email as it stands goes to the product's
// rules (domain::apply_outcomes, domain::engage), and what they answer is written whole —
// the email's status and times, its recipients, the suppressions and the events.
#include <algorithm>
#include <utility>

#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

using domain::EmailStatus;
using domain::RecipientStatus;

TEST_P(StoreContract, ChangesAreWrittenWhole) {
    const auto acc = make_account("acme");
    const auto id = create(new_email(acc, make_domain(acc), 3, kT0));
    const auto before = find(acc.id, id);
    const auto& r = before.recipients;
    ASSERT_EQ(r.size(), 3u);

    // One delivered, one to retry, one bounced for good: SENT, and email.sent.
    auto made = std::make_shared<std::vector<EmailChange>>();
    const UnixMs t1 = kT0 + 1000;
    domain::Outcomes first{
        .recipients = {delivered(r[0]), retry_at(r[1], t1 + kMinute), hard_bounced(r[2])},
        .at = t1};
    ASSERT_TRUE(run(store().change_email(acc.id, id, true, apply(first, made))));
    ASSERT_EQ(made->size(), 1u);
    const auto& c1 = made->front();
    ASSERT_EQ(c1.status, EmailStatus::sent);

    auto e = find(acc.id, id);
    EXPECT_EQ(e.status, EmailStatus::sent);
    EXPECT_EQ(e.sent_at, t1);
    EXPECT_FALSE(e.delivered_at);
    EXPECT_FALSE(e.failed_at);
    EXPECT_EQ(e.created_at, kT0) << "kept";
    ASSERT_EQ(e.recipients.size(), 3u);
    EXPECT_EQ(e.recipients[0].status, RecipientStatus::delivered);
    EXPECT_EQ(e.recipients[0].attempts, 1);
    EXPECT_EQ(e.recipients[0].last_response, "250 2.0.0 queued as A1");
    EXPECT_EQ(e.recipients[0].sent_at, t1);
    EXPECT_FALSE(e.recipients[0].next_attempt_at);
    EXPECT_FALSE(e.recipients[0].bounce);
    EXPECT_EQ(e.recipients[1].status, RecipientStatus::queued);
    EXPECT_EQ(e.recipients[1].attempts, 1);
    EXPECT_EQ(e.recipients[1].next_attempt_at, t1 + kMinute);
    EXPECT_EQ(e.recipients[1].last_response, "451 4.7.1 try again later");
    EXPECT_FALSE(e.recipients[1].sent_at);
    EXPECT_EQ(e.recipients[2].status, RecipientStatus::bounced);
    ASSERT_TRUE(e.recipients[2].bounce);
    EXPECT_EQ(*e.recipients[2].bounce, *hard_bounced(r[2]).bounce);
    EXPECT_FALSE(e.recipients[2].next_attempt_at);

    auto events = route_all();
    // email.sent and the deferral of the second recipient (the change's events), and the
    // suppression.added of the hard bounce (its own contract: suppressions_test.cpp).
    ASSERT_EQ(events.size(), 3u);
    ASSERT_EQ(c1.suppressions.size(), 1u);
    ASSERT_EQ(c1.events.size(), 2u);
    EXPECT_EQ(c1.events[1].kind, domain::EventKind::email_delivery_delayed);
    // A back end may write the suppression's event before the change's events or after them.
    if (events[0].kind == domain::EventKind::suppression_added)
        std::rotate(events.begin(), events.begin() + 1, events.end());
    EXPECT_EQ(events[1].id, c1.events[1].id);
    EXPECT_EQ(events[2].id, c1.suppressions[0].event.id);
    EXPECT_EQ(events[0].id, c1.events.at(0).id);
    EXPECT_EQ(events[0].kind, domain::EventKind::email_sent);
    EXPECT_EQ(events[0].account_id, acc.id);
    EXPECT_EQ(events[0].email_id, id);
    EXPECT_EQ(events[0].data_json, c1.events[0].data_json);
    EXPECT_EQ(events[0].created_at, t1);

    // The retry is delivered: the email is final, BOUNCED (its worst), and says so once.
    const UnixMs t2 = t1 + kMinute;
    domain::Outcomes second{.recipients = {delivered(e.recipients[1])}, .at = t2};
    made->clear();
    ASSERT_TRUE(run(store().change_email(acc.id, id, true, apply(second, made))));
    ASSERT_EQ(made->size(), 1u);
    e = find(acc.id, id);
    EXPECT_EQ(e.status, EmailStatus::bounced);
    EXPECT_EQ(e.sent_at, t1) << "the first time stays";
    EXPECT_EQ(e.failed_at, t2);
    EXPECT_EQ(e.recipients[1].status, RecipientStatus::delivered);
    EXPECT_EQ(e.recipients[1].attempts, 2);
    EXPECT_EQ(e.recipients[1].sent_at, t2);
    EXPECT_FALSE(e.recipients[1].next_attempt_at);
    EXPECT_EQ(e.recipients[0].status, RecipientStatus::delivered) << "not named: unchanged";
    events = route_all();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, domain::EventKind::email_bounced);
    EXPECT_EQ(events[0].data_json, made->front().events.at(0).data_json);
}

// The decision sees the email as it stands, with all its recipients or none, as asked; an
// open (domain::engage) changes the email alone.
TEST_P(StoreContract, TheTlsOfAnAttemptIsKeptWithItsRecipient) {
    const auto acc = make_account("acme");
    const auto id = create(new_email(acc, make_domain(acc), 2, kT0));
    auto r = find(acc.id, id).recipients;
    ASSERT_EQ(r.size(), 2u);
    EXPECT_FALSE(r[0].tls) << "none before an attempt";
    const domain::TlsOutcome verified{
        .policy = "mta-sts", .version = "TLSv1.3", .verified = true, .failure = ""};
    const domain::TlsOutcome refused{.policy = "dane",
                                     .version = "TLSv1.2",
                                     .verified = false,
                                     .failure = "no matching DANE TLSA records"};
    auto ok = delivered(r[0]);
    ok.tls = verified;
    auto later = retry_at(r[1], kT0 + kMinute);
    later.tls = refused;
    domain::Outcomes o{.recipients = {ok, later}, .at = kT0 + 1000};
    ASSERT_TRUE(run(store().change_email(acc.id, id, true, apply(o, nullptr))));
    r = find(acc.id, id).recipients;
    EXPECT_EQ(r[0].tls, verified);
    EXPECT_EQ(r[1].tls, refused);

    // A later outcome without TLS keeps the last one; one with TLS replaces it.
    auto again = retry_at(r[1], kT0 + 2 * kMinute);
    o = {.recipients = {again}, .at = kT0 + 2000};
    ASSERT_TRUE(run(store().change_email(acc.id, id, true, apply(o, nullptr))));
    EXPECT_EQ(find(acc.id, id).recipients[1].tls, refused);
    again.tls = domain::TlsOutcome{.policy = "none"};
    o = {.recipients = {again}, .at = kT0 + 3000};
    ASSERT_TRUE(run(store().change_email(acc.id, id, true, apply(o, nullptr))));
    EXPECT_EQ(find(acc.id, id).recipients[1].tls, domain::TlsOutcome{.policy = "none"});
}

TEST_P(StoreContract, TheDecisionSeesTheEmailAsItStands) {
    const auto acc = make_account("acme");
    const auto id = create(new_email(acc, make_domain(acc), 2, kT0));
    auto seen = std::make_shared<std::vector<Email>>();
    auto open = [seen](const Email& current) {
        seen->push_back(current);
        return std::optional(
            domain::engage(current, domain::Engagement::open, R"({"ip":"192.0.2.1"})", kT0 + 50));
    };
    ASSERT_TRUE(run(store().change_email(acc.id, id, false, open)));
    ASSERT_GE(seen->size(), 1u);
    EXPECT_EQ(seen->back().id, id);
    EXPECT_EQ(seen->back().status, EmailStatus::queued);
    EXPECT_EQ(seen->back().return_token, find(acc.id, id).return_token);
    EXPECT_TRUE(seen->back().recipients.empty()) << "not asked for";

    auto e = find(acc.id, id);
    EXPECT_EQ(e.opened_at, kT0 + 50);
    EXPECT_EQ(e.status, EmailStatus::queued);
    EXPECT_EQ(e.recipients.size(), 2u);
    EXPECT_EQ(e.recipients[0].status, RecipientStatus::queued);

    seen->clear();
    ASSERT_TRUE(run(store().change_email(acc.id, id, true, open)));
    ASSERT_GE(seen->size(), 1u);
    EXPECT_EQ(seen->back().recipients.size(), 2u);
    EXPECT_EQ(seen->back().recipients[1].address, "r1@example.net");
    EXPECT_EQ(seen->back().opened_at, kT0 + 50) << "the first change is there to see";
    EXPECT_EQ(find(acc.id, id).opened_at, kT0 + 50) << "the first open stays";

    auto events = route_all();
    ASSERT_EQ(events.size(), 2u) << "every open raises its event";
    EXPECT_EQ(events[0].kind, domain::EventKind::email_opened);
    EXPECT_EQ(events[0].data_json, R"({"ip":"192.0.2.1"})");
}

// An empty account finds the email in any account (a tracking token names only the email);
// a wrong account or an unknown email is not_found, and nothing is decided or written.
TEST_P(StoreContract, ChangesFindTheirEmail) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto id = create(new_email(b, make_domain(b), 1, kT0));
    auto calls = std::make_shared<int>(0);
    auto click = [calls](const Email& current) {
        ++*calls;
        return std::optional(
            domain::engage(current, domain::Engagement::click, "{}", current.created_at + 7));
    };
    EXPECT_EQ(run(store().change_email(a.id, id, true, click)).error(), errc::not_found);
    EXPECT_EQ(run(store().change_email("", id_at("em_", kT0), true, click)).error(),
              errc::not_found);
    EXPECT_EQ(*calls, 0);
    EXPECT_FALSE(find(b.id, id).clicked_at);
    ASSERT_TRUE(run(store().change_email("", id, false, click)));
    EXPECT_GE(*calls, 1);
    EXPECT_EQ(find(b.id, id).clicked_at, kT0 + 7);
    auto events = route_all();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].account_id, b.id);
    EXPECT_EQ(events[0].kind, domain::EventKind::email_clicked);
}

TEST_P(StoreContract, NoDecisionWritesNothing) {
    const auto acc = make_account("acme");
    const auto id = create(new_email(acc, make_domain(acc), 2, kT0));
    const auto before = find(acc.id, id);
    // Outcomes that name no recipient of the email: the rules answer nullopt.
    domain::Outcomes stranger{.recipients = {{.recipient_id = -1,
                                              .status = RecipientStatus::delivered,
                                              .attempts = 1,
                                              .transmitted = true}},
                              .at = kT0 + 10};
    ASSERT_FALSE(domain::apply_outcomes(before, stranger));
    ASSERT_TRUE(run(store().change_email(acc.id, id, true, apply(stranger))));
    const auto after = find(acc.id, id);
    EXPECT_EQ(after.status, before.status);
    EXPECT_FALSE(after.sent_at);
    ASSERT_EQ(after.recipients.size(), 2u);
    EXPECT_EQ(after.recipients[0].status, RecipientStatus::queued);
    EXPECT_EQ(after.recipients[0].attempts, 0);
    EXPECT_TRUE(route_all().empty());
}

// A suppression of an address the account suppresses already keeps the first entry, and the
// rest of its change is written all the same.
TEST_P(StoreContract, AnAddressIsSuppressedOnce) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    auto n1 = new_email(acc, d, 1, kT0);
    n1.recipients[0].address = "Gone@example.net";
    const auto first = create(std::move(n1));
    auto n2 = new_email(acc, d, 1, kT0 + 1);
    n2.recipients[0].address = "gone@example.net";
    const auto second = create(std::move(n2));

    auto bounce = [&](const std::string& id, UnixMs at) {
        const auto e = find(acc.id, id);
        domain::Outcomes o{.recipients = {hard_bounced(e.recipients[0])}, .at = at};
        return run(store().change_email(acc.id, id, true, apply(o)));
    };
    auto r1 = bounce(first, kT0 + 10);
    ASSERT_TRUE(r1) << r1.error().message();
    auto r2 = bounce(second, kT0 + 20);
    ASSERT_TRUE(r2) << "suppressed already: not a conflict, " << r2.error().message();
    EXPECT_EQ(find(acc.id, second).status, EmailStatus::bounced);
    EXPECT_EQ(find(acc.id, second).recipients[0].status, RecipientStatus::bounced);
    // Both changes raised their email.bounced; the suppression.added only the first.
    EXPECT_EQ(route_all().size(), 3u);

    // A complaint about an address suppressed already.
    auto n3 = new_email(acc, d, 1, kT0 + 2);
    n3.recipients[0].address = "gone@example.net";
    const auto third = create(std::move(n3));
    const auto e3 = find(acc.id, third);
    auto complaint = domain::complaint_outcomes(e3, {}, "abuse", kT0 + 30);
    ASSERT_EQ(complaint.recipients.size(), 1u);
    ASSERT_TRUE(run(store().change_email(acc.id, third, true, apply(complaint))));
    EXPECT_EQ(find(acc.id, third).status, EmailStatus::complained);
}

}  // namespace
}  // namespace posthorn::store::contract
