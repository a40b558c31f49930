// The contract of EmailStore's writes and point reads: an email with its recipients and
// raw message, found in its own account only, and by the token of its bounce address.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

using domain::RecipientStatus;
using domain::RecipientType;

TEST_P(StoreContract, EmailsReadBackAsWritten) {
    const auto acc = make_account("acme");
    const auto d = make_domain(acc);
    auto n = new_email(acc, d, 3, kT0 + 5);
    n.email.from_name = "Ada Lovelace";
    n.email.to_display = "r0@example.net";
    n.email.subject = "Grüße, café";
    n.email.track_opens = true;
    n.email.source = "smtp";
    n.email.api_key_id = id_at("key_", kT0);
    n.recipients[2].type = RecipientType::bcc;
    n.recipients[1].next_attempt_at = kT0 + 5 * kMinute;  // not due before then
    n.total_recipients = 4;                               // a duplicate address was merged
    // The message as built: 8-bit, and not all of it UTF-8.
    n.raw = "Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=\r\n\r\nGr\xc3\xbc\xc3\x9f\x65 \xff\xfe\r\n";
    const auto want = n;
    ASSERT_TRUE(run(store().create_email(n)));

    const auto e = find(acc.id, want.email.id);
    EXPECT_EQ(e.id, want.email.id);
    EXPECT_EQ(e.account_id, acc.id);
    EXPECT_EQ(e.domain_id, d.id);
    EXPECT_EQ(e.envelope_id, want.email.envelope_id);
    EXPECT_EQ(e.status, domain::EmailStatus::queued);
    EXPECT_EQ(e.from_email, "sender@mail.example.com");
    EXPECT_EQ(e.from_name, "Ada Lovelace");
    EXPECT_EQ(e.to_display, "r0@example.net");
    EXPECT_EQ(e.subject, "Grüße, café");
    EXPECT_EQ(e.message_id, want.email.message_id);
    EXPECT_EQ(e.return_token, want.email.return_token);
    EXPECT_TRUE(e.track_opens);
    EXPECT_FALSE(e.track_clicks);
    EXPECT_EQ(e.source, "smtp");
    EXPECT_EQ(e.api_key_id, want.email.api_key_id) << "the key that sent it";
    EXPECT_EQ(e.size_bytes, want.email.size_bytes);
    EXPECT_EQ(e.created_at, kT0 + 5);
    EXPECT_EQ(e.queued_at, kT0 + 5);
    EXPECT_FALSE(e.sent_at || e.delivered_at || e.failed_at || e.opened_at || e.clicked_at);

    ASSERT_EQ(e.recipients.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        const auto& r = e.recipients[i];
        SCOPED_TRACE(i);
        EXPECT_GT(r.id, 0);
        EXPECT_EQ(r.address, want.recipients[i].address) << "in the order given";
        EXPECT_EQ(r.domain, "example.net");
        EXPECT_EQ(r.type, want.recipients[i].type);
        EXPECT_EQ(r.status, RecipientStatus::queued);
        EXPECT_EQ(r.attempts, 0);
        EXPECT_FALSE(r.last_response);
        EXPECT_FALSE(r.sent_at);
        EXPECT_FALSE(r.bounce);
    }
    EXPECT_NE(e.recipients[0].id, e.recipients[1].id);
    EXPECT_NE(e.recipients[1].id, e.recipients[2].id);
    EXPECT_EQ(e.recipients[0].next_attempt_at, kT0 + 5) << "never tried: due since queued";
    EXPECT_EQ(e.recipients[1].next_attempt_at, kT0 + 5 * kMinute);

    auto raw = run(store().email_raw(acc.id, want.email.id));
    ASSERT_TRUE(raw) << raw.error().message();
    EXPECT_EQ(*raw, want.raw) << "byte for byte";

    // Another email's recipients are its own.
    const auto second = create(new_email(acc, d, 2, kT0 + 6));
    const auto e2 = find(acc.id, second);
    EXPECT_EQ(e2.api_key_id, "") << "no key known";
    ASSERT_EQ(e2.recipients.size(), 2u);
    for (const auto& r : e2.recipients)
        for (const auto& first : e.recipients) EXPECT_NE(r.id, first.id);
    EXPECT_EQ(find(acc.id, want.email.id).recipients.size(), 3u);
}

