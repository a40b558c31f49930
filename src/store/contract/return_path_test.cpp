// The contract of the custom return path (docs/domains.md#return-path): a domain's label and
// whether its CNAME was verified, changed by the settings and the checks; an email's envelope
// domain, kept as written, found with it and handed to delivery with its claim.
#include "store/contract/contract.hpp"

namespace posthorn::store::contract {
namespace {

using domain::DomainStatus;

TEST_P(StoreContract, AReturnPathLabelIsKeptAndVerifiedByChecks) {
    const auto a = make_account("a");
    Domain d{.id = id_at("dom_", kT0),
             .account_id = a.id,
             .name = "mail.example.com",
             .token = "tok-rp",
             .created_at = kT0,
             .updated_at = kT0};
    ASSERT_TRUE(run(store().create_domain(d, {})));
    auto got = run(store().find_domain_by_id(a.id, d.id));
    ASSERT_TRUE(got);
    EXPECT_EQ(got->return_path_label, "bounces") << "the default";
    EXPECT_FALSE(got->return_path_verified);

    auto other = make_account("o");
    Domain labelled{.id = id_at("dom_", kT0),
                    .account_id = other.id,
                    .name = "mail.example.com",
                    .token = "tok-rp2",
                    .created_at = kT0,
                    .updated_at = kT0,
                    .return_path_label = "rp"};
    ASSERT_TRUE(run(store().create_domain(labelled, {})));
    EXPECT_EQ(run(store().find_domain_by_name(other.id, "mail.example.com"))->return_path_label,
              "rp");

    // A check that found the CNAME of the label it looked up marks it verified.
    DomainCheck check{.account_id = a.id,
                      .domain_id = d.id,
                      .status = DomainStatus::verified,
                      .records_json = R"({"return_path":"ok"})",
                      .checked_at = kT0 + 10,
                      .first_verify_at = kT0 + 10,
                      .verified_at = kT0 + 10,
                      .return_path_label = "bounces",
                      .return_path_verified = true};
    ASSERT_TRUE(run(store().record_domain_check(check)));
    got = run(store().find_domain_by_name(a.id, d.name));
    EXPECT_TRUE(got->return_path_verified);
    EXPECT_EQ(got->records_json, R"({"return_path":"ok"})");

    // Other settings leave it as it is.
    ASSERT_TRUE(run(store().update_domain_settings(a.id, d.id, {.inbound = true}, kT0 + 20)));
    got = run(store().find_domain_by_name(a.id, d.name));
    EXPECT_TRUE(got->return_path_verified);
    EXPECT_EQ(got->return_path_label, "bounces");
    EXPECT_EQ(got->records_json, R"({"return_path":"ok"})");

    // A new label: its records as given, not verified until checked again.
    DomainSettings relabel;
    relabel.return_path_label = "rp";
    relabel.records_json = R"({"new":1})";
    ASSERT_TRUE(run(store().update_domain_settings(a.id, d.id, relabel, kT0 + 30)));
    got = run(store().find_domain_by_name(a.id, d.name));
    EXPECT_EQ(got->return_path_label, "rp");
    EXPECT_FALSE(got->return_path_verified);
    EXPECT_EQ(got->records_json, R"({"new":1})");
    EXPECT_TRUE(got->inbound) << "kept";
    EXPECT_EQ(run(store().update_domain_settings(other.id, d.id, relabel, kT0 + 30)).error(),
              errc::not_found);

    // A check of the old label (begun before the change) does not verify the new one.
    check.checked_at = kT0 + 40;
    ASSERT_TRUE(run(store().record_domain_check(check)));
    EXPECT_FALSE(run(store().find_domain_by_id(a.id, d.id))->return_path_verified);
    check.return_path_label = "rp";
    ASSERT_TRUE(run(store().record_domain_check(check)));
    EXPECT_TRUE(run(store().find_domain_by_id(a.id, d.id))->return_path_verified);
    // A check that no longer finds it unverifies it.
    check.return_path_verified = false;
    ASSERT_TRUE(run(store().record_domain_check(check)));
    EXPECT_FALSE(run(store().find_domain_by_id(a.id, d.id))->return_path_verified);
    EXPECT_EQ(run(store().find_domain_by_id(a.id, d.id))->return_path_label, "rp");
}

TEST_P(StoreContract, AnEmailKeepsItsEnvelopeDomain) {
    const auto a = make_account("a");
    const auto d = make_domain(a);
    auto custom = new_email(a, d, 1, kT0 + 1);
    custom.email.return_path = "bounces.mail.example.com";
    const auto token = custom.email.return_token;
    const auto custom_id = create(std::move(custom));
    const auto plain_id = create(new_email(a, d, 1, kT0 + 2));

    EXPECT_EQ(run(store().find_email(a.id, custom_id))->return_path, "bounces.mail.example.com");
    EXPECT_EQ(run(store().find_email(a.id, plain_id))->return_path, "") << "the server's";
    auto by_token = run(store().find_email_by_return_token(token));
    ASSERT_TRUE(by_token) << by_token.error().message();
    EXPECT_EQ(by_token->return_path, "bounces.mail.example.com");

    auto claimed = run(store().claim_due(kT0 + 100, 10, "node-a", kT0 + 10'000));
    ASSERT_TRUE(claimed) << claimed.error().message();
    ASSERT_EQ(claimed->size(), 2u);
    for (const auto& q : *claimed)
        EXPECT_EQ(q.return_path, q.id == custom_id ? "bounces.mail.example.com" : "") << q.id;
}

}  // namespace
}  // namespace posthorn::store::contract