TEST_P(StoreContract, EmailsAreFoundOnlyInTheirAccount) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    const auto id = create(new_email(a, make_domain(a), 1));
    EXPECT_EQ(run(store().find_email(b.id, id)).error(), errc::not_found);
    EXPECT_EQ(run(store().email_raw(b.id, id)).error(), errc::not_found);
    EXPECT_EQ(run(store().find_email(a.id, id_at("em_", kT0))).error(), errc::not_found);
    EXPECT_EQ(run(store().email_raw(a.id, id_at("em_", kT0))).error(), errc::not_found);
    // Nor changed through another account: its decision is never asked.
    bool asked = false;
    const auto changed = run(
        store().change_email(b.id, id, true, [&asked](const Email&) -> std::optional<EmailChange> {
            asked = true;
            return std::nullopt;
        }));
    EXPECT_EQ(changed.error(), errc::not_found);
    EXPECT_FALSE(asked);
    EXPECT_TRUE(run(store().find_email(a.id, id)));
    EXPECT_TRUE(run(store().email_raw(a.id, id)));
}

// A token made now is the email's id without "em_" and 16 characters more: found, with its
// recipients, whatever the account, and only whole. A token of earlier versions (26 random
// characters) is found too.
TEST_P(StoreContract, ReturnTokensFindTheirEmail) {
    const auto a = make_account("a");
    const auto b = make_account("b");
    auto n = new_email(b, make_domain(b), 2);
    const auto token = n.email.return_token;
    ASSERT_EQ(token.size(), 42u);
    ASSERT_EQ(token.substr(0, 26), n.email.id.substr(3));
    const auto id = create(std::move(n));
    create(new_email(a, make_domain(a, "a.example.com"), 1));

    auto e = run(store().find_email_by_return_token(token));
    ASSERT_TRUE(e) << e.error().message();
    EXPECT_EQ(e->id, id);
    EXPECT_EQ(e->account_id, b.id);
    EXPECT_EQ(e->return_token, token);
    EXPECT_EQ(e->recipients.size(), 2u);

    auto forged = token;
    forged.back() = forged.back() == 'x' ? 'y' : 'x';
    EXPECT_EQ(run(store().find_email_by_return_token(forged)).error(), errc::not_found);
    EXPECT_EQ(run(store().find_email_by_return_token(token.substr(0, 26))).error(),
              errc::not_found);
    EXPECT_EQ(run(store().find_email_by_return_token(token.substr(0, 41))).error(),
              errc::not_found);
    EXPECT_EQ(run(store().find_email_by_return_token(token + "z")).error(), errc::not_found);
    EXPECT_EQ(run(store().find_email_by_return_token("")).error(), errc::not_found);
    auto of_other = id_at("em_", kT0).substr(3) + token.substr(26);  // no such email
    EXPECT_EQ(run(store().find_email_by_return_token(of_other)).error(), errc::not_found);

    auto old = new_email(a, make_domain(a, "old.example.com"), 1, kT0 + 9);
    old.email.return_token = "q7k2m9x4c8v1b5n3z6w0p2r4t8";
    ASSERT_EQ(old.email.return_token.size(), 26u);
    const auto old_id = create(std::move(old));
    auto by_old = run(store().find_email_by_return_token("q7k2m9x4c8v1b5n3z6w0p2r4t8"));
    ASSERT_TRUE(by_old) << by_old.error().message();
    EXPECT_EQ(by_old->id, old_id);
    EXPECT_EQ(by_old->recipients.size(), 1u);
    EXPECT_EQ(run(store().find_email_by_return_token("q7k2m9x4c8v1b5n3z6w0p2r4t9")).error(),
              errc::not_found);
}

}  // namespace
}  // namespace posthorn::store::contract
